// RUN: emmy-opt %s -t cuda | filecheck %s

// A wgmma with A in registers: each thread's vector<8xbf16> fragment passes as four .b32
// registers ({%32, %33, %34, %35} after the 32 accumulators), B's descriptor after them, and
// the form has no imm-trans-a: scale-d, imm-scale-a, imm-scale-b, imm-trans-b.

// CHECK:       // kernel.wgmma m64n64k16 on bf16: the warpgroup starts D += A * B, A in
// CHECK-NEXT:  // registers and B an N-major tile in shared memory (a descriptor), D in f32 registers.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_wgmma_m64n64k16_bf16_a_registers_b_mn_major(float* d, const void* a, unsigned long long b) {
// CHECK-NEXT:    const unsigned int* A = static_cast<const unsigned int*>(a);
// CHECK-NEXT:    asm volatile("{\n"
// CHECK-NEXT:                 ".reg .pred p;\n"
// CHECK-NEXT:                 "setp.ne.b32 p, %37, 0;\n"
// CHECK-NEXT:                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, {{.*}}, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n"
// CHECK-NEXT:                 "}\n"
// CHECK-NEXT:                 : "+f"(d[0]), {{.*}}, "+f"(d[31])
// CHECK-NEXT:                 : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "l"(b), "r"(1));
// CHECK:         emmy_wgmma_m64n64k16_bf16_a_registers_b_mn_major(c.lane, p.lane, emmy_wgmma_descriptor(&v[4096], 8192));

kernel.func @a_registers(%x: bf16, %y: memref<128xf32>) block [128, 1, 1] {
  %p = vector.broadcast %x : bf16 to vector<8xbf16>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x1x64x64xbf16, 3 : i32>
  %z = arith.constant 0.0 : f32
  %c = vector.broadcast %z : f32 to vector<32xf32>
  kernel.wgmma_fence
  %d = kernel.wgmma m64n64k16 %p, %v[%c1, %c0, %c0, %c0] mn_major, %c : vector<8xbf16>, memref<2x1x64x64xbf16, 3 : i32>, vector<32xf32> -> vector<32xf32>
  kernel.wgmma_commit
  %e = kernel.wgmma_wait 0, %d : vector<32xf32>
  %t = kernel.thread_id x
  %r = vector.extract %e[0] : f32 from vector<32xf32>
  memref.store %r, %y[%t] : memref<128xf32>
}
