// RUN: emmy-opt %s --split-input-file --choose-tile-schedule | filecheck %s
// RUN: emmy-opt %s --split-input-file --choose-tile-schedule --expand-loop-attention --lower-loop-to-tile | filecheck %s --check-prefix=TILE

// Causal bf16 attention of head dim 128, grouped-query heads, 100 query rows, on sm_90a:
// attention's schedule on wgmma (a block of one consumer warp group of 64 rows of a query
// head, heads of fewer than 128 rows, and a producer warp group; keys 128 at a time, 2
// blocks deep); lower-loop-to-tile makes it a tile.attention whose persistent blocks take the
// 8 items (64 of the 100 rows of one of the 4 query heads, which read their key/value head
// as it is), a block an item where the SMs are more.

// CHECK-LABEL: loop.kernel @k_attention(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [256, 1, 1], loops [], tile [64, 128, 128], atom wgmma m64n128k16, warps [4, 1], pipeline 2, warp_roles ["producer", "consumer"]>
// CHECK-NEXT:    loop.attention

// TILE-LABEL: tile.kernel @k_attention(
// TILE-SAME:    grid [8, 1, 1] block [256, 1, 1]
// TILE-NEXT:    tile.attention %{{.*}}, %{{.*}}, %{{.*}} scale 8.838830e-02 causal into %{{.*}} : memref<1x4x100x128xbf16>, memref<1x2x80x128xbf16>, memref<1x2x80x128xbf16> into memref<1x4x100x128xbf16> atom wgmma m64n128k16 tile [64, 128, 128] warps [4, 1] pipeline 2
// TILE-NEXT:  }
loop.kernel @k_attention(%q: memref<1x4x100x128xbf16>, %k: memref<1x2x80x128xbf16>, %v: memref<1x2x80x128xbf16>, %o: memref<1x4x100x128xbf16>) {
  loop.attention %q, %k, %v scale 0.0883883 causal into %o : memref<1x4x100x128xbf16>, memref<1x2x80x128xbf16>, memref<1x2x80x128xbf16> into memref<1x4x100x128xbf16>
}

// -----

// Heads of at least 128 rows: two consumer warp groups of 64 rows a block; 128 items, a
// persistent block each (fewer than the 132 SMs).

// CHECK-LABEL: loop.kernel @k_long_heads(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [384, 1, 1], loops [], tile [128, 128, 64], atom wgmma m64n128k16, warps [8, 1], pipeline 2, warp_roles ["producer", "consumer", "consumer"]>
// TILE-LABEL: tile.kernel @k_long_heads(
// TILE-SAME:    grid [128, 1, 1] block [384, 1, 1]
loop.kernel @k_long_heads(%q: memref<1x16x1024x64xf16>, %k: memref<1x16x1024x64xf16>, %v: memref<1x16x1024x64xf16>, %o: memref<1x16x1024x64xf16>) {
  loop.attention %q, %k, %v scale 0.125 causal into %o : memref<1x16x1024x64xf16>, memref<1x16x1024x64xf16>, memref<1x16x1024x64xf16> into memref<1x16x1024x64xf16>
}

// -----

// The same attention as @k_attention on sm_80, which has no wgmma: mma_sync's schedule (64
// rows a block of 4 warps, keys 64 at a time, 2 blocks deep); lower-loop-to-tile makes it a
// tile.attention, a block per 64 of the 200 rows of the 2 query heads that share a key/value
// head (4), for each of the 2 key/value heads.

builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
// CHECK-LABEL: loop.kernel @k_attention_sm_80(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 128], atom mma_sync m16n8k16, warps [4, 1], pipeline 2>
// CHECK-NEXT:    loop.attention

// TILE-LABEL: tile.kernel @k_attention_sm_80(
// TILE-SAME:    grid [4, 1, 2] block [128, 1, 1]
// TILE-NEXT:    tile.attention %{{.*}}, %{{.*}}, %{{.*}} scale 8.838830e-02 causal into %{{.*}} : memref<1x4x100x128xbf16>, memref<1x2x80x128xbf16>, memref<1x2x80x128xbf16> into memref<1x4x100x128xbf16> atom mma_sync m16n8k16 tile [64, 64, 128] warps [4, 1] pipeline 2
// TILE-NEXT:  }
loop.kernel @k_attention_sm_80(%q: memref<1x4x100x128xbf16>, %k: memref<1x2x80x128xbf16>, %v: memref<1x2x80x128xbf16>, %o: memref<1x4x100x128xbf16>) {
  loop.attention %q, %k, %v scale 0.0883883 causal into %o : memref<1x4x100x128xbf16>, memref<1x2x80x128xbf16>, memref<1x2x80x128xbf16> into memref<1x4x100x128xbf16>
}
}

// -----

// Heads of fewer than 64 rows (here 32, the 2 heads' 64 rows packed into one block) stay on
// mma_sync.

// CHECK-LABEL: loop.kernel @k_short_heads(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 64], atom mma_sync m16n8k16, warps [4, 1], pipeline 2>
loop.kernel @k_short_heads(%q: memref<1x4x32x64xbf16>, %k: memref<1x2x64x64xbf16>, %v: memref<1x2x64x64xbf16>, %o: memref<1x4x32x64xbf16>) {
  loop.attention %q, %k, %v scale 0.125 into %o : memref<1x4x32x64xbf16>, memref<1x2x64x64xbf16>, memref<1x2x64x64xbf16> into memref<1x4x32x64xbf16>
}

