// RUN: emmy-opt %s --split-input-file --lower-loop-to-tile | filecheck %s

// A loop.contract over the dynamic size becomes a tile.gemm of its ? buffers. Its grid is
// the tiles at the module's representative size (its declared maximum, 512): 8 tiles of 64
// rows along x (the batch's M tiles), 2 of 64 columns along y; the launch gives the blocks
// that a size needs.

// CHECK-LABEL: tile.kernel @k_linear(
// CHECK-SAME:    %[[W:[a-z0-9_]+]]: memref<96x64xbf16>, %[[X:[a-z0-9_]+]]: memref<1x?x64xbf16>, %[[OUT:[a-z0-9_]+]]: memref<1x?x96xbf16>, %[[S:[a-z0-9_]+]]: index) grid [8, 2, 1] block [128, 1, 1]
// CHECK-NEXT:    tile.gemm %[[X]][b0, m, k] * %[[W]][n, k] : memref<1x?x64xbf16>, memref<96x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%[[B:.*]], %[[M:.*]], %[[N:.*]], %[[ACC:.*]]) {
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK-NEXT:      memref.store %[[T]], %[[OUT]][%[[B]], %[[M]], %[[N]]] : memref<1x?x96xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK:       tile.launch @k_linear(%{{.*}}, %{{.*}}, %{{.*}}, %s0)

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 512 : i64}} {
  loop.kernel @k_linear(%w: memref<96x64xbf16>, %x: memref<1x?x64xbf16>, %out: memref<1x?x96xbf16>, %s0: index) attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>} {
    loop.contract (%i0, %i1, %i2) in [1, %s0, 96], k in 64, %acc = sum %x[d0, d1, k] * %w[d2, k] : memref<1x?x64xbf16>, memref<96x64xbf16> -> f32 {
      %t = arith.truncf %acc : f32 to bf16
      loop.store %t, %out[%i0, %i1, %i2] : memref<1x?x96xbf16>
    }
  }
  func.func @forward(%w: memref<96x64xbf16>, %x: memref<1x?x64xbf16>) -> memref<1x?x96xbf16> {
    %c1 = arith.constant 1 : index
    %s0 = memref.dim %x, %c1 : memref<1x?x64xbf16>
    %y = memref.alloc(%s0) : memref<1x?x96xbf16>
    loop.launch @k_linear(%w, %x, %y, %s0) : memref<96x64xbf16>, memref<1x?x64xbf16>, memref<1x?x96xbf16>, index
    func.return %y : memref<1x?x96xbf16>
  }
}

// -----

// Causal attention over a dynamic sequence length: a tile.attention of ? rows and keys,
// whose grid's x is the row blocks at the representative size (512 rows in blocks of 64).

// CHECK-LABEL: tile.kernel @k_sdpa(
// CHECK-SAME:    %[[Q:[a-z0-9_]+]]: memref<1x2x?x64xbf16>, %[[K:[a-z0-9_]+]]: memref<1x2x?x64xbf16>, %[[V:[a-z0-9_]+]]: memref<1x2x?x64xbf16>, %[[O:[a-z0-9_]+]]: memref<1x2x?x64xbf16>, %{{.*}}: index) grid [8, 1, 2] block [128, 1, 1]
// CHECK-NEXT:    tile.attention %[[Q]], %[[K]], %[[V]] scale 1.250000e-01 causal into %[[O]] : memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16> into memref<1x2x?x64xbf16> atom mma_sync m16n8k16 tile [64, 64, 64] warps [4, 1] pipeline 2

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 512 : i64}} {
  loop.kernel @k_sdpa(%q: memref<1x2x?x64xbf16>, %k: memref<1x2x?x64xbf16>, %v: memref<1x2x?x64xbf16>, %o: memref<1x2x?x64xbf16>, %s0: index) attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 64], atom mma_sync m16n8k16, warps [4, 1], pipeline 2>} {
    loop.attention %q, %k, %v scale 1.250000e-01 causal into %o : memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16> into memref<1x2x?x64xbf16>
  }
  func.func @forward(%q: memref<1x2x?x64xbf16>, %k: memref<1x2x?x64xbf16>, %v: memref<1x2x?x64xbf16>) -> memref<1x2x?x64xbf16> {
    %c2 = arith.constant 2 : index
    %s0 = memref.dim %q, %c2 : memref<1x2x?x64xbf16>
    %o = memref.alloc(%s0) : memref<1x2x?x64xbf16>
    loop.launch @k_sdpa(%q, %k, %v, %o, %s0) : memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>, index
    func.return %o : memref<1x2x?x64xbf16>
  }
}
