// RUN: emmy-opt %s | emmy-opt | filecheck %s
// RUN: emmy-opt %s --print-op-generic | emmy-opt | filecheck %s

// CHECK-LABEL: tile.kernel @every_mapping(
// CHECK-SAME:    %{{.*}}: memref<4x64xf32>, %{{.*}}: memref<4xf32>) grid [4, 1, 1] block [64, 1, 1] {
// CHECK-NEXT:    tile.for %[[I:.*]] in 0 to 4 map grid {
// CHECK-NEXT:      %[[S:.*]] = tile.for %[[J:.*]] in 0 to 64 map thread reduce max init -inf : f32 {
// CHECK:             tile.yield %{{.*}} : f32
// CHECK:           %[[T:.*]] = tile.for %{{.*}} in 0 to 3 map serial reduce add init 0.0 : f32 {
// CHECK:           memref.store
// CHECK:         tile.for %{{.*}} in 0 to 256 map global {
// CHECK-LABEL: func.func @host(
// CHECK:         tile.launch @every_mapping(%{{.*}}, %{{.*}}) : memref<4x64xf32>, memref<4xf32>
tile.kernel @every_mapping(%x: memref<4x64xf32>, %y: memref<4xf32>) grid [4, 1, 1] block [64, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    %s = tile.for %j in 0 to 64 map thread reduce max init -inf : f32 {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      tile.yield %v : f32
    }
    %t = tile.for %k in 0 to 3 map serial reduce add init 0.0 : f32 {
      tile.yield %s : f32
    }
    memref.store %t, %y[%i] : memref<4xf32>
  }
  tile.for %g in 0 to 256 map global {
  }
}
func.func @host(%x: memref<4x64xf32>) -> memref<4xf32> {
  %y = memref.alloc() : memref<4xf32>
  tile.launch @every_mapping(%x, %y) : memref<4x64xf32>, memref<4xf32>
  func.return %y : memref<4xf32>
}

// A vectorised loop and a staged row round-trip.

// CHECK-LABEL: tile.kernel @staged_and_vectorised(
// CHECK:         tile.for %[[I:.*]] in 0 to 4 map grid {
// CHECK-NEXT:      tile.stage %{{.*}}[%[[I]]] async : memref<4x64xbf16>
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 64 map thread vector 8 reduce max init -inf : bf16 {
// CHECK:           tile.for %{{.*}} in 0 to 64 map thread vector 8 {
tile.kernel @staged_and_vectorised(%x: memref<4x64xbf16>, %y: memref<4x64xbf16>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.stage %x[%i] async : memref<4x64xbf16>
    %m = tile.for %j in 0 to 64 map thread vector 8 reduce max init -inf : bf16 {
      %v = memref.load %x[%i, %j] : memref<4x64xbf16>
      tile.yield %v : bf16
    }
    tile.for %j in 0 to 64 map thread vector 8 {
      %v = memref.load %x[%i, %j] : memref<4x64xbf16>
      %d = arith.subf %v, %m : bf16
      memref.store %d, %y[%i, %j] : memref<4x64xbf16>
    }
  }
}

// A reduction with a combiner region split across the threads of a block: the (max, rescaled
// sum) pair of online softmax.

// CHECK-LABEL: tile.kernel @online_softmax_statistics(
// CHECK:         tile.for %[[I:.*]] in 0 to 4 map grid {
// CHECK-NEXT:      %[[M:.*]], %[[L:.*]] = tile.for %[[J:.*]] in 0 to 64 map thread vector 4 reduce (%[[M0:.*]]: f32, %[[L0:.*]]: f32, %[[M1:.*]]: f32, %[[L1:.*]]: f32) init (-inf, 0.0) {
// CHECK:             tile.yield %{{.*}}, %{{.*}} : f32, f32
// CHECK-NEXT:      } {
// CHECK-NEXT:        %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<4x64xf32>
// CHECK-NEXT:        %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:        tile.yield %[[V]], %[[ONE]] : f32, f32
// CHECK-NEXT:      }
tile.kernel @online_softmax_statistics(%x: memref<4x64xf32>, %y: memref<4xf32>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    %m, %l = tile.for %j in 0 to 64 map thread vector 4 reduce (%m0: f32, %l0: f32, %m1: f32, %l1: f32) init (-inf, 0.0) {
      %one = arith.constant 1.0 : f32
      %m2 = arith.maximumf %m0, %m1 : f32
      %d0 = arith.subf %m0, %m2 : f32
      %d1 = arith.subf %m1, %m2 : f32
      %e0 = math.exp %d0 : f32
      %e1 = math.exp %d1 : f32
      %same0 = arith.cmpf oeq, %m0, %m2 : f32
      %same1 = arith.cmpf oeq, %m1, %m2 : f32
      %s0 = arith.select %same0, %one, %e0 : f32
      %s1 = arith.select %same1, %one, %e1 : f32
      %a0 = arith.mulf %l0, %s0 : f32
      %a1 = arith.mulf %l1, %s1 : f32
      %l2 = arith.addf %a0, %a1 : f32
      tile.yield %m2, %l2 : f32, f32
    } {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      %one = arith.constant 1.0 : f32
      tile.yield %v, %one : f32, f32
    }
    memref.store %l, %y[%i] : memref<4xf32>
  }
}

