// RUN: emmy-opt %s --split-input-file --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// A two-dimensional nest: the grid_y loop over rows starts at blockIdx.y and steps by
// gridDim.y; the global loop inside it spreads a row over the blocks of a row of the grid,
// from (blockIdx.x * 128 + threadIdx.x) * 4 in steps of gridDim.x * 128 * 4.

// CHECK-LABEL: kernel.func @k_silu(
// CHECK-DAG:     %[[TID:.*]] = kernel.thread_id x
// CHECK-DAG:     %[[BX:.*]] = kernel.block_id x
// CHECK-DAG:     %[[GX:.*]] = kernel.grid_dim x
// CHECK-DAG:     %[[BY:.*]] = kernel.block_id y
// CHECK-DAG:     %[[GY:.*]] = kernel.grid_dim y
// CHECK:         scf.for %[[I:.*]] = %[[BY]] to %{{.*}} step %[[GY]] {
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK-NEXT:      %[[T:.*]] = arith.addi %[[BASE]], %[[TID]] : index
// CHECK-NEXT:      %[[FIRST:.*]] = arith.muli %[[T]], %c4 : index
// CHECK-NEXT:      %[[STEP:.*]] = arith.muli %[[GX]], %c512 : index
// CHECK-NEXT:      scf.for %[[J:.*]] = %[[FIRST]] to %{{.*}} step %[[STEP]] {
// CHECK-NEXT:        %{{.*}} = kernel.vector_load %{{.*}}[%[[I]], %[[J]]] : memref<16x4096xf32>, vector<4xf32>
// CHECK:             kernel.vector_store
// CHECK-LABEL: func.func @forward(
// CHECK:         kernel.launch @k_silu(%{{.*}}, %{{.*}}) grid [8, 16, 1] block [128, 1, 1] smem 0

tile.kernel @k_silu(%x: memref<16x4096xf32>, %y: memref<16x4096xf32>) grid [8, 16, 1] block [128, 1, 1] {
  tile.for %i in 0 to 16 map grid_y {
    tile.for %j in 0 to 4096 map global vector 4 {
      %v = memref.load %x[%i, %j] : memref<16x4096xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %y[%i, %j] : memref<16x4096xf32>
    }
  }
}
func.func @forward(%x: memref<16x4096xf32>) -> memref<16x4096xf32> {
  %y = memref.alloc() : memref<16x4096xf32>
  tile.launch @k_silu(%x, %y) : memref<16x4096xf32>, memref<16x4096xf32>
  func.return %y : memref<16x4096xf32>
}

// -----

// The dimension is the mapping's, not the nest's: a grid_y loop around thread loops reads
// blockIdx.y too, and a grid loop inside it blockIdx.x.

// CHECK-LABEL: kernel.func @k_rows_and_columns(
// CHECK-DAG:     %[[BX:.*]] = kernel.block_id x
// CHECK-DAG:     %[[GX:.*]] = kernel.grid_dim x
// CHECK-DAG:     %[[BY:.*]] = kernel.block_id y
// CHECK-DAG:     %[[GY:.*]] = kernel.grid_dim y
// CHECK:         scf.for %[[I:.*]] = %[[BY]] to %{{.*}} step %[[GY]] {
// CHECK-NEXT:      scf.for %[[J:.*]] = %[[BX]] to %{{.*}} step %[[GX]] {
// CHECK:             memref.load %{{.*}}[%[[I]], %[[J]], %{{.*}}] : memref<4x8x64xf32>

tile.kernel @k_rows_and_columns(%x: memref<4x8x64xf32>) grid [8, 4, 1] block [64, 1, 1] {
  tile.for %i in 0 to 4 map grid_y {
    tile.for %j in 0 to 8 map grid {
      tile.for %k in 0 to 64 map thread {
        %v = memref.load %x[%i, %j, %k] : memref<4x8x64xf32>
        %w = arith.mulf %v, %v : f32
        memref.store %w, %x[%i, %j, %k] : memref<4x8x64xf32>
      }
    }
  }
}

// -----

// A block of 8 rows of 16 threads: each row (threadIdx.y) takes its own iteration of the rows
// loop, from blockIdx.x * 8 + threadIdx.y in steps of gridDim.x * 8, and its thread loop
// runs over threadIdx.x alone (16 threads of 8 elements cover the row of 128: one step).

// CHECK-LABEL: kernel.func @k_rows_per_block(
// CHECK-DAG:     %[[TX:.*]] = kernel.thread_id x
// CHECK-DAG:     %[[TY:.*]] = kernel.thread_id y
// CHECK-DAG:     %[[BX:.*]] = kernel.block_id x
// CHECK-DAG:     %[[GX:.*]] = kernel.grid_dim x
// CHECK:         %[[BASE:.*]] = arith.muli %[[BX]], %c8 : index
// CHECK-NEXT:    %[[FIRST:.*]] = arith.addi %[[BASE]], %[[TY]] : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.muli %[[GX]], %c8 : index
// CHECK:         scf.for %[[I:.*]] = %[[FIRST]] to %c100 step %[[STEP]] {
// CHECK-NEXT:      %[[J:.*]] = arith.muli %[[TX]], %c8 : index
// CHECK-NEXT:      %{{.*}} = kernel.vector_load %{{.*}}[%[[I]], %[[J]]] : memref<100x128xbf16>, vector<8xbf16>
// CHECK-NOT:       kernel.barrier
// CHECK-LABEL: func.func @forward(
// CHECK:         kernel.launch @k_rows_per_block(%{{.*}}, %{{.*}}) grid [13, 1, 1] block [16, 8, 1] smem 0

tile.kernel @k_rows_per_block(%x: memref<100x128xbf16>, %y: memref<100x128xbf16>) grid [13, 1, 1] block [16, 8, 1] {
  tile.for %i in 0 to 100 map rows {
    tile.for %j in 0 to 128 map thread vector 8 {
      %v = memref.load %x[%i, %j] : memref<100x128xbf16>
      %w = arith.mulf %v, %v : bf16
      memref.store %w, %y[%i, %j] : memref<100x128xbf16>
    }
  }
}
func.func @forward(%x: memref<100x128xbf16>) -> memref<100x128xbf16> {
  %y = memref.alloc() : memref<100x128xbf16>
  tile.launch @k_rows_per_block(%x, %y) : memref<100x128xbf16>, memref<100x128xbf16>
  func.return %y : memref<100x128xbf16>
}
