// RUN: emmy-opt %s --choose-tile-schedule --lower-loop-to-tile --lower-tile-to-kernel --canonicalize --cse -t cuda | filecheck %s

// Reductions with a combiner region in CUDA: a shared array per accumulator, a
// __shfl_xor_sync per accumulator and butterfly step (of long long for argmax's positions),
// the combiner inlined after each; a thread's loop carries both accumulators.

// CHECK-LABEL: // kernel.func @k_row_statistics: block [256, 1, 1], 64 bytes of static shared memory
// CHECK-NEXT:  extern "C" __global__ void __launch_bounds__(256) k_row_statistics(
// CHECK-NEXT:    __shared__ alignas(16) float smem[8];
// CHECK-NEXT:    __shared__ alignas(16) float smem_1[8];
// CHECK:           float [[M:v[0-9]+]] = __shfl_xor_sync(0xffffffffu, m2_3, 16);
// CHECK-NEXT:      float [[L:v[0-9]+]] = __shfl_xor_sync(0xffffffffu, l2_3, 16);
// CHECK:           __syncthreads();

// CHECK-LABEL: // kernel.func @k_first_maximum: block [512, 1, 1], 192 bytes of static shared memory
// CHECK-NEXT:  extern "C" __global__ void __launch_bounds__(512) k_first_maximum(const float* __restrict__ x, long long* __restrict__ y) {
// CHECK-NEXT:    __shared__ alignas(16) float smem[16];
// CHECK-NEXT:    __shared__ alignas(16) long long smem_1[16];
// CHECK:         float [[M0:v[0-9]+]] = (-__int_as_float(0x7f800000));
// CHECK-NEXT:    long long [[P0:v[0-9]+]] = 9223372036854775807LL;
// CHECK-NEXT:    for (long i = {{.*}}; i < 100000; i += 2048) {
// CHECK:           [[M0]] = m2_3;
// CHECK-NEXT:      [[P0]] = i2_3;
// CHECK-NEXT:    }
// CHECK-NEXT:    float {{v[0-9]+}} = __shfl_xor_sync(0xffffffffu, [[M0]], 16);
// CHECK-NEXT:    long long {{v[0-9]+}} = __shfl_xor_sync(0xffffffffu, [[P0]], 16);

loop.kernel @k_row_statistics(%x: memref<8x1024xf32>, %m: memref<8xf32>, %l: memref<8xf32>) {
  loop.for %i in 0 to 8 {
    %mx, %sum = loop.for %j in 0 to 1024 reduce (%m0: f32, %l0: f32, %m1: f32, %l1: f32) init (-inf, 0.0) {
      %one = arith.constant 1.0 : f32
      %m2 = arith.maximumf %m0, %m1 : f32
      %d0 = arith.subf %m0, %m2 : f32
      %d1 = arith.subf %m1, %m2 : f32
      %e0 = math.exp %d0 : f32
      %e1 = math.exp %d1 : f32
      %same0 = arith.cmpf oeq, %m0, %m2 : f32
      %same1 = arith.cmpf oeq, %m1, %m2 : f32
      %s0 = arith.select %same0, %one, %e0 : f32
      %s1 = arith.select %same1, %one, %e1 : f32
      %a0 = arith.mulf %l0, %s0 : f32
      %a1 = arith.mulf %l1, %s1 : f32
      %l2 = arith.addf %a0, %a1 : f32
      loop.yield %m2, %l2 : f32, f32
    } {
      %v = loop.load %x[%i, %j] : memref<8x1024xf32>
      %one = arith.constant 1.0 : f32
      loop.yield %v, %one : f32, f32
    }
    loop.store %mx, %m[%i] : memref<8xf32>
    loop.store %sum, %l[%i] : memref<8xf32>
  }
}

loop.kernel @k_first_maximum(%x: memref<100000xf32>, %y: memref<1xi64>) {
  %m, %p = loop.for %j in 0 to 100000 reduce (%a: f32, %ai: i64, %b: f32, %bi: i64) init (-inf, 9223372036854775807) {
    %gt = arith.cmpf ogt, %b, %a : f32
    %eq = arith.cmpf oeq, %b, %a : f32
    %lt = arith.cmpi slt, %bi, %ai : i64
    %tie = arith.andi %eq, %lt : i1
    %take = arith.ori %gt, %tie : i1
    %m2 = arith.select %take, %b, %a : f32
    %i2 = arith.select %take, %bi, %ai : i64
    loop.yield %m2, %i2 : f32, i64
  } {
    %v = loop.load %x[%j] : memref<100000xf32>
    %pos = arith.index_cast %j : index to i64
    loop.yield %v, %pos : f32, i64
  }
  %c0 = arith.constant 0 : index
  loop.store %p, %y[%c0] : memref<1xi64>
}
