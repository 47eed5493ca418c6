// RUN: emmy-opt %s --lower-tile-to-kernel | filecheck %s

// A wgmma tile.gemm becomes a warp-specialised, persistent kernel: the launch passes the
// operands again for two tensor maps (boxes of a tile's rows by one 64-element K slice, 128-byte
// swizzle); warp group 0's thread 0 copies each K slice with TMA into the stage the consumers
// released (mbarrier `empty`), the consumer warp groups wait for it (`full`) and multiply it
// with 4 wgmmas of k16, which stay in flight while the next slice's are issued: each wait
// leaves one group behind and releases the slice before (all of them after the last): thread 0
// of each consumer warp group arrives for its group, whose wait saw its wgmmas done.
// The output goes out through shared memory: each consumer warp group writes a panel of
// 32 f32 columns (128-byte rows) of its 64 rows into one of its 4 staging slots, and its
// thread 0 stores it with TMA (a third tensor map, of the output: the launch passes %y again),
// first waiting until the stores that read the slot before are done reading it.

// CHECK-LABEL: kernel.func @gemm(%a: memref<300x136xbf16>, %b: memref<200x136xbf16>, %y: memref<300x200xf32>, %a_map: !kernel.tensor_map<memref<300x136xbf16>, box [128, 64], swizzle 128>, %b_map: !kernel.tensor_map<memref<200x136xbf16>, box [128, 64], swizzle 128>, %out_map: !kernel.tensor_map<memref<300x200xf32>, box [64, 32], swizzle 128>) block [384, 1, 1] {
// CHECK:         %a_tiles = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<3x128x64xbf16, 3 : i32>
// CHECK:         %b_tiles = kernel.dynamic_shared offset 49152 {layout = #kernel.swizzle<128>} : memref<3x128x64xbf16, 3 : i32>
// CHECK:         %out_panels = kernel.dynamic_shared offset 98304 {layout = #kernel.swizzle<128>} : memref<2x4x64x32xf32, 3 : i32>
// CHECK:         %full = kernel.mbarrier_alloc : !kernel.mbarrier<3>
// CHECK:         %empty = kernel.mbarrier_alloc : !kernel.mbarrier<3>
// CHECK:           kernel.mbarrier_init %full[%c0], arrivals 1
// CHECK:           kernel.mbarrier_init %empty[%c0], arrivals 2
// CHECK:         kernel.barrier
// CHECK:         scf.if
// CHECK:           kernel.setmaxnreg dec 24
// CHECK:             scf.for %[[WORK:.*]] = %bx to %c6 step %gx {
// CHECK:               scf.for
// CHECK:                   kernel.mbarrier_wait %empty[%[[S:.*]]], %{{.*}} : !kernel.mbarrier<3>
// CHECK:                 kernel.mbarrier_arrive_expect_tx %full[%[[S]]], bytes 32768
// CHECK:                 kernel.tma_load %a_map[%{{.*}}, %{{.*}}], %a_tiles[%[[S]], %c0, %c0], %full[%[[S]]]
// CHECK:                 kernel.tma_load %b_map[%{{.*}}, %{{.*}}], %b_tiles[%[[S]], %c0, %c0], %full[%[[S]]]
// CHECK:         } else {
// CHECK:           kernel.setmaxnreg inc 240
// CHECK:           %[[SIGNALS:.*]] = arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK:             kernel.mbarrier_wait %full[%[[T:.*]]], %{{.*}} : !kernel.mbarrier<3>
// CHECK-NEXT:        kernel.wgmma_fence
// CHECK-COUNT-4:     kernel.wgmma m64n128k16
// CHECK-NEXT:        kernel.wgmma_commit
// CHECK-NEXT:        kernel.wgmma_wait 1
// CHECK-NEXT:        %[[LATER:.*]] = arith.cmpi ult, %c0, %[[SLICE:.*]] : index
// CHECK-NEXT:        scf.if %[[LATER]] {
// CHECK:               scf.if %[[SIGNALS]] {
// CHECK-NEXT:            kernel.mbarrier_arrive %empty[%{{.*}}] : !kernel.mbarrier<3>
// CHECK:             %[[DONE:.*]] = kernel.wgmma_wait 0, %{{.*}} : vector<64xf32>
// CHECK:             kernel.mbarrier_arrive %empty
// CHECK:             scf.if %[[SIGNALS]] {
// CHECK-NEXT:          kernel.tma_store_wait 3 read
// CHECK:             kernel.named_barrier sync %[[GROUP_BARRIER:.*]], threads 128
// CHECK:                 kernel.vector_store %{{.*}}, %out_panels[%[[GROUP:.*]], %c0, %{{.*}}, %{{.*}}] : memref<2x4x64x32xf32, 3 : i32>, vector<2xf32>
// CHECK:             kernel.fence_proxy_async
// CHECK-NEXT:        kernel.named_barrier sync %[[GROUP_BARRIER]], threads 128
// CHECK-NEXT:        scf.if %[[SIGNALS]] {
// CHECK-NEXT:          kernel.tma_store %out_map[%{{.*}}, %{{.*}}], %out_panels[%[[GROUP]], %c0, %c0, %c0] : !kernel.tensor_map<memref<300x200xf32>, box [64, 32], swizzle 128>, memref<2x4x64x32xf32, 3 : i32>
// CHECK-NEXT:          kernel.tma_store_commit
// CHECK:                 kernel.vector_store %{{.*}}, %out_panels[%[[GROUP]], %c3, %{{.*}}, %{{.*}}]
// CHECK:               kernel.tma_store %out_map[%{{.*}}, %{{.*}}], %out_panels[%[[GROUP]], %c3, %c0, %c0]
// CHECK:           scf.if %[[SIGNALS]] {
// CHECK-NEXT:        kernel.tma_store_wait 0
// CHECK-NOT:     kernel.tma_store
// CHECK:       func.func @forward
// CHECK:         kernel.launch @gemm(%a, %b, %y, %a, %b, %y) grid [6, 1, 1] block [384, 1, 1] smem 163840 persistent
tile.kernel @gemm(%a: memref<300x136xbf16>, %b: memref<200x136xbf16>, %y: memref<300x200xf32>) grid [6, 1, 1] block [384, 1, 1] {
  tile.gemm %a[m, k] * %b[n, k] : memref<300x136xbf16>, memref<200x136xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 3 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<300x200xf32>
  }
}

