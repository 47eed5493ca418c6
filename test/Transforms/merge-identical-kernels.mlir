// RUN: emmy-opt %s --split-input-file --merge-identical-kernels | filecheck %s
// RUN: emmy-opt %s --split-input-file --merge-identical-kernels | filecheck %s --check-prefix=LOOP

// @k_scale_1 is @k_scale under other names (its own and its values'): its launch calls
// @k_scale and it is gone. @k_scale_2 multiplies by another constant and @k_scale_3 runs on
// blocks of another shape: both stay.

// CHECK-LABEL: kernel.func @k_scale(
// CHECK-NOT:   kernel.func @k_scale_1(
// CHECK:       kernel.func @k_scale_2(
// CHECK:       kernel.func @k_scale_3(
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT:    kernel.launch @k_scale(%x) grid [4, 1, 1] block [64, 1, 1] smem 0
// CHECK-NEXT:    kernel.launch @k_scale(%y) grid [4, 1, 1] block [64, 1, 1] smem 0
// CHECK-NEXT:    kernel.launch @k_scale_2(%x) grid [4, 1, 1] block [64, 1, 1] smem 0
// CHECK-NEXT:    kernel.launch @k_scale_3(%z) grid [4, 1, 1] block [128, 1, 1] smem 0

kernel.func @k_scale(%x: memref<4x64xf32>) block [64, 1, 1] {
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %two = arith.constant 2.0 : f32
  %v = memref.load %x[%bx, %tx] : memref<4x64xf32>
  %w = arith.mulf %v, %two : f32
  memref.store %w, %x[%bx, %tx] : memref<4x64xf32>
}
kernel.func @k_scale_1(%weights: memref<4x64xf32>) block [64, 1, 1] {
  %thread = kernel.thread_id x
  %block = kernel.block_id x
  %factor = arith.constant 2.0 : f32
  %a = memref.load %weights[%block, %thread] : memref<4x64xf32>
  %b = arith.mulf %a, %factor : f32
  memref.store %b, %weights[%block, %thread] : memref<4x64xf32>
}
kernel.func @k_scale_2(%x: memref<4x64xf32>) block [64, 1, 1] {
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %three = arith.constant 3.0 : f32
  %v = memref.load %x[%bx, %tx] : memref<4x64xf32>
  %w = arith.mulf %v, %three : f32
  memref.store %w, %x[%bx, %tx] : memref<4x64xf32>
}
kernel.func @k_scale_3(%x: memref<4x128xf32>) block [128, 1, 1] {
  %tx = kernel.thread_id x
  %bx = kernel.block_id x
  %two = arith.constant 2.0 : f32
  %v = memref.load %x[%bx, %tx] : memref<4x128xf32>
  %w = arith.mulf %v, %two : f32
  memref.store %w, %x[%bx, %tx] : memref<4x128xf32>
}
func.func @forward(%x: memref<4x64xf32>, %y: memref<4x64xf32>, %z: memref<4x128xf32>) {
  kernel.launch @k_scale(%x) grid [4, 1, 1] block [64, 1, 1] smem 0 : memref<4x64xf32>
  kernel.launch @k_scale_1(%y) grid [4, 1, 1] block [64, 1, 1] smem 0 : memref<4x64xf32>
  kernel.launch @k_scale_2(%x) grid [4, 1, 1] block [64, 1, 1] smem 0 : memref<4x64xf32>
  kernel.launch @k_scale_3(%z) grid [4, 1, 1] block [128, 1, 1] smem 0 : memref<4x128xf32>
  func.return
}

// -----

// Loop IR, as the pipeline first merges: @k_double_1 is @k_double; @k_triple stays.

// LOOP-LABEL: loop.kernel @k_double(
// LOOP-NOT:   loop.kernel @k_double_1(
// LOOP:       loop.kernel @k_triple(
// LOOP-LABEL: func.func @forward(
// LOOP-NEXT:    loop.launch @k_double(%x, %y) : memref<64xf32>, memref<64xf32>
// LOOP-NEXT:    loop.launch @k_double(%y, %x) : memref<64xf32>, memref<64xf32>
// LOOP-NEXT:    loop.launch @k_triple(%x, %y) : memref<64xf32>, memref<64xf32>

loop.kernel @k_double(%a: memref<64xf32>, %b: memref<64xf32>) {
  %two = arith.constant 2.0 : f32
  loop.for %i in 0 to 64 {
    %v = loop.load %a[%i] : memref<64xf32>
    %w = arith.mulf %v, %two : f32
    loop.store %w, %b[%i] : memref<64xf32>
  }
}
loop.kernel @k_double_1(%in: memref<64xf32>, %out: memref<64xf32>) {
  %factor = arith.constant 2.0 : f32
  loop.for %j in 0 to 64 {
    %v = loop.load %in[%j] : memref<64xf32>
    %w = arith.mulf %v, %factor : f32
    loop.store %w, %out[%j] : memref<64xf32>
  }
}
loop.kernel @k_triple(%a: memref<64xf32>, %b: memref<64xf32>) {
  %three = arith.constant 3.0 : f32
  loop.for %i in 0 to 64 {
    %v = loop.load %a[%i] : memref<64xf32>
    %w = arith.mulf %v, %three : f32
    loop.store %w, %b[%i] : memref<64xf32>
  }
}
func.func @forward(%x: memref<64xf32>, %y: memref<64xf32>) {
  loop.launch @k_double(%x, %y) : memref<64xf32>, memref<64xf32>
  loop.launch @k_double_1(%y, %x) : memref<64xf32>, memref<64xf32>
  loop.launch @k_triple(%x, %y) : memref<64xf32>, memref<64xf32>
  func.return
}
