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