// -----

// A boolean mask, broadcast over the batch: the wgmma schedule, the mask read by the
// tile.attention.

// CHECK-LABEL: loop.kernel @k_masked(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [256, 1, 1], loops [], tile [64, 128, 64], atom wgmma m64n128k16, warps [4, 1], pipeline 2, warp_roles ["producer", "consumer"]>
// TILE-LABEL:  tile.kernel @k_masked(
// TILE-SAME:     grid [2, 1, 1] block [256, 1, 1]
// TILE-NEXT:     tile.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale 1.250000e-01 into %{{.*}} : memref<2x64x64xbf16>, memref<2x64x64xbf16>, memref<2x64x64xbf16> mask memref<64x64xi1> into memref<2x64x64xbf16> atom wgmma m64n128k16 tile [64, 128, 64] warps [4, 1] pipeline 2
loop.kernel @k_masked(%q: memref<2x64x64xbf16>, %k: memref<2x64x64xbf16>, %m: memref<64x64xi1>, %o: memref<2x64x64xbf16>) {
  loop.attention %q, %k, %k mask %m scale 0.125 into %o : memref<2x64x64xbf16>, memref<2x64x64xbf16>, memref<2x64x64xbf16> mask memref<64x64xi1> into memref<2x64x64xbf16>
}

// -----

// f32 elements or a head dim other than 64 and 128: scheduled as the scalar loop nests
// expand-loop-attention makes (blocks over the batch and the query rows), which it then
// builds.

// CHECK-LABEL: loop.kernel @k_f32(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [{{.*}}], loops [[0] grid
// TILE-LABEL:  tile.kernel @k_f32(
// TILE-NOT:    tile.attention
// TILE:        tile.for
loop.kernel @k_f32(%q: memref<2x64x64xf32>, %k: memref<2x64x64xf32>, %o: memref<2x64x64xf32>) {
  loop.attention %q, %k, %k scale 0.125 into %o : memref<2x64x64xf32>, memref<2x64x64xf32>, memref<2x64x64xf32> into memref<2x64x64xf32>
}

// CHECK-LABEL: loop.kernel @k_head_dim_32(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [{{.*}}], loops [[0] grid
// TILE-LABEL:  tile.kernel @k_head_dim_32(
// TILE-NOT:    tile.attention
// TILE:        tile.for
loop.kernel @k_head_dim_32(%q: memref<2x64x32xf16>, %k: memref<2x64x32xf16>, %o: memref<2x64x32xf16>) {
  loop.attention %q, %k, %k scale 0.125 into %o : memref<2x64x32xf16>, memref<2x64x32xf16>, memref<2x64x32xf16> into memref<2x64x32xf16>
}

// -----

// Decode, GQA: one query of each of 32 heads on 8 key/value heads against 4096 keys. The 4
// query heads of a key/value head are one block's rows (a tile of 16, one warp); 8 such
// blocks would leave most of the 132 SMs idle, so the keys are split into 16 parts of 4
// blocks of 64 (grid y).

// CHECK-LABEL: loop.kernel @k_decode(
// CHECK-SAME:    tile.schedule = #tile.schedule<block [32, 1, 1], loops [], tile [16, 64, 128], atom mma_sync m16n8k16, warps [1, 1], pipeline 2, split 16>
// TILE-LABEL:  tile.kernel @k_decode(
// TILE-SAME:     grid [1, 16, 8] block [32, 1, 1]
// TILE-NEXT:     tile.attention %{{.*}}, %{{.*}}, %{{.*}} scale 8.838830e-02 into %{{.*}} : memref<1x32x1x128xbf16>, memref<1x8x4096x128xbf16>, memref<1x8x4096x128xbf16> into memref<1x32x1x128xbf16> atom mma_sync m16n8k16 tile [16, 64, 128] warps [1, 1] pipeline 2 split 16
loop.kernel @k_decode(%q: memref<1x32x1x128xbf16>, %k: memref<1x8x4096x128xbf16>, %v: memref<1x8x4096x128xbf16>, %o: memref<1x32x1x128xbf16>) {
  loop.attention %q, %k, %v scale 0.0883883 into %o : memref<1x32x1x128xbf16>, memref<1x8x4096x128xbf16>, memref<1x8x4096x128xbf16> into memref<1x32x1x128xbf16>
}

// -----

// A split written by hand is kept and applied: 3 parts of the 5 key blocks of 300 keys.

// CHECK-LABEL: loop.kernel @k_split_by_hand(
// CHECK-SAME:    split 3>
// TILE-LABEL:  tile.kernel @k_split_by_hand(
// TILE-SAME:     grid [1, 3, 2] block [32, 1, 1]
// TILE-NEXT:     tile.attention {{.*}} causal into {{.*}} pipeline 2 split 3
loop.kernel @k_split_by_hand(%q: memref<2x5x64xf16>, %k: memref<2x300x64xf16>, %o: memref<2x5x64xf16>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [], tile [16, 64, 64], atom mma_sync m16n8k16, warps [1, 1], pipeline 2, split 3>} {
  loop.attention %q, %k, %k scale 0.125 causal into %o : memref<2x5x64xf16>, memref<2x300x64xf16>, memref<2x300x64xf16> into memref<2x5x64xf16>
}
