// RUN: emmy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A tile.kernel of ? buffers takes the dynamic size last; a loop mapped to the grid or the
// threads runs to it.

// CHECK-LABEL: tile.kernel @k_dynamic(
// CHECK-SAME:    %{{.*}}: memref<?x64xf32>, %[[S:[a-z0-9_]+]]: index) grid [2048, 1, 1] block [32, 1, 1] {
// CHECK-NEXT:    tile.for %{{.*}} in 0 to %[[S]] map grid {
// CHECK:       tile.launch @k_dynamic(%{{.*}}, %{{.*}}) : memref<?x64xf32>, index
tile.kernel @k_dynamic(%x: memref<?x64xf32>, %s0: index) grid [2048, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to %s0 map grid {
    tile.for %j in 0 to 64 map thread vector 4 {
      %v = memref.load %x[%i, %j] : memref<?x64xf32>
      memref.store %v, %x[%i, %j] : memref<?x64xf32>
    }
  }
}
func.func @forward(%x: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %s0 = memref.dim %x, %c0 : memref<?x64xf32>
  tile.launch @k_dynamic(%x, %s0) : memref<?x64xf32>, index
  func.return
}

// -----

tile.kernel @vector_to_the_size(%x: memref<4x?xf32>, %s0: index) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    // expected-error @+1 {{vector width 4 must divide the loop's trip count, but it runs to the dynamic size}}
    tile.for %j in 0 to %s0 map thread vector 4 {
      %v = memref.load %x[%i, %j] : memref<4x?xf32>
      memref.store %v, %x[%i, %j] : memref<4x?xf32>
    }
  }
}

// -----

// expected-error @+1 {{a kernel whose buffers have a dynamic dim (?) takes the dynamic size as its last argument, an index}}
tile.kernel @no_size(%x: memref<?xf32>) grid [1, 1, 1] block [32, 1, 1] {
}

// -----

// A tile.gemm over ? rows: its grid's x is counted at the size the schedule was planned for,
// which the kernel's verifier does not know; its y is the N tiles.

// CHECK-LABEL: tile.kernel @k_gemm(
// CHECK-NEXT:    tile.gemm %{{.*}}[m, k] * %{{.*}}[n, k] : memref<?x64xbf16>, memref<96x64xbf16> -> f32 atom mma_sync m16n8k16
tile.kernel @k_gemm(%x: memref<?x64xbf16>, %w: memref<96x64xbf16>, %y: memref<?x96xbf16>, %s0: index) grid [32, 2, 1] block [128, 1, 1] {
  tile.gemm %x[m, k] * %w[n, k] : memref<?x64xbf16>, memref<96x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%m, %n, %acc) {
    %t = arith.truncf %acc : f32 to bf16
    memref.store %t, %y[%m, %n] : memref<?x96xbf16>
  }
}

// -----

tile.kernel @k_gemm_dynamic_n(%x: memref<64x64xbf16>, %w: memref<?x64xbf16>, %y: memref<64x?xbf16>, %s0: index) grid [2, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{n of a tile.gemm is static: only a batch dimension or m may be the dynamic size}}
  tile.gemm %x[m, k] * %w[n, k] : memref<64x64xbf16>, memref<?x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%m, %n, %acc) {
    %t = arith.truncf %acc : f32 to bf16
    memref.store %t, %y[%m, %n] : memref<64x?xbf16>
  }
}

// -----

tile.kernel @k_gemm_split(%x: memref<?x4096xbf16>, %w: memref<64x4096xbf16>, %y: memref<?x64xbf16>, %s0: index) grid [4, 2, 1] block [128, 1, 1] attributes {kernel.target = #kernel.target<"sm_90a">} {
  // expected-error @+1 {{a tile.gemm over the dynamic size takes split 1: a split is for a product of few rows, which one planned at its representative size is not}}
  tile.gemm %x[m, k] * %w[n, k] : memref<?x4096xbf16>, memref<64x4096xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 4] pipeline 4 split 2 epilogue(%m, %n, %acc) {
    %t = arith.truncf %acc : f32 to bf16
    memref.store %t, %y[%m, %n] : memref<?x64xbf16>
  }
}

// -----

tile.kernel @k_attention_split(%q: memref<1x4x1x64xbf16>, %k: memref<1x4x?x64xbf16>, %v: memref<1x4x?x64xbf16>, %o: memref<1x4x1x64xbf16>, %s0: index) grid [1, 2, 4] block [32, 1, 1] {
  // expected-error @+1 {{a tile.attention over the dynamic size takes split 1: a split is for a decode's few rows at keys it knows}}
  tile.attention %q, %k, %v scale 1.250000e-01 into %o : memref<1x4x1x64xbf16>, memref<1x4x?x64xbf16>, memref<1x4x?x64xbf16> into memref<1x4x1x64xbf16> atom mma_sync m16n8k16 tile [16, 64, 64] warps [1, 1] pipeline 2 split 2
}
