// RUN: emmy-opt %s --split-input-file --lower-fused-to-loop | filecheck %s

// A reduction over every axis: nested reduction loops, the inner one starting from the
// combiner's identity, the outer one from the op's init; a rank-0 output needs no loop.

// CHECK-LABEL: loop.kernel @k_sum(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<4x6xf32>, %[[OUT:[a-z0-9_]+]]: memref<f32>) {
// CHECK-NEXT:    %[[S:.*]] = loop.for %[[A:.*]] in 0 to 4 reduce add init 1.5 : f32 {
// CHECK-NEXT:      %[[T:.*]] = loop.for %[[B:.*]] in 0 to 6 reduce add init 0.0 : f32 {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[X]][%[[A]], %[[B]]] : memref<4x6xf32>
// CHECK-NEXT:        loop.yield %[[V]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.yield %[[T]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.store %[[S]], %[[OUT]][] : memref<f32>
// CHECK-NEXT:  }

func.func @forward(%x: tensor<4x6xf32>) -> tensor<f32> {
  %y = fused.kernel @k_sum(%x) : (tensor<4x6xf32>) -> tensor<f32> {
  ^bb0(%a: tensor<4x6xf32>):
    %s = prim.reduce add %a axes [0, 1] init 1.5 : tensor<4x6xf32> -> tensor<f32>
    fused.yield %s : tensor<f32>
  }
  func.return %y : tensor<f32>
}

// -----

// A reduction over the first dim: the reduction loop sits inside the column loop.

// CHECK-LABEL: loop.kernel @k_col_max(
// CHECK:         loop.for %[[J:.*]] in 0 to 6 {
// CHECK-NEXT:      %[[M:.*]] = loop.for %[[R:.*]] in 0 to 4 reduce max init -inf : f32 {
// CHECK-NEXT:        loop.load %{{.*}}[%[[R]], %[[J]]] : memref<4x6xf32>
// CHECK:           loop.store %[[M]], %{{.*}}[%[[J]]] : memref<6xf32>

func.func @forward(%x: tensor<4x6xf32>) -> tensor<6xf32> {
  %y = fused.kernel @k_col_max(%x) : (tensor<4x6xf32>) -> tensor<6xf32> {
  ^bb0(%a: tensor<4x6xf32>):
    %s = prim.reduce max %a axes [0] init -inf : tensor<4x6xf32> -> tensor<6xf32>
    fused.yield %s : tensor<6xf32>
  }
  func.return %y : tensor<6xf32>
}

// -----

// Reducing a size-1 axis needs no loop: the init (not the identity here) is combined once.

// CHECK-LABEL: loop.kernel @k_unit_reduce(
// CHECK:         %[[INIT:.*]] = arith.constant 2.000000e+00 : f32
// CHECK:         loop.for %[[I:.*]] in 0 to 3 {
// CHECK-NEXT:      %[[V:.*]] = loop.load
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[INIT]], %[[V]] : f32
// CHECK-NEXT:      loop.store %[[P]]
// CHECK-NOT:     reduce mul

func.func @forward(%x: tensor<3x1xf32>) -> tensor<3xf32> {
  %y = fused.kernel @k_unit_reduce(%x) : (tensor<3x1xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3x1xf32>):
    %s = prim.reduce mul %a axes [1] init 2.0 : tensor<3x1xf32> -> tensor<3xf32>
    fused.yield %s : tensor<3xf32>
  }
  func.return %y : tensor<3xf32>
}
