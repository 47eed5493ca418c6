// RUN: emmy-opt %s --split-input-file --choose-tile-schedule | filecheck %s
// RUN: emmy-opt %s --split-input-file --choose-tile-schedule --expand-loop-contract --lower-loop-to-tile | filecheck %s --check-prefix=TILE

// nn.Linear in bf16 with a bias, 3 tokens: a product on tensor cores, in a weight-streaming
// tile as M is small (16 rows cover M; 32 columns, the narrowest, as even these give fewer
// blocks than SMs; K in one slice of 32, so 2 stages); lower-loop-to-tile makes it one
// tile.gemm with the contract's maps and epilogue, a block per 16 x 32 output tile.

// CHECK-LABEL: loop.kernel @k_linear(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [16, 32, 32], atom mma_sync m16n8k16, warps [1, 4], pipeline 2>
// CHECK-NEXT:    loop.contract

// TILE-LABEL: tile.kernel @k_linear(
// TILE-SAME:    grid [3, 1, 1] block [128, 1, 1]
// TILE-NEXT:    tile.gemm %[[X:.*]][m, k] * %[[W:.*]][n, k] : memref<3x24xbf16>, memref<72x24xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 32] warps [1, 4] pipeline 2 epilogue(%[[I:.*]], %[[J:.*]], %[[ACC:.*]]) {
// TILE-NEXT:      %[[BV:.*]] = memref.load %{{.*}}[%[[J]]] : memref<72xbf16>
// TILE-NEXT:      %[[BF:.*]] = arith.extf %[[BV]] : bf16 to f32
// TILE-NEXT:      %[[R:.*]] = arith.addf %[[ACC]], %[[BF]] : f32
// TILE-NEXT:      %[[T:.*]] = arith.truncf %[[R]] : f32 to bf16
// TILE-NEXT:      memref.store %[[T]], %{{.*}}[%[[I]], %[[J]]] : memref<3x72xbf16>
// TILE-NEXT:    }
// TILE-NEXT:  }

loop.kernel @k_linear(%w: memref<72x24xbf16>, %b: memref<72xbf16>, %x: memref<3x24xbf16>, %out: memref<3x72xbf16>) {
  loop.contract (%i, %j) in [3, 72], k in 24, %acc = sum %x[d0, k] * %w[d1, k] : memref<3x24xbf16>, memref<72x24xbf16> -> f32 {
    %bv = loop.load %b[%j] : memref<72xbf16>
    %bf = arith.extf %bv : bf16 to f32
    %r = arith.addf %acc, %bf : f32
    %t = arith.truncf %r : f32 to bf16
    loop.store %t, %out[%i, %j] : memref<3x72xbf16>
  }
}

// -----

// On sm_90a a product of 128 rows or more takes wgmma, warp-specialised: 2 consumer warp groups
// and a producer, persistent blocks (one per tile here, fewer than the SMs). The tile is
// 128 x 128 rather than 128 x 256, 6 tiles keeping more SMs busy than 4, then narrowed to
// 128 x 64: its 12 tiles still run at once, each half of a wider one's work; K slices of 64
// eight deep, which its stages of 24 KB fit (a 128 x 256 tile's 48 KB four deep).
// The [K, N] weight is read MN-major.

// CHECK-LABEL: loop.kernel @k_large(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [384, 1, 1], loops [], tile [128, 64, 64], atom wgmma m64n64k16, warps [8, 1], pipeline 8, warp_roles ["producer", "consumer", "consumer"]>

// TILE-LABEL: tile.kernel @k_large(
// TILE-SAME:    grid [12, 1, 1] block [384, 1, 1]
// TILE-NEXT:    tile.gemm %{{.*}}[m, k] * %{{.*}}[k, n] : memref<256x64xf16>, memref<64x384xf16> -> f32 atom wgmma m64n64k16 tile [128, 64, 64] warps [8, 1] pipeline 8

loop.kernel @k_large(%x: memref<256x64xf16>, %w: memref<64x384xf16>, %out: memref<256x384xf32>) {
  loop.contract (%i, %j) in [256, 384], k in 64, %acc = sum %x[d0, k] * %w[k, d1] : memref<256x64xf16>, memref<64x384xf16> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<256x384xf32>
  }
}

