// RUN: not emmy-opt %s --split-input-file --decompose-torch 2>&1 | filecheck %s

// What decompose-torch cannot decompose exactly is an error at the torch op, never a guess.

// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: pass 'decompose-torch' failed: cannot decompose 'torch.add': addition on i1 (bool) values is not supported
// CHECK-NEXT: torch.add %m, %m
func.func @bool_add(%m: tensor<4xi1>) -> tensor<4xi1> {
  %0 = torch.add %m, %m : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  func.return %0 : tensor<4xi1>
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: pass 'decompose-torch' failed: cannot decompose 'torch.pow': an integer pow needs a constant, non-negative exponent (a splat constant)
// CHECK-NEXT: torch.pow %i, %i
func.func @integer_pow_by_tensor(%i: tensor<4xi64>) -> tensor<4xi64> {
  %0 = torch.pow %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  func.return %0 : tensor<4xi64>
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: pass 'decompose-torch' failed: cannot decompose 'torch.clamp': 0.5 is not a value of type i64
// CHECK-NEXT: torch.clamp %i min
func.func @integer_clamp_by_a_fraction(%i: tensor<4xi64>) -> tensor<4xi64> {
  %0 = torch.clamp %i min 0.5 : tensor<4xi64> -> tensor<4xi64>
  func.return %0 : tensor<4xi64>
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: pass 'decompose-torch' failed: cannot decompose 'torch.sum': a sum of i1 (bool) values is not supported; convert them first
// CHECK-NEXT: torch.sum %m
func.func @bool_sum(%m: tensor<4xi1>) -> tensor<i1> {
  %0 = torch.sum %m dims [0] : tensor<4xi1> -> tensor<i1>
  func.return %0 : tensor<i1>
}

// -----

// A variance over the dynamic dim would divide by its size (less the correction), which no
// constant holds (a mean counts it as a sum of ones).

// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: pass 'decompose-torch' failed: cannot decompose 'torch.var': a variance over the dynamic dim is not supported yet
// CHECK-NEXT: torch.var %x
builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64}} {
  func.func @variance_over_the_dynamic_dim(%x: tensor<?x16xf32>) -> tensor<16xf32> {
    %m = torch.var %x dims [0] correction 1 : tensor<?x16xf32> -> tensor<16xf32>
    func.return %m : tensor<16xf32>
  }
}
