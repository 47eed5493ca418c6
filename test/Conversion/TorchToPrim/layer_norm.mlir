// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// layer_norm, two-pass: the sum (keepdim) gives the mean, the centered squares summed give the
// biased variance; the output map computes (x - mean) * rsqrt(var + eps) * weight + bias. For
// bf16 the input is widened once and everything is in f32 until the final rounding.

// CHECK-LABEL: func.func @layer_norm_bf16(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xbf16>, %[[W:.*]]: tensor<8xbf16>, %[[B:.*]]: tensor<8xbf16>)
// CHECK-NEXT:    %[[XW:.*]] = prim.map(%[[X]]) : (tensor<2x8xbf16>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      prim.yield %[[AW]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUM:.*]] = prim.reduce add %[[XW]] axes [1] keepdim init 0.0 : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[SUMB:.*]] = prim.broadcast %[[SUM]] : tensor<2x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[SQ:.*]] = prim.map(%[[XW]], %[[SUMB]]) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[V]], %[[MEAN]] : f32
// CHECK-NEXT:      %[[D2:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:      prim.yield %[[D2]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SS:.*]] = prim.reduce add %[[SQ]] axes [1] keepdim init 0.0 : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[SSB:.*]] = prim.broadcast %[[SS]] : tensor<2x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[WB:.*]] = prim.broadcast %[[W]] : tensor<8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    %[[BB:.*]] = prim.broadcast %[[B]] : tensor<8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    %[[Y:.*]] = prim.map(%[[XW]], %[[SUMB]], %[[SSB]], %[[WB]], %[[BB]]) : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16> {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[S:.*]]: f32, %[[Q:.*]]: f32, %[[G:.*]]: bf16, %[[H:.*]]: bf16):
// CHECK-NEXT:      %[[GW:.*]] = arith.extf %[[G]] : bf16 to f32
// CHECK-NEXT:      %[[HW:.*]] = arith.extf %[[H]] : bf16 to f32
// CHECK-NEXT:      %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[V]], %[[MEAN]] : f32
// CHECK-NEXT:      %[[VAR:.*]] = arith.divf %[[Q]], %[[N]] : f32
// CHECK-NEXT:      %[[EPS:.*]] = arith.constant 1.000000e-05 : f32
// CHECK-NEXT:      %[[VE:.*]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT:      %[[RSTD:.*]] = math.rsqrt %[[VE]] : f32
// CHECK-NEXT:      %[[NORM:.*]] = arith.mulf %[[D]], %[[RSTD]] : f32
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[NORM]], %[[GW]] : f32
// CHECK-NEXT:      %[[SHIFTED:.*]] = arith.addf %[[SCALED]], %[[HW]] : f32
// CHECK-NEXT:      %[[OUT:.*]] = arith.truncf %[[SHIFTED]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[OUT]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
func.func @layer_norm_bf16(%x: tensor<2x8xbf16>, %w: tensor<8xbf16>, %b: tensor<8xbf16>) -> tensor<2x8xbf16> {
  %0 = torch.layer_norm %x weight %w bias %b normalized_shape [8] eps 1.0e-05 : tensor<2x8xbf16> weight tensor<8xbf16> bias tensor<8xbf16> -> tensor<2x8xbf16>
  func.return %0 : tensor<2x8xbf16>
}

// -----

// Only a bias, over two dims: no widening for f32, no weight multiplication.

// CHECK-LABEL: func.func @layer_norm_bias_only(
// CHECK-SAME:    %[[X:.*]]: tensor<2x4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[SUM:.*]] = prim.reduce add %[[X]] axes [1, 2] keepdim init 0.0 : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
// CHECK:         %[[SS:.*]] = prim.reduce add %{{.*}} axes [1, 2] keepdim
// CHECK:         %[[BB:.*]] = prim.broadcast %[[B]] : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    prim.map(%[[X]], %{{.*}}, %{{.*}}, %[[BB]])
// CHECK:           %[[NORM:.*]] = arith.mulf
// CHECK-NEXT:      %[[SHIFTED:.*]] = arith.addf %[[NORM]], %{{.*}} : f32
// CHECK-NEXT:      prim.yield %[[SHIFTED]] : f32
func.func @layer_norm_bias_only(%x: tensor<2x4x8xf32>, %b: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = torch.layer_norm %x bias %b normalized_shape [4, 8] eps 1.0e-05 : tensor<2x4x8xf32> bias tensor<4x8xf32> -> tensor<2x4x8xf32>
  func.return %0 : tensor<2x4x8xf32>
}
