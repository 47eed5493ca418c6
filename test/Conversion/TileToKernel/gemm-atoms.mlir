// RUN: emmy-opt %s --split-input-file --lower-tile-to-kernel | filecheck %s

// The fma atom: a register-tiled SIMT GEMM. The warp's 32 lanes lie 4 x 8 over its 32 x 32
// tile, each accumulating the 8 x 4 register tile of rows r + 4i and columns c + 8j in f32
// scalars carried through the K loop. K slices of 4 go through shared memory by cp.async,
// 2 deep (rows of 16 bytes are not swizzled; B's 128-byte rows are); for each k of a slice
// the thread loads its 8 elements of A and 4 of B, then multiply-adds the 32 pairs. Rows of
// A past M = 40 are zero-filled, and the epilogue stores under m < 40.

// CHECK-LABEL: kernel.func @fma
// CHECK:         %tid = kernel.thread_id x
// CHECK:         %[[LANE:.*]] = arith.remui %tid, %c32 : index
// CHECK:         %[[LANE_M:.*]] = arith.divui %[[LANE]], %c8 : index
// CHECK:         %[[ROW0:.*]] = arith.addi %{{.*}}, %[[LANE_M]] : index
// CHECK:         %[[COLUMN0:.*]] = arith.remui %[[LANE]], %c8 : index
// CHECK:         %[[ROW1:.*]] = arith.addi %[[ROW0]], %c4 : index
// CHECK:         %[[COLUMN1:.*]] = arith.addi %[[COLUMN0]], %c8 : index
// CHECK:         %a_tiles = kernel.shared_alloc : memref<2x1x32x4xf32, 3 : i32>
// CHECK:         %b_tiles = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x1x4x32xf32, 3 : i32>
// CHECK:         kernel.cp_async %a_tiles[%c0, %c0, %tid, %c0], %a[{{.*}}] bytes 16 src_bytes %{{.*}}
// CHECK:         kernel.cp_async %b_tiles[%c0, %c0, {{.*}}], %b[{{.*}}] bytes 16 :
// CHECK-NEXT:    kernel.cp_async_commit
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    {{^ *}}%[[Y0:[0-9]+]], {{.*}} = scf.for
// CHECK-SAME:      %[[SLICE:[0-9]+]] = %c0 to %c2 step %c1
// CHECK-SAME:      iter_args(%[[ACC0:[0-9]+]] = %[[ZERO]], %[[ACC1:[0-9]+]] = %[[ZERO]],
// CHECK-SAME:      -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT:      kernel.cp_async_wait 0
// CHECK-NEXT:      kernel.barrier
// CHECK:           scf.if
// CHECK-COUNT-2:     kernel.cp_async
// CHECK:           kernel.cp_async_commit
// CHECK-NEXT:      %[[STAGE:.*]] = arith.remui %[[SLICE]], %c2 : index
// CHECK-NEXT:      %[[A0:.*]] = memref.load %a_tiles[%[[STAGE]], %c0, %[[ROW0]], %c0]
// CHECK-NEXT:      %[[A1:.*]] = memref.load %a_tiles[%[[STAGE]], %c0, %[[ROW1]], %c0]
// CHECK-COUNT-6:   memref.load %a_tiles
// CHECK-NEXT:      %[[B0:.*]] = memref.load %b_tiles[%[[STAGE]], %c0, %c0, %[[COLUMN0]]]
// CHECK-NEXT:      %[[B1:.*]] = memref.load %b_tiles[%[[STAGE]], %c0, %c0, %[[COLUMN1]]]
// CHECK-COUNT-2:   memref.load %b_tiles
// CHECK-NEXT:      %[[P00:.*]] = math.fma %[[A0]], %[[B0]], %[[ACC0]] : f32
// CHECK-NEXT:      %{{.*}} = math.fma %[[A0]], %[[B1]], %[[ACC1]] : f32
// CHECK-COUNT-30:  math.fma
// CHECK-NEXT:      memref.load %a_tiles[%[[STAGE]], %c0, %[[ROW0]], %c1]
// CHECK:           math.fma %{{.*}}, %{{.*}}, %[[P00]] : f32
// CHECK:           scf.yield
// CHECK:         %[[M:.*]] = arith.addi %{{.*}}, %[[ROW0]] : index
// CHECK:         %[[INSIDE:.*]] = arith.cmpi ult, %[[M]], %c40 : index
// CHECK-NEXT:    scf.if %[[INSIDE]] {
// CHECK-NEXT:      memref.store %[[Y0]], %y[%[[M]], %{{.*}}] : memref<40x32xf32>

tile.kernel @fma(%a: memref<40x8xf32>, %b: memref<8x32xf32>, %y: memref<40x32xf32>) grid [1, 2, 1] block [32, 1, 1] {
  tile.gemm %a[m, k] * %b[k, n] : memref<40x8xf32>, memref<8x32xf32> -> f32 atom fma tile [32, 32, 4] warps [1, 1] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<40x32xf32>
  }
}

// -----

