// RUN: emmy-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{a kernel.func whose buffers have a dynamic dim (?) takes the dynamic size as its last argument, an index}}
kernel.func @no_size(%x: memref<?x64xf32>) block [32, 1, 1] {
}

// -----

kernel.func @k(%x: memref<?xf32>, %s0: index) block [32, 1, 1] {
}
func.func @sized_without_the_size(%x: memref<?xf32>) {
  // expected-error @+1 {{sized [factor, divisor, power] are three positive counts, got [2, 0, 1]}}
  kernel.launch @k(%x, %x) grid [64, 1, 1] sized [2, 0, 1] block [32, 1, 1] smem 0 : memref<?xf32>, memref<?xf32>
  func.return
}

// -----

kernel.func @k(%x: memref<4xf32>) block [32, 1, 1] {
}
func.func @sized_without_the_size(%x: memref<4xf32>) {
  // expected-error @+1 {{a launch sized by the dynamic size passes it last, as an index}}
  kernel.launch @k(%x) grid [64, 1, 1] sized [2, 1, 1] block [32, 1, 1] smem 0 : memref<4xf32>
  func.return
}
