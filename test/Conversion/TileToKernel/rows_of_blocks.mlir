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
