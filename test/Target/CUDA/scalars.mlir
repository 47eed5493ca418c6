// RUN: emmy-opt %s -t cuda | filecheck %s

// Scalar arith as C: integer ops on iN wrap (computed unsigned), unsigned ops and predicates
// cast to the unsigned type, floor/ceil division round the C quotient, casts use CUDA's
// conversions, and every cmpf predicate keeps its ordered / unordered meaning on NaN.

// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(32) integers(const int* __restrict__ x, long long* __restrict__ y, signed char* __restrict__ z) {
// CHECK-NEXT:    long tid = threadIdx.x;
// CHECK-NEXT:    int v = x[tid];
// CHECK-NEXT:    int sub = (int)((unsigned int)v - 7);
// CHECK-NEXT:    int mul = (int)((unsigned int)sub * (unsigned int)(-3));
// CHECK-NEXT:    int quot = mul / 7;
// CHECK-NEXT:    int rem = mul % 7;
// CHECK-NEXT:    int uquot = (int)((unsigned int)mul / 7);
// CHECK-NEXT:    int urem = (int)((unsigned int)mul % 7);
// CHECK-NEXT:    int fdiv = (int)(mul / 7 - (mul % 7 != 0 && ((mul % 7 < 0) != (7 < 0))));
// CHECK-NEXT:    int cdiv = (int)(mul / 7 + (mul % 7 != 0 && ((mul % 7 < 0) == (7 < 0))));
// CHECK-NEXT:    int shl = quot << 3;
// CHECK-NEXT:    int sra = rem >> 3;
// CHECK-NEXT:    int srl = (int)((unsigned int)uquot >> 3);
// CHECK-NEXT:    int band = shl & sra;
// CHECK-NEXT:    int bor = band | srl;
// CHECK-NEXT:    int bxor = bor ^ urem;
// CHECK-NEXT:    int smax = bxor > fdiv ? bxor : fdiv;
// CHECK-NEXT:    int smin = smax < cdiv ? smax : cdiv;
// CHECK-NEXT:    int umax = (unsigned int)smin > (unsigned int)v ? smin : v;
// CHECK-NEXT:    int umin = (unsigned int)umax < 100 ? umax : 100;
// CHECK-NEXT:    bool lt = umin < (-2147483647 - 1);
// CHECK-NEXT:    bool uge = (unsigned int)umin >= (unsigned int)v;
// CHECK-NEXT:    bool either = lt ^ uge;
// CHECK-NEXT:    long long wide = (long long)umin;
// CHECK-NEXT:    long long uwide = (long long)(unsigned int)umin;
// CHECK-NEXT:    long long neg = -(long long)either;
// CHECK-NEXT:    long long big = (long long)((unsigned long long)wide + (unsigned long long)(-9223372036854775807LL - 1));
// CHECK-NEXT:    long long total = (long long)((unsigned long long)big + (unsigned long long)uwide);
// CHECK-NEXT:    long long total2 = (long long)((unsigned long long)total + (unsigned long long)neg);
// CHECK-NEXT:    y[tid] = total2;
// CHECK-NEXT:    signed char narrow = (signed char)total2;
// CHECK-NEXT:    signed char nsum = (signed char)(narrow + (signed char)-5);
// CHECK-NEXT:    z[tid] = nsum;
// CHECK-NEXT:    long idx = (long)v;
// CHECK-NEXT:    long far = idx + 4294967296L;
// CHECK-NEXT:    int back = (int)far;
// CHECK-NEXT:    bool flag = (bool)(back & 1);
// CHECK-NEXT:    long picked = flag ? idx : tid;
// CHECK-NEXT:    emmy_check_index(picked, 32, "integers");
// CHECK-NEXT:    z[picked] = (signed char)1;
// CHECK-NEXT:  }
kernel.func @integers(%x: memref<32xi32>, %y: memref<32xi64>, %z: memref<32xi8>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %seven = arith.constant 7 : i32
  %minus_three = arith.constant -3 : i32
  %three = arith.constant 3 : i32
  %hundred = arith.constant 100 : i32
  %int_min = arith.constant -2147483648 : i32
  %i64_min = arith.constant -9223372036854775808 : i64
  %minus_five = arith.constant -5 : i8
  %one_i8 = arith.constant 1 : i8
  %big_index = arith.constant 4294967296 : index
  %v = memref.load %x[%tid] : memref<32xi32>
  %sub = arith.subi %v, %seven : i32
  %mul = arith.muli %sub, %minus_three : i32
  %quot = arith.divsi %mul, %seven : i32
  %rem = arith.remsi %mul, %seven : i32
  %uquot = arith.divui %mul, %seven : i32
  %urem = arith.remui %mul, %seven : i32
  %fdiv = arith.floordivsi %mul, %seven : i32
  %cdiv = arith.ceildivsi %mul, %seven : i32
  %shl = arith.shli %quot, %three : i32
  %sra = arith.shrsi %rem, %three : i32
  %srl = arith.shrui %uquot, %three : i32
  %band = arith.andi %shl, %sra : i32
  %bor = arith.ori %band, %srl : i32
  %bxor = arith.xori %bor, %urem : i32
  %smax = arith.maxsi %bxor, %fdiv : i32
  %smin = arith.minsi %smax, %cdiv : i32
  %umax = arith.maxui %smin, %v : i32
  %umin = arith.minui %umax, %hundred : i32
  %lt = arith.cmpi slt, %umin, %int_min : i32
  %uge = arith.cmpi uge, %umin, %v : i32
  %either = arith.xori %lt, %uge : i1
  %wide = arith.extsi %umin : i32 to i64
  %uwide = arith.extui %umin : i32 to i64
  %neg = arith.extsi %either : i1 to i64
  %big = arith.addi %wide, %i64_min : i64
  %total = arith.addi %big, %uwide : i64
  %total2 = arith.addi %total, %neg : i64
  memref.store %total2, %y[%tid] : memref<32xi64>
  %narrow = arith.trunci %total2 : i64 to i8
  %nsum = arith.addi %narrow, %minus_five : i8
  memref.store %nsum, %z[%tid] : memref<32xi8>
  %idx = arith.index_cast %v : i32 to index
  %far = arith.addi %idx, %big_index : index
  %back = arith.index_cast %far : index to i32
  %flag = arith.trunci %back : i32 to i1
  %unused = arith.extui %flag : i1 to i32
  %picked = arith.select %flag, %idx, %tid : index
  memref.store %one_i8, %z[%picked] : memref<32xi8>
}

// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(32) floats(const float* __restrict__ x, bool* __restrict__ flags, double* __restrict__ d, __nv_bfloat16* __restrict__ b, int* __restrict__ n) {
// CHECK-NEXT:    long tid = threadIdx.x;
// CHECK-NEXT:    float v = x[tid];
// CHECK-NEXT:    float w = x[31];
// CHECK-NEXT:    bool false_ = false;
// CHECK-NEXT:    flags[tid * 16] = false_;
// CHECK-NEXT:    bool oeq = v == w;
// CHECK-NEXT:    flags[tid * 16 + 1] = oeq;
// CHECK-NEXT:    bool ogt = v > w;
// CHECK-NEXT:    flags[tid * 16 + 2] = ogt;
// CHECK-NEXT:    bool oge = v >= w;
// CHECK-NEXT:    flags[tid * 16 + 3] = oge;
// CHECK-NEXT:    bool olt = v < w;
// CHECK-NEXT:    flags[tid * 16 + 4] = olt;
// CHECK-NEXT:    bool ole = v <= w;
// CHECK-NEXT:    flags[tid * 16 + 5] = ole;
// CHECK-NEXT:    bool one = (v < w || v > w);
// CHECK-NEXT:    flags[tid * 16 + 6] = one;
// CHECK-NEXT:    bool ord = (v == v && w == w);
// CHECK-NEXT:    flags[tid * 16 + 7] = ord;
// CHECK-NEXT:    bool ueq = !(v < w || v > w);
// CHECK-NEXT:    flags[tid * 16 + 8] = ueq;
// CHECK-NEXT:    bool ugt = !(v <= w);
// CHECK-NEXT:    flags[tid * 16 + 9] = ugt;
// CHECK-NEXT:    bool uge = !(v < w);
// CHECK-NEXT:    flags[tid * 16 + 10] = uge;
// CHECK-NEXT:    bool ult = !(v >= w);
// CHECK-NEXT:    flags[tid * 16 + 11] = ult;
// CHECK-NEXT:    bool ule = !(v > w);
// CHECK-NEXT:    flags[tid * 16 + 12] = ule;
// CHECK-NEXT:    bool une = v != w;
// CHECK-NEXT:    flags[tid * 16 + 13] = une;
// CHECK-NEXT:    bool uno = (v != v || w != w);
// CHECK-NEXT:    flags[tid * 16 + 14] = uno;
// CHECK-NEXT:    bool true_ = true;
// CHECK-NEXT:    flags[tid * 16 + 15] = true_;
// CHECK-NEXT:    double dv = (double)v;
// CHECK-NEXT:    double dsum = dv + (-0.1);
// CHECK-NEXT:    d[tid] = dsum;
// CHECK-NEXT:    float back = (float)dsum;
// CHECK-NEXT:    __nv_bfloat16 bd = __double2bfloat16(dsum);
// CHECK-NEXT:    __nv_bfloat16 bsum = __hadd(bd, __float2bfloat16_rn(-1.0078125f));
// CHECK-NEXT:    __nv_bfloat16 bnan = __hadd(bsum, __float2bfloat16_rn(__int_as_float(0x7fc00000)));
// CHECK-NEXT:    b[tid] = bnan;
// CHECK-NEXT:    int bits = __float_as_int(back);
// CHECK-NEXT:    long long i64 = (long long)bits;
// CHECK-NEXT:    __nv_bfloat16 bi = __ll2bfloat16_rn(i64);
// CHECK-NEXT:    long hi = tid + 32;
// CHECK-NEXT:    b[hi] = bi;
// CHECK-NEXT:    float uf = (float)(unsigned int)bits;
// CHECK-NEXT:    int ui = (int)(unsigned int)uf;
// CHECK-NEXT:    n[tid] = ui;
// CHECK-NEXT:    double dbits = __longlong_as_double(i64);
// CHECK-NEXT:    d[hi] = dbits;
// CHECK-NEXT:  }
kernel.func @floats(%x: memref<32xf32>, %flags: memref<32x16xi1>, %d: memref<64xf64>, %b: memref<64xbf16>, %n: memref<32xi32>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c10 = arith.constant 10 : index
  %c11 = arith.constant 11 : index
  %c12 = arith.constant 12 : index
  %c13 = arith.constant 13 : index
  %c14 = arith.constant 14 : index
  %c15 = arith.constant 15 : index
  %v = memref.load %x[%tid] : memref<32xf32>
  %w = memref.load %x[%c31] : memref<32xf32>
  %false = arith.cmpf false, %v, %w : f32
  memref.store %false, %flags[%tid, %c0] : memref<32x16xi1>
  %oeq = arith.cmpf oeq, %v, %w : f32
  memref.store %oeq, %flags[%tid, %c1] : memref<32x16xi1>
  %ogt = arith.cmpf ogt, %v, %w : f32
  memref.store %ogt, %flags[%tid, %c2] : memref<32x16xi1>
  %oge = arith.cmpf oge, %v, %w : f32
  memref.store %oge, %flags[%tid, %c3] : memref<32x16xi1>
  %olt = arith.cmpf olt, %v, %w : f32
  memref.store %olt, %flags[%tid, %c4] : memref<32x16xi1>
  %ole = arith.cmpf ole, %v, %w : f32
  memref.store %ole, %flags[%tid, %c5] : memref<32x16xi1>
  %one = arith.cmpf one, %v, %w : f32
  memref.store %one, %flags[%tid, %c6] : memref<32x16xi1>
  %ord = arith.cmpf ord, %v, %w : f32
  memref.store %ord, %flags[%tid, %c7] : memref<32x16xi1>
  %ueq = arith.cmpf ueq, %v, %w : f32
  memref.store %ueq, %flags[%tid, %c8] : memref<32x16xi1>
  %ugt = arith.cmpf ugt, %v, %w : f32
  memref.store %ugt, %flags[%tid, %c9] : memref<32x16xi1>
  %uge = arith.cmpf uge, %v, %w : f32
  memref.store %uge, %flags[%tid, %c10] : memref<32x16xi1>
  %ult = arith.cmpf ult, %v, %w : f32
  memref.store %ult, %flags[%tid, %c11] : memref<32x16xi1>
  %ule = arith.cmpf ule, %v, %w : f32
  memref.store %ule, %flags[%tid, %c12] : memref<32x16xi1>
  %une = arith.cmpf une, %v, %w : f32
  memref.store %une, %flags[%tid, %c13] : memref<32x16xi1>
  %uno = arith.cmpf uno, %v, %w : f32
  memref.store %uno, %flags[%tid, %c14] : memref<32x16xi1>
  %true = arith.cmpf true, %v, %w : f32
  memref.store %true, %flags[%tid, %c15] : memref<32x16xi1>
  %dv = arith.extf %v : f32 to f64
  %tenth = arith.constant -0.1 : f64
  %dsum = arith.addf %dv, %tenth : f64
  memref.store %dsum, %d[%tid] : memref<64xf64>
  %back = arith.truncf %dsum : f64 to f32
  %bd = arith.truncf %dsum : f64 to bf16
  %bc = arith.constant -1.01 : bf16
  %bsum = arith.addf %bd, %bc : bf16
  %nan = arith.constant 0x7FC0 : bf16
  %bnan = arith.addf %bsum, %nan : bf16
  memref.store %bnan, %b[%tid] : memref<64xbf16>
  %bits = arith.bitcast %back : f32 to i32
  %i64 = arith.extsi %bits : i32 to i64
  %bi = arith.sitofp %i64 : i64 to bf16
  %hi = arith.addi %tid, %c32 : index
  memref.store %bi, %b[%hi] : memref<64xbf16>
  %uf = arith.uitofp %bits : i32 to f32
  %ui = arith.fptoui %uf : f32 to i32
  memref.store %ui, %n[%tid] : memref<32xi32>
  %dbits = arith.bitcast %i64 : i64 to f64
  memref.store %dbits, %d[%hi] : memref<64xf64>
}

