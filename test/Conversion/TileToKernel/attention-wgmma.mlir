// RUN: emmy-opt %s --split-input-file --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// Causal attention on wgmma, 2 query heads of 200 rows sharing 1 key/value head of 130 keys,
// head dim 64, bf16: persistent blocks, one an SM, take the items (a query head's block of
// 128 rows) that their entries of the item table @attention_items name (here one each: the
// offsets [0, 1, 2, 3, 4] of each block's entries, then the longest items first, the heads'
// row blocks 1 of 2 key blocks, items 1 and 3), counting the key blocks they took before for
// the ring's stages and phases; 3 warp groups (at head dim 64 the consumers do not take
// turns: no named barriers of 256 threads). The kernel takes tensor maps of the query, key and value (boxes of
// 128 rows by 64 columns, 1 along the batch and the heads: rows past a head's end read as
// zeros), which the launch passes again. The query tile and 2 stages of key and value blocks
// are dynamic shared memory in 128-byte swizzled rows; mbarriers: q_full, q_empty, and for
// each stage k_full, v_full (the scores wait for the keys only) and empty. The producer warp
// group (setmaxnreg dec 24), its thread 0, copies each item's queries (after the consumers
// released the last item's) and each key block of the item, into the stage the consumers
// released, its key/value head the query head / 2. The consumer warp groups (setmaxnreg inc 240) each take 64 rows. The first key block's
// S = Q K^T (4 wgmma m64n128k16 from the query and key tiles, K-major), waited for, and its
// softmax give P; then for each next key block its S and the previous block's O += P V (8
// wgmma m64n64k16, A from registers, V MN-major) are in flight together: the wait for S
// (wgmma_wait 1) leaves P V running through the softmax, the scores masked in the blocks
// from the first that crosses the diagonal on (a uniform branch), the row max over the quad
// (shuffle xor 1, 2), exp2, P rounded to bf16 (8 fragments of vector<8xbf16>, carried to the
// next iteration); then the wait for P V, the previous stage released, O rescaled. The last
// block's P V ends the item. At the end each warp group writes its 64 rows, in pairs of
// columns, into its staging panel (64 rows by 128 bytes, swizzled, after the stages), once
// its thread 0 has seen the last TMA store done reading it and the group has met at its
// named barrier (3 + group: 1 and 2 are the turns'); a fence for the async proxy and the
// barrier again, then thread 0 stores the panel with TMA through a fourth map (boxes of 64
// rows: TMA clips the rows past 200) and waits for its stores at the kernel's end.

