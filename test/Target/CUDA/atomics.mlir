// RUN: emmy-opt %s -t cuda | filecheck %s

// kernel.atomic returns the old element. Integer and add atomics are CUDA's own; max and min
// on floats are a compare-and-swap loop over the bits, combining with emmy_maximumf /
// emmy_minimumf, so that negative values, -0.0 and NaN come out as arith.maximumf says.
// An atomic whose old value is unused is a plain statement.

// CHECK:       #include <cuda_fp16.h>
// CHECK-NEXT:  #include <cuda_bf16.h>
// CHECK:       __device__ __forceinline__ float emmy_maximumf(float a, float b) {
// CHECK:       __device__ __forceinline__ double emmy_maximumf(double a, double b) {
// CHECK-NEXT:    if (a != a || b != b) return a + b;
// CHECK-NEXT:    if (a == b) return __double_as_longlong(a) < 0 ? b : a;
// CHECK:       __device__ __forceinline__ float emmy_minimumf(float a, float b) {
// CHECK-NEXT:    float r;
// CHECK-NEXT:    asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
// CHECK-NEXT:    if ((__float_as_uint(r) & 0x7fffffffu) != 0) return r;
// CHECK-NEXT:    return __uint_as_float(static_cast<unsigned int>((__float_as_uint(a) | __float_as_uint(b)) & 0x80000000u));
// CHECK-NEXT:  }
// CHECK:       // kernel.atomic max on floats: a compare-and-swap loop storing emmy_maximumf(old, value); returns the old value.
// CHECK-NEXT:  __device__ __forceinline__ float emmy_atomic_maximumf(float* address, float value) {
// CHECK-NEXT:    unsigned int* word = reinterpret_cast<unsigned int*>(address);
// CHECK-NEXT:    unsigned int old = *word;
// CHECK-NEXT:    unsigned int assumed;
// CHECK-NEXT:    do {
// CHECK-NEXT:      assumed = old;
// CHECK-NEXT:      old = atomicCAS(word, assumed, __float_as_uint(emmy_maximumf(__uint_as_float(assumed), value)));
// CHECK-NEXT:    } while (old != assumed);
// CHECK-NEXT:    return __uint_as_float(old);
// CHECK-NEXT:  }
// CHECK-NEXT:  __device__ __forceinline__ double emmy_atomic_maximumf(double* address, double value) {
// CHECK-NEXT:    unsigned long long* word = reinterpret_cast<unsigned long long*>(address);
// CHECK:           old = atomicCAS(word, assumed, (unsigned long long)__double_as_longlong(emmy_maximumf(__longlong_as_double(assumed), value)));
// CHECK:       __device__ __forceinline__ float emmy_atomic_minimumf(float* address, float value) {

// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(64) atomics(
// CHECK-SAME:    const float* __restrict__ x, float* __restrict__ sums, float* __restrict__ maxima, float* __restrict__ minima,
// CHECK-SAME:    int* __restrict__ counts, long long* __restrict__ totals, double* __restrict__ dmax, __half* __restrict__ hsum,
// CHECK-SAME:    __nv_bfloat16* __restrict__ bsum, float* __restrict__ old_out) {
// CHECK:         float v = x[row * 64 + tid];
// CHECK-NEXT:    float old_sum = atomicAdd(&sums[tid], v);
// CHECK-NEXT:    emmy_atomic_maximumf(&maxima[tid], v);
// CHECK-NEXT:    emmy_atomic_minimumf(&minima[tid], v);
// CHECK-NEXT:    int c = atomicMax(&counts[0], 1);
// CHECK-NEXT:    atomicMin(&counts[1], c);
// CHECK-NEXT:    atomicAdd(&counts[2], (-1));
// CHECK-NEXT:    atomicAdd(reinterpret_cast<unsigned long long*>(&totals[0]), (unsigned long long)5LL);
// CHECK-NEXT:    long long t = (long long)atomicAdd(reinterpret_cast<unsigned long long*>(&totals[1]), (unsigned long long)(-7LL));
// CHECK-NEXT:    atomicMax(&totals[2], t);
// CHECK-NEXT:    double d = (double)v;
// CHECK-NEXT:    emmy_atomic_maximumf(&dmax[0], d);
// CHECK-NEXT:    __half h = __float2half_rn(v);
// CHECK-NEXT:    atomicAdd(&hsum[tid], h);
// CHECK-NEXT:    __nv_bfloat16 b = __float2bfloat16_rn(v);
// CHECK-NEXT:    atomicAdd(&bsum[tid], b);
// CHECK-NEXT:    old_out[row * 64 + tid] = old_sum;
// CHECK-NEXT:  }

kernel.func @atomics(%x: memref<16x64xf32>, %sums: memref<64xf32>, %maxima: memref<64xf32>, %minima: memref<64xf32>, %counts: memref<4xi32>, %totals: memref<4xi64>, %dmax: memref<1xf64>, %hsum: memref<64xf16>, %bsum: memref<64xbf16>, %old_out: memref<16x64xf32>) block [64, 1, 1] {
  %row = kernel.block_id x
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1 : i32
  %minus_one = arith.constant -1 : i32
  %five = arith.constant 5 : i64
  %minus_seven = arith.constant -7 : i64
  %v = memref.load %x[%row, %tid] : memref<16x64xf32>
  %old_sum = kernel.atomic add %v, %sums[%tid] : memref<64xf32>
  %old_max = kernel.atomic max %v, %maxima[%tid] : memref<64xf32>
  %old_min = kernel.atomic min %v, %minima[%tid] : memref<64xf32>
  %c = kernel.atomic max %one, %counts[%c0] : memref<4xi32>
  %c_min = kernel.atomic min %c, %counts[%c1] : memref<4xi32>
  %c_add = kernel.atomic add %minus_one, %counts[%c2] : memref<4xi32>
  %t0 = kernel.atomic add %five, %totals[%c0] : memref<4xi64>
  %t = kernel.atomic add %minus_seven, %totals[%c1] : memref<4xi64>
  %t2 = kernel.atomic max %t, %totals[%c2] : memref<4xi64>
  %d = arith.extf %v : f32 to f64
  %dm = kernel.atomic max %d, %dmax[%c0] : memref<1xf64>
  %h = arith.truncf %v : f32 to f16
  %hs = kernel.atomic add %h, %hsum[%tid] : memref<64xf16>
  %b = arith.truncf %v : f32 to bf16
  %bs = kernel.atomic add %b, %bsum[%tid] : memref<64xbf16>
  memref.store %old_sum, %old_out[%row, %tid] : memref<16x64xf32>
}
