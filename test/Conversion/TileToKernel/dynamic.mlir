// RUN: emmy-opt %s --split-input-file --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// A grid loop to the dynamic size strides over the blocks up to the kernel's size argument;
// the launch runs a block per row of it (`sized [1, 1, 1]`), at most the grid's 4096.

// CHECK-LABEL: kernel.func @k_scale(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: index) block [32, 1, 1] {
// CHECK:         %[[BLOCK:.*]] = kernel.block_id x
// CHECK-NEXT:    %[[GRID:.*]] = kernel.grid_dim x
// CHECK:         scf.for %{{.*}} = %[[BLOCK]] to %[[S]] step %[[GRID]] {
// CHECK:       kernel.launch @k_scale(%{{.*}}, %{{.*}}, %{{.*}}, %s0) grid [4096, 1, 1] sized [1, 1, 1] block [32, 1, 1] smem 0

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 4096 : i64}} {
  tile.kernel @k_scale(%a: memref<?x64xf32>, %b: memref<64xf32>, %out: memref<?x64xf32>, %s0: index) grid [4096, 1, 1] block [32, 1, 1] {
    tile.for %i0 in 0 to %s0 map grid {
      tile.for %i1 in 0 to 64 map thread vector 4 {
        %0 = memref.load %a[%i0, %i1] : memref<?x64xf32>
        %1 = memref.load %b[%i1] : memref<64xf32>
        %r = arith.mulf %0, %1 : f32
        memref.store %r, %out[%i0, %i1] : memref<?x64xf32>
      }
    }
  }
  func.func @forward(%x: memref<?x64xf32>, %w: memref<64xf32>) -> memref<?x64xf32> {
    %c0 = arith.constant 0 : index
    %s0 = memref.dim %x, %c0 : memref<?x64xf32>
    %y = memref.alloc(%s0) : memref<?x64xf32>
    tile.launch @k_scale(%x, %w, %y, %s0) : memref<?x64xf32>, memref<64xf32>, memref<?x64xf32>, index
    func.return %y : memref<?x64xf32>
  }
}

// -----

// A chain of grid loops over [4, ?, ?] (attention's scores): its rows are 4 * size * size,
// which the grid loop runs to and takes apart with the size; the launch runs that many
// blocks (`sized [4, 1, 2]`: 4 * size^2 / 1).

// CHECK-LABEL: kernel.func @k_scores(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: index) block [32, 1, 1] {
// CHECK:         %[[ROW:.*]] = arith.muli %[[S]], %[[S]] : index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[ROWS:.*]] = arith.muli %[[ROW]], %[[C4]] : index
// CHECK-NEXT:    scf.for %[[L:.*]] = %{{.*}} to %[[ROWS]] step %{{.*}} {
// CHECK-NEXT:      %[[H:.*]] = arith.divui %[[L]], %[[ROW]] : index
// CHECK-NEXT:      %[[Q:.*]] = arith.divui %[[L]], %[[S]] : index
// CHECK-NEXT:      %[[QS:.*]] = arith.remui %[[Q]], %[[S]] : index
// CHECK-NEXT:      %[[K:.*]] = arith.remui %[[L]], %[[S]] : index
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[H]], %[[QS]], %[[K]]] : memref<4x?x?xf32>
// CHECK:       kernel.launch @k_scores(%{{.*}}, %{{.*}}, %s0) grid [65536, 1, 1] sized [4, 1, 2] block [32, 1, 1] smem 0

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 128 : i64}} {
  tile.kernel @k_scores(%a: memref<4x?x?xf32>, %out: memref<4x?x?xf32>, %s0: index) grid [65536, 1, 1] block [32, 1, 1] {
    tile.for %h in 0 to 4 map grid {
      tile.for %q in 0 to %s0 map grid {
        tile.for %k in 0 to %s0 map grid {
          %0 = memref.load %a[%h, %q, %k] : memref<4x?x?xf32>
          %1 = arith.mulf %0, %0 : f32
          memref.store %1, %out[%h, %q, %k] : memref<4x?x?xf32>
        }
      }
    }
  }
  func.func @forward(%x: memref<4x?x?xf32>) -> memref<4x?x?xf32> {
    %c1 = arith.constant 1 : index
    %s0 = memref.dim %x, %c1 : memref<4x?x?xf32>
    %y = memref.alloc(%s0, %s0) : memref<4x?x?xf32>
    tile.launch @k_scores(%x, %y, %s0) : memref<4x?x?xf32>, memref<4x?x?xf32>, index
    func.return %y : memref<4x?x?xf32>
  }
}

// -----

// A reduction along the dynamic size, mapped to the threads of a block: each thread strides
// from its id to the size; a launch of static grid loops is not sized.

// CHECK-LABEL: kernel.func @k_max(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: index) block [512, 1, 1] {
// CHECK:         %[[T:.*]] = kernel.thread_id x
// CHECK:         scf.for %{{.*}} = %[[T]] to %[[S]] step %c512 iter_args(
// CHECK:       kernel.launch @k_max(%{{.*}}, %{{.*}}, %s0) grid [4, 1, 1] block [512, 1, 1] smem 0

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64}} {
  tile.kernel @k_max(%a: memref<4x?xf32>, %out: memref<4xf32>, %s0: index) grid [4, 1, 1] block [512, 1, 1] {
    tile.for %i0 in 0 to 4 map grid {
      %m = tile.for %r1 in 0 to %s0 map thread reduce max init -inf : f32 {
        %x = memref.load %a[%i0, %r1] : memref<4x?xf32>
        tile.yield %x : f32
      }
      memref.store %m, %out[%i0] : memref<4xf32>
    }
  }
  func.func @forward(%x: memref<4x?xf32>) -> memref<4xf32> {
    %c1 = arith.constant 1 : index
    %s0 = memref.dim %x, %c1 : memref<4x?xf32>
    %m = memref.alloc() : memref<4xf32>
    tile.launch @k_max(%x, %m, %s0) : memref<4x?xf32>, memref<4xf32>, index
    func.return %m : memref<4xf32>
  }
}
