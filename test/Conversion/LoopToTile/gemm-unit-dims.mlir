// RUN: emmy-opt %s --split-input-file --choose-tile-schedule --lower-loop-to-tile | filecheck %s

// A tile.gemm operand walks a dim with each of its own; a loop.contract's may read a size-1
// dim at index 0. A decode step's one row ([1, K]) walks m, of extent 1, and gets the decode
// schedule of a product of few rows.

// CHECK-LABEL: tile.kernel @k_decode_row(
// CHECK:         tile.gemm %x[m, k] * %w[n, k] : memref<1x256xbf16>, memref<64x256xbf16> -> f32 atom mma_sync m16n8k16
// CHECK-SAME:      epilogue(%i, %j, %acc) {
// CHECK-NEXT:      memref.store %acc, %out[%i, %j] : memref<1x64xf32>

loop.kernel @k_decode_row(%w: memref<64x256xbf16>, %x: memref<1x256xbf16>, %out: memref<1x64xf32>) {
  loop.contract (%i, %j) in [1, 64], k in 256, %acc = sum %x[0, k] * %w[d1, k] : memref<1x256xbf16>, memref<64x256xbf16> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<1x64xf32>
  }
}

// -----

// A [1, S, K] input's batch of one, read at 0 in the space of the product's [S, N] rows,
// walks a unit batch dim of the gemm's own, b0 before m and n; the epilogue takes its index
// and ignores it.

// CHECK-LABEL: tile.kernel @k_batch_of_one(
// CHECK:         tile.gemm %x[b0, m, k] * %w[n, k] : memref<1x130x64xbf16>, memref<72x64xbf16> -> f32 atom wgmma m64n64k16
// CHECK-SAME:      epilogue(%{{.*}}, %i, %j, %acc) {
// CHECK-NEXT:      memref.store %acc, %out[%i, %j] : memref<130x72xf32>

loop.kernel @k_batch_of_one(%w: memref<72x64xbf16>, %x: memref<1x130x64xbf16>, %out: memref<130x72xf32>) {
  loop.contract (%i, %j) in [130, 72], k in 64, %acc = sum %x[0, d0, k] * %w[d1, k] : memref<1x130x64xbf16>, memref<72x64xbf16> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<130x72xf32>
  }
}

// -----

// Decode rows of several sequences ([B, 1, K]): the one token's dim walks a unit batch dim.

// CHECK-LABEL: tile.kernel @k_decode_batch(
// CHECK:         tile.gemm %x[m, b0, k] * %w[n, k] : memref<5x1x64xbf16>, memref<48x64xbf16> -> f32 atom mma_sync m16n8k16

loop.kernel @k_decode_batch(%w: memref<48x64xbf16>, %x: memref<5x1x64xbf16>, %out: memref<5x48xf32>) {
  loop.contract (%i, %j) in [5, 48], k in 64, %acc = sum %x[d0, 0, k] * %w[d1, k] : memref<5x1x64xbf16>, memref<48x64xbf16> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<5x48xf32>
  }
}
