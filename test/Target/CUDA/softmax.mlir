// RUN: emmy-opt %s -t cuda | filecheck %s

// Softmax over rows of 1024, one block of 128 threads (4 warps) per row: a strided loop finds
// each thread's maximum (arith.maximumf, which propagates NaN, so it prints as emmy_maximumf
// and not fmaxf), a warp shuffle and a shared-memory exchange make it the row's maximum; then
// the same for the sum of exp(x - max); then a strided loop writes exp(x - max) / sum. Lane l
// reads warp l % 4's partial, so xor shuffles over 2 and 1 give every lane the row's total.

// CHECK:       // arith.maximumf: NaN when either operand is NaN, and -0.0 < +0.0 (fmaxf would return the other operand of a NaN). A zero result is -0.0 only when both operands are, whatever sign the instruction gives it.
// CHECK-NEXT:  __device__ __forceinline__ float emmy_maximumf(float a, float b) {
// CHECK-NEXT:    float r;
// CHECK-NEXT:    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
// CHECK-NEXT:    if ((__float_as_uint(r) & 0x7fffffffu) != 0) return r;
// CHECK-NEXT:    return __uint_as_float(static_cast<unsigned int>((__float_as_uint(a) & __float_as_uint(b)) & 0x80000000u));
// CHECK-NEXT:  }

// CHECK-LABEL: // kernel.func @softmax: block [128, 1, 1], 32 bytes of static shared memory
// CHECK-NEXT:  extern "C" __global__ void __launch_bounds__(128) softmax(const float* __restrict__ x, float* __restrict__ y) {
// CHECK-NEXT:    __shared__ alignas(16) float maxima[4];
// CHECK-NEXT:    __shared__ alignas(16) float sums[4];
// CHECK-NEXT:    long row = blockIdx.x;
// CHECK-NEXT:    long tid = threadIdx.x;
// CHECK-NEXT:    long lane = (long)((unsigned long)tid % 32);
// CHECK-NEXT:    long warp = (long)((unsigned long)tid / 32);
// CHECK-NEXT:    bool first = lane == 0;
// CHECK-NEXT:    long slot = (long)((unsigned long)lane % 4);
// CHECK-NEXT:    float m = (-__int_as_float(0x7f800000));
// CHECK-NEXT:    for (long j = tid; j < 1024; j += 128) {
// CHECK-NEXT:      float v = x[row * 1024 + j];
// CHECK-NEXT:      float m_next = emmy_maximumf(m, v);
// CHECK-NEXT:      m = m_next;
// CHECK-NEXT:    }
// CHECK-NEXT:    float mo16 = __shfl_xor_sync(0xffffffffu, m, 16);
// CHECK-NEXT:    float m16 = emmy_maximumf(m, mo16);
// CHECK:         if (first) {
// CHECK-NEXT:      maxima[warp] = m1;
// CHECK-NEXT:    }
// CHECK-NEXT:    __syncthreads();
// CHECK-NEXT:    float pm = maxima[slot];
// CHECK-NEXT:    float qm2 = __shfl_xor_sync(0xffffffffu, pm, 2);
// CHECK:         float rowmax = emmy_maximumf(qm1_in, qm1);
// CHECK-NEXT:    float s = 0.0f;
// CHECK-NEXT:    for (long j_1 = tid; j_1 < 1024; j_1 += 128) {
// CHECK-NEXT:      float v_1 = x[row * 1024 + j_1];
// CHECK-NEXT:      float d = v_1 - rowmax;
// CHECK-NEXT:      float e = exp2f(d * 1.44269504f);
// CHECK-NEXT:      float s_next = s + e;
// CHECK-NEXT:      s = s_next;
// CHECK-NEXT:    }
// CHECK:         if (first) {
// CHECK-NEXT:      sums[warp] = s1;
// CHECK-NEXT:    }
// CHECK-NEXT:    __syncthreads();
// CHECK:         float inv = 1.0f / rowsum;
// CHECK-NEXT:    for (long j_2 = tid; j_2 < 1024; j_2 += 128) {
// CHECK-NEXT:      float v_2 = x[row * 1024 + j_2];
// CHECK-NEXT:      float d_1 = v_2 - rowmax;
// CHECK-NEXT:      float e_1 = exp2f(d_1 * 1.44269504f);
// CHECK-NEXT:      float o = e_1 * inv;
// CHECK-NEXT:      y[row * 1024 + j_2] = o;
// CHECK-NEXT:    }
// CHECK-NEXT:  }

