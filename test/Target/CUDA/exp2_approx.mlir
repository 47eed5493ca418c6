// RUN: emmy-opt %s -t cuda | filecheck %s --check-prefixes=CHECK,PRECISE
// RUN: emmy-opt %s -t 'cuda{fast-math=true}' | filecheck %s --check-prefixes=CHECK,FAST

// math.exp2 with fastmath<afn> (approximate functions, as attention's softmax asks) is the
// hardware's exp2 alone, `ex2.approx.ftz.f32`, in f32 and through f32 for f16; without the flag
// it is exp2f unless the fast-math option is on; f64 keeps exp2 either way.

// CHECK:        __device__ __forceinline__ float emmy_exp2_approx(float x) {
// CHECK-NEXT:     float r;
// CHECK-NEXT:     asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));

// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(32) powers(
// CHECK:         float v = x[tid];
// CHECK-NEXT:    float a = emmy_exp2_approx(v);
// PRECISE-NEXT:  float p = exp2f(a);
// FAST-NEXT:     float p = emmy_exp2_approx(a);
// CHECK-NEXT:    y[tid] = p;
// CHECK-NEXT:    __half hv = hx[tid];
// CHECK-NEXT:    __half ha = __float2half_rn(emmy_exp2_approx(__half2float(hv)));
// CHECK-NEXT:    hy[tid] = ha;
// CHECK-NEXT:    double dv = dx[tid];
// CHECK-NEXT:    double da = exp2(dv);
// CHECK-NEXT:    dy[tid] = da;
// CHECK-NEXT:  }

kernel.func @powers(%x: memref<32xf32>, %y: memref<32xf32>, %hx: memref<32xf16>, %hy: memref<32xf16>, %dx: memref<32xf64>, %dy: memref<32xf64>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<32xf32>
  %a = math.exp2 %v fastmath<afn> : f32
  %p = math.exp2 %a : f32
  memref.store %p, %y[%tid] : memref<32xf32>
  %hv = memref.load %hx[%tid] : memref<32xf16>
  %ha = math.exp2 %hv fastmath<afn> : f16
  memref.store %ha, %hy[%tid] : memref<32xf16>
  %dv = memref.load %dx[%tid] : memref<32xf64>
  %da = math.exp2 %dv fastmath<afn> : f64
  memref.store %da, %dy[%tid] : memref<32xf64>
}