// A schedule round-trips, on the loop.kernel it is for and on the tile.kernel lowered with it;
// an explicit grid_y maps rows to blockIdx.y whatever the loop holds.

// CHECK-LABEL: loop.kernel @scheduled(
// CHECK-SAME:    attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [[0] grid_y, [0, 0] thread vector 4, [0, 1] thread vector 4], stage [[0] arg 0 sync]>} {
loop.kernel @scheduled(%x: memref<4x64xf32>, %y: memref<4x64xf32>) attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [[0] grid_y, [0, 0] thread vector 4, [0, 1] thread vector 4], stage [[0] arg 0 sync]>} {
}

// CHECK-LABEL: tile.kernel @rows(
// CHECK-SAME:    grid [1, 4, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid_y, [0, 0] thread]>} {
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 4 map grid_y {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 64 map thread {
tile.kernel @rows(%x: memref<4x64xf32>) grid [1, 4, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid_y, [0, 0] thread]>} {
  tile.for %i in 0 to 4 map grid_y {
    tile.for %j in 0 to 64 map thread {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      memref.store %v, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// A tile.for keeps its attributes, as a loop.for does (both are a `ForOpBase`).
// CHECK-LABEL: tile.kernel @annotated(
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 64 map thread vector 4 reduce add init 0.0 : f32 attributes {note = "kept"} {
tile.kernel @annotated(%x: memref<64xf32>, %y: memref<f32>) grid [1, 1, 1] block [32, 1, 1] {
  %s = tile.for %j in 0 to 64 map thread vector 4 reduce add init 0.0 : f32 attributes {note = "kept"} {
    %v = memref.load %x[%j] : memref<64xf32>
    tile.yield %v : f32
  }
  memref.store %s, %y[] : memref<f32>
}

// A contraction's kernel: one tile.gemm, its schedule (tile, atom, warps, pipeline) on the
// kernel, the grid its tiles take (N tiles, M tiles, batch). nn.Linear's weight is [N, K].

// CHECK-LABEL: tile.kernel @linear_bias(
// CHECK-SAME:    grid [1, 2, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>} {
// CHECK-NEXT:    tile.gemm %{{.*}}[m, k] * %{{.*}}[n, k] : memref<70x40xbf16>, memref<50x40xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%[[M:.*]], %[[N:.*]], %[[ACC:.*]]) {
// CHECK-NEXT:      %[[B:.*]] = memref.load %{{.*}}[%[[N]]] : memref<50xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[B]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT:      memref.store %[[T]], %{{.*}}[%[[M]], %[[N]]] : memref<70x50xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
tile.kernel @linear_bias(%x: memref<70x40xbf16>, %w: memref<50x40xbf16>, %bias: memref<50xf32>, %y: memref<70x50xbf16>) grid [1, 2, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>} {
  tile.gemm %x[m, k] * %w[n, k] : memref<70x40xbf16>, memref<50x40xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%m, %n, %acc) {
    %b = memref.load %bias[%n] : memref<50xf32>
    %s = arith.addf %acc, %b : f32
    %t = arith.truncf %s : f32 to bf16
    memref.store %t, %y[%m, %n] : memref<70x50xbf16>
  }
}

// Sibling rhs (SwiGLU's gate and up): the tile's N covers both, 32 output columns of each, so
// N = 50 takes 2 tiles; the epilogue takes an accumulator per rhs.

// CHECK-LABEL: tile.kernel @gate_up(
// CHECK-SAME:    grid [2, 2, 1] block [128, 1, 1]
// CHECK-NEXT:    tile.gemm %{{.*}}[m, k] * (%[[G:.*]], %[[U:.*]])[n, k] : memref<70x40xbf16>, memref<50x40xbf16>, memref<50x40xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%[[M:.*]], %[[N:.*]], %[[GA:.*]], %[[UA:.*]]) {
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[GA]], %[[UA]] : f32
// CHECK-NEXT:      memref.store %[[P]], %{{.*}}[%[[M]], %[[N]]] : memref<70x50xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
tile.kernel @gate_up(%x: memref<70x40xbf16>, %wg: memref<50x40xbf16>, %wu: memref<50x40xbf16>, %y: memref<70x50xf32>) grid [2, 2, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>} {
  tile.gemm %x[m, k] * (%wg, %wu)[n, k] : memref<70x40xbf16>, memref<50x40xbf16>, memref<50x40xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%m, %n, %gate, %up) {
    %p = arith.mulf %gate, %up : f32
    memref.store %p, %y[%m, %n] : memref<70x50xf32>
  }
}

// Split-K (decode): 4 blocks share each 16x32 output tile, each a quarter of K's 32 slices of
// 128; the grid's x has 4 blocks per N tile (128 tiles of N = 4096).

// CHECK-LABEL: tile.kernel @decode_split(
// CHECK-SAME:    grid [512, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [16, 32, 128], atom mma_sync m16n8k16, warps [1, 4], pipeline 8, split 4>} {
// CHECK-NEXT:    tile.gemm %{{.*}}[m, k] * %{{.*}}[n, k] : memref<16x4096xbf16>, memref<4096x4096xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 4] pipeline 8 split 4 epilogue(%[[M:.*]], %[[N:.*]], %[[ACC:.*]]) {
tile.kernel @decode_split(%x: memref<16x4096xbf16>, %w: memref<4096x4096xbf16>, %y: memref<16x4096xf32>) grid [512, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [16, 32, 128], atom mma_sync m16n8k16, warps [1, 4], pipeline 8, split 4>} {
  tile.gemm %x[m, k] * %w[n, k] : memref<16x4096xbf16>, memref<4096x4096xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 4] pipeline 8 split 4 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<16x4096xf32>
  }
}