// mma_sync m16n8k8 of f32 operands: tensor cores on tf32. ldmatrix moves 32-bit words, so
// tiles whose rows run along K give their fragments as 16-bit ones do, 8 x 4 f32 a matrix:
// A's x4 with lane l at row l % 16 and K column 4 (l / 16), B's x2 at N row l % 8 and K column
// 4 ((l / 8) % 2), the vectors kernel.mma_sync m16n8k8 tf32 takes.

// CHECK-LABEL: kernel.func @tf32
// CHECK:         %[[LANE:.*]] = arith.remui %tid, %c32 : index
// CHECK:         %[[EIGHTH:.*]] = arith.remui %[[LANE]], %c8 : index
// CHECK-NEXT:    %[[ROW16:.*]] = arith.remui %[[LANE]], %c16 : index
// CHECK:         %[[T4:.*]] = arith.addi %{{.*}}, %c4 : index
// CHECK-NEXT:    %[[Q:.*]] = arith.divui %[[LANE]], %c16 : index
// CHECK-NEXT:    %[[QK:.*]] = arith.muli %[[Q]], %c4 : index
// CHECK-NEXT:    %[[H:.*]] = arith.divui %[[LANE]], %c8 : index
// CHECK-NEXT:    %[[H2:.*]] = arith.remui %[[H]], %c2 : index
// CHECK-NEXT:    %[[HK:.*]] = arith.muli %[[H2]], %c4 : index
// CHECK:         %a_tiles = kernel.shared_alloc {layout = #kernel.swizzle<32>} : memref<1x1x16x8xf32, 3 : i32>
// CHECK:         %b_tiles = kernel.shared_alloc {layout = #kernel.swizzle<32>} : memref<1x1x8x8xf32, 3 : i32>
// CHECK:         scf.for
// CHECK:           kernel.cp_async_wait 0
// CHECK-NEXT:      kernel.barrier
// CHECK-NEXT:      %[[R:.*]] = arith.addi %{{.*}}, %[[ROW16]] : index
// CHECK-NEXT:      %[[AV:.*]] = kernel.ldmatrix %a_tiles[%c0, %c0, %[[R]], %[[QK]]] : memref<1x1x16x8xf32, 3 : i32>, vector<4xf32>
// CHECK-NEXT:      %[[BV:.*]] = kernel.ldmatrix %b_tiles[%c0, %c0, %[[EIGHTH]], %[[HK]]] : memref<1x1x8x8xf32, 3 : i32>, vector<2xf32>
// CHECK-NEXT:      %[[D:.*]] = kernel.mma_sync m16n8k8 tf32 %[[AV]], %[[BV]], %{{.*}} : vector<4xf32>, vector<2xf32>, vector<4xf32> -> vector<4xf32>
// CHECK-NEXT:      scf.yield %[[D]] : vector<4xf32>

tile.kernel @tf32(%a: memref<16x8xf32>, %b: memref<8x8xf32>, %y: memref<16x8xf32>) grid [1, 1, 1] block [32, 1, 1] {
  tile.gemm %a[m, k] * %b[n, k] : memref<16x8xf32>, memref<8x8xf32> -> f32 atom mma_sync m16n8k8 tile [16, 8, 8] warps [1, 1] pipeline 1 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<16x8xf32>
  }
}

// -----

// A [K, N] B's tile rows run along N, and ldmatrix's transpose would split its words: each
// lane loads its B elements one by one, at K t, t + 4 and N g (g = lane / 4, t = lane % 4).

// CHECK-LABEL: kernel.func @tf32_kn
// CHECK:         %[[LANE:.*]] = arith.remui %tid, %c32 : index
// CHECK:         %[[G:.*]] = arith.divui %[[LANE]], %c4 : index
// CHECK-NEXT:    %[[T:.*]] = arith.remui %[[LANE]], %c4 : index
// CHECK:         %[[T4:.*]] = arith.addi %[[T]], %c4 : index
// CHECK:         scf.for
// CHECK:           %[[AV:.*]] = kernel.ldmatrix %a_tiles[{{.*}}] : memref<1x1x16x8xf32, 3 : i32>, vector<4xf32>
// CHECK-NEXT:      %[[B0:.*]] = memref.load %b_tiles[%c0, %c0, %[[T]], %[[G]]]
// CHECK-NEXT:      %[[B1:.*]] = memref.load %b_tiles[%c0, %c0, %[[T4]], %[[G]]]
// CHECK-NEXT:      %[[BV0:.*]] = vector.broadcast %[[B0]] : f32 to vector<2xf32>
// CHECK-NEXT:      %[[BV:.*]] = vector.insert %[[B1]], %[[BV0]] [1] : f32 into vector<2xf32>
// CHECK-NEXT:      kernel.mma_sync m16n8k8 tf32 %[[AV]], %[[BV]], %{{.*}}

tile.kernel @tf32_kn(%a: memref<16x8xf32>, %b: memref<8x8xf32>, %y: memref<16x8xf32>) grid [1, 1, 1] block [32, 1, 1] {
  tile.gemm %a[m, k] * %b[k, n] : memref<16x8xf32>, memref<8x8xf32> -> f32 atom mma_sync m16n8k8 tile [16, 8, 8] warps [1, 1] pipeline 1 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<16x8xf32>
  }
}
