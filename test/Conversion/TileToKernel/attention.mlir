// RUN: emmy-opt %s --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// Causal attention, 2 heads of 100 rows, head dim 64, bf16: a block per 64 query rows (grid
// x) of a head (grid z, strided through); 4 warps of 16 rows. The query tile and two stages
// of key and value tiles lie in shared memory as swizzled 128-byte rows, copied by cp.async
// (16 bytes a copy, rows past 100 zero-filled: src_bytes). The block takes the key blocks up
// to the one holding its last query (causal: min(2, ceil((q0 + 64) / 64))), and masks only
// those from the first that crosses the diagonal or holds the last keys (min((q0 + 1) / 64,
// 100 / 64)): a uniform branch passes the scores of the blocks before it through as they
// are, without mask arithmetic. The queries and
// the first key block are in flight before the loop, the queries waited for (wait 1), loaded
// into registers by ldmatrix. Iteration j waits for its block (wait 0), passes a barrier,
// starts block j + 1 if there is one, and computes: S = Q K^T by mma_sync, the row max over
// the quad (shuffle xor 1, 2), exp2 of the scaled scores, the rescaled output plus P V (V by
// ldmatrix trans). At the end each lane divides by its rows' sums and stores pairs of
// columns of the rows below 100.

// CHECK-LABEL: kernel.func @attention(
// CHECK:         %[[Q_TILE:.*]] = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<1x1x64x64xbf16, 3 : i32>
// CHECK-NEXT:    %[[K_TILES:.*]] = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x1x64x64xbf16, 3 : i32>
// CHECK-NEXT:    %[[V_TILES:.*]] = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<2x1x64x64xbf16, 3 : i32>
// CHECK:         scf.for %[[HEAD:.*]] = %{{.*}} to %c2 step %{{.*}} {
// CHECK-NEXT:      kernel.barrier
// CHECK:           %[[BLOCKS:.*]] = arith.minui %c2, %{{.*}} : index
// CHECK:           %[[MASKED_FROM:.*]] = arith.minui %{{.*}}, %c1 : index
// CHECK:           kernel.cp_async %[[Q_TILE]][%c0, %c0, %{{.*}}, %{{.*}}], %{{.*}}[%[[HEAD]], %{{.*}}, %{{.*}}] bytes 16 src_bytes %{{.*}}
// CHECK:           kernel.cp_async_commit
// CHECK-NEXT:      %[[ANY:.*]] = arith.cmpi ult, %c0, %[[BLOCKS]] : index
// CHECK-NEXT:      scf.if %[[ANY]] {
// CHECK:             kernel.cp_async %[[K_TILES]][%c0, %c0
// CHECK:             kernel.cp_async %[[V_TILES]][%c0, %c0
// CHECK:           kernel.cp_async_commit
// CHECK-NEXT:      kernel.cp_async_wait 1
// CHECK-NEXT:      kernel.barrier
// CHECK:           %[[Q0:.*]] = kernel.ldmatrix %[[Q_TILE]]
// CHECK:           scf.for %[[J:.*]] = %c0 to %[[BLOCKS]] step %c1 iter_args(
// CHECK-NEXT:        kernel.cp_async_wait 0
// CHECK-NEXT:        kernel.barrier
// CHECK:             scf.if
// CHECK:               kernel.cp_async %[[K_TILES]]
// CHECK:             kernel.cp_async_commit
// CHECK:             kernel.ldmatrix %[[K_TILES]]
// CHECK:             kernel.mma_sync m16n8k16 %[[Q0]]
// CHECK:             %[[BELOW:.*]] = arith.cmpi ult, %[[J]], %[[MASKED_FROM]] : index
// CHECK-NEXT:        %{{.*}} = scf.if %[[BELOW]] -> (f32, f32
// CHECK-NEXT:          scf.yield %{{.*}} : f32, f32
// CHECK-NEXT:        } else {
// CHECK:               arith.cmpi ult, %{{.*}}, %c100 : index
// CHECK:               arith.select
// CHECK:               scf.yield
// CHECK-NEXT:        }
// CHECK:             kernel.shuffle xor %{{.*}}, %c1_i32 : f32
// CHECK:             kernel.shuffle xor %{{.*}}, %c2_i32 : f32
// CHECK:             math.exp2
// CHECK:             arith.truncf %{{.*}} : f32 to bf16
// CHECK:             kernel.ldmatrix %[[V_TILES]][%{{.*}}] trans
// CHECK:             kernel.mma_sync m16n8k16
// CHECK:             scf.yield
// CHECK:           arith.divf
// CHECK:           scf.if
// CHECK:             kernel.vector_store %{{.*}}, %{{.*}}[%[[HEAD]], %{{.*}}, %{{.*}}] : memref<2x100x64xbf16>, vector<2xbf16>
tile.kernel @attention(%q: memref<2x100x64xbf16>, %k: memref<2x100x64xbf16>, %v: memref<2x100x64xbf16>, %o: memref<2x100x64xbf16>) grid [2, 1, 2] block [128, 1, 1] {
  tile.attention %q, %k, %v scale 0.125 causal into %o : memref<2x100x64xbf16>, memref<2x100x64xbf16>, memref<2x100x64xbf16> into memref<2x100x64xbf16> atom mma_sync m16n8k16 tile [64, 64, 64] warps [4, 1] pipeline 2
}