// Division by a zero constant is IEEE division (a mean over no elements, say); the zero is
// written as its bits, which nvcc does not diagnose as a literal 0.0f.

// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(32) divide_by_zero(float* __restrict__ x, double* __restrict__ d) {
// CHECK-NEXT:    long tid = threadIdx.x;
// CHECK-NEXT:    float v = x[tid];
// CHECK-NEXT:    float q = v / __int_as_float(0);
// CHECK-NEXT:    float nq = q / __int_as_float(0x80000000);
// CHECK-NEXT:    x[tid] = nq;
// CHECK-NEXT:    double dv = d[tid];
// CHECK-NEXT:    double dq = dv / __longlong_as_double(0);
// CHECK-NEXT:    d[tid] = dq;
// CHECK-NEXT:  }
kernel.func @divide_by_zero(%x: memref<32xf32>, %d: memref<32xf64>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %zero = arith.constant 0.0 : f32
  %minus_zero = arith.constant -0.0 : f32
  %dzero = arith.constant 0.0 : f64
  %v = memref.load %x[%tid] : memref<32xf32>
  %q = arith.divf %v, %zero : f32
  %nq = arith.divf %q, %minus_zero : f32
  memref.store %nq, %x[%tid] : memref<32xf32>
  %dv = memref.load %d[%tid] : memref<32xf64>
  %dq = arith.divf %dv, %dzero : f64
  memref.store %dq, %d[%tid] : memref<32xf64>
}
