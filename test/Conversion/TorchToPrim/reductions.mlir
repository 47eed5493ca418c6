// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// sum, mean, amax and amin become prim.reduce over the same dims, keeping them if the op
// does. 16-bit sums are widened to f32 by a map, added in f32 and rounded once; mean
// divides the sum by the number of reduced elements.

// CHECK-LABEL: func.func @sum_mean(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x16xf32>, %[[H:.*]]: tensor<2x8xbf16>, %[[I:.*]]: tensor<4x4xi64>)
// CHECK-NEXT:    %[[SUM:.*]] = prim.reduce add %[[X]] axes [2] init 0.0 : tensor<2x8x16xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[TOTAL:.*]] = prim.reduce add %[[X]] axes [1, 2] keepdim init 0.0 : tensor<2x8x16xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = prim.map(%[[TOTAL]]) : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32> {
// CHECK-NEXT:    ^bb0(%[[S:.*]]: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.constant 1.280000e+02 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:      prim.yield %[[M]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[WIDE:.*]] = prim.map(%[[H]]) : (tensor<2x8xbf16>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      prim.yield %[[AW]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[WSUM:.*]] = prim.reduce add %[[WIDE]] axes [1] init 0.0 : tensor<2x8xf32> -> tensor<2xf32>
// CHECK-NEXT:    %[[HSUM:.*]] = prim.map(%[[WSUM]]) : (tensor<2xf32>) -> tensor<2xbf16> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f32):
// CHECK-NEXT:      %[[BR:.*]] = arith.truncf %[[B]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[BR]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[ISUM:.*]] = prim.reduce add %[[I]] axes [0, 1] init 0 : tensor<4x4xi64> -> tensor<i64>
// CHECK-NEXT:    func.return %[[SUM]], %[[MEAN]], %[[HSUM]], %[[ISUM]]
func.func @sum_mean(%x: tensor<2x8x16xf32>, %h: tensor<2x8xbf16>, %i: tensor<4x4xi64>) -> (tensor<2x8xf32>, tensor<2x1x1xf32>, tensor<2xbf16>, tensor<i64>) {
  %0 = torch.sum %x dims [2] : tensor<2x8x16xf32> -> tensor<2x8xf32>
  %1 = torch.mean %x dims [1, 2] keepdim : tensor<2x8x16xf32> -> tensor<2x1x1xf32>
  %2 = torch.sum %h dims [1] : tensor<2x8xbf16> -> tensor<2xbf16>
  %3 = torch.sum %i dims [0, 1] : tensor<4x4xi64> -> tensor<i64>
  func.return %0, %1, %2, %3 : tensor<2x8xf32>, tensor<2x1x1xf32>, tensor<2xbf16>, tensor<i64>
}

// -----

// A 16-bit mean also sums in f32 and rounds once, after the division.

// CHECK-LABEL: func.func @mean_f16(
// CHECK:         %[[WSUM:.*]] = prim.reduce add %{{.*}} axes [0] init 0.0 : tensor<4x8xf32> -> tensor<8xf32>
// CHECK-NEXT:    prim.map(%[[WSUM]]) : (tensor<8xf32>) -> tensor<8xf16> {
// CHECK-NEXT:    ^bb0(%[[S:.*]]: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[M]] : f32 to f16
// CHECK-NEXT:      prim.yield %[[R]] : f16
func.func @mean_f16(%x: tensor<4x8xf16>) -> tensor<8xf16> {
  %0 = torch.mean %x dims [0] : tensor<4x8xf16> -> tensor<8xf16>
  func.return %0 : tensor<8xf16>
}

// -----

// max and min are exact: they reduce in the element type (bf16 too). Bools reduce as 0/1
// integers, which is or / and.

