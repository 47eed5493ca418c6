// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// Attention: scores = q @ k^T (a contract with the key's last two dims permuted), one map
// scaling and masking the scores, softmax over the keys, a contract with the value. For bf16
// the operands are widened and everything is f32, except that the probabilities are rounded
// to bf16 before the second product (as eager's flash kernels do, so that tensor cores take it).

// Causal (top-left aligned): key position (iota along the last dim) > query position (iota
// along dim -2) gets -inf.

// CHECK-LABEL: func.func @causal_bf16(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x4x8x16xbf16>, %[[K:.*]]: tensor<2x4x6x16xbf16>, %[[V:.*]]: tensor<2x4x6x8xbf16>)
// CHECK-NEXT:    %[[QW:.*]] = prim.map(%[[Q]]) : (tensor<2x4x8x16xbf16>) -> tensor<2x4x8x16xf32> {
// CHECK:         %[[KT:.*]] = prim.permute %[[K]] [0, 1, 3, 2] : tensor<2x4x6x16xbf16> -> tensor<2x4x16x6xbf16>
// CHECK-NEXT:    %[[KW:.*]] = prim.map(%[[KT]]) : (tensor<2x4x16x6xbf16>) -> tensor<2x4x16x6xf32> {
// CHECK:         %[[S:.*]] = prim.contract %[[QW]], %[[KW]] : tensor<2x4x8x16xf32>, tensor<2x4x16x6xf32> -> tensor<2x4x8x6xf32>
// CHECK-NEXT:    %[[QPOS:.*]] = prim.iota dim 2 : tensor<2x4x8x6xi64>
// CHECK-NEXT:    %[[KPOS:.*]] = prim.iota dim 3 : tensor<2x4x8x6xi64>
// CHECK-NEXT:    %[[MASKED:.*]] = prim.map(%[[S]], %[[QPOS]], %[[KPOS]]) : (tensor<2x4x8x6xf32>, tensor<2x4x8x6xi64>, tensor<2x4x8x6xi64>) -> tensor<2x4x8x6xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[I:.*]]: i64, %[[J:.*]]: i64):
// CHECK-NEXT:      %[[SCALE:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[A]], %[[SCALE]] : f32
// CHECK-NEXT:      %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      %[[KEEP:.*]] = arith.cmpi sle, %[[J]], %[[I]] : i64
// CHECK-NEXT:      %[[SEL:.*]] = arith.select %[[KEEP]], %[[SCALED]], %[[NEG_INF]] : f32
// CHECK-NEXT:      prim.yield %[[SEL]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[MAX:.*]] = prim.reduce max %[[MASKED]] axes [3] keepdim init -inf : tensor<2x4x8x6xf32> -> tensor<2x4x8x1xf32>
// CHECK-NEXT:    %[[MAXB:.*]] = prim.broadcast %[[MAX]] : tensor<2x4x8x1xf32> -> tensor<2x4x8x6xf32>
// CHECK-NEXT:    %[[EXP:.*]] = prim.map(%[[MASKED]], %[[MAXB]])
// CHECK:         %[[SUM:.*]] = prim.reduce add %[[EXP]] axes [3] keepdim init 0.0 : tensor<2x4x8x6xf32> -> tensor<2x4x8x1xf32>
// CHECK-NEXT:    %[[SUMB:.*]] = prim.broadcast %[[SUM]] : tensor<2x4x8x1xf32> -> tensor<2x4x8x6xf32>
// CHECK-NEXT:    %[[P:.*]] = prim.map(%[[EXP]], %[[SUMB]]) : (tensor<2x4x8x6xf32>, tensor<2x4x8x6xf32>) -> tensor<2x4x8x6xf32> {
// CHECK:         %[[P16:.*]] = prim.map(%[[P]]) : (tensor<2x4x8x6xf32>) -> tensor<2x4x8x6xbf16> {
// CHECK-NEXT:    ^bb0(%[[PE:.*]]: f32):
// CHECK-NEXT:      %[[PR:.*]] = arith.truncf %[[PE]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[PR]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[PW:.*]] = prim.map(%[[P16]]) : (tensor<2x4x8x6xbf16>) -> tensor<2x4x8x6xf32> {
// CHECK:         %[[VW:.*]] = prim.map(%[[V]]) : (tensor<2x4x6x8xbf16>) -> tensor<2x4x6x8xf32> {
// CHECK:         %[[O:.*]] = prim.contract %[[PW]], %[[VW]] : tensor<2x4x8x6xf32>, tensor<2x4x6x8xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT:    %[[OUT:.*]] = prim.map(%[[O]]) : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xbf16> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[B]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[R]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[OUT]]
func.func @causal_bf16(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x6x16xbf16>, %v: tensor<2x4x6x8xbf16>) -> tensor<2x4x8x8xbf16> {
  %0 = torch.sdpa %q, %k, %v causal scale 0.25 : tensor<2x4x8x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x6x8xbf16> -> tensor<2x4x8x8xbf16>
  func.return %0 : tensor<2x4x8x8xbf16>
}

// -----