// -----

// On sm_80 (no wgmma), M and N of 128 or more take mma_sync's large tile.

// CHECK-LABEL: loop.kernel @k_large_sm80(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [128, 128, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>

// TILE-LABEL: tile.kernel @k_large_sm80(
// TILE-SAME:    grid [3, 2, 1] block [128, 1, 1]
// TILE-NEXT:    tile.gemm %{{.*}}[m, k] * %{{.*}}[k, n] : memref<256x64xf16>, memref<64x384xf16> -> f32 atom mma_sync m16n8k16 tile [128, 128, 32] warps [2, 2] pipeline 3

builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  loop.kernel @k_large_sm80(%x: memref<256x64xf16>, %w: memref<64x384xf16>, %out: memref<256x384xf32>) {
    loop.contract (%i, %j) in [256, 384], k in 64, %acc = sum %x[d0, k] * %w[k, d1] : memref<256x64xf16>, memref<64x384xf16> -> f32 {
      loop.store %acc, %out[%i, %j] : memref<256x384xf32>
    }
  }
}

// -----

// A batched product whose rhs is broadcast along the first batch dim: the maps keep their
// dims (d0, d1 are b0, b1) and the grid's z is the batch.

// TILE-LABEL: tile.kernel @k_bmm(
// TILE-SAME:    grid [1, 1, 6] block [128, 1, 1]
// TILE-NEXT:    tile.gemm %{{.*}}[b0, b1, m, k] * %{{.*}}[b1, k, n] : memref<2x3x5x32xbf16>, memref<3x32x4xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 32]

loop.kernel @k_bmm(%x: memref<2x3x5x32xbf16>, %y: memref<3x32x4xbf16>, %out: memref<2x3x5x4xbf16>) {
  loop.contract (%i0, %i1, %i2, %i3) in [2, 3, 5, 4], k in 32, %acc = sum %x[d0, d1, d2, k] * %y[d1, k, d3] : memref<2x3x5x32xbf16>, memref<3x32x4xbf16> -> f32 {
    %t = arith.truncf %acc : f32 to bf16
    loop.store %t, %out[%i0, %i1, %i2, %i3] : memref<2x3x5x4xbf16>
  }
}

// -----

// Decode, 16 tokens through nn.Linear(4096, 4096): bound by reading the 32 MiB weight. Tiles of
// 16 x 32 give 128 blocks, about one per SM (64 columns would leave half the SMs idle): too
// few, so K is split 4 ways (split-K), a cluster of 4 blocks per output tile, each 8 of K's 32
// slices: 512 blocks, 4 an SM, each keeping 2 slices of 32 x 128 weights in flight (the SM's
// 64 KB shared by 4), 3 stages of 12 KB and a 2 KB f32 partial tile in shared memory.

// CHECK-LABEL: loop.kernel @k_decode_16(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [16, 32, 128], atom mma_sync m16n8k16, warps [1, 4], pipeline 3, split 4>

// TILE-LABEL: tile.kernel @k_decode_16(
// TILE-SAME:    grid [512, 1, 1] block [128, 1, 1]
// TILE-NEXT:    tile.gemm %{{.*}}[m, k] * %{{.*}}[n, k] : memref<16x4096xbf16>, memref<4096x4096xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 4] pipeline 3 split 4

loop.kernel @k_decode_16(%w: memref<4096x4096xbf16>, %x: memref<16x4096xbf16>, %out: memref<16x4096xbf16>) {
  loop.contract (%i, %j) in [16, 4096], k in 4096, %acc = sum %x[d0, k] * %w[d1, k] : memref<16x4096xbf16>, memref<4096x4096xbf16> -> f32 {
    %t = arith.truncf %acc : f32 to bf16
    loop.store %t, %out[%i, %j] : memref<16x4096xbf16>
  }
}

// -----

// One token through 4096 -> 11008: 64 columns a block already give 172 blocks, split 3 ways
// (516 blocks, 4 an SM, 11 of K's 32 slices each but the last's 10); each block keeps one
// 16 KB slice of 64 x 128 weights in flight.

