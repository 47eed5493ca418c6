// RUN: emmy-opt %s --lower-tile-to-kernel | filecheck %s

// `cluster 2`: the persistent blocks run in clusters of 2 (block x of rank x % 2), which take
// 2 M tiles of one N column at a time (3 M tiles of 128 rows: the second cluster row's second
// tile is past M, computes zeros and its TMA stores write nothing; 2 N tiles: 4 clusters, 8 blocks). Each block copies its own A box and half
// of the B box's rows (the map's box is 64 of the tile's 128 rows), multicast to both blocks
// (mask 3); the full barrier expects the whole stage. Thread r of each consumer warp group
// releases a stage on the empty barriers of both blocks, which expect 2 x 2 arrivals. A cluster
// barrier after the barriers' initialisation; before the block ends, its producer waits for
// the releases of its last 3 slices, the other block's consumers' arrivals on its barriers.
// The launch is `persistent`: the runtime runs no more clusters than fit on the GPU at once.

// CHECK-LABEL: kernel.func @gemm(%a: memref<300x136xbf16>, %b: memref<200x136xbf16>, %y: memref<300x200xf32>, %a_map: !kernel.tensor_map<memref<300x136xbf16>, box [128, 64], swizzle 128>, %b_map: !kernel.tensor_map<memref<200x136xbf16>, box [64, 64], swizzle 128>, %out_map: !kernel.tensor_map<memref<300x200xf32>, box [64, 32], swizzle 128>) block [384, 1, 1] cluster 2 {
// CHECK:         %bx = kernel.block_id x
// CHECK:         %[[RANK:.*]] = arith.remui %bx, %c2 : index
// CHECK:           kernel.mbarrier_init %empty[%c0], arrivals 4
// CHECK:         kernel.cluster_barrier
// CHECK:         scf.if
// CHECK:             %[[FIRST:.*]] = arith.divui %bx, %c2 : index
// CHECK:             %[[STEP:.*]] = arith.divui %gx, %c2 : index
// CHECK:             scf.for %{{.*}} = %[[FIRST]] to %c4 step %[[STEP]] {
// CHECK:                 kernel.mbarrier_arrive_expect_tx %full[%[[S:.*]]], bytes 32768
// CHECK:                 kernel.tma_load %a_map[%{{.*}}, %{{.*}}], %a_tiles[%[[S]], %c0, %c0], %full[%[[S]]] :
// CHECK:                 %[[ROW:.*]] = arith.muli %[[RANK]], %c64 : index
// CHECK:                 kernel.tma_load %b_map[%{{.*}}, %{{.*}}], %b_tiles[%[[S]], %[[ROW]], %c0], %full[%[[S]]] multicast %c3 :
// CHECK:             }
// CHECK-COUNT-3:       kernel.mbarrier_wait %empty
// CHECK:         } else {
// CHECK:           %[[SIGNALS:.*]] = arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK:               scf.if %[[SIGNALS]] {
// CHECK-NEXT:            kernel.mbarrier_arrive %empty[%{{.*}}] rank %c0 : !kernel.mbarrier<3>
// CHECK-NEXT:            kernel.mbarrier_arrive %empty[%{{.*}}] rank %c1 : !kernel.mbarrier<3>
// CHECK-NOT:     kernel.cluster_barrier
// CHECK:       func.func @forward
// CHECK:         kernel.launch @gemm(%a, %b, %y, %a, %b, %y) grid [8, 1, 1] block [384, 1, 1] smem 163840 persistent
tile.kernel @gemm(%a: memref<300x136xbf16>, %b: memref<200x136xbf16>, %y: memref<300x200xf32>) grid [8, 1, 1] block [384, 1, 1] {
  tile.gemm %a[m, k] * %b[n, k] : memref<300x136xbf16>, memref<200x136xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 3 cluster 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<300x200xf32>
  }
}

func.func @forward(%a: memref<300x136xbf16>, %b: memref<200x136xbf16>) -> memref<300x200xf32> {
  %y = memref.alloc() : memref<300x200xf32>
  tile.launch @gemm(%a, %b, %y) : memref<300x136xbf16>, memref<200x136xbf16>, memref<300x200xf32>
  func.return %y : memref<300x200xf32>
}