// Batch dimensions come first in the epilogue; an operand without one (a shared weight, here
// [K, N]) is the same for every batch; A may be [K, M]; the grid's z is the batch.

// CHECK-LABEL: tile.kernel @batched(
// CHECK-SAME:    grid [2, 1, 6] block [256, 1, 1] {
// CHECK-NEXT:    tile.gemm %{{.*}}[b0, b1, k, m] * %{{.*}}[k, n] : memref<2x3x32x64xf16>, memref<32x256xf16> -> f32 atom mma_sync m16n8k16 tile [64, 128, 32] warps [2, 4] pipeline 2 epilogue(%[[I:.*]], %[[J:.*]], %[[M:.*]], %[[N:.*]], %[[ACC:.*]]) attributes {tag} {
// CHECK-NEXT:      memref.store %[[ACC]], %{{.*}}[%[[I]], %[[J]], %[[M]], %[[N]]] : memref<2x3x64x256xf32>
tile.kernel @batched(%a: memref<2x3x32x64xf16>, %w: memref<32x256xf16>, %y: memref<2x3x64x256xf32>) grid [2, 1, 6] block [256, 1, 1] {
  tile.gemm %a[b0, b1, k, m] * %w[k, n] : memref<2x3x32x64xf16>, memref<32x256xf16> -> f32 atom mma_sync m16n8k16 tile [64, 128, 32] warps [2, 4] pipeline 2 epilogue(%i, %j, %m, %n, %acc) attributes {tag} {
    memref.store %acc, %y[%i, %j, %m, %n] : memref<2x3x64x256xf32>
  }
}

// The other atoms: wgmma for warp groups of 4 warps along M (sm_90a), whose block has a producer
// warp group besides (TMA copies K-major slices of 64 bf16, one 128-byte swizzled row; the
// blocks are persistent, taking the tiles 4 rows of tiles down at a time: raster 4), and fma,
// which also multiplies f32.

// CHECK-LABEL: tile.kernel @wgmma(
// CHECK:         tile.gemm {{.*}} atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2 raster 4 epilogue
tile.kernel @wgmma(%a: memref<256x64xbf16>, %b: memref<128x64xbf16>, %y: memref<256x128xf32>) grid [2, 1, 1] block [384, 1, 1] {
  tile.gemm %a[m, k] * %b[n, k] : memref<256x64xbf16>, memref<128x64xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2 raster 4 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<256x128xf32>
  }
}

// wgmma blocks in clusters of 2 along M, which share each K slice of the rhs (TMA multicast):
// the grid counts the M tiles in whole clusters.

// CHECK-LABEL: tile.kernel @wgmma_cluster(
// CHECK:         tile.gemm {{.*}} atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2 cluster 2 epilogue
tile.kernel @wgmma_cluster(%a: memref<300x64xbf16>, %b: memref<128x64xbf16>, %y: memref<300x128xf32>) grid [4, 1, 1] block [384, 1, 1] {
  tile.gemm %a[m, k] * %b[n, k] : memref<300x64xbf16>, memref<128x64xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2 cluster 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<300x128xf32>
  }
}