// CHECK-LABEL: loop.kernel @k_decode_1(
// CHECK-SAME:    tile [16, 64, 128], atom mma_sync m16n8k16, warps [1, 4], pipeline 2, split 3>

// TILE-LABEL: tile.kernel @k_decode_1(
// TILE-SAME:    grid [516, 1, 1] block [128, 1, 1]

loop.kernel @k_decode_1(%w: memref<11008x4096xf16>, %x: memref<1x4096xf16>, %out: memref<1x11008xf32>) {
  loop.contract (%i, %j) in [1, 11008], k in 4096, %acc = sum %x[d0, k] * %w[d1, k] : memref<1x4096xf16>, memref<11008x4096xf16> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<1x11008xf32>
  }
}

// -----

// 33 and 64 rows take tiles of 64 rows, not split: split 4 ways (K = 11008 is 86 slices), the
// 4 blocks an SM would leave each room for 2 stages of 24 KB beside its 8 KB partial tile, 4
// slices of weights in flight an SM, where one block alone keeps 7 (8 stages of 24 KB). 65
// rows take the small tile.

// CHECK-LABEL: loop.kernel @k_decode_33(
// CHECK-SAME:    tile [64, 32, 128], atom mma_sync m16n8k16, warps [1, 4], pipeline 8>
// CHECK-LABEL: loop.kernel @k_decode_64(
// CHECK-SAME:    tile [64, 32, 128], atom mma_sync m16n8k16, warps [1, 4], pipeline 8>
// CHECK-LABEL: loop.kernel @k_rows_65(
// CHECK-SAME:    tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>

loop.kernel @k_decode_33(%w: memref<4096x11008xbf16>, %x: memref<33x11008xbf16>, %out: memref<33x4096xf32>) {
  loop.contract (%i, %j) in [33, 4096], k in 11008, %acc = sum %x[d0, k] * %w[d1, k] : memref<33x11008xbf16>, memref<4096x11008xbf16> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<33x4096xf32>
  }
}
loop.kernel @k_decode_64(%w: memref<4096x11008xbf16>, %x: memref<64x11008xbf16>, %out: memref<64x4096xf32>) {
  loop.contract (%i, %j) in [64, 4096], k in 11008, %acc = sum %x[d0, k] * %w[d1, k] : memref<64x11008xbf16>, memref<4096x11008xbf16> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<64x4096xf32>
  }
}
loop.kernel @k_rows_65(%w: memref<4096x4096xbf16>, %x: memref<65x4096xbf16>, %out: memref<65x4096xf32>) {
  loop.contract (%i, %j) in [65, 4096], k in 4096, %acc = sum %x[d0, k] * %w[d1, k] : memref<65x4096xbf16>, memref<4096x4096xbf16> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<65x4096xf32>
  }
}

// -----

// Enough tiles not to split: one token through 4096 -> 32768 in tiles of 64 columns is 512
// blocks, each keeping 4 slices of 16 KB in flight. On sm_80, which has no clusters, decode
// keeps one block per tile and 8 stages.

// CHECK-LABEL: loop.kernel @k_decode_wide(
// CHECK-SAME:    tile [16, 64, 128], atom mma_sync m16n8k16, warps [1, 4], pipeline 5>
// CHECK-LABEL: loop.kernel @k_decode_16_sm80(
// CHECK-SAME:    tile [16, 32, 128], atom mma_sync m16n8k16, warps [1, 4], pipeline 8>

// TILE-LABEL: tile.kernel @k_decode_wide(
// TILE-SAME:    grid [512, 1, 1] block [128, 1, 1]
// TILE-LABEL: tile.kernel @k_decode_16_sm80(
// TILE-SAME:    grid [128, 1, 1] block [128, 1, 1]

builtin.module attributes {kernel.target = #kernel.target<"sm_90a">} {
  loop.kernel @k_decode_wide(%w: memref<32768x4096xbf16>, %x: memref<1x4096xbf16>, %out: memref<1x32768xf32>) {
    loop.contract (%i, %j) in [1, 32768], k in 4096, %acc = sum %x[d0, k] * %w[d1, k] : memref<1x4096xbf16>, memref<32768x4096xbf16> -> f32 {
      loop.store %acc, %out[%i, %j] : memref<1x32768xf32>
    }
  }
}

// -----

builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  loop.kernel @k_decode_16_sm80(%w: memref<4096x4096xbf16>, %x: memref<16x4096xbf16>, %out: memref<16x4096xf32>) {
    loop.contract (%i, %j) in [16, 4096], k in 4096, %acc = sum %x[d0, k] * %w[d1, k] : memref<16x4096xbf16>, memref<4096x4096xbf16> -> f32 {
      loop.store %acc, %out[%i, %j] : memref<16x4096xf32>
    }
  }
}

// -----

// A split written by hand is kept and lowered: 3 blocks share each 32 x 32 tile's 5 K slices
// of 32, 2 each (the third's second past K), so the grid has 3 blocks per N tile.

// CHECK-LABEL: loop.kernel @k_split_by_hand(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [32, 1, 1], loops [], tile [32, 32, 32], atom mma_sync m16n8k16, warps [1, 1], pipeline 2, split 3>

// TILE-LABEL: tile.kernel @k_split_by_hand(
// TILE-SAME:    grid [9, 1, 1] block [32, 1, 1]
// TILE-NEXT:    tile.gemm {{.*}} atom mma_sync m16n8k16 tile [32, 32, 32] warps [1, 1] pipeline 2 split 3

loop.kernel @k_split_by_hand(%w: memref<72x160xbf16>, %x: memref<3x160xbf16>, %out: memref<3x72xf32>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [], tile [32, 32, 32], atom mma_sync m16n8k16, warps [1, 1], pipeline 2, split 3>} {
  loop.contract (%i, %j) in [3, 72], k in 160, %acc = sum %x[d0, k] * %w[d1, k] : memref<3x160xbf16>, memref<72x160xbf16> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<3x72xf32>
  }
}

// -----

// A schedule written by hand is kept: here a 32 x 32 tile of one warp, 2 K slices deep.

// CHECK-LABEL: loop.kernel @k_by_hand(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [32, 1, 1], loops [], tile [32, 32, 32], atom mma_sync m16n8k16, warps [1, 1], pipeline 2>

// TILE-LABEL: tile.kernel @k_by_hand(
// TILE-SAME:    grid [3, 1, 1] block [32, 1, 1]
// TILE-NEXT:    tile.gemm {{.*}} atom mma_sync m16n8k16 tile [32, 32, 32] warps [1, 1] pipeline 2

loop.kernel @k_by_hand(%w: memref<72x24xbf16>, %x: memref<3x24xbf16>, %out: memref<3x72xf32>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [], tile [32, 32, 32], atom mma_sync m16n8k16, warps [1, 1], pipeline 2>} {
  loop.contract (%i, %j) in [3, 72], k in 24, %acc = sum %x[d0, k] * %w[d1, k] : memref<3x24xbf16>, memref<72x24xbf16> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<3x72xf32>
  }
}

// -----

// An f32 product follows its module's float32 matmul precision, "highest" where it says none:
// true f32 on the fma atom, a register-tiled SIMT GEMM.

// CHECK-LABEL: loop.kernel @k_f32(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 8], atom fma, warps [2, 2], pipeline 3>
// CHECK-NEXT:    loop.contract

// TILE-LABEL: tile.kernel @k_f32(
// TILE-SAME:    grid [1, 1, 1] block [128, 1, 1]
// TILE-NEXT:    tile.gemm %{{.*}}[m, k] * %{{.*}}[n, k] : memref<3x24xf32>, memref<8x24xf32> -> f32 atom fma tile [64, 64, 8] warps [2, 2] pipeline 3

loop.kernel @k_f32(%w: memref<8x24xf32>, %x: memref<3x24xf32>, %out: memref<3x8xf32>) {
  loop.contract (%i, %j) in [3, 8], k in 24, %acc = sum %x[d0, k] * %w[d1, k] : memref<3x24xf32>, memref<8x24xf32> -> f32 {
    loop.store %acc, %out[%i, %j] : memref<3x8xf32>
  }
}

// -----

// Under "high" (or "medium") it runs on tf32 tensor cores: 128 rows of K-major operands
// on wgmma m64nNk8, in K slices of 32 (128-byte rows; K 24 is one slice that TMA fills out
// with zeros) eight deep, narrowed to tiles of 64 columns while they fit one wave of the SMs...