// CHECK-LABEL: func.func @amax_amin(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xbf16>, %[[M:.*]]: tensor<2x8xi1>)
// CHECK-NEXT:    %[[MAX:.*]] = prim.reduce max %[[X]] axes [1] keepdim init -inf : tensor<2x8xbf16> -> tensor<2x1xbf16>
// CHECK-NEXT:    %[[MIN:.*]] = prim.reduce min %[[X]] axes [0] init inf : tensor<2x8xbf16> -> tensor<8xbf16>
// CHECK-NEXT:    %[[INT:.*]] = prim.map(%[[M]]) : (tensor<2x8xi1>) -> tensor<2x8xi32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: i1):
// CHECK-NEXT:      %[[AI:.*]] = arith.extui %[[A]] : i1 to i32
// CHECK-NEXT:      prim.yield %[[AI]] : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[ANY:.*]] = prim.reduce max %[[INT]] axes [1] init -2147483648 : tensor<2x8xi32> -> tensor<2xi32>
// CHECK-NEXT:    %[[BOOL:.*]] = prim.map(%[[ANY]]) : (tensor<2xi32>) -> tensor<2xi1> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: i32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[NZ:.*]] = arith.cmpi ne, %[[B]], %[[ZERO]] : i32
// CHECK-NEXT:      prim.yield %[[NZ]] : i1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[MAX]], %[[MIN]], %[[BOOL]]
func.func @amax_amin(%x: tensor<2x8xbf16>, %m: tensor<2x8xi1>) -> (tensor<2x1xbf16>, tensor<8xbf16>, tensor<2xi1>) {
  %0 = torch.amax %x dims [1] keepdim : tensor<2x8xbf16> -> tensor<2x1xbf16>
  %1 = torch.amin %x dims [0] : tensor<2x8xbf16> -> tensor<8xbf16>
  %2 = torch.amax %m dims [1] : tensor<2x8xi1> -> tensor<2xi1>
  func.return %0, %1, %2 : tensor<2x1xbf16>, tensor<8xbf16>, tensor<2xi1>
}

// -----

// var: the sum (keepdim) broadcast back, the centered squares, their sum (keepdim as the op
// says) divided by N - correction; in f32 for bf16, rounded once.

// CHECK-LABEL: func.func @var(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xbf16>)
// CHECK-NEXT:    %[[W:.*]] = prim.map(%[[X]]) : (tensor<2x8xbf16>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      prim.yield %[[AW]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUM:.*]] = prim.reduce add %[[W]] axes [1] keepdim init 0.0 : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[SUMB:.*]] = prim.broadcast %[[SUM]] : tensor<2x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[SQ:.*]] = prim.map(%[[W]], %[[SUMB]]) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[V]], %[[MEAN]] : f32
// CHECK-NEXT:      %[[D2:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:      prim.yield %[[D2]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SS:.*]] = prim.reduce add %[[SQ]] axes [1] init 0.0 : tensor<2x8xf32> -> tensor<2xf32>
// CHECK-NEXT:    %[[VAR:.*]] = prim.map(%[[SS]]) : (tensor<2xf32>) -> tensor<2xbf16> {
// CHECK-NEXT:    ^bb0(%[[T:.*]]: f32):
// CHECK-NEXT:      %[[DIV:.*]] = arith.constant 7.000000e+00 : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[T]], %[[DIV]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[Q]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[R]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[VAR]]
func.func @var(%x: tensor<2x8xbf16>) -> tensor<2xbf16> {
  %0 = torch.var %x dims [1] correction 1 : tensor<2x8xbf16> -> tensor<2xbf16>
  func.return %0 : tensor<2xbf16>
}

// -----

// The biased variance (correction 0) keeps its dims; a correction at least N divides by 0.

// CHECK-LABEL: func.func @var_keepdim(
// CHECK:         prim.reduce add %{{.*}} axes [0, 1] keepdim init 0.0 : tensor<2x8xf32> -> tensor<1x1xf32>
// CHECK:         arith.constant 1.600000e+01 : f32
// CHECK:         %[[SS:.*]] = prim.reduce add %{{.*}} axes [0, 1] keepdim init 0.0 : tensor<2x8xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    prim.map(%[[SS]]) : (tensor<1x1xf32>) -> tensor<1x1xf32> {
// CHECK-NEXT:    ^bb0(%[[T:.*]]: f32):
// CHECK-NEXT:      %[[DIV:.*]] = arith.constant 1.600000e+01 : f32
// CHECK:         prim.reduce add %{{.*}} axes [1] init 0.0 : tensor<2x8xf32> -> tensor<2xf32>
// CHECK-NEXT:    prim.map
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.constant 0.000000e+00 : f32
func.func @var_keepdim(%x: tensor<2x8xf32>) -> (tensor<1x1xf32>, tensor<2xf32>) {
  %0 = torch.var %x dims [0, 1] keepdim correction 0 : tensor<2x8xf32> -> tensor<1x1xf32>
  %1 = torch.var %x dims [1] correction 9 : tensor<2x8xf32> -> tensor<2xf32>
  func.return %0, %1 : tensor<1x1xf32>, tensor<2xf32>
}
