// RUN: emmy-opt %s --choose-tile-schedule --lower-loop-to-tile --lower-tile-to-kernel --canonicalize --cse -t cuda | filecheck %s

// The same elementwise nest twice: choose-tile-schedule schedules the first (32 rows, too
// few for the SMs, spread over rows of blocks: blockIdx.y, 4 floats a thread), and keeps the
// schedule written by hand on the second (a row a block of 256 threads, 2 floats a thread),
// which lower-loop-to-tile applies as written.

// CHECK-LABEL: // kernel.func @k_heuristic: block [128, 1, 1]
// CHECK-NEXT:  __launch_bounds__(128) k_heuristic(
// CHECK:         long [[BY:v[0-9]+]] = blockIdx.y;
// CHECK:         for (long i = [[BY]]; i < 32;
// CHECK:           *reinterpret_cast<float4*>(&vec) = *reinterpret_cast<const float4*>(&x[

// CHECK-LABEL: // kernel.func @k_by_hand: block [256, 1, 1]
// CHECK-NEXT:  __launch_bounds__(256) k_by_hand(
// CHECK-NOT:     blockIdx.y
// CHECK:         long [[BX:v[0-9]+]] = blockIdx.x;
// CHECK:         for (long i = [[BX]]; i < 32;
// CHECK:           *reinterpret_cast<float2*>(&vec) = *reinterpret_cast<const float2*>(&x[
// CHECK-NOT:     float4

loop.kernel @k_heuristic(%x: memref<32x2048xf32>, %y: memref<32x2048xf32>) {
  loop.for %i in 0 to 32 {
    loop.for %j in 0 to 2048 {
      %v = loop.load %x[%i, %j] : memref<32x2048xf32>
      %w = arith.mulf %v, %v : f32
      loop.store %w, %y[%i, %j] : memref<32x2048xf32>
    }
  }
}
loop.kernel @k_by_hand(%x: memref<32x2048xf32>, %y: memref<32x2048xf32>) attributes {tile.schedule = #tile.schedule<block [256, 1, 1], loops [[0] grid, [0, 0] thread vector 2]>} {
  loop.for %i in 0 to 32 {
    loop.for %j in 0 to 2048 {
      %v = loop.load %x[%i, %j] : memref<32x2048xf32>
      %w = arith.mulf %v, %v : f32
      loop.store %w, %y[%i, %j] : memref<32x2048xf32>
    }
  }
}
func.func @forward(%x: memref<32x2048xf32>) -> memref<32x2048xf32> {
  %y = memref.alloc() : memref<32x2048xf32>
  loop.launch @k_heuristic(%x, %y) : memref<32x2048xf32>, memref<32x2048xf32>
  loop.launch @k_by_hand(%x, %y) : memref<32x2048xf32>, memref<32x2048xf32>
  func.return %y : memref<32x2048xf32>
}
