// RUN: emmy-opt %s -t cuda | filecheck %s

// A wgmma on f32 tiles: m64n64k8 on tf32, both tiles K-major (rows of 32 f32, 128 bytes),
// read from stage 1 at k 8, 32 bytes into each row as k 16 of bf16 is. PTX's tf32 form
// takes the scales of A and B and no transposes.

// CHECK:       // kernel.wgmma m64n64k8 on tf32: the warpgroup starts D += A * B, A a
// CHECK-NEXT:  // K-major and B a K-major tile in shared memory (descriptors), D in f32 registers.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_wgmma_m64n64k8_tf32(float* d, unsigned long long a, unsigned long long b) {
// CHECK-NEXT:    asm volatile("{\n"
// CHECK-NEXT:                 ".reg .pred p;\n"
// CHECK-NEXT:                 "setp.ne.b32 p, %34, 0;\n"
// CHECK-NEXT:                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {{.*}} %32, %33, p, 1, 1;\n"
// CHECK:         emmy_wgmma_m64n64k8_tf32(c.lane, emmy_wgmma_descriptor(&a[2056], 16), emmy_wgmma_descriptor(&b[2056], 16));

kernel.func @tf32(%y: memref<64x128xf32>) block [128, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x64x32xf32, 3 : i32>
  %b = kernel.dynamic_shared offset 16384 {layout = #kernel.swizzle<128>} : memref<2x64x32xf32, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  kernel.wgmma_fence
  %d = kernel.wgmma m64n64k8 %a[%c1, %c0, %c8], %b[%c1, %c0, %c8], %c : memref<2x64x32xf32, 3 : i32>, memref<2x64x32xf32, 3 : i32>, vector<32xf32> -> vector<32xf32>
  kernel.wgmma_commit
  %e = kernel.wgmma_wait 0, %d : vector<32xf32>
  %t = kernel.thread_id x
  %v = vector.extract %e[0] : f32 from vector<32xf32>
  memref.store %v, %y[%c0, %t] : memref<64x128xf32>
}
