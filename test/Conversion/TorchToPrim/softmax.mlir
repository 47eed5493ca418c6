// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// softmax along any dim: the max (keepdim, exact in bf16), exp(x - max) in f32, its sum
// (keepdim), and exp / sum rounded once; the row statistics are broadcast back.

// CHECK-LABEL: func.func @softmax_middle_dim_bf16(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x4xbf16>)
// CHECK-NEXT:    %[[MAX:.*]] = prim.reduce max %[[X]] axes [1] keepdim init -inf : tensor<2x8x4xbf16> -> tensor<2x1x4xbf16>
// CHECK-NEXT:    %[[MAXB:.*]] = prim.broadcast %[[MAX]] : tensor<2x1x4xbf16> -> tensor<2x8x4xbf16>
// CHECK-NEXT:    %[[EXP:.*]] = prim.map(%[[X]], %[[MAXB]]) : (tensor<2x8x4xbf16>, tensor<2x8x4xbf16>) -> tensor<2x8x4xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[M:.*]]: bf16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[MW:.*]] = arith.extf %[[M]] : bf16 to f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[AW]], %[[MW]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:      prim.yield %[[E]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUM:.*]] = prim.reduce add %[[EXP]] axes [1] keepdim init 0.0 : tensor<2x8x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT:    %[[SUMB:.*]] = prim.broadcast %[[SUM]] : tensor<2x1x4xf32> -> tensor<2x8x4xf32>
// CHECK-NEXT:    %[[Y:.*]] = prim.map(%[[EXP]], %[[SUMB]]) : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xbf16> {
// CHECK-NEXT:    ^bb0(%[[E:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[E]], %[[S]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[Q]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[R]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
func.func @softmax_middle_dim_bf16(%x: tensor<2x8x4xbf16>) -> tensor<2x8x4xbf16> {
  %0 = torch.softmax %x dim 1 : tensor<2x8x4xbf16> -> tensor<2x8x4xbf16>
  func.return %0 : tensor<2x8x4xbf16>
}

// -----

// log_softmax: x - max - log(sum(exp(x - max))).

// CHECK-LABEL: func.func @log_softmax(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT:    %[[MAX:.*]] = prim.reduce max %[[X]] axes [1] keepdim init -inf : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[MAXB:.*]] = prim.broadcast %[[MAX]] : tensor<2x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[EXP:.*]] = prim.map(%[[X]], %[[MAXB]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.subf
// CHECK-NEXT:      math.exp
// CHECK-NEXT:      prim.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUM:.*]] = prim.reduce add %[[EXP]] axes [1] keepdim init 0.0 : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[SUMB:.*]] = prim.broadcast %[[SUM]] : tensor<2x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = prim.map(%[[X]], %[[MAXB]], %[[SUMB]]) : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[A]], %[[M]] : f32
// CHECK-NEXT:      %[[L:.*]] = math.log %[[S]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.subf %[[D]], %[[L]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
func.func @log_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = torch.log_softmax %x dim 1 : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}