// CHECK-LABEL: tile.kernel @fma(
// CHECK:         tile.gemm {{.*}} -> f32 atom fma tile [32, 32, 8] warps [1, 1] pipeline 1
tile.kernel @fma(%a: memref<32x8xf32>, %b: memref<8x32xf32>, %y: memref<32x32xf32>) grid [1, 1, 1] block [32, 1, 1] {
  tile.gemm %a[m, k] * %b[k, n] : memref<32x8xf32>, memref<8x32xf32> -> f32 atom fma tile [32, 32, 8] warps [1, 1] pipeline 1 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<32x32xf32>
  }
}

// CHECK-LABEL: func.func @atoms(
// CHECK-SAME:    attributes {atoms = [#tile.atom<mma_sync m16n8k16>, #tile.atom<wgmma m64n256k16>, #tile.atom<fma>]}
func.func @atoms() attributes {atoms = [#tile.atom<mma_sync m16n8k16>, #tile.atom<wgmma m64n256k16>, #tile.atom<fma>]} {
  func.return
}

// Attention's kernel: one tile.attention of 4 query heads on 2 key/value heads, its schedule
// (64 query rows a block of 4 warps, keys 64 at a time, 2 blocks deep); a block per 64 of
// the 200 rows of the 2 query heads that share a key/value head, for each key/value head.

// CHECK-LABEL: tile.kernel @attention(
// CHECK-SAME:    grid [4, 1, 2] block [128, 1, 1]
// CHECK-NEXT:    tile.attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.250000e-01 causal into %{{.*}} : memref<1x4x100x64xbf16>, memref<1x2x90x64xbf16>, memref<1x2x90x64xbf16> into memref<1x4x100x64xbf16> atom mma_sync m16n8k16 tile [64, 64, 64] warps [4, 1] pipeline 2
tile.kernel @attention(%q: memref<1x4x100x64xbf16>, %k: memref<1x2x90x64xbf16>, %v: memref<1x2x90x64xbf16>, %o: memref<1x4x100x64xbf16>) grid [4, 1, 2] block [128, 1, 1] {
  tile.attention %q, %k, %v scale 0.125 causal into %o : memref<1x4x100x64xbf16>, memref<1x2x90x64xbf16>, memref<1x2x90x64xbf16> into memref<1x4x100x64xbf16> atom mma_sync m16n8k16 tile [64, 64, 64] warps [4, 1] pipeline 2
}

// Decode: 1 query row of each of 8 heads on 2 key/value heads against 300 keys, split into 4
// parts of the keys (grid y); the 4 query heads that share a key/value head are one block's
// 4 rows (a tile of 16 rows, one warp).

// CHECK-LABEL: tile.kernel @attention_split(
// CHECK-SAME:    grid [1, 4, 2] block [32, 1, 1]
// CHECK-NEXT:    tile.attention %{{.*}}, %{{.*}}, %{{.*}} scale 1.250000e-01 into %{{.*}} : memref<1x8x1x64xbf16>, memref<1x2x300x64xbf16>, memref<1x2x300x64xbf16> into memref<1x8x1x64xbf16> atom mma_sync m16n8k16 tile [16, 64, 64] warps [1, 1] pipeline 2 split 4
tile.kernel @attention_split(%q: memref<1x8x1x64xbf16>, %k: memref<1x2x300x64xbf16>, %v: memref<1x2x300x64xbf16>, %o: memref<1x8x1x64xbf16>) grid [1, 4, 2] block [32, 1, 1] {
  tile.attention %q, %k, %v scale 0.125 into %o : memref<1x8x1x64xbf16>, memref<1x2x300x64xbf16>, memref<1x2x300x64xbf16> into memref<1x8x1x64xbf16> atom mma_sync m16n8k16 tile [16, 64, 64] warps [1, 1] pipeline 2 split 4
}

// CHECK-LABEL: tile.kernel @attention_masked(
// CHECK-NEXT:    tile.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale 3.000000e-01 into %{{.*}} : memref<2x64x128xf16>, memref<2x70x128xf16>, memref<2x70x128xf16> mask memref<2x1x70xf16> into memref<2x64x128xf32> atom mma_sync m16n8k16 tile [64, 64, 128] warps [4, 1] pipeline 2
tile.kernel @attention_masked(%q: memref<2x64x128xf16>, %k: memref<2x70x128xf16>, %v: memref<2x70x128xf16>, %m: memref<2x1x70xf16>, %o: memref<2x64x128xf32>) grid [1, 1, 2] block [128, 1, 1] {
  tile.attention %q, %k, %v mask %m scale 0.3 into %o : memref<2x64x128xf16>, memref<2x70x128xf16>, memref<2x70x128xf16> mask memref<2x1x70xf16> into memref<2x64x128xf32> atom mma_sync m16n8k16 tile [64, 64, 128] warps [4, 1] pipeline 2
}
