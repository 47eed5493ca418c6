// RUN: emmy-opt %s -t cuda | filecheck %s

// f16 values are __half: arithmetic through the __h* intrinsics, comparisons exact in float,
// maximumf through the NaN-propagating __hmax_nan with the sign of a zero result fixed from
// the operands' sign bits, constants
// rounded to f16 and written as the exact float they are, conversions with CUDA's
// round-to-nearest intrinsics.

// CHECK:       #include <cuda_fp16.h>
// CHECK-NOT:   #include <cuda_bf16.h>
// CHECK-NOT:   emmy_maximumf(float a, float b)
// CHECK:       __device__ __forceinline__ __half emmy_maximumf(__half a, __half b) {
// CHECK-NEXT:    __half r;
// CHECK-NEXT:    r = __hmax_nan(a, b);
// CHECK-NEXT:    if ((__half_as_ushort(r) & 0x7fff) != 0) return r;
// CHECK-NEXT:    return __ushort_as_half(static_cast<unsigned short>((__half_as_ushort(a) & __half_as_ushort(b)) & 0x8000));
// CHECK-NEXT:  }

// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(64) half_ops(const __half* __restrict__ x, __half* __restrict__ y, int* __restrict__ n) {
// CHECK-NEXT:    long tid = threadIdx.x;
// CHECK-NEXT:    __half v = x[tid];
// CHECK-NEXT:    __half a = __hadd(v, __float2half_rn(0.099975586f));
// CHECK-NEXT:    __half m = __hmul(a, v);
// CHECK-NEXT:    __half d = __hsub(m, __float2half_rn(-2.0f));
// CHECK-NEXT:    __half neg = __hneg(d);
// CHECK-NEXT:    __half ab = __habs(neg);
// CHECK-NEXT:    __half f = __hfma(ab, v, a);
// CHECK-NEXT:    __half big = __hmul(f, __float2half_rn(65504.0f));
// CHECK-NEXT:    __half mx = emmy_maximumf(big, __float2half_rn(__int_as_float(0x7f800000)));
// CHECK-NEXT:    bool gt = __half2float(mx) > __half2float(v);
// CHECK-NEXT:    bool unordered = (__half2float(mx) != __half2float(mx) || __half2float(v) != __half2float(v));
// CHECK-NEXT:    bool both = gt | unordered;
// CHECK-NEXT:    __half sel = both ? mx : v;
// CHECK-NEXT:    __half sh = __shfl_down_sync(0xffffffffu, sel, 1);
// CHECK-NEXT:    y[tid] = sh;
// CHECK-NEXT:    int i = (int)__half2float(sh);
// CHECK-NEXT:    __half back = __int2half_rn(i);
// CHECK-NEXT:    short bits = __half_as_short(back);
// CHECK-NEXT:    int wide = (int)bits;
// CHECK-NEXT:    int total = (int)((unsigned int)i + (unsigned int)wide);
// CHECK-NEXT:    n[tid] = total;
// CHECK-NEXT:  }

kernel.func @half_ops(%x: memref<64xf16>, %y: memref<64xf16>, %n: memref<64xi32>) block [64, 1, 1] {
  %tid = kernel.thread_id x
  %one = arith.constant 1 : i32
  %tenth = arith.constant 0.1 : f16
  %minus_two = arith.constant -2.0 : f16
  %max = arith.constant 65504.0 : f16
  %inf = arith.constant 0x7C00 : f16
  %v = memref.load %x[%tid] : memref<64xf16>
  %a = arith.addf %v, %tenth : f16
  %m = arith.mulf %a, %v : f16
  %d = arith.subf %m, %minus_two : f16
  %neg = arith.negf %d : f16
  %ab = math.absf %neg : f16
  %f = math.fma %ab, %v, %a : f16
  %big = arith.mulf %f, %max : f16
  %mx = arith.maximumf %big, %inf : f16
  %gt = arith.cmpf ogt, %mx, %v : f16
  %unordered = arith.cmpf uno, %mx, %v : f16
  %both = arith.ori %gt, %unordered : i1
  %sel = arith.select %both, %mx, %v : f16
  %sh = kernel.shuffle down %sel, %one : f16
  memref.store %sh, %y[%tid] : memref<64xf16>
  %i = arith.fptosi %sh : f16 to i32
  %back = arith.sitofp %i : i32 to f16
  %bits = arith.bitcast %back : f16 to i16
  %wide = arith.extsi %bits : i16 to i32
  %total = arith.addi %i, %wide : i32
  memref.store %total, %n[%tid] : memref<64xi32>
}