func.func @forward(%a: memref<300x136xbf16>, %b: memref<200x136xbf16>) -> memref<300x200xf32> {
  %y = memref.alloc() : memref<300x200xf32>
  tile.launch @gemm(%a, %b, %y) : memref<300x136xbf16>, memref<200x136xbf16>, memref<300x200xf32>
  func.return %y : memref<300x200xf32>
}

// An output whose rows are not a multiple of 16 bytes (70 f32), which TMA cannot address, is
// stored from registers, each thread's pair of columns under the bounds check.

// CHECK-LABEL: kernel.func @registers(
// CHECK-NOT:     out_panels
// CHECK-NOT:     kernel.tma_store
// CHECK:         kernel.wgmma_wait 0
// CHECK:         scf.if
// CHECK:           kernel.vector_store %{{.*}}, %y[%{{.*}}, %{{.*}}] : memref<100x70xf32>, vector<2xf32>
// CHECK:       func.func @registers_forward
// CHECK:         kernel.launch @registers(%a, %b, %y, %a, %b) grid [1, 1, 1] block [384, 1, 1] smem 98304 persistent
tile.kernel @registers(%a: memref<100x64xbf16>, %b: memref<70x64xbf16>, %y: memref<100x70xf32>) grid [1, 1, 1] block [384, 1, 1] {
  tile.gemm %a[m, k] * %b[n, k] : memref<100x64xbf16>, memref<70x64xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 3 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<100x70xf32>
  }
}

func.func @registers_forward(%a: memref<100x64xbf16>, %b: memref<70x64xbf16>) -> memref<100x70xf32> {
  %y = memref.alloc() : memref<100x70xf32>
  tile.launch @registers(%a, %b, %y) : memref<100x64xbf16>, memref<70x64xbf16>, memref<100x70xf32>
  func.return %y : memref<100x70xf32>
}

// An output of more rows than the product has (300 of 320) is stored from registers too:
// TMA would write the last tile's rows past M, which the epilogue does not store.

// CHECK-LABEL: kernel.func @longer(
// CHECK-NOT:     kernel.tma_store
// CHECK:         kernel.vector_store %{{.*}}, %y[%{{.*}}, %{{.*}}] : memref<320x200xf32>, vector<2xf32>
// CHECK:       func.func @longer_forward
tile.kernel @longer(%a: memref<300x64xbf16>, %b: memref<200x64xbf16>, %y: memref<320x200xf32>) grid [6, 1, 1] block [384, 1, 1] {
  tile.gemm %a[m, k] * %b[n, k] : memref<300x64xbf16>, memref<200x64xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 3 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<320x200xf32>
  }
}

func.func @longer_forward(%a: memref<300x64xbf16>, %b: memref<200x64xbf16>) -> memref<320x200xf32> {
  %y = memref.alloc() : memref<320x200xf32>
  tile.launch @longer(%a, %b, %y) : memref<300x64xbf16>, memref<200x64xbf16>, memref<320x200xf32>
  func.return %y : memref<320x200xf32>
}
