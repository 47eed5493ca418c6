// RUN: emmy-opt %s --split-input-file --fuse-prims | filecheck %s

// A product's operand is read in place through views when its reduction dim is one dim of the
// buffer; where the views spread it over several (attention's [B, H, S, D] output transposed
// and merged to [B * S, H * D] for the output projection), another kernel materializes the
// operand, so that the product stays one that tensor cores take.

// CHECK-LABEL: func.func @merged_heads(
// CHECK-NEXT:    %m = fused.kernel @k_transpose_reshape(%y) : (tensor<2x3x7x4xf32>) -> tensor<14x12xf32> {
// CHECK-NEXT:    ^bb0(%[[Y:.*]]: tensor<2x3x7x4xf32>):
// CHECK-NEXT:      %[[T:.*]] = prim.permute %[[Y]] [0, 2, 1, 3]
// CHECK-NEXT:      %[[M:.*]] = prim.reshape %[[T]] : tensor<2x7x3x4xf32> -> tensor<14x12xf32>
// CHECK-NEXT:      fused.yield %[[M]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %c = fused.kernel @k_linear(%w, %m) : (tensor<12x5xf32>, tensor<14x12xf32>) -> tensor<14x5xf32> {
// CHECK-NEXT:    ^bb0(%[[W:.*]]: tensor<12x5xf32>, %[[MM:.*]]: tensor<14x12xf32>):
// CHECK-NEXT:      prim.contract %[[MM]], %[[W]]

func.func @merged_heads(%y: tensor<2x3x7x4xf32>, %w: tensor<12x5xf32>) -> tensor<14x5xf32> {
  %t = prim.permute %y [0, 2, 1, 3] : tensor<2x3x7x4xf32> -> tensor<2x7x3x4xf32> loc("transpose")
  %m = prim.reshape %t : tensor<2x7x3x4xf32> -> tensor<14x12xf32> loc("reshape")
  %c = prim.contract %m, %w : tensor<14x12xf32>, tensor<12x5xf32> -> tensor<14x5xf32> loc("linear")
  func.return %c : tensor<14x5xf32>
}

// -----

// Rows merged ([B, S, K] to [B * S, K]) keep k one dim: the product reads the input in place.

// CHECK-LABEL: func.func @merged_rows(
// CHECK-NEXT:    %c = fused.kernel @k_linear_reshape(%y, %w) : (tensor<2x7x12xf32>, tensor<12x5xf32>) -> tensor<14x5xf32> {
// CHECK-NEXT:    ^bb0(%[[Y:.*]]: tensor<2x7x12xf32>, %[[W:.*]]: tensor<12x5xf32>):
// CHECK-NEXT:      %[[M:.*]] = prim.reshape %[[Y]]
// CHECK-NEXT:      prim.contract %[[M]], %[[W]]

func.func @merged_rows(%y: tensor<2x7x12xf32>, %w: tensor<12x5xf32>) -> tensor<14x5xf32> {
  %m = prim.reshape %y : tensor<2x7x12xf32> -> tensor<14x12xf32> loc("reshape")
  %c = prim.contract %m, %w : tensor<14x12xf32>, tensor<12x5xf32> -> tensor<14x5xf32> loc("linear")
  func.return %c : tensor<14x5xf32>
}

// -----

// The rhs's reduction dim is its second to last: a [K, N] weight viewed from [N, K1, K2] merges
// K1 and K2 into k, and is materialized.

// CHECK-LABEL: func.func @merged_rhs(
// CHECK-NEXT:    %t = fused.kernel @k_reshape_transpose(%v) : (tensor<5x3x4xf32>) -> tensor<12x5xf32> {
// CHECK:         fused.kernel @k_linear(

func.func @merged_rhs(%x: tensor<14x12xf32>, %v: tensor<5x3x4xf32>) -> tensor<14x5xf32> {
  %r = prim.reshape %v : tensor<5x3x4xf32> -> tensor<5x12xf32> loc("reshape")
  %t = prim.permute %r [1, 0] : tensor<5x12xf32> -> tensor<12x5xf32> loc("transpose")
  %c = prim.contract %x, %t : tensor<14x12xf32>, tensor<12x5xf32> -> tensor<14x5xf32> loc("linear")
  func.return %c : tensor<14x5xf32>
}