// CHECK-LABEL: loop.kernel @k_f32_high(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [384, 1, 1], loops [], tile [128, 64, 32], atom wgmma m64n64k8, warps [8, 1], pipeline 8, warp_roles ["producer", "consumer", "consumer"]>

// TILE-LABEL: tile.kernel @k_f32_high(
// TILE-NEXT:    tile.gemm {{.*}} : memref<128x24xf32>, memref<128x24xf32> -> f32 atom wgmma m64n64k8 tile [128, 64, 32] warps [8, 1] pipeline 8

builtin.module attributes {torch.float32_matmul_precision = "high"} {
  loop.kernel @k_f32_high(%w: memref<128x24xf32>, %x: memref<128x24xf32>, %out: memref<128x128xf32>) {
    loop.contract (%i, %j) in [128, 128], k in 24, %acc = sum %x[d0, k] * %w[d1, k] : memref<128x24xf32>, memref<128x24xf32> -> f32 {
      loop.store %acc, %out[%i, %j] : memref<128x128xf32>
    }
  }
}

// -----

// ... and an rhs whose N is contiguous, which no tf32 wgmma reads, on mma_sync m16n8k8; M and
// N of 128 take the large tile.

// CHECK-LABEL: loop.kernel @k_f32_high_kn(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [128, 128, 16], atom mma_sync m16n8k8, warps [2, 2], pipeline 3>

// TILE-LABEL: tile.kernel @k_f32_high_kn(
// TILE-NEXT:    tile.gemm {{.*}} : memref<128x24xf32>, memref<24x128xf32> -> f32 atom mma_sync m16n8k8 tile [128, 128, 16] warps [2, 2] pipeline 3

builtin.module attributes {torch.float32_matmul_precision = "high"} {
  loop.kernel @k_f32_high_kn(%w: memref<24x128xf32>, %x: memref<128x24xf32>, %out: memref<128x128xf32>) {
    loop.contract (%i, %j) in [128, 128], k in 24, %acc = sum %x[d0, k] * %w[k, d1] : memref<128x24xf32>, memref<24x128xf32> -> f32 {
      loop.store %acc, %out[%i, %j] : memref<128x128xf32>
    }
  }
}

// -----

// An f64 product has no atom: it is scheduled as the loop nest expand-loop-contract makes of
// it, and lowers as one.

// CHECK-LABEL: loop.kernel @k_f64(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid, [0, 0] grid, [0, 0, 0] thread vector 2]>
// CHECK-NEXT:    loop.contract

// TILE-LABEL: tile.kernel @k_f64(
// TILE-SAME:    grid [24, 1, 1] block [32, 1, 1]
// TILE:         tile.for %{{.*}} in 0 to 3 map grid
// TILE:           tile.for %{{.*}} in 0 to 8 map grid
// TILE:             tile.for %{{.*}} in 0 to 24 map thread vector 2 reduce add

loop.kernel @k_f64(%w: memref<8x24xf64>, %x: memref<3x24xf64>, %out: memref<3x8xf64>) {
  loop.contract (%i, %j) in [3, 8], k in 24, %acc = sum %x[d0, k] * %w[d1, k] : memref<3x24xf64>, memref<8x24xf64> -> f64 {
    loop.store %acc, %out[%i, %j] : memref<3x8xf64>
  }
}

// A matrix-vector product indexes its vector at 0 along n, which a tile.gemm cannot say:
// it falls back to the loop nest.

// CHECK-LABEL: loop.kernel @k_matvec(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid, [0, 0] thread vector 8]>

// TILE-LABEL: tile.kernel @k_matvec(
// TILE:         tile.for %{{.*}} in 0 to 16 map grid

loop.kernel @k_matvec(%x: memref<16x32xbf16>, %v: memref<32x1xbf16>, %y: memref<16x1xf32>) {
  loop.contract (%i, %j) in [16, 1], k in 32, %acc = sum %x[d0, k] * %v[k, 0] : memref<16x32xbf16>, memref<32x1xbf16> -> f32 {
    loop.store %acc, %y[%i, %j] : memref<16x1xf32>
  }
}

// -----

