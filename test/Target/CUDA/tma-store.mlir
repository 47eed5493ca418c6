// RUN: emmy-opt %s -t cuda | filecheck %s

// An epilogue through TMA stores: the block's 128 threads write a 64 x 64 bf16 tile into a
// 128-byte-swizzled staging buffer of two stages (generic stores, through the swizzle),
// fence them for the async proxy and meet at a named barrier; thread 0 then stores the stage
// as the box at (row, 0) of the output, and of a 3-d tensor at (batch, row, 0), in one
// bulk-async group that it commits, waits for until the reads of shared memory are done
// (`.read`: the stage may be written again), and at the end until the writes are done. A
// tensor map is a const __grid_constant__ CUtensorMap, whose address TMA takes, coordinates
// innermost first; kernel.tma_load's helpers, which this kernel does not use, are not printed.

// CHECK-NOT:   emmy_tma_load
// CHECK:       // kernel.tma_store of a rank-2 box at (c0, ..) from shared memory, in this
// CHECK-NEXT:  // thread's open bulk-async group.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_tma_store_2d(const void* map, const void* source, int c0, int c1) {
// CHECK-NEXT:    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
// CHECK-NEXT:                 :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(emmy_shared_address(source)),
// CHECK-NEXT:                    "r"(c1), "r"(c0)
// CHECK-NEXT:                 : "memory");
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  // kernel.tma_store of a rank-3 box at (c0, ..) from shared memory, in this
// CHECK-NEXT:  // thread's open bulk-async group.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_tma_store_3d(const void* map, const void* source, int c0, int c1, int c2) {
// CHECK-NEXT:    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
// CHECK-NEXT:                 :: "l"(reinterpret_cast<unsigned long long>(map)), "r"(emmy_shared_address(source)),
// CHECK-NEXT:                    "r"(c2), "r"(c1), "r"(c0)
// CHECK-NEXT:                 : "memory");
// CHECK-NEXT:  }
// CHECK-NOT:   emmy_tma_load
// CHECK:       extern "C" __global__ void __launch_bounds__(128) epilogue(const float* __restrict__ x, const __grid_constant__ emmy_CUtensorMap ymap, const __grid_constant__ emmy_CUtensorMap zmap) {
// CHECK:         asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
// CHECK:           emmy_tma_store_2d(&ymap, &stage[4096], (int)row, (int)0);
// CHECK-NEXT:      emmy_tma_store_3d(&zmap, &stage[4096], (int)1, (int)row, (int)0);
// CHECK-NEXT:      asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
// CHECK-NEXT:      asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
// CHECK-NEXT:      asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
// CHECK-NEXT:    }
// CHECK-NEXT:  }
kernel.func @epilogue(%x: memref<64x64xf32>, %ymap: !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, %zmap: !kernel.tensor_map<memref<2x256x64xbf16>, box [1, 64, 64], swizzle 128>) block [128, 1, 1] {
  %tid = kernel.thread_id x
  %bid = kernel.block_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c4096 = arith.constant 4096 : index
  %stage = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
  scf.for %i = %tid to %c4096 step %c128 {
    %r = arith.divui %i, %c64 : index
    %k = arith.remui %i, %c64 : index
    %v = memref.load %x[%r, %k] : memref<64x64xf32>
    %b = arith.truncf %v : f32 to bf16
    memref.store %b, %stage[%c1, %r, %k] : memref<2x64x64xbf16, 3 : i32>
  }
  kernel.fence_proxy_async
  kernel.named_barrier sync %c1, threads 128
  %row = arith.muli %bid, %c64 : index
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {
    kernel.tma_store %ymap[%row, %c0], %stage[%c1, %c0, %c0] : !kernel.tensor_map<memref<256x64xbf16>, box [64, 64], swizzle 128>, memref<2x64x64xbf16, 3 : i32>
    kernel.tma_store %zmap[%c1, %row, %c0], %stage[%c1, %c0, %c0] : !kernel.tensor_map<memref<2x256x64xbf16>, box [1, 64, 64], swizzle 128>, memref<2x64x64xbf16, 3 : i32>
    kernel.tma_store_commit
    kernel.tma_store_wait 0 read
    kernel.tma_store_wait 0
  }
}
func.func @launch(%x: memref<64x64xf32>, %y: memref<256x64xbf16>, %z: memref<2x256x64xbf16>) {
  kernel.launch @epilogue(%x, %y, %z) grid [4, 1, 1] block [128, 1, 1] smem 16384 : memref<64x64xf32>, memref<256x64xbf16>, memref<2x256x64xbf16>
  func.return
}