// CHECK:       "memref.global"() <{sym_name = "attention_items", type = memref<9xi32>, initial_value = dense<[0, 1, 2, 3, 4, 1, 3, 0, 2]> : tensor<9xi32>, sym_visibility = "private", constant}>
// CHECK-LABEL: kernel.func @attention(
// CHECK-SAME:      %q_map: !kernel.tensor_map<memref<1x2x200x64xbf16>, box [1, 1, 128, 64], swizzle 128>, %k_map: !kernel.tensor_map<memref<1x1x130x64xbf16>, box [1, 1, 128, 64], swizzle 128>, %v_map: !kernel.tensor_map<memref<1x1x130x64xbf16>, box [1, 1, 128, 64], swizzle 128>, %out_map: !kernel.tensor_map<memref<1x2x200x64xbf16>, box [1, 1, 64, 64], swizzle 128>, %items: memref<9xi32>) block [384, 1, 1] {
// CHECK:         %[[Q_TILE:.*]] = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<1x128x64xbf16, 3 : i32>
// CHECK-NEXT:    %[[K_TILES:.*]] = kernel.dynamic_shared offset 16384 {layout = #kernel.swizzle<128>} : memref<2x1x128x64xbf16, 3 : i32>
// CHECK-NEXT:    %[[V_TILES:.*]] = kernel.dynamic_shared offset 49152 {layout = #kernel.swizzle<128>} : memref<2x1x128x64xbf16, 3 : i32>
// CHECK-NEXT:    %[[OUT_PANELS:.*]] = kernel.dynamic_shared offset 81920 {layout = #kernel.swizzle<128>} : memref<2x1x64x64xbf16, 3 : i32>
// CHECK-NEXT:    %[[Q_FULL:.*]] = kernel.mbarrier_alloc : !kernel.mbarrier<1>
// CHECK-NEXT:    %[[Q_EMPTY:.*]] = kernel.mbarrier_alloc : !kernel.mbarrier<1>
// CHECK-NEXT:    %[[K_FULL:.*]] = kernel.mbarrier_alloc : !kernel.mbarrier<2>
// CHECK-NEXT:    %[[V_FULL:.*]] = kernel.mbarrier_alloc : !kernel.mbarrier<2>
// CHECK-NEXT:    %[[EMPTY:.*]] = kernel.mbarrier_alloc : !kernel.mbarrier<2>
// CHECK:           kernel.mbarrier_init %[[Q_EMPTY]][%c0], arrivals 256
// CHECK:         kernel.barrier
// CHECK:         scf.if
// CHECK-NEXT:      kernel.setmaxnreg dec 24
// CHECK:             %[[BLOCK:.*]] = kernel.block_id x
// CHECK-NEXT:        %[[FIRST_ENTRY:.*]] = memref.load %items[%[[BLOCK]]] : memref<9xi32>
// CHECK-NEXT:        %[[FIRST:.*]] = arith.index_cast %[[FIRST_ENTRY]] : i32 to index
// CHECK-NEXT:        %[[NEXT_BLOCK:.*]] = arith.addi %[[BLOCK]], %c1 : index
// CHECK-NEXT:        %[[AFTER_ENTRY:.*]] = memref.load %items[%[[NEXT_BLOCK]]] : memref<9xi32>
// CHECK-NEXT:        %[[AFTER:.*]] = arith.index_cast %[[AFTER_ENTRY]] : i32 to index
// CHECK-NEXT:        scf.for %[[ENTRY:.*]] = %[[FIRST]] to %[[AFTER]] step %c1 iter_args(%[[BEFORE:.*]] = %c0) -> (index) {
// CHECK-NEXT:          %[[TAKEN:.*]] = arith.subi %[[ENTRY]], %[[FIRST]] : index
// CHECK-NEXT:          %[[AT:.*]] = arith.addi %[[ENTRY]], %c5 : index
// CHECK-NEXT:          %[[ITEM_ENTRY:.*]] = memref.load %items[%[[AT]]] : memref<9xi32>
// CHECK-NEXT:          %[[ITEM:.*]] = arith.index_cast %[[ITEM_ENTRY]] : i32 to index
// CHECK-NEXT:          %[[HEAD:.*]] = arith.divui %[[ITEM]], %c2 : index
// CHECK:               %[[QUERY_HEAD:.*]] = arith.remui %[[HEAD]], %c2 : index
// CHECK:               %[[BLOCKS:.*]] = arith.minui %c2, %{{.*}} : index
// CHECK-NEXT:          %[[KV_HEAD:.*]] = arith.divui %[[QUERY_HEAD]], %c2 : index
// CHECK:                 kernel.mbarrier_wait %[[Q_EMPTY]][%c0]
// CHECK:               kernel.mbarrier_arrive_expect_tx %[[Q_FULL]][%c0], bytes 16384
// CHECK-NEXT:          kernel.tma_load %q_map[%{{.*}}, %[[QUERY_HEAD]], %{{.*}}, %c0], %[[Q_TILE]][%c0, %c0, %c0], %[[Q_FULL]][%c0]
// CHECK:               scf.for %[[STEP:.*]] = %c0 to %[[BLOCKS]] step %c1 {
// CHECK-NEXT:            %[[COUNT:.*]] = arith.addi %[[BEFORE]], %[[STEP]] : index
// CHECK-NEXT:            %[[STAGE:.*]] = arith.remui %[[COUNT]], %c2 : index
// CHECK:                   kernel.mbarrier_wait %[[EMPTY]][%[[STAGE]]], %{{.*}} : !kernel.mbarrier<2>
// CHECK:                 kernel.mbarrier_arrive_expect_tx %[[K_FULL]][%[[STAGE]]], bytes 16384
// CHECK:                 kernel.tma_load %k_map[%{{.*}}, %[[KV_HEAD]], %[[KEY:.*]], %c0], %[[K_TILES]][%[[STAGE]], %c0, %c0, %c0], %[[K_FULL]][%[[STAGE]]]
// CHECK-NEXT:            kernel.mbarrier_arrive_expect_tx %[[V_FULL]][%[[STAGE]]], bytes 16384
// CHECK-NEXT:            kernel.tma_load %v_map[%{{.*}}, %[[KV_HEAD]], %[[KEY]], %c0], %[[V_TILES]][%[[STAGE]], %c0, %c0, %c0], %[[V_FULL]][%[[STAGE]]]
// CHECK:         } else {
// CHECK-NEXT:      kernel.setmaxnreg inc 240
// CHECK-NEXT:      %[[GROUP:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 iter_args(%{{.*}} = %c0) -> (index) {
// CHECK:             %[[KEY_BLOCKS:.*]] = arith.minui %c2, %{{.*}} : index
// CHECK:             kernel.mbarrier_wait %[[Q_FULL]][%c0]
// CHECK:             kernel.mbarrier_wait %[[K_FULL]][%{{.*}}], %{{.*}} : !kernel.mbarrier<2>
// CHECK-NEXT:        kernel.wgmma_fence
// CHECK:             %[[S0:.*]] = kernel.wgmma m64n128k16 %[[Q_TILE]][%c0, %[[ROWS:[0-9a-z_]+]], %c48]
// CHECK-NEXT:        kernel.wgmma_commit
// CHECK-NEXT:        %{{.*}} = kernel.wgmma_wait 0, %[[S0]] : vector<64xf32>
// CHECK:             scf.for %{{.*}} = %c1 to %[[KEY_BLOCKS]] step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, vector<32xf32>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>) {
// CHECK:               kernel.mbarrier_wait %[[K_FULL]][%[[S:[0-9a-z_]+]]], %{{.*}} : !kernel.mbarrier<2>
// CHECK:               kernel.mbarrier_wait %[[V_FULL]][%[[PREVIOUS:[0-9a-z_]+]]], %{{.*}} : !kernel.mbarrier<2>
// CHECK-NEXT:          kernel.wgmma_fence
// CHECK:               %{{.*}} = kernel.wgmma m64n128k16 %[[Q_TILE]][%c0, %[[ROWS]], %c0], %[[K_TILES]][%[[S]], %c0, %c0, %c0], %{{.*}} : memref<1x128x64xbf16, 3 : i32>, memref<2x1x128x64xbf16, 3 : i32>, vector<64xf32> -> vector<64xf32>
// CHECK-NEXT:          %{{.*}} = kernel.wgmma m64n128k16 %[[Q_TILE]][%c0, %[[ROWS]], %c16], %[[K_TILES]][%[[S]], %c0, %c0, %c16]
// CHECK-NEXT:          %{{.*}} = kernel.wgmma m64n128k16 %[[Q_TILE]][%c0, %[[ROWS]], %c32], %[[K_TILES]][%[[S]], %c0, %c0, %c32]
// CHECK-NEXT:          %[[SCORES:.*]] = kernel.wgmma m64n128k16 %[[Q_TILE]][%c0, %[[ROWS]], %c48], %[[K_TILES]][%[[S]], %c0, %c0, %c48]
// CHECK-NEXT:          kernel.wgmma_commit
// CHECK-NEXT:          %{{.*}} = kernel.wgmma m64n64k16 %{{.*}}, %[[V_TILES]][%[[PREVIOUS]], %c0, %c0, %c0] mn_major, %{{.*}} : vector<8xbf16>, memref<2x1x128x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
// CHECK-COUNT-6:       kernel.wgmma m64n64k16 %{{.*}}, %[[V_TILES]][%[[PREVIOUS]], %c0, %c{{[0-9]+}}, %c0] mn_major
// CHECK-NEXT:          %[[OUT:.*]] = kernel.wgmma m64n64k16 %{{.*}}, %[[V_TILES]][%[[PREVIOUS]], %c0, %c112, %c0] mn_major
// CHECK-NEXT:          kernel.wgmma_commit
// CHECK-NEXT:          %{{.*}} = kernel.wgmma_wait 1, %[[SCORES]] : vector<64xf32>
// CHECK:               scf.if %{{.*}} -> (f32, f32
// CHECK:               } else {
// CHECK:                 arith.cmpi ult, %{{.*}}, %c130 : index
// CHECK:               kernel.shuffle xor %{{.*}}, %c1_i32 : f32
// CHECK:               kernel.shuffle xor %{{.*}}, %c2_i32 : f32
// CHECK:               math.exp2
// CHECK:               arith.truncf %{{.*}} : f32 to bf16
// CHECK:               %{{.*}} = kernel.wgmma_wait 0, %[[OUT]] : vector<32xf32>
// CHECK-NEXT:          kernel.mbarrier_arrive %[[EMPTY]][%[[PREVIOUS]]] : !kernel.mbarrier<2>
// CHECK:               scf.yield {{.*}} : f32, f32, f32, f32, vector<32xf32>, vector<8xbf16>
// CHECK:             kernel.mbarrier_wait %[[V_FULL]][%[[LAST:[0-9a-z_]+]]], %{{.*}} : !kernel.mbarrier<2>
// CHECK-NEXT:        kernel.wgmma_fence
// CHECK-NEXT:        %{{.*}} = kernel.wgmma m64n64k16 %{{.*}}, %[[V_TILES]][%[[LAST]], %c0, %c0, %c0] mn_major
// CHECK:             kernel.wgmma_commit
// CHECK-NEXT:        %{{.*}} = kernel.wgmma_wait 0, %{{.*}} : vector<32xf32>
// CHECK-NEXT:        kernel.mbarrier_arrive %[[EMPTY]][%[[LAST]]] : !kernel.mbarrier<2>
// CHECK-NEXT:        kernel.mbarrier_arrive %[[Q_EMPTY]][%c0] : !kernel.mbarrier<1>
// CHECK-NOT:         kernel.vector_store %{{.*}}, %o[
// CHECK:             %[[STAGING:.*]] = arith.addi %[[GROUP]], %c3 : index
// CHECK:               kernel.tma_store_wait 0 read
// CHECK:             kernel.named_barrier sync %[[STAGING]], threads 128
// CHECK-COUNT-16:    kernel.vector_store %{{.*}}, %[[OUT_PANELS]][%[[GROUP]], %c0, %{{.*}}, %{{.*}}] : memref<2x1x64x64xbf16, 3 : i32>, vector<2xbf16>
// CHECK-NEXT:        kernel.fence_proxy_async
// CHECK-NEXT:        kernel.named_barrier sync %[[STAGING]], threads 128
// CHECK:               kernel.tma_store %out_map[%{{.*}}, %{{.*}}, %{{.*}}, %c0], %[[OUT_PANELS]][%[[GROUP]], %c0, %c0, %c0]
// CHECK-NEXT:          kernel.tma_store_commit
// CHECK:             }
// CHECK:           kernel.tma_store_wait 0{{$}}
// CHECK-NOT:     kernel.named_barrier
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT:    %items = memref.get_global @attention_items : memref<9xi32>
// CHECK-NEXT:    kernel.launch @attention(%q, %k, %v, %o, %q, %k, %v, %o, %items) grid [4, 1, 1] block [384, 1, 1] smem 98304

