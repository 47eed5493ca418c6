// RUN: not emmy-opt %s --lower-fused-to-loop 2>&1 | filecheck %s

// A function without a body is refused at the function, not an internal error.

// CHECK: declaration.mlir:[[# @LINE + 3]]:1: error: pass 'lower-fused-to-loop' failed: @ext is a declaration: a program's functions have bodies
// CHECK-NOT: internal error

func.func private @ext(tensor<4xf32>) -> tensor<4xf32>
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