// Constants that canonicalization hoisted out of the epilogue stay beside the contract; they
// move into the tile.gemm's epilogue.

// CHECK-LABEL: loop.kernel @k_scaled(
// CHECK-SAME:    atom mma_sync m16n8k16

// TILE-LABEL: tile.kernel @k_scaled(
// TILE-NEXT:    tile.gemm {{.*}} epilogue(%[[I:.*]], %[[J:.*]], %[[ACC:.*]]) {
// TILE-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// TILE-NEXT:      %[[S:.*]] = arith.mulf %[[ACC]], %[[HALF]] : f32
// TILE-NEXT:      memref.store %[[S]], %{{.*}}[%[[I]], %[[J]]] : memref<3x72xf32>

loop.kernel @k_scaled(%w: memref<72x24xbf16>, %x: memref<3x24xbf16>, %out: memref<3x72xf32>) {
  %half = arith.constant 0.5 : f32
  loop.contract (%i, %j) in [3, 72], k in 24, %acc = sum %x[d0, k] * %w[d1, k] : memref<3x24xbf16>, memref<72x24xbf16> -> f32 {
    %s = arith.mulf %acc, %half : f32
    loop.store %s, %out[%i, %j] : memref<3x72xf32>
  }
}

// -----

// The wgmma tile's width follows the SMs' waves: 4096 x 4096 in 128 x 256 tiles is 512 tiles,
// 3.9 waves of 132 SMs (97% busy), so it keeps the wide tile; 1024 x 2048 in 128 x 256 tiles
// is 64 tiles, half the SMs, so it takes 128 x 128 tiles (128 of them), six K slices deep.
// The heuristic runs no clusters (`cluster`, which `candidates` offers).

// CHECK-LABEL: loop.kernel @k_wide(
// CHECK-SAME:    tile [128, 256, 64], atom wgmma m64n256k16, warps [8, 1], pipeline 4, warp_roles ["producer", "consumer", "consumer"]>
// CHECK-LABEL: loop.kernel @k_narrow(
// CHECK-SAME:    tile [128, 128, 64], atom wgmma m64n128k16, warps [8, 1], pipeline 6, warp_roles ["producer", "consumer", "consumer"]>

loop.kernel @k_wide(%x: memref<4096x4096xbf16>, %w: memref<4096x4096xbf16>, %out: memref<4096x4096xbf16>) {
  loop.contract (%i, %j) in [4096, 4096], k in 4096, %acc = sum %x[d0, k] * %w[d1, k] : memref<4096x4096xbf16>, memref<4096x4096xbf16> -> f32 {
    %y = arith.truncf %acc : f32 to bf16
    loop.store %y, %out[%i, %j] : memref<4096x4096xbf16>
  }
}

loop.kernel @k_narrow(%x: memref<1024x5632xbf16>, %w: memref<2048x5632xbf16>, %out: memref<1024x2048xbf16>) {
  loop.contract (%i, %j) in [1024, 2048], k in 5632, %acc = sum %x[d0, k] * %w[d1, k] : memref<1024x5632xbf16>, memref<2048x5632xbf16> -> f32 {
    %y = arith.truncf %acc : f32 to bf16
    loop.store %y, %out[%i, %j] : memref<1024x2048xbf16>
  }
}

// -----

// Sibling rhs (SwiGLU's gate and up) of a decode's 3 rows: a streaming tile whose N covers
// both (16 output columns of each), its 2 warps each with an m16n8 atom of each sibling's
// share; not split (a split sums one accumulator tile), a block per 16 output columns.

// CHECK-LABEL: loop.kernel @k_gate_up_decode(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [64, 1, 1], loops [], tile [16, 32, 128], atom mma_sync m16n8k16, warps [1, 2], pipeline 8>

// TILE-LABEL: tile.kernel @k_gate_up_decode(
// TILE-SAME:    grid [4, 1, 1] block [64, 1, 1]
// TILE-NEXT:    tile.gemm %{{.*}}[m, k] * (%{{.*}}, %{{.*}})[n, k] : memref<3x1100xbf16>, memref<50x1100xbf16>, memref<50x1100xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 2] pipeline 8 epilogue(%{{.*}}, %{{.*}}, %[[G:.*]], %[[U:.*]]) {
// TILE:           arith.mulf %{{.*}}, %[[U]] : f32

