// RUN: emmy-opt %s --split-input-file --lower-loop-to-tile | filecheck %s
// RUN: emmy-opt %s --split-input-file --lower-loop-to-tile=block-size=128 | filecheck %s --check-prefix=OVERRIDE

// A norm-shaped nest: the rows go to the grid, the reduction and the column loop to the
// threads of a block; rows of 2048 or more get 512 threads.

// CHECK-LABEL: tile.kernel @k_rms_norm(
// CHECK-SAME:    grid [32, 1, 1] block [512, 1, 1] {
// CHECK:         tile.for %[[I:.*]] in 0 to 32 map grid {
// CHECK-NEXT:      %[[S:.*]] = tile.for %[[R:.*]] in 0 to 2048 map thread reduce add init 0.0 : f32 {
// CHECK-NEXT:        memref.load %{{.*}}[%[[I]], %[[R]]] : memref<32x2048xf32>
// CHECK:             tile.yield
// CHECK:           tile.for %[[J:.*]] in 0 to 2048 map thread {
// CHECK:             memref.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]] : memref<32x2048xf32>
// CHECK-LABEL: func.func @forward(
// CHECK:         tile.launch @k_rms_norm(

// OVERRIDE-LABEL: tile.kernel @k_rms_norm(
// OVERRIDE-SAME:    block [128, 1, 1]

loop.kernel @k_rms_norm(%x: memref<32x2048xf32>, %y: memref<32x2048xf32>) {
  loop.for %i in 0 to 32 {
    %s = loop.for %r in 0 to 2048 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %r] : memref<32x2048xf32>
      %q = arith.mulf %v, %v : f32
      loop.yield %q : f32
    }
    loop.for %j in 0 to 2048 {
      %v = loop.load %x[%i, %j] : memref<32x2048xf32>
      %o = arith.mulf %v, %s : f32
      loop.store %o, %y[%i, %j] : memref<32x2048xf32>
    }
  }
}
func.func @forward(%x: memref<32x2048xf32>) -> memref<32x2048xf32> {
  %y = memref.alloc() : memref<32x2048xf32>
  loop.launch @k_rms_norm(%x, %y) : memref<32x2048xf32>, memref<32x2048xf32>
  func.return %y : memref<32x2048xf32>
}

// -----

// An elementwise nest: the leading dims go to the grid, the last to the threads; a block
// covers a short row with a whole number of warps.

// CHECK-LABEL: tile.kernel @k_add(
// CHECK-SAME:    grid [12, 1, 1] block [64, 1, 1] {
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 3 map grid {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 4 map grid {
// CHECK-NEXT:        tile.for %{{.*}} in 0 to 40 map thread {

loop.kernel @k_add(%x: memref<3x4x40xf32>, %y: memref<3x4x40xf32>) {
  loop.for %a in 0 to 3 {
    loop.for %b in 0 to 4 {
      loop.for %c in 0 to 40 {
        %v = loop.load %x[%a, %b, %c] : memref<3x4x40xf32>
        %w = arith.addf %v, %v : f32
        loop.store %w, %y[%a, %b, %c] : memref<3x4x40xf32>
      }
    }
  }
}

// -----

// A one-dimensional nest spreads over every thread of the grid; a kernel attribute overrides
// the block size for that kernel.

// CHECK-LABEL: tile.kernel @k_scale(
// CHECK-SAME:    grid [10, 1, 1] block [1024, 1, 1] {
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 10000 map global {

// OVERRIDE-LABEL: tile.kernel @k_scale(
// OVERRIDE-SAME:    block [1024, 1, 1]

loop.kernel @k_scale(%x: memref<10000xf32>, %y: memref<10000xf32>) attributes {tile.block_size = 1024 : i64} {
  loop.for %i in 0 to 10000 {
    %v = loop.load %x[%i] : memref<10000xf32>
    loop.store %v, %y[%i] : memref<10000xf32>
  }
}

// -----

// A contraction: every output element goes to the grid and its inner product to the threads
// of a block (tensor-core schedules come with the contraction work).

// CHECK-LABEL: tile.kernel @k_matmul(
// CHECK-SAME:    grid [32, 1, 1] block [32, 1, 1] {
// CHECK:         tile.for %{{.*}} in 0 to 4 map grid {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 8 map grid {
// CHECK-NEXT:        tile.for %{{.*}} in 0 to 16 map thread reduce add init 0.0 : f32 {

loop.kernel @k_matmul(%a: memref<4x16xf32>, %b: memref<16x8xf32>, %c: memref<4x8xf32>) {
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 8 {
      %s = loop.for %k in 0 to 16 reduce add init 0.0 : f32 {
        %u = loop.load %a[%i, %k] : memref<4x16xf32>
        %v = loop.load %b[%k, %j] : memref<16x8xf32>
        %p = arith.mulf %u, %v : f32
        loop.yield %p : f32
      }
      loop.store %s, %c[%i, %j] : memref<4x8xf32>
    }
  }
}
