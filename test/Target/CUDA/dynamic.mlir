// RUN: emmy-opt %s -t cuda | filecheck %s

// The dynamic size is a `long` parameter of the kernel; a loop runs to it, and an address
// whose stride crosses the ? dim multiplies by it.

// CHECK-LABEL: k_max(const float* __restrict__ a, float* __restrict__ out, long s0) {
// CHECK:         for (long i = v1; i < 4; i += v2) {
// CHECK:           for (long i_1 = v0; i_1 < s0; i_1 += 512) {
// CHECK-NEXT:        float v4 = a[i * s0 + i_1];

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64}} {
  kernel.func @k_max(%a: memref<4x?xf32>, %out: memref<4xf32>, %s0: index) block [512, 1, 1] {
    %0 = kernel.thread_id x
    %1 = kernel.block_id x
    %2 = kernel.grid_dim x
    %c4 = arith.constant 4 : index
    %c512 = arith.constant 512 : index
    %3 = arith.constant 0xff800000 : f32
    scf.for %9 = %1 to %c4 step %2 {
      %10 = scf.for %11 = %0 to %s0 step %c512 iter_args(%12 = %3) -> (f32) {
        %13 = memref.load %a[%9, %11] : memref<4x?xf32>
        %14 = arith.maximumf %12, %13 : f32
        scf.yield %14 : f32
      }
      memref.store %10, %out[%9] : memref<4xf32>
    }
  }

// CHECK-LABEL: k_rows(const float* __restrict__ a, float* __restrict__ out, long s0) {
// CHECK:         float v = a[i * s0 * 8 + j * 8 + k];
// CHECK-NEXT:    out[i * s0 * 8 + j * 8 + k] = v;

  kernel.func @k_rows(%a: memref<2x?x8xf32>, %out: memref<2x?x8xf32>, %s0: index) block [32, 1, 1] {
    %0 = kernel.thread_id x
    %1 = kernel.block_id x
    %2 = kernel.grid_dim x
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    scf.for %i = %1 to %c2 step %2 {
      scf.for %j = %0 to %s0 step %c1 {
        scf.for %k = %c1 to %c8 step %c1 {
          %v = memref.load %a[%i, %j, %k] : memref<2x?x8xf32>
          memref.store %v, %out[%i, %j, %k] : memref<2x?x8xf32>
        }
      }
    }
  }
}
