// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// rms_norm: x * rsqrt(mean(x^2) + eps) [* weight]. The squares are summed (keepdim) over the
// normalized dims, the row scale is computed per row and broadcast back; for bf16 the whole
// computation is in f32 (the weight too) and only the result is rounded, as torch does.

// CHECK-LABEL: func.func @rms_norm_bf16(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x64xbf16>, %[[W:.*]]: tensor<64xbf16>)
// CHECK-NEXT:    %[[SQ:.*]] = prim.map(%[[X]]) : (tensor<2x8x64xbf16>) -> tensor<2x8x64xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[A2:.*]] = arith.mulf %[[AW]], %[[AW]] : f32
// CHECK-NEXT:      prim.yield %[[A2]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUM:.*]] = prim.reduce add %[[SQ]] axes [2] keepdim init 0.0 : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
// CHECK-NEXT:    %[[SCALE:.*]] = prim.map(%[[SUM]]) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32> {
// CHECK-NEXT:    ^bb0(%[[S:.*]]: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.constant 6.400000e+01 : f32
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:      %[[EPS:.*]] = arith.constant 1.000000e-06 : f32
// CHECK-NEXT:      %[[MS:.*]] = arith.addf %[[MEAN]], %[[EPS]] : f32
// CHECK-NEXT:      %[[R:.*]] = math.rsqrt %[[MS]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SCALEB:.*]] = prim.broadcast %[[SCALE]] : tensor<2x8x1xf32> -> tensor<2x8x64xf32>
// CHECK-NEXT:    %[[WB:.*]] = prim.broadcast %[[W]] : tensor<64xbf16> -> tensor<2x8x64xbf16>
// CHECK-NEXT:    %[[Y:.*]] = prim.map(%[[X]], %[[SCALEB]], %[[WB]]) : (tensor<2x8x64xbf16>, tensor<2x8x64xf32>, tensor<2x8x64xbf16>) -> tensor<2x8x64xbf16> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: bf16, %[[C:.*]]: f32, %[[D:.*]]: bf16):
// CHECK-NEXT:      %[[BW:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT:      %[[DW:.*]] = arith.extf %[[D]] : bf16 to f32
// CHECK-NEXT:      %[[NORM:.*]] = arith.mulf %[[BW]], %[[C]] : f32
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[NORM]], %[[DW]] : f32
// CHECK-NEXT:      %[[OUT:.*]] = arith.truncf %[[SCALED]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[OUT]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
func.func @rms_norm_bf16(%x: tensor<2x8x64xbf16>, %w: tensor<64xbf16>) -> tensor<2x8x64xbf16> {
  %0 = torch.rms_norm %x weight %w normalized_shape [64] eps 1.0e-06 : tensor<2x8x64xbf16> weight tensor<64xbf16> -> tensor<2x8x64xbf16>
  func.return %0 : tensor<2x8x64xbf16>
}

// -----

// Without a weight, over two normalized dims.

// CHECK-LABEL: func.func @rms_norm_two_dims(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x64xf32>)
// CHECK-NEXT:    %[[SQ:.*]] = prim.map(%[[X]])
// CHECK:         %[[SUM:.*]] = prim.reduce add %[[SQ]] axes [1, 2] keepdim init 0.0 : tensor<2x8x64xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[SCALE:.*]] = prim.map(%[[SUM]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.constant 5.120000e+02 : f32
// CHECK:         %[[SCALEB:.*]] = prim.broadcast %[[SCALE]] : tensor<2x1x1xf32> -> tensor<2x8x64xf32>
// CHECK-NEXT:    %[[Y:.*]] = prim.map(%[[X]], %[[SCALEB]]) : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT:      %[[NORM:.*]] = arith.mulf %[[B]], %[[C]] : f32
// CHECK-NEXT:      prim.yield %[[NORM]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
func.func @rms_norm_two_dims(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  %0 = torch.rms_norm %x normalized_shape [8, 64] eps 1.1920928955078125e-07 : tensor<2x8x64xf32> -> tensor<2x8x64xf32>
  func.return %0 : tensor<2x8x64xf32>
}