loop.kernel @k_gate_up_decode(%x: memref<3x1100xbf16>, %wg: memref<50x1100xbf16>, %wu: memref<50x1100xbf16>, %out: memref<3x50xbf16>) {
  loop.contract (%i, %j) in [3, 50], k in 1100, (%gate, %up) = sum %x[d0, k] * (%wg, %wu)[d1, k] : memref<3x1100xbf16>, memref<50x1100xbf16>, memref<50x1100xbf16> -> f32 {
    %one = arith.constant 1.0 : f32
    %n = arith.negf %gate : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %gate, %d : f32
    %p = arith.mulf %s, %up : f32
    %t = arith.truncf %p : f32 to bf16
    loop.store %t, %out[%i, %j] : memref<3x50xbf16>
  }
}

// -----

// The bench suite's SwiGLU gate and up (1024 x 5632 x 2048) on sm_90a: counted as a product of
// N = 2 x 5632, they take the wide wgmma tile, 128 output columns of each sibling a tile.

// CHECK-LABEL: loop.kernel @k_gate_up(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [384, 1, 1], loops [], tile [128, 256, 64], atom wgmma m64n256k16, warps [8, 1], pipeline 4, warp_roles ["producer", "consumer", "consumer"]>

// TILE-LABEL: tile.kernel @k_gate_up(
// TILE-SAME:    grid [132, 1, 1] block [384, 1, 1]
// TILE-NEXT:    tile.gemm %{{.*}}[m, k] * (%{{.*}}, %{{.*}})[n, k] : memref<1024x2048xbf16>, memref<5632x2048xbf16>, memref<5632x2048xbf16> -> f32 atom wgmma m64n256k16 tile [128, 256, 64] warps [8, 1] pipeline 4 epilogue(

loop.kernel @k_gate_up(%x: memref<1024x2048xbf16>, %wg: memref<5632x2048xbf16>, %wu: memref<5632x2048xbf16>, %out: memref<1024x5632xf32>) {
  loop.contract (%i, %j) in [1024, 5632], k in 2048, (%gate, %up) = sum %x[d0, k] * (%wg, %wu)[d1, k] : memref<1024x2048xbf16>, memref<5632x2048xbf16>, memref<5632x2048xbf16> -> f32 {
    %p = arith.mulf %gate, %up : f32
    loop.store %p, %out[%i, %j] : memref<1024x5632xf32>
  }
}

// -----

// Three siblings (q, k, v) on sm_80: the small tile's N rounded down to whole atoms of each
// sibling's share of both warps' N, 64 -> 48 (8 columns of each a warp).

// CHECK-LABEL: loop.kernel @k_qkv(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 48, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>

// TILE-LABEL: tile.kernel @k_qkv(
// TILE-SAME:    grid [3, 2, 1] block [128, 1, 1]
// TILE-NEXT:    tile.gemm %{{.*}}[m, k] * (%{{.*}}, %{{.*}}, %{{.*}})[n, k] : {{.*}} tile [64, 48, 32] warps [2, 2] pipeline 3 epilogue(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {

builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  loop.kernel @k_qkv(%x: memref<70x64xbf16>, %wq: memref<48x64xbf16>, %wk: memref<48x64xbf16>, %wv: memref<48x64xbf16>, %q: memref<70x48xbf16>, %k: memref<70x48xbf16>, %v: memref<70x48xbf16>) {
    loop.contract (%i, %j) in [70, 48], k in 64, (%aq, %ak, %av) = sum %x[d0, k] * (%wq, %wk, %wv)[d1, k] : memref<70x64xbf16>, memref<48x64xbf16>, memref<48x64xbf16>, memref<48x64xbf16> -> f32 {
      %tq = arith.truncf %aq : f32 to bf16
      loop.store %tq, %q[%i, %j] : memref<70x48xbf16>
      %tk = arith.truncf %ak : f32 to bf16
      loop.store %tk, %k[%i, %j] : memref<70x48xbf16>
      %tv = arith.truncf %av : f32 to bf16
      loop.store %tv, %v[%i, %j] : memref<70x48xbf16>
    }
  }
}
