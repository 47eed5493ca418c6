// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// matmul: both operands broadcast to the result's batch dims, one contract.

// CHECK-LABEL: func.func @matmul_broadcast(
// CHECK-SAME:    %[[P:.*]]: tensor<3x1x8x16xf32>, %[[Q:.*]]: tensor<5x16x4xf32>)
// CHECK-NEXT:    %[[PB:.*]] = prim.broadcast %[[P]] : tensor<3x1x8x16xf32> -> tensor<3x5x8x16xf32>
// CHECK-NEXT:    %[[QB:.*]] = prim.broadcast %[[Q]] : tensor<5x16x4xf32> -> tensor<3x5x16x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = prim.contract %[[PB]], %[[QB]] : tensor<3x5x8x16xf32>, tensor<3x5x16x4xf32> -> tensor<3x5x8x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @matmul_broadcast(%p: tensor<3x1x8x16xf32>, %q: tensor<5x16x4xf32>) -> tensor<3x5x8x4xf32> {
  %0 = torch.matmul %p, %q : tensor<3x1x8x16xf32>, tensor<5x16x4xf32> -> tensor<3x5x8x4xf32>
  func.return %0 : tensor<3x5x8x4xf32>
}

// -----

// bmm needs no broadcast; bf16 operands are contracted in f32 and rounded once.

// CHECK-LABEL: func.func @bmm_bf16(
// CHECK-SAME:    %[[A:.*]]: tensor<5x8x16xbf16>, %[[B:.*]]: tensor<5x16x4xbf16>)
// CHECK-NEXT:    %[[AW:.*]] = prim.map(%[[A]]) : (tensor<5x8x16xbf16>) -> tensor<5x8x16xf32> {
// CHECK:         %[[BW:.*]] = prim.map(%[[B]]) : (tensor<5x16x4xbf16>) -> tensor<5x16x4xf32> {
// CHECK:         %[[P:.*]] = prim.contract %[[AW]], %[[BW]] : tensor<5x8x16xf32>, tensor<5x16x4xf32> -> tensor<5x8x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = prim.map(%[[P]]) : (tensor<5x8x4xf32>) -> tensor<5x8x4xbf16> {
// CHECK-NEXT:    ^bb0(%[[C:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[C]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[R]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
func.func @bmm_bf16(%a: tensor<5x8x16xbf16>, %b: tensor<5x16x4xbf16>) -> tensor<5x8x4xbf16> {
  %0 = torch.bmm %a, %b : tensor<5x8x16xbf16>, tensor<5x16x4xbf16> -> tensor<5x8x4xbf16>
  func.return %0 : tensor<5x8x4xbf16>
}

// -----

// Integer matrices contract in their own type.

// CHECK-LABEL: func.func @matmul_integers(
// CHECK-SAME:    %[[A:.*]]: tensor<8x16xi64>, %[[B:.*]]: tensor<16x4xi64>)
// CHECK-NEXT:    %[[Y:.*]] = prim.contract %[[A]], %[[B]] : tensor<8x16xi64>, tensor<16x4xi64> -> tensor<8x4xi64>
// CHECK-NEXT:    func.return %[[Y]]
func.func @matmul_integers(%a: tensor<8x16xi64>, %b: tensor<16x4xi64>) -> tensor<8x4xi64> {
  %0 = torch.matmul %a, %b : tensor<8x16xi64>, tensor<16x4xi64> -> tensor<8x4xi64>
  func.return %0 : tensor<8x4xi64>
}