tile.kernel @attention(%q: memref<1x2x200x64xbf16>, %k: memref<1x1x130x64xbf16>, %v: memref<1x1x130x64xbf16>, %o: memref<1x2x200x64xbf16>) grid [4, 1, 1] block [384, 1, 1] {
  tile.attention %q, %k, %v scale 0.125 causal into %o : memref<1x2x200x64xbf16>, memref<1x1x130x64xbf16>, memref<1x1x130x64xbf16> into memref<1x2x200x64xbf16> atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2
}
func.func @forward(%q: memref<1x2x200x64xbf16>, %k: memref<1x1x130x64xbf16>, %v: memref<1x1x130x64xbf16>, %o: memref<1x2x200x64xbf16>) {
  tile.launch @attention(%q, %k, %v, %o) : memref<1x2x200x64xbf16>, memref<1x1x130x64xbf16>, memref<1x1x130x64xbf16>, memref<1x2x200x64xbf16>
  func.return
}

// -----

// An additive mask (read from global memory where each score is, times log2(e)): each key
// block's S, softmax and P V run in turn (the overlap leaves no registers for the mask's
// reads): S issued, the mask's elements at its scores loaded while it is multiplied, S
// waited for (wgmma_wait 0), then P V issued and waited for, and the stage released. Of the
// 130 keys only the second block's reach past the end: a uniform branch passes the first
// block's scores through, and the second's past key 130 become -inf (the selects of the
// key comparisons that the mask's loads made).

