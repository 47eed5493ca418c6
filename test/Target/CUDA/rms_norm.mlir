// RUN: emmy-opt %s -t cuda | filecheck %s

// RMSNorm over rows of 2048, written by hand in Kernel IR: one block of 256 threads per row.
// Each thread sums the squares of a strided slice of the row (a loop-carried partial sum),
// each warp combines its partials with xor shuffles, lane 0 of each warp writes the warp's sum
// to shared memory, and after a barrier every warp reads the 8 warp sums back and combines
// them the same way, so that every thread holds the row's total. A second strided loop then
// writes the normalised row.

// CHECK:       // CUDA C++ printed by emmy's cuda target
// CHECK-NOT:   #include
// CHECK-NOT:   __device__ __forceinline__
// CHECK-NOT:   @forward

// CHECK-LABEL: // kernel.func @rms_norm: block [256, 1, 1], 32 bytes of static shared memory
// CHECK-NEXT:  extern "C" __global__ void __launch_bounds__(256) rms_norm(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y) {
// CHECK-NEXT:    __shared__ alignas(16) float partials[8];
// CHECK-NEXT:    long row = blockIdx.x;
// CHECK-NEXT:    long tid = threadIdx.x;
// CHECK-NEXT:    float partial = 0.0f;
// CHECK-NEXT:    for (long j = tid; j < 2048; j += 256) {
// CHECK-NEXT:      float v = x[row * 2048 + j];
// CHECK-NEXT:      float sq = v * v;
// CHECK-NEXT:      float next = partial + sq;
// CHECK-NEXT:      partial = next;
// CHECK-NEXT:    }
// CHECK-NEXT:    float o16 = __shfl_xor_sync(0xffffffffu, partial, 16);
// CHECK-NEXT:    float s16 = partial + o16;
// CHECK-NEXT:    float o8 = __shfl_xor_sync(0xffffffffu, s16, 8);
// CHECK:         float s1 = s2 + o1;
// CHECK-NEXT:    long lane = (long)((unsigned long)tid % 32);
// CHECK-NEXT:    long warp = (long)((unsigned long)tid / 32);
// CHECK-NEXT:    bool first = lane == 0;
// CHECK-NEXT:    if (first) {
// CHECK-NEXT:      partials[warp] = s1;
// CHECK-NEXT:    }
// CHECK-NEXT:    __syncthreads();
// CHECK-NEXT:    bool in_range = (unsigned long)lane < 8;
// CHECK-NEXT:    long slot = (unsigned long)lane < 7 ? lane : 7;
// CHECK-NEXT:    float p = partials[slot];
// CHECK-NEXT:    float pv = in_range ? p : 0.0f;
// CHECK-NEXT:    float q16 = __shfl_xor_sync(0xffffffffu, pv, 16);
// CHECK:         float t1 = t2 + q1;
// CHECK-NEXT:    float mean = t1 * 0.00048828125f;
// CHECK-NEXT:    float var = mean + 1e-06f;
// CHECK-NEXT:    float rs = rsqrtf(var);
// CHECK-NEXT:    for (long j_1 = tid; j_1 < 2048; j_1 += 256) {
// CHECK-NEXT:      float v_1 = x[row * 2048 + j_1];
// CHECK-NEXT:      float g = w[j_1];
// CHECK-NEXT:      float u = v_1 * rs;
// CHECK-NEXT:      float out = u * g;
// CHECK-NEXT:      y[row * 2048 + j_1] = out;
// CHECK-NEXT:    }
// CHECK-NEXT:  }

kernel.func @rms_norm(%x: memref<32x2048xf32>, %w: memref<2048xf32>, %y: memref<32x2048xf32>) block [256, 1, 1] {
  %row = kernel.block_id x
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %c2048 = arith.constant 2048 : index
  %i16 = arith.constant 16 : i32
  %i8 = arith.constant 8 : i32
  %i4 = arith.constant 4 : i32
  %i2 = arith.constant 2 : i32
  %i1 = arith.constant 1 : i32
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant 4.8828125e-04 : f32
  %eps = arith.constant 1.0e-06 : f32
  %partials = kernel.shared_alloc : memref<8xf32, 3 : i32>
  %partial = scf.for %j = %tid to %c2048 step %c256 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%row, %j] : memref<32x2048xf32>
    %sq = arith.mulf %v, %v : f32
    %next = arith.addf %acc, %sq : f32
    scf.yield %next : f32
  }
  %o16 = kernel.shuffle xor %partial, %i16 : f32
  %s16 = arith.addf %partial, %o16 : f32
  %o8 = kernel.shuffle xor %s16, %i8 : f32
  %s8 = arith.addf %s16, %o8 : f32
  %o4 = kernel.shuffle xor %s8, %i4 : f32
  %s4 = arith.addf %s8, %o4 : f32
  %o2 = kernel.shuffle xor %s4, %i2 : f32
  %s2 = arith.addf %s4, %o2 : f32
  %o1 = kernel.shuffle xor %s2, %i1 : f32
  %s1 = arith.addf %s2, %o1 : f32
  %lane = arith.remui %tid, %c32 : index
  %warp = arith.divui %tid, %c32 : index
  %first = arith.cmpi eq, %lane, %c0 : index
  scf.if %first {
    memref.store %s1, %partials[%warp] : memref<8xf32, 3 : i32>
  }
  kernel.barrier
  %in_range = arith.cmpi ult, %lane, %c8 : index
  %slot = arith.minui %lane, %c7 : index
  %p = memref.load %partials[%slot] : memref<8xf32, 3 : i32>
  %pv = arith.select %in_range, %p, %zero : f32
  %q16 = kernel.shuffle xor %pv, %i16 : f32
  %t16 = arith.addf %pv, %q16 : f32
  %q8 = kernel.shuffle xor %t16, %i8 : f32
  %t8 = arith.addf %t16, %q8 : f32
  %q4 = kernel.shuffle xor %t8, %i4 : f32
  %t4 = arith.addf %t8, %q4 : f32
  %q2 = kernel.shuffle xor %t4, %i2 : f32
  %t2 = arith.addf %t4, %q2 : f32
  %q1 = kernel.shuffle xor %t2, %i1 : f32
  %t1 = arith.addf %t2, %q1 : f32
  %mean = arith.mulf %t1, %inv_n : f32
  %var = arith.addf %mean, %eps : f32
  %rs = math.rsqrt %var : f32
  scf.for %j = %tid to %c2048 step %c256 {
    %v = memref.load %x[%row, %j] : memref<32x2048xf32>
    %g = memref.load %w[%j] : memref<2048xf32>
    %u = arith.mulf %v, %rs : f32
    %out = arith.mulf %u, %g : f32
    memref.store %out, %y[%row, %j] : memref<32x2048xf32>
  }
}

func.func @forward(%x: memref<32x2048xf32>, %w: memref<2048xf32>) -> memref<32x2048xf32> {
  %y = memref.alloc() : memref<32x2048xf32>
  kernel.launch @rms_norm(%x, %w, %y) grid [32, 1, 1] block [256, 1, 1] smem 0 : memref<32x2048xf32>, memref<2048xf32>, memref<32x2048xf32>
  func.return %y : memref<32x2048xf32>
}