kernel.func @softmax(%x: memref<64x1024xf32>, %y: memref<64x1024xf32>) block [128, 1, 1] {
  %row = kernel.block_id x
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %c1024 = arith.constant 1024 : index
  %i16 = arith.constant 16 : i32
  %i8 = arith.constant 8 : i32
  %i4 = arith.constant 4 : i32
  %i2 = arith.constant 2 : i32
  %i1 = arith.constant 1 : i32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %maxima = kernel.shared_alloc : memref<4xf32, 3 : i32>
  %sums = kernel.shared_alloc : memref<4xf32, 3 : i32>
  %lane = arith.remui %tid, %c32 : index
  %warp = arith.divui %tid, %c32 : index
  %first = arith.cmpi eq, %lane, %c0 : index
  %slot = arith.remui %lane, %c4 : index

  %m = scf.for %j = %tid to %c1024 step %c128 iter_args(%acc = %ninf) -> (f32) {
    %v = memref.load %x[%row, %j] : memref<64x1024xf32>
    %m_next = arith.maximumf %acc, %v : f32
    scf.yield %m_next : f32
  }
  %mo16 = kernel.shuffle xor %m, %i16 : f32
  %m16 = arith.maximumf %m, %mo16 : f32
  %mo8 = kernel.shuffle xor %m16, %i8 : f32
  %m8 = arith.maximumf %m16, %mo8 : f32
  %mo4 = kernel.shuffle xor %m8, %i4 : f32
  %m4 = arith.maximumf %m8, %mo4 : f32
  %mo2 = kernel.shuffle xor %m4, %i2 : f32
  %m2 = arith.maximumf %m4, %mo2 : f32
  %mo1 = kernel.shuffle xor %m2, %i1 : f32
  %m1 = arith.maximumf %m2, %mo1 : f32
  scf.if %first {
    memref.store %m1, %maxima[%warp] : memref<4xf32, 3 : i32>
  }
  kernel.barrier
  %pm = memref.load %maxima[%slot] : memref<4xf32, 3 : i32>
  %qm2 = kernel.shuffle xor %pm, %i2 : f32
  %qm1_in = arith.maximumf %pm, %qm2 : f32
  %qm1 = kernel.shuffle xor %qm1_in, %i1 : f32
  %rowmax = arith.maximumf %qm1_in, %qm1 : f32

  %s = scf.for %j = %tid to %c1024 step %c128 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%row, %j] : memref<64x1024xf32>
    %d = arith.subf %v, %rowmax : f32
    %e = math.exp %d : f32
    %s_next = arith.addf %acc, %e : f32
    scf.yield %s_next : f32
  }
  %so16 = kernel.shuffle xor %s, %i16 : f32
  %s16 = arith.addf %s, %so16 : f32
  %so8 = kernel.shuffle xor %s16, %i8 : f32
  %s8 = arith.addf %s16, %so8 : f32
  %so4 = kernel.shuffle xor %s8, %i4 : f32
  %s4 = arith.addf %s8, %so4 : f32
  %so2 = kernel.shuffle xor %s4, %i2 : f32
  %s2 = arith.addf %s4, %so2 : f32
  %so1 = kernel.shuffle xor %s2, %i1 : f32
  %s1 = arith.addf %s2, %so1 : f32
  scf.if %first {
    memref.store %s1, %sums[%warp] : memref<4xf32, 3 : i32>
  }
  kernel.barrier
  %ps = memref.load %sums[%slot] : memref<4xf32, 3 : i32>
  %qs2 = kernel.shuffle xor %ps, %i2 : f32
  %qs1_in = arith.addf %ps, %qs2 : f32
  %qs1 = kernel.shuffle xor %qs1_in, %i1 : f32
  %rowsum = arith.addf %qs1_in, %qs1 : f32
  %inv = arith.divf %one, %rowsum : f32

  scf.for %j = %tid to %c1024 step %c128 {
    %v = memref.load %x[%row, %j] : memref<64x1024xf32>
    %d = arith.subf %v, %rowmax : f32
    %e = math.exp %d : f32
    %o = arith.mulf %e, %inv : f32
    memref.store %o, %y[%row, %j] : memref<64x1024xf32>
  }
}

func.func @forward(%x: memref<64x1024xf32>) -> memref<64x1024xf32> {
  %y = memref.alloc() : memref<64x1024xf32>
  kernel.launch @softmax(%x, %y) grid [64, 1, 1] block [128, 1, 1] smem 0 : memref<64x1024xf32>, memref<64x1024xf32>
  func.return %y : memref<64x1024xf32>
}
