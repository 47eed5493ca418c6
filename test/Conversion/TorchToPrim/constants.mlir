// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// A splat constant is a prim.map without inputs yielding an arith.constant (it fuses); any
// other constant is a prim.constant.

// CHECK-LABEL: func.func @constants(
// CHECK-NEXT:    %[[SPLAT:.*]] = prim.map() : () -> tensor<4x4xbf16> {
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK-NEXT:      prim.yield %[[Z]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[DENSE:.*]] = prim.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK-NEXT:    %[[INF:.*]] = prim.map() : () -> tensor<f32> {
// CHECK-NEXT:      %[[C:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      prim.yield %[[C]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[BOOLS:.*]] = prim.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    %[[TRUE:.*]] = prim.map() : () -> tensor<2x2xi1> {
// CHECK-NEXT:      %[[T:.*]] = arith.constant true
// CHECK-NEXT:      prim.yield %[[T]] : i1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[SPLAT]], %[[DENSE]], %[[INF]], %[[BOOLS]], %[[TRUE]]
func.func @constants() -> (tensor<4x4xbf16>, tensor<3xi64>, tensor<f32>, tensor<2xi1>, tensor<2x2xi1>) {
  %0 = torch.constant dense<0.0> : tensor<4x4xbf16>
  %1 = torch.constant dense<[1, 2, 3]> : tensor<3xi64>
  %2 = torch.constant dense<0xFF800000> : tensor<f32>
  %3 = torch.constant dense<[true, false]> : tensor<2xi1>
  %4 = torch.constant dense<true> : tensor<2x2xi1>
  func.return %0, %1, %2, %3, %4 : tensor<4x4xbf16>, tensor<3xi64>, tensor<f32>, tensor<2xi1>, tensor<2x2xi1>
}

// -----

// Used by an elementwise op, a splat folds into the body (and the splat itself goes away); a
// non-splat constant is an operand.

// CHECK-LABEL: func.func @constant_operands(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[DENSE:.*]] = prim.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[MUL:.*]] = prim.map(%[[X]]) : (tensor<3xf32>) -> tensor<3xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A]], %[[TWO]] : f32
// CHECK-NEXT:      prim.yield %[[P]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Y:.*]] = prim.map(%[[MUL]], %[[DENSE]]) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[B]], %[[C]] : f32
// CHECK-NEXT:      prim.yield %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]]
func.func @constant_operands(%x: tensor<3xf32>) -> tensor<3xf32> {
  %two = torch.constant dense<2.0> : tensor<3xf32>
  %dense = torch.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = torch.mul %x, %two : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %1 = torch.add %0, %dense : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  func.return %1 : tensor<3xf32>
}

// -----

// Positions along a dim (an index lookup's) are a prim.iota, not a literal of their values.

// CHECK-LABEL: func.func @positions(
// CHECK-NEXT:    %[[P:.*]] = prim.iota dim 0 : tensor<2112x1xi64>
// CHECK-NEXT:    func.return %[[P]]
func.func @positions() -> tensor<2112x1xi64> {
  %0 = torch.iota dim 0 : tensor<2112x1xi64>
  func.return %0 : tensor<2112x1xi64>
}