// CHECK-LABEL: kernel.func @masked(
// CHECK:         scf.for %{{.*}} = %c0 to %{{.*}} step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, vector<32xf32>) {
// CHECK:           kernel.mbarrier_wait %k_full[%[[S:[0-9a-z_]+]]], %{{.*}} : !kernel.mbarrier<2>
// CHECK-NEXT:      kernel.wgmma_fence
// CHECK:           %[[SCORES:.*]] = kernel.wgmma m64n128k16 %{{.*}}[%c0, %{{.*}}, %c48]
// CHECK-NEXT:      kernel.wgmma_commit
// CHECK:           memref.load %m[%{{.*}}, %{{.*}}] : memref<100x130xf32>
// CHECK-NOT:       arith.addf
// CHECK:           %{{.*}} = kernel.wgmma_wait 0, %[[SCORES]] : vector<64xf32>
// CHECK:           arith.addf
// CHECK:           %[[BEFORE_TAIL:.*]] = arith.cmpi ult, %{{.*}}, %c1 : index
// CHECK-NEXT:      scf.if %[[BEFORE_TAIL]] -> (f32
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      } else {
// CHECK:             arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK:           kernel.shuffle xor
// CHECK:           kernel.mbarrier_wait %v_full[%[[S]]], %{{.*}} : !kernel.mbarrier<2>
// CHECK-NEXT:      kernel.wgmma_fence
// CHECK-NEXT:      %{{.*}} = kernel.wgmma m64n64k16 %{{.*}}, %{{.*}}[%[[S]], %c0, %c0, %c0] mn_major
// CHECK:           %[[OUT:.*]] = kernel.wgmma m64n64k16 %{{.*}}, %{{.*}}[%[[S]], %c0, %c112, %c0] mn_major
// CHECK-NEXT:      kernel.wgmma_commit
// CHECK-NEXT:      %{{.*}} = kernel.wgmma_wait 0, %[[OUT]] : vector<32xf32>
// CHECK-NEXT:      kernel.mbarrier_arrive %{{.*}}[%[[S]]] : !kernel.mbarrier<2>

tile.kernel @masked(%q: memref<1x2x100x64xbf16>, %k: memref<1x1x130x64xbf16>, %v: memref<1x1x130x64xbf16>, %m: memref<100x130xf32>, %o: memref<1x2x100x64xbf16>) grid [2, 1, 1] block [384, 1, 1] {
  tile.attention %q, %k, %v mask %m scale 0.125 into %o : memref<1x2x100x64xbf16>, memref<1x1x130x64xbf16>, memref<1x1x130x64xbf16> mask memref<100x130xf32> into memref<1x2x100x64xbf16> atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2
}

// -----

// At head dim 128 the consumers take turns at issuing their products (FlashAttention-3's
// ping-pong, PING_PONG_MIN_DEPTH): named barriers 1 and 2 of 256 threads; a warp group waits
// at its own before it issues and arrives at the other's after; the second lets the first go
// first, and the first takes the second's last turn at the end, so that no barrier is left
// waiting. The first key block's S, each next block's S and P V, and the last block's P V are
// issued in a turn each.

// CHECK-LABEL: kernel.func @attention(
// CHECK:           kernel.setmaxnreg inc 240
// CHECK-NEXT:      %[[GROUP:.*]] = arith.subi %{{.*}}, %c1 : index
// CHECK:           %[[OWN_TURN:.*]] = arith.addi %[[GROUP]], %c1 : index
// CHECK-NEXT:      %[[OTHER_TURN:.*]] = arith.subi %c2, %[[GROUP]] : index
// CHECK-NEXT:      %[[SECOND:.*]] = arith.cmpi eq, %[[GROUP]], %c1 : index
// CHECK-NEXT:      scf.if %[[SECOND]] {
// CHECK-NEXT:        kernel.named_barrier arrive %[[OTHER_TURN]], threads 256
// CHECK-NEXT:      }
// CHECK:             kernel.named_barrier sync %[[OWN_TURN]], threads 256
// CHECK-NEXT:        kernel.wgmma_fence
// CHECK-COUNT-8:     kernel.wgmma m64n128k16
// CHECK-NEXT:        kernel.wgmma_commit
// CHECK-NEXT:        kernel.named_barrier arrive %[[OTHER_TURN]], threads 256
// CHECK:             scf.for
// CHECK:               kernel.named_barrier sync %[[OWN_TURN]], threads 256
// CHECK-NEXT:          kernel.wgmma_fence
// CHECK-COUNT-8:       kernel.wgmma m64n128k16 %{{.*}}, %{{.*}}
// CHECK-NEXT:          kernel.wgmma_commit
// CHECK-COUNT-8:       kernel.wgmma m64n128k16 %{{.*}}, %{{.*}} mn_major
// CHECK-NEXT:          kernel.wgmma_commit
// CHECK-NEXT:          kernel.named_barrier arrive %[[OTHER_TURN]], threads 256
// CHECK:             kernel.named_barrier sync %[[OWN_TURN]], threads 256
// CHECK-NEXT:        kernel.wgmma_fence
// CHECK-COUNT-8:     kernel.wgmma m64n128k16 %{{.*}}, %{{.*}} mn_major
// CHECK-NEXT:        kernel.wgmma_commit
// CHECK-NEXT:        kernel.named_barrier arrive %[[OTHER_TURN]], threads 256
// CHECK:           %[[FIRST_GROUP:.*]] = arith.cmpi eq, %[[GROUP]], %c0 : index
// CHECK-NEXT:      scf.if %[[FIRST_GROUP]] {
// CHECK-NEXT:        kernel.named_barrier sync %[[OWN_TURN]], threads 256
// CHECK-NEXT:      }
// CHECK-NOT:     kernel.named_barrier
// CHECK-LABEL: func.func @forward(
tile.kernel @attention(%q: memref<1x1x256x128xbf16>, %k: memref<1x1x256x128xbf16>, %v: memref<1x1x256x128xbf16>, %o: memref<1x1x256x128xbf16>) grid [2, 1, 1] block [384, 1, 1] {
  tile.attention %q, %k, %v scale 0.125 causal into %o : memref<1x1x256x128xbf16>, memref<1x1x256x128xbf16>, memref<1x1x256x128xbf16> into memref<1x1x256x128xbf16> atom wgmma m64n128k16 tile [128, 128, 128] warps [8, 1] pipeline 2
}
func.func @forward(%q: memref<1x1x256x128xbf16>, %k: memref<1x1x256x128xbf16>, %v: memref<1x1x256x128xbf16>, %o: memref<1x1x256x128xbf16>) {
  tile.launch @attention(%q, %k, %v, %o) : memref<1x1x256x128xbf16>, memref<1x1x256x128xbf16>, memref<1x1x256x128xbf16>, memref<1x1x256x128xbf16>
  func.return
}

// -----

// Where no staging panel fits beside the query tile and 3 stages of key and value blocks
// (224 KiB of the 227), each lane stores its rows from registers, in pairs of columns, and
// the kernel takes no map of the output.

// CHECK-LABEL: kernel.func @deep(
// CHECK-SAME:      %v_map: !kernel.tensor_map<memref<1x1x256x128xbf16>, box [1, 1, 128, 64], swizzle 128>, %items: memref<5xi32>)
// CHECK-NOT:     out_panels
// CHECK:             kernel.vector_store %{{.*}}, %o[%{{.*}}, %c0, %{{.*}}, %{{.*}}] : memref<1x1x256x128xbf16>, vector<2xbf16>
// CHECK-NOT:     kernel.tma_store
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT:    %items = memref.get_global @deep_items : memref<5xi32>
// CHECK-NEXT:    kernel.launch @deep(%q, %k, %v, %o, %q, %k, %v, %items) grid [2, 1, 1] block [384, 1, 1] smem 229376
tile.kernel @deep(%q: memref<1x1x256x128xbf16>, %k: memref<1x1x256x128xbf16>, %v: memref<1x1x256x128xbf16>, %o: memref<1x1x256x128xbf16>) grid [2, 1, 1] block [384, 1, 1] {
  tile.attention %q, %k, %v scale 0.125 into %o : memref<1x1x256x128xbf16>, memref<1x1x256x128xbf16>, memref<1x1x256x128xbf16> into memref<1x1x256x128xbf16> atom wgmma m64n128k16 tile [128, 128, 128] warps [8, 1] pipeline 3
}
func.func @forward(%q: memref<1x1x256x128xbf16>, %k: memref<1x1x256x128xbf16>, %v: memref<1x1x256x128xbf16>, %o: memref<1x1x256x128xbf16>) {
  tile.launch @deep(%q, %k, %v, %o) : memref<1x1x256x128xbf16>, memref<1x1x256x128xbf16>, memref<1x1x256x128xbf16>, memref<1x1x256x128xbf16>
  func.return
}
