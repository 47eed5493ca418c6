// RUN: emmy-opt %s --split-input-file --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// Sibling rhs on mma_sync: the B tile's 64 rows are 32 of the gate's weight then 32 of the
// up's (4 warps along M, one along N: each warp's N holds both siblings' shares), copied by
// cp.async from each rhs at the tile's output columns; the epilogue pairs an atom of the gate
// (atoms 0-3 of the warp's 8) with the atom 32 columns on, the up's, in the same thread.

// CHECK-LABEL: kernel.func @gate_up(
// CHECK:         %b_tiles = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<1x1x64x64xbf16, 3 : i32>
// CHECK:         %[[COLUMN:.*]] = arith.muli %{{.*}}, %c32 : index
// CHECK:         %[[G0:.*]] = arith.addi %[[COLUMN]], %[[R0:.*]] : index
// CHECK-NEXT:    kernel.cp_async %b_tiles[%c0, %c0, %[[R0]], %{{.*}}], %wg[%[[G0]], %{{.*}}] bytes 16
// CHECK-NEXT:    %[[G1:.*]] = arith.addi %[[COLUMN]], %[[R1:.*]] : index
// CHECK-NEXT:    kernel.cp_async %b_tiles[%c0, %c0, %[[R1]], %{{.*}}], %wg[%[[G1]], %{{.*}}] bytes 16
// CHECK-NEXT:    kernel.cp_async %b_tiles[%c0, %c0, %{{.*}}, %{{.*}}], %wu[%[[G0]], %{{.*}}] bytes 16
// CHECK-NEXT:    %[[R3:.*]] = arith.addi %[[R1]], %c32 : index
// CHECK-NEXT:    kernel.cp_async %b_tiles[%c0, %c0, %[[R3]], %{{.*}}], %wu[%[[G1]], %{{.*}}] bytes 16
// CHECK-COUNT-24: kernel.mma_sync m16n8k16
// CHECK:         %[[GATE:.*]] = kernel.mma_sync m16n8k16
// CHECK-COUNT-3: kernel.mma_sync m16n8k16
// CHECK:         %[[UP:.*]] = kernel.mma_sync m16n8k16
// CHECK:         %[[G:.*]] = vector.extract %[[GATE]][0] : f32 from vector<4xf32>
// CHECK-NEXT:    %[[U:.*]] = vector.extract %[[UP]][0] : f32 from vector<4xf32>
// CHECK:         %p = arith.mulf %[[G]], %[[U]] : f32

tile.kernel @gate_up(%x: memref<64x64xbf16>, %wg: memref<32x64xbf16>, %wu: memref<32x64xbf16>, %y: memref<64x32xbf16>) grid [1, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 64], atom mma_sync m16n8k16, warps [4, 1], pipeline 1>} {
  tile.gemm %x[m, k] * (%wg, %wu)[n, k] : memref<64x64xbf16>, memref<32x64xbf16>, memref<32x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 64] warps [4, 1] pipeline 1 epilogue(%m, %n, %gate, %up) {
    %p = arith.mulf %gate, %up : f32
    %t = arith.truncf %p : f32 to bf16
    memref.store %t, %y[%m, %n] : memref<64x32xbf16>
  }
}

// -----

// Sibling rhs on wgmma: one TMA box of 128 rows from each rhs's tensor map into its half of
// the B stage (the up's at row 128), under one expect_tx of both operands' bytes; an
// m64n256k16 covers both, and a thread's element e of the gate's columns is element e + 64,
// the up's of the same output column, of its accumulator.

// CHECK-LABEL: kernel.func @gate_up_wgmma(
// CHECK-SAME:    %a_map: !kernel.tensor_map<memref<256x128xbf16>, box [128, 64], swizzle 128>, %b0_map: !kernel.tensor_map<memref<512x128xbf16>, box [128, 64], swizzle 128>, %b1_map: !kernel.tensor_map<memref<512x128xbf16>, box [128, 64], swizzle 128>, %out_map: !kernel.tensor_map<memref<256x512xbf16>, box [64, 64], swizzle 128>)
// CHECK:         kernel.mbarrier_arrive_expect_tx %full[%[[S:.*]]], bytes 49152
// CHECK-NEXT:    %{{.*}} = arith.muli
// CHECK-NEXT:    kernel.tma_load %a_map[%{{.*}}, %[[K:.*]]], %a_tiles[%[[S]], %c0, %c0], %full[%[[S]]]
// CHECK-NEXT:    kernel.tma_load %b0_map[%[[N:.*]], %[[K]]], %b_tiles[%[[S]], %c0, %c0], %full[%[[S]]]
// CHECK-NEXT:    kernel.tma_load %b1_map[%[[N]], %[[K]]], %b_tiles[%[[S]], %c128, %c0], %full[%[[S]]]
// CHECK:         kernel.wgmma m64n256k16
// CHECK:         %[[G:.*]] = vector.extract %[[ACC:.*]][0] : f32 from vector<128xf32>
// CHECK-NEXT:    %[[U:.*]] = vector.extract %[[ACC]][64] : f32 from vector<128xf32>
// CHECK:         %p = arith.mulf %[[G]], %[[U]] : f32
// CHECK:         kernel.vector_store %{{.*}}, %out_panels
// CHECK:         kernel.tma_store %out_map
// CHECK:         kernel.vector_store %{{.*}}, %out_panels
// CHECK:         kernel.tma_store %out_map

tile.kernel @gate_up_wgmma(%x: memref<256x128xbf16>, %wg: memref<512x128xbf16>, %wu: memref<512x128xbf16>, %y: memref<256x512xbf16>) grid [8, 1, 1] block [384, 1, 1] attributes {tile.schedule = #tile.schedule<block [384, 1, 1], loops [], tile [128, 256, 64], atom wgmma m64n256k16, warps [8, 1], pipeline 4, warp_roles ["producer", "consumer", "consumer"]>} {
  tile.gemm %x[m, k] * (%wg, %wu)[n, k] : memref<256x128xbf16>, memref<512x128xbf16>, memref<512x128xbf16> -> f32 atom wgmma m64n256k16 tile [128, 256, 64] warps [8, 1] pipeline 4 epilogue(%m, %n, %gate, %up) {
    %p = arith.mulf %gate, %up : f32
    %t = arith.truncf %p : f32 to bf16
    memref.store %t, %y[%m, %n] : memref<256x512xbf16>
  }
}
