// RUN: emmy-opt %s --split-input-file --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// nn.Linear with a bias: Y (40x32) = X (40x48) W^T + b, W [N, K]. The blocks take 32x32 tiles
// (grid [1, 2, 1], the second tile of M half past the end) in K slices of 32 (the second half
// past the end), two slices in shared memory at once (pipeline 2), each of 2 warps 16x32 of
// the tile: one A atom row, four B atom columns.
//
// Each tile of 32x32 bf16 lies in shared memory as rows of 64 bytes, swizzled; the block
// copies it 16 bytes a cp.async, 2 copies a thread; a copy past the end of M or K reads
// nothing (src_bytes 0, from element [0, 0]) and zero-fills. Before the K loop the first
// slice is in flight; iteration kt waits for slice kt (cp_async_wait 0: one slice ahead),
// passes a barrier, starts slice kt + 1 if there is one, commits, and multiplies slice kt.

// CHECK-LABEL: kernel.func @linear(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<40x48xbf16>, %[[W:[a-z0-9_]+]]: memref<32x48xbf16>, %[[BIAS:[a-z0-9_]+]]: memref<32xf32>, %[[Y:[a-z0-9_]+]]: memref<40x32xbf16>) block [64, 1, 1] {
// CHECK:         %[[A:.*]] = kernel.shared_alloc {layout = #kernel.swizzle<64>} : memref<2x1x32x32xbf16, 3 : i32>
// CHECK-NEXT:    %[[B:.*]] = kernel.shared_alloc {layout = #kernel.swizzle<64>} : memref<2x1x32x32xbf16, 3 : i32>
// CHECK:         %[[INSIDE:.*]] = arith.andi
// CHECK-NEXT:    %[[ROW:.*]] = arith.select %[[INSIDE]], %{{.*}}, %[[C0:.*]] : index
// CHECK-NEXT:    %[[COL:.*]] = arith.select %[[INSIDE]], %{{.*}}, %[[C0]] : index
// CHECK:         %[[BYTES:.*]] = arith.select %[[INSIDE]], %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    kernel.cp_async %[[A]][%[[C0]], %{{.*}}], %[[X]][%[[ROW]], %[[COL]]] bytes 16 src_bytes %[[BYTES]] : memref<2x1x32x32xbf16, 3 : i32>, memref<40x48xbf16>
// CHECK-COUNT-3: kernel.cp_async %
// CHECK-NEXT:    kernel.cp_async_commit
// CHECK:         %{{.*}} = scf.for %[[KT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[ZERO:.*]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[ZERO]]) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) {
// CHECK-NEXT:      kernel.cp_async_wait 0
// CHECK-NEXT:      kernel.barrier
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[KT]], %{{.*}} : index
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi ult, %[[NEXT]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[MORE]] {
// CHECK-COUNT-4:     kernel.cp_async %
// CHECK:           }
// CHECK-NEXT:      kernel.cp_async_commit
// CHECK-NEXT:      %[[STAGE:.*]] = arith.remui %[[KT]], %{{.*}} : index
// CHECK:           %[[FA:.*]] = kernel.ldmatrix %[[A]][%[[STAGE]], %{{.*}}] : memref<2x1x32x32xbf16, 3 : i32>, vector<8xbf16>
// CHECK:           %[[FB:.*]] = kernel.ldmatrix %[[B]][%[[STAGE]], %{{.*}}] : memref<2x1x32x32xbf16, 3 : i32>, vector<8xbf16>
// CHECK:           %[[B0:.*]] = vector.extract %[[FB]][0] : bf16 from vector<8xbf16>
// CHECK:           %[[FB0:.*]] = vector.insert %{{.*}}, %{{.*}} [3] : bf16 into vector<4xbf16>
// CHECK:           kernel.mma_sync m16n8k16 %[[FA]], %[[FB0]], %{{.*}} : vector<8xbf16>, vector<4xbf16>, vector<4xf32> -> vector<4xf32>
// CHECK-COUNT-7:   kernel.mma_sync m16n8k16
// CHECK:           scf.yield
// CHECK-NEXT:    }
// The epilogue of elements 0 and 1 of the first atom: row g, columns 2t and 2t + 1, under
// m < 40, stored as one pair.
// CHECK:         %[[E0:.*]] = vector.extract %{{.*}}[0] : f32 from vector<4xf32>
// CHECK-NEXT:    %[[E1:.*]] = vector.extract %{{.*}}[1] : f32 from vector<4xf32>
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpi ult, %[[M:.*]], %{{.*}} : index
// CHECK-NEXT:    scf.if %[[IN]] {
// CHECK-NEXT:      %[[BN:.*]] = memref.load %[[BIAS]][%[[N:.*]]] : memref<32xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[E0]], %[[BN]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT:      %[[N1:.*]] = arith.addi %[[N]], %c1 : index
// CHECK-NEXT:      %[[BN1:.*]] = memref.load %[[BIAS]][%[[N1]]] : memref<32xf32>
// CHECK-NEXT:      %[[S1:.*]] = arith.addf %[[E1]], %[[BN1]] : f32
// CHECK-NEXT:      %[[T1:.*]] = arith.truncf %[[S1]] : f32 to bf16
// CHECK-NEXT:      %[[P:.*]] = vector.broadcast %[[T]] : bf16 to vector<2xbf16>
// CHECK-NEXT:      %[[PAIR:.*]] = vector.insert %[[T1]], %[[P]] [1] : bf16 into vector<2xbf16>
// CHECK-NEXT:      kernel.vector_store %[[PAIR]], %[[Y]][%[[M]], %[[N]]] : memref<40x32xbf16>, vector<2xbf16>
// CHECK-NEXT:    }
// CHECK-COUNT-7: kernel.vector_store
// CHECK-NOT:     memref.store
// CHECK-LABEL: func.func @forward(
// CHECK:         kernel.launch @linear(%{{.*}}) grid [1, 2, 1] block [64, 1, 1] smem 0

tile.kernel @linear(%x: memref<40x48xbf16>, %w: memref<32x48xbf16>, %bias: memref<32xf32>, %y: memref<40x32xbf16>) grid [1, 2, 1] block [64, 1, 1] {
  tile.gemm %x[m, k] * %w[n, k] : memref<40x48xbf16>, memref<32x48xbf16> -> f32 atom mma_sync m16n8k16 tile [32, 32, 32] warps [2, 1] pipeline 2 epilogue(%m, %n, %acc) {
    %b = memref.load %bias[%n] : memref<32xf32>
    %s = arith.addf %acc, %b : f32
    %t = arith.truncf %s : f32 to bf16
    memref.store %t, %y[%m, %n] : memref<40x32xbf16>
  }
}
func.func @forward(%x: memref<40x48xbf16>, %w: memref<32x48xbf16>, %bias: memref<32xf32>) -> memref<40x32xbf16> {
  %y = memref.alloc() : memref<40x32xbf16>
  tile.launch @linear(%x, %w, %bias, %y) : memref<40x48xbf16>, memref<32x48xbf16>, memref<32xf32>, memref<40x32xbf16>
  func.return %y : memref<40x32xbf16>
}

// -----

// A batched product of [K, N] B with no tails: B's tiles are rows of N (128 columns: two
// panels of 64, 128 bytes a row, swizzled in 128-byte spans), loaded with ldmatrix x4 trans;
// nothing is predicated; the blocks stride through the batch of 3 by the grid's z, and a
// barrier at the top of each batch keeps the next batch's copies from overwriting slices the
// last batch may still read.

// CHECK-LABEL: kernel.func @bmm(
// CHECK:         %[[BT:.*]] = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<3x2x32x64xf16, 3 : i32>
// CHECK:         %[[Z:.*]] = kernel.block_id z
// CHECK-NEXT:    %[[GZ:.*]] = kernel.grid_dim z
// CHECK:         scf.for %[[BATCH:.*]] = %[[Z]] to %{{.*}} step %[[GZ]] {
// CHECK-NEXT:      kernel.barrier
// CHECK-NOT:       src_bytes
// CHECK:           kernel.cp_async %[[BT]][%{{.*}}], %{{.*}}[%[[BATCH]], %{{.*}}, %{{.*}}] bytes 16 : memref<3x2x32x64xf16, 3 : i32>, memref<3x64x128xf16>
// CHECK:           kernel.ldmatrix %[[BT]][%{{.*}}] trans : memref<3x2x32x64xf16, 3 : i32>, vector<8xf16>
// CHECK:           kernel.vector_store %{{.*}}, %{{.*}}[%[[BATCH]], %{{.*}}, %{{.*}}] : memref<3x64x128xf32>, vector<2xf32>
// CHECK-NOT:       scf.if
// CHECK-LABEL: func.func @forward(
// CHECK:         kernel.launch @bmm(%{{.*}}) grid [1, 1, 3] block [128, 1, 1] smem 0

tile.kernel @bmm(%a: memref<3x64x64xf16>, %b: memref<3x64x128xf16>, %y: memref<3x64x128xf32>) grid [1, 1, 3] block [128, 1, 1] {
  tile.gemm %a[b0, m, k] * %b[b0, k, n] : memref<3x64x64xf16>, memref<3x64x128xf16> -> f32 atom mma_sync m16n8k16 tile [64, 128, 32] warps [2, 2] pipeline 3 epilogue(%i, %m, %n, %acc) {
    memref.store %acc, %y[%i, %m, %n] : memref<3x64x128xf32>
  }
}
func.func @forward(%a: memref<3x64x64xf16>, %b: memref<3x64x128xf16>) -> memref<3x64x128xf32> {
  %y = memref.alloc() : memref<3x64x128xf32>
  tile.launch @bmm(%a, %b, %y) : memref<3x64x64xf16>, memref<3x64x128xf16>, memref<3x64x128xf32>
  func.return %y : memref<3x64x128xf32>
}

// -----

// Epilogues whose pairs of columns are adjacent elements of the output: at a constant batch
// index (the [1, M, N] output of a Linear on [1, M, K]), and at n / 16 and n % 16 (the heads
// of a [B, H, S, D] projection: an even column and the next share the head) are stored as
// pairs; at n / 5 and n % 5 an even column may be a head's last, so each element is its own.

// CHECK-LABEL: kernel.func @batch_of_one(
// CHECK:         kernel.vector_store %{{.*}}, %{{.*}}[%c0, %{{.*}}, %{{.*}}] : memref<1x64x32xbf16>, vector<2xbf16>
// CHECK-NOT:     memref.store
// CHECK-LABEL: kernel.func @heads(
// CHECK:         %[[H:h]] = arith.divui %[[N:[0-9]+]], %c16 : index
// CHECK-NEXT:    %[[D:d]] = arith.remui %[[N]], %c16 : index
// CHECK:         kernel.vector_store %{{.*}}, %{{.*}}[%[[H]], %{{.*}}, %[[D]]] : memref<2x64x16xbf16>, vector<2xbf16>
// CHECK-NOT:     memref.store
// CHECK-LABEL: kernel.func @odd_heads(
// CHECK-NOT:     kernel.vector_store
// CHECK:         memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<6x64x5xbf16>
// CHECK-NOT:     kernel.vector_store

tile.kernel @batch_of_one(%x: memref<64x32xbf16>, %w: memref<32x32xbf16>, %y: memref<1x64x32xbf16>) grid [1, 1, 1] block [128, 1, 1] {
  tile.gemm %x[m, k] * %w[n, k] : memref<64x32xbf16>, memref<32x32xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 32, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    %c0 = arith.constant 0 : index
    %t = arith.truncf %acc : f32 to bf16
    memref.store %t, %y[%c0, %m, %n] : memref<1x64x32xbf16>
  }
}
tile.kernel @heads(%x: memref<64x32xbf16>, %w: memref<32x32xbf16>, %y: memref<2x64x16xbf16>) grid [1, 1, 1] block [128, 1, 1] {
  tile.gemm %x[m, k] * %w[n, k] : memref<64x32xbf16>, memref<32x32xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 32, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    %c16 = arith.constant 16 : index
    %h = arith.divui %n, %c16 : index
    %d = arith.remui %n, %c16 : index
    %t = arith.truncf %acc : f32 to bf16
    memref.store %t, %y[%h, %m, %d] : memref<2x64x16xbf16>
  }
}
tile.kernel @odd_heads(%x: memref<64x32xbf16>, %w: memref<30x32xbf16>, %y: memref<6x64x5xbf16>) grid [1, 1, 1] block [128, 1, 1] {
  tile.gemm %x[m, k] * %w[n, k] : memref<64x32xbf16>, memref<30x32xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 32, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    %c5 = arith.constant 5 : index
    %h = arith.divui %n, %c5 : index
    %d = arith.remui %n, %c5 : index
    %t = arith.truncf %acc : f32 to bf16
    memref.store %t, %y[%h, %m, %d] : memref<6x64x5xbf16>
  }
}
func.func @forward(%x: memref<64x32xbf16>, %w: memref<32x32xbf16>, %w30: memref<30x32xbf16>) -> (memref<1x64x32xbf16>, memref<2x64x16xbf16>, memref<6x64x5xbf16>) {
  %y = memref.alloc() : memref<1x64x32xbf16>
  tile.launch @batch_of_one(%x, %w, %y) : memref<64x32xbf16>, memref<32x32xbf16>, memref<1x64x32xbf16>
  %z = memref.alloc() : memref<2x64x16xbf16>
  tile.launch @heads(%x, %w, %z) : memref<64x32xbf16>, memref<32x32xbf16>, memref<2x64x16xbf16>
  %o = memref.alloc() : memref<6x64x5xbf16>
  tile.launch @odd_heads(%x, %w30, %o) : memref<64x32xbf16>, memref<30x32xbf16>, memref<6x64x5xbf16>
  func.return %y, %z, %o : memref<1x64x32xbf16>, memref<2x64x16xbf16>, memref<6x64x5xbf16>
}
