// RUN: emmy-opt %s -t cuda | filecheck %s

// An index computed from a loaded value (an embedding's row, a position read from a tensor)
// is checked against its dim before a global access: out of it, a device-side assert, as
// PyTorch's kernels have. Indices of thread ids and loops are not checked, nor those loaded
// from a constant table the compiler made (attention's items), nor those that a `minui` or
// `remui` keeps inside the dim (a key block listed by a mask summary, clamped to the last),
// nor accesses of shared memory.

// CHECK:       emmy_check_index(long index, long size, const char* kernel) {
// CHECK-NEXT:    if (index < 0 || index >= size)
// CHECK-NEXT:      __assertfail(

// CHECK-LABEL: k_rows(
// CHECK:         long long id = ids[i];
// CHECK:         emmy_check_index(row, 10, "k_rows");
// CHECK-NEXT:    float v = table[row * 4 + j];
// CHECK-NEXT:    out[i * 4 + j] = v;

// CHECK-LABEL: k_scatter(
// CHECK:         int w = where[i];
// CHECK-NOT:     emmy_check_index
// CHECK:         float v = values[i];
// CHECK-NEXT:    emmy_check_index(at, s0, "k_scatter");
// CHECK-NEXT:    out[at] = v;

// CHECK-LABEL: k_items(
// CHECK-NOT:     emmy_check_index
// CHECK:         }

// CHECK-LABEL: k_clamped(
// CHECK:         long long id = ids[i];
// CHECK-NOT:     emmy_check_index
// CHECK:         float v = table[
// CHECK-NOT:     emmy_check_index
// CHECK:         out[i * 4 + j] =

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64}} {
  "memref.global"() <{sym_name = "k_items_table", type = memref<2xi32>, initial_value = dense<[1, 0]> : tensor<2xi32>, sym_visibility = "private", constant}> : () -> ()
  kernel.func @k_rows(%table: memref<10x4xf32>, %ids: memref<3xi64>, %out: memref<3x4xf32>) block [32, 1, 1] {
    %0 = kernel.thread_id x
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %0 to %c3 step %c1 {
      %id = memref.load %ids[%i] : memref<3xi64>
      %row = arith.index_cast %id : i64 to index
      scf.for %j = %0 to %c4 step %c1 {
        %v = memref.load %table[%row, %j] : memref<10x4xf32>
        memref.store %v, %out[%i, %j] : memref<3x4xf32>
      }
    }
  }
  kernel.func @k_scatter(%where: memref<8xi32>, %values: memref<8xf32>, %out: memref<?xf32>, %s0: index) block [32, 1, 1] {
    %0 = kernel.thread_id x
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %i = %0 to %c8 step %c1 {
      %w = memref.load %where[%i] : memref<8xi32>
      %at = arith.index_cast %w : i32 to index
      %v = memref.load %values[%i] : memref<8xf32>
      memref.store %v, %out[%at] : memref<?xf32>
    }
  }
  kernel.func @k_items(%x: memref<2x32xf32>, %items: memref<2xi32>, %out: memref<2x32xf32>) block [32, 1, 1] {
    %0 = kernel.thread_id x
    %1 = kernel.block_id x
    %item = memref.load %items[%1] : memref<2xi32>
    %row = arith.index_cast %item : i32 to index
    %v = memref.load %x[%row, %0] : memref<2x32xf32>
    memref.store %v, %out[%row, %0] : memref<2x32xf32>
  }
  kernel.func @k_clamped(%table: memref<10x4xf32>, %ids: memref<3xi64>, %out: memref<3x4xf32>) block [32, 1, 1] {
    %0 = kernel.thread_id x
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c9 = arith.constant 9 : index
    %c10 = arith.constant 10 : index
    scf.for %i = %0 to %c3 step %c1 {
      %id = memref.load %ids[%i] : memref<3xi64>
      %row = arith.index_cast %id : i64 to index
      %last = arith.minui %row, %c9 : index
      %wrapped = arith.remui %row, %c10 : index
      scf.for %j = %0 to %c4 step %c1 {
        %v = memref.load %table[%last, %j] : memref<10x4xf32>
        %u = memref.load %table[%wrapped, %j] : memref<10x4xf32>
        %s = arith.addf %v, %u : f32
        memref.store %s, %out[%i, %j] : memref<3x4xf32>
      }
    }
  }
  func.func @forward(%table: memref<10x4xf32>, %ids: memref<3xi64>, %x: memref<2x32xf32>, %where: memref<8xi32>, %values: memref<8xf32>, %n: index) -> (memref<3x4xf32>, memref<2x32xf32>, memref<?xf32>) {
    %out = memref.alloc() : memref<3x4xf32>
    kernel.launch @k_rows(%table, %ids, %out) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<10x4xf32>, memref<3xi64>, memref<3x4xf32>
    %items = memref.get_global @k_items_table : memref<2xi32>
    %out2 = memref.alloc() : memref<2x32xf32>
    kernel.launch @k_items(%x, %items, %out2) grid [2, 1, 1] block [32, 1, 1] smem 0 : memref<2x32xf32>, memref<2xi32>, memref<2x32xf32>
    %out3 = memref.alloc(%n) : memref<?xf32>
    kernel.launch @k_scatter(%where, %values, %out3, %n) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<8xi32>, memref<8xf32>, memref<?xf32>, index
    func.return %out, %out2, %out3 : memref<3x4xf32>, memref<2x32xf32>, memref<?xf32>
  }
}
