// RUN: emmy-opt %s -t cuda | filecheck %s --check-prefixes=CHECK,PRECISE
// RUN: emmy-opt %s -t 'cuda{fast-math=true}' | filecheck %s --check-prefixes=CHECK,FAST

// The fast-math option trades accuracy for speed in f32: CUDA's fast intrinsics for exp, log,
// sin, cos, pow and division, and fmaxf / fminf (which ignore NaN) for maximumf / minimumf.
// Functions without a fast intrinsic, and f64, print the same either way; f16 goes through the
// f32 function.

// PRECISE:     // Options: fast-math=false.
// FAST:        // Options: fast-math=true.
// PRECISE:     __device__ __forceinline__ float emmy_maximumf(float a, float b) {
// PRECISE:     __device__ __forceinline__ float emmy_minimumf(float a, float b) {
// FAST-NOT:    emmy_maximumf
// FAST-NOT:    emmy_minimumf

// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(32) functions(const float* __restrict__ x, float* __restrict__ y, const double* __restrict__ dx, double* __restrict__ dy, const __half* __restrict__ hx, __half* __restrict__ hy) {
// CHECK:         float v = x[tid];
// PRECISE-NEXT:  float e = exp2f(v * 1.44269504f);
// FAST-NEXT:     float e = __expf(v);
// PRECISE-NEXT:  float l = logf(v);
// FAST-NEXT:     float l = __logf(v);
// PRECISE-NEXT:  float q = e / l;
// FAST-NEXT:     float q = __fdividef(e, l);
// PRECISE-NEXT:  float s = sinf(q);
// FAST-NEXT:     float s = __sinf(q);
// PRECISE-NEXT:  float c = cosf(s);
// FAST-NEXT:     float c = __cosf(s);
// PRECISE-NEXT:  float p = powf(c, v);
// FAST-NEXT:     float p = __powf(c, v);
// CHECK-NEXT:    float t = tanhf(p);
// CHECK-NEXT:    float r = rsqrtf(t);
// CHECK-NEXT:    float sq = sqrtf(r);
// CHECK-NEXT:    float er = erff(sq);
// PRECISE-NEXT:  float mx = emmy_maximumf(er, v);
// FAST-NEXT:     float mx = fmaxf(er, v);
// PRECISE-NEXT:  float mn = emmy_minimumf(mx, e);
// FAST-NEXT:     float mn = fminf(mx, e);
// CHECK-NEXT:    float mxn = fmaxf(mn, l);
// CHECK-NEXT:    y[tid] = mxn;
// CHECK-NEXT:    double dv = dx[tid];
// CHECK-NEXT:    double de = exp(dv);
// CHECK-NEXT:    double dq = de / dv;
// CHECK-NEXT:    dy[tid] = dq;
// CHECK-NEXT:    __half hv = hx[tid];
// PRECISE-NEXT:  __half he = __float2half_rn(exp2f(__half2float(hv) * 1.44269504f));
// FAST-NEXT:     __half he = __float2half_rn(__expf(__half2float(hv)));
// CHECK-NEXT:    __half hq = __hdiv(he, hv);
// CHECK-NEXT:    hy[tid] = hq;
// CHECK-NEXT:  }

kernel.func @functions(%x: memref<32xf32>, %y: memref<32xf32>, %dx: memref<32xf64>, %dy: memref<32xf64>, %hx: memref<32xf16>, %hy: memref<32xf16>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<32xf32>
  %e = math.exp %v : f32
  %l = math.log %v : f32
  %q = arith.divf %e, %l : f32
  %s = math.sin %q : f32
  %c = math.cos %s : f32
  %p = math.powf %c, %v : f32
  %t = math.tanh %p : f32
  %r = math.rsqrt %t : f32
  %sq = math.sqrt %r : f32
  %er = math.erf %sq : f32
  %mx = arith.maximumf %er, %v : f32
  %mn = arith.minimumf %mx, %e : f32
  %mxn = arith.maxnumf %mn, %l : f32
  memref.store %mxn, %y[%tid] : memref<32xf32>
  %dv = memref.load %dx[%tid] : memref<32xf64>
  %de = math.exp %dv : f64
  %dq = arith.divf %de, %dv : f64
  memref.store %dq, %dy[%tid] : memref<32xf64>
  %hv = memref.load %hx[%tid] : memref<32xf16>
  %he = math.exp %hv : f16
  %hq = arith.divf %he, %hv : f16
  memref.store %hq, %hy[%tid] : memref<32xf16>
}
