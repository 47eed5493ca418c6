// RUN: emmy-opt %s -t cuda | filecheck %s

// A wgmma with an MN-major B: panels of 64 N-elements by 64 K rows (memref<2x2x64x64xbf16>),
// read from stage 1, k 16, panel 0 on. B's descriptor has the panel stride, 64 rows of 128
// bytes, as its leading byte offset, and the wgmma passes imm-trans-b 1.

// CHECK:       // kernel.wgmma m64n128k16 on bf16: the warpgroup starts D += A * B, A a
// CHECK-NEXT:  // K-major and B an N-major tile in shared memory (descriptors), D in f32 registers.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_wgmma_m64n128k16_bf16_b_mn_major(float* d, unsigned long long a, unsigned long long b) {
// CHECK-NEXT:    asm volatile("{\n"
// CHECK-NEXT:                 ".reg .pred p;\n"
// CHECK-NEXT:                 "setp.ne.b32 p, %66, 0;\n"
// CHECK-NEXT:                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}} %64, %65, p, 1, 1, 0, 1;\n"
// CHECK:         emmy_wgmma_m64n128k16_bf16_b_mn_major(c.lane, emmy_wgmma_descriptor(&a[4112], 16), emmy_wgmma_descriptor(&b[9216], 8192));

kernel.func @mn_major_b(%y: memref<64x128xf32>) block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %a = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x64x64xbf16, 3 : i32>
  %b = kernel.dynamic_shared offset 16384 {layout = #kernel.swizzle<128>} : memref<2x2x64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<64xf32>
  kernel.wgmma_fence
  %d = kernel.wgmma m64n128k16 %a[%c1, %c0, %c16], %b[%c1, %c0, %c16, %c0] mn_major, %c : memref<2x64x64xbf16, 3 : i32>, memref<2x2x64x64xbf16, 3 : i32>, vector<64xf32> -> vector<64xf32>
  kernel.wgmma_commit
  %e = kernel.wgmma_wait 0, %d : vector<64xf32>
  %t = kernel.thread_id x
  %v = vector.extract %e[0] : f32 from vector<64xf32>
  memref.store %v, %y[%c0, %t] : memref<64x128xf32>
}