// A boolean mask keeps the scores where it is true, -inf elsewhere; it is broadcast to the
// scores' shape. With a mask the softmax is torch's safe one: a row whose every key is
// masked (its max -inf) gives zeros.

// CHECK-LABEL: func.func @bool_mask(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x8x16xf32>, %[[K:.*]]: tensor<2x6x16xf32>, %[[M:.*]]: tensor<8x6xi1>)
// CHECK-NEXT:    %[[KT:.*]] = prim.permute %[[K]] [0, 2, 1] : tensor<2x6x16xf32> -> tensor<2x16x6xf32>
// CHECK-NEXT:    %[[S:.*]] = prim.contract %[[Q]], %[[KT]] : tensor<2x8x16xf32>, tensor<2x16x6xf32> -> tensor<2x8x6xf32>
// CHECK-NEXT:    %[[MB:.*]] = prim.broadcast %[[M]] : tensor<8x6xi1> -> tensor<2x8x6xi1>
// CHECK-NEXT:    %[[MASKED:.*]] = prim.map(%[[S]], %[[MB]]) : (tensor<2x8x6xf32>, tensor<2x8x6xi1>) -> tensor<2x8x6xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[KEEP:.*]]: i1):
// CHECK-NEXT:      %[[SCALE:.*]] = arith.constant 1.000000e-01 : f32
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[A]], %[[SCALE]] : f32
// CHECK-NEXT:      %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      %[[SEL:.*]] = arith.select %[[KEEP]], %[[SCALED]], %[[NEG_INF]] : f32
// CHECK-NEXT:      prim.yield %[[SEL]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[MAX:.*]] = prim.reduce max %[[MASKED]] axes [2] keepdim
// CHECK-NEXT:    %[[MAXB:.*]] = prim.broadcast %[[MAX]]
// CHECK-NEXT:    %[[EXP:.*]] = prim.map(%[[MASKED]], %[[MAXB]])
// CHECK:         %[[SUM:.*]] = prim.reduce add %[[EXP]]
// CHECK-NEXT:    %[[SUMB:.*]] = prim.broadcast %[[SUM]]
// CHECK-NEXT:    %[[P:.*]] = prim.map(%[[EXP]], %[[SUMB]], %[[MAXB]]) : (tensor<2x8x6xf32>, tensor<2x8x6xf32>, tensor<2x8x6xf32>) -> tensor<2x8x6xf32> {
// CHECK-NEXT:    ^bb0(%[[E:.*]]: f32, %[[L:.*]]: f32, %[[MV:.*]]: f32):
// CHECK-NEXT:      %[[NO_MAX:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      %[[WHOLE:.*]] = arith.cmpf oeq, %[[MV]], %[[NO_MAX]] : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[E]], %[[L]] : f32
// CHECK-NEXT:      %[[PV:.*]] = arith.select %[[WHOLE]], %[[ZERO]], %[[Q]] : f32
// CHECK-NEXT:      prim.yield %[[PV]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[O:.*]] = prim.contract %[[P]], %[[K]] : tensor<2x8x6xf32>, tensor<2x6x16xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT:    func.return %[[O]]
func.func @bool_mask(%q: tensor<2x8x16xf32>, %k: tensor<2x6x16xf32>, %m: tensor<8x6xi1>) -> tensor<2x8x16xf32> {
  %0 = torch.sdpa %q, %k, %k mask %m scale 0.1 : tensor<2x8x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> mask tensor<8x6xi1> -> tensor<2x8x16xf32>
  func.return %0 : tensor<2x8x16xf32>
}

// -----

// A float mask is added to the scaled scores (in f32 for a bf16 mask).

// CHECK-LABEL: func.func @additive_mask_bf16(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x8x16xbf16>, %[[K:.*]]: tensor<2x6x16xbf16>, %[[M:.*]]: tensor<2x1x6xbf16>)
// CHECK:         %[[S:.*]] = prim.contract
// CHECK-NEXT:    %[[MB:.*]] = prim.broadcast %[[M]] : tensor<2x1x6xbf16> -> tensor<2x8x6xbf16>
// CHECK-NEXT:    %[[MASKED:.*]] = prim.map(%[[S]], %[[MB]]) : (tensor<2x8x6xf32>, tensor<2x8x6xbf16>) -> tensor<2x8x6xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: bf16):
// CHECK-NEXT:      %[[BW:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT:      %[[SCALE:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[A]], %[[SCALE]] : f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[SCALED]], %[[BW]] : f32
// CHECK-NEXT:      prim.yield %[[SUM]] : f32
// CHECK-NEXT:    }
func.func @additive_mask_bf16(%q: tensor<2x8x16xbf16>, %k: tensor<2x6x16xbf16>, %m: tensor<2x1x6xbf16>) -> tensor<2x8x16xbf16> {
  %0 = torch.sdpa %q, %k, %k mask %m scale 0.25 : tensor<2x8x16xbf16>, tensor<2x6x16xbf16>, tensor<2x6x16xbf16> mask tensor<2x1x6xbf16> -> tensor<2x8x16xbf16>
  func.return %0 : tensor<2x8x16xbf16>
}
