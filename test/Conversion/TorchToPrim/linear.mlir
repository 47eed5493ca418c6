// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// linear: the weight [N, K] permuted to [K, N], the input reshaped to [M, K], one contract,
// the bias added by a map, the result reshaped back to [..., N]. bf16 operands are widened,
// contracted in f32 and rounded once, after the bias.

// CHECK-LABEL: func.func @linear_bias_bf16(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x16xbf16>, %[[W:.*]]: tensor<4x16xbf16>, %[[B:.*]]: tensor<4xbf16>)
// CHECK-NEXT:    %[[X2:.*]] = prim.reshape %[[X]] : tensor<2x3x16xbf16> -> tensor<6x16xbf16>
// CHECK-NEXT:    %[[XW:.*]] = prim.map(%[[X2]]) : (tensor<6x16xbf16>) -> tensor<6x16xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      prim.yield %[[AW]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[WT:.*]] = prim.permute %[[W]] [1, 0] : tensor<4x16xbf16> -> tensor<16x4xbf16>
// CHECK-NEXT:    %[[WW:.*]] = prim.map(%[[WT]]) : (tensor<16x4xbf16>) -> tensor<16x4xf32> {
// CHECK-NEXT:    ^bb0(%[[C:.*]]: bf16):
// CHECK-NEXT:      %[[CW:.*]] = arith.extf %[[C]] : bf16 to f32
// CHECK-NEXT:      prim.yield %[[CW]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[P:.*]] = prim.contract %[[XW]], %[[WW]] : tensor<6x16xf32>, tensor<16x4xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[BB:.*]] = prim.broadcast %[[B]] : tensor<4xbf16> -> tensor<6x4xbf16>
// CHECK-NEXT:    %[[Y2:.*]] = prim.map(%[[P]], %[[BB]]) : (tensor<6x4xf32>, tensor<6x4xbf16>) -> tensor<6x4xbf16> {
// CHECK-NEXT:    ^bb0(%[[D:.*]]: f32, %[[E:.*]]: bf16):
// CHECK-NEXT:      %[[EW:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[D]], %[[EW]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[R]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Y:.*]] = prim.reshape %[[Y2]] : tensor<6x4xbf16> -> tensor<2x3x4xbf16>
// CHECK-NEXT:    func.return %[[Y]]
func.func @linear_bias_bf16(%x: tensor<2x3x16xbf16>, %w: tensor<4x16xbf16>, %b: tensor<4xbf16>) -> tensor<2x3x4xbf16> {
  %0 = torch.linear %x, %w bias %b : tensor<2x3x16xbf16>, tensor<4x16xbf16> bias tensor<4xbf16> -> tensor<2x3x4xbf16>
  func.return %0 : tensor<2x3x4xbf16>
}

// -----

// Without a bias, in f32 and on a 2-D input, linear is a permute and a contract.

// CHECK-LABEL: func.func @linear_f32(
// CHECK-SAME:    %[[X:.*]]: tensor<3x16xf32>, %[[W:.*]]: tensor<4x16xf32>)
// CHECK-NEXT:    %[[WT:.*]] = prim.permute %[[W]] [1, 0] : tensor<4x16xf32> -> tensor<16x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = prim.contract %[[X]], %[[WT]] : tensor<3x16xf32>, tensor<16x4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @linear_f32(%x: tensor<3x16xf32>, %w: tensor<4x16xf32>) -> tensor<3x4xf32> {
  %0 = torch.linear %x, %w : tensor<3x16xf32>, tensor<4x16xf32> -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

// A vector input is a one-row matrix.

// CHECK-LABEL: func.func @linear_vector(
// CHECK-SAME:    %[[X:.*]]: tensor<16xf32>, %[[W:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[X2:.*]] = prim.reshape %[[X]] : tensor<16xf32> -> tensor<1x16xf32>
// CHECK-NEXT:    %[[WT:.*]] = prim.permute %[[W]] [1, 0]
// CHECK-NEXT:    %[[P:.*]] = prim.contract %[[X2]], %[[WT]] : tensor<1x16xf32>, tensor<16x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    %[[BB:.*]] = prim.broadcast %[[B]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    %[[Y2:.*]] = prim.map(%[[P]], %[[BB]])
// CHECK:         %[[Y:.*]] = prim.reshape %[[Y2]] : tensor<1x4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @linear_vector(%x: tensor<16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = torch.linear %x, %w bias %b : tensor<16xf32>, tensor<4x16xf32> bias tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
