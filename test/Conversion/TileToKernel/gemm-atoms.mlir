// RUN: emmy-opt %s --split-input-file --verify-diagnostics --lower-tile-to-kernel

// lower-tile-to-kernel realises the mma_sync and wgmma atoms; the fma atom verifies at Tile IR
// but has no lowering yet, which is an error at the tile.gemm.

tile.kernel @fma(%a: memref<32x8xf32>, %b: memref<8x32xf32>, %y: memref<32x32xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{pass 'lower-tile-to-kernel' failed: lower-tile-to-kernel realises the mma_sync and wgmma atoms, not yet fma}}
  tile.gemm %a[m, k] * %b[k, n] : memref<32x8xf32>, memref<8x32xf32> -> f32 atom fma tile [32, 32, 8] warps [1, 1] pipeline 1 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<32x32xf32>
  }
}
