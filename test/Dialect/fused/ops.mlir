// RUN: emmy-opt %s | emmy-opt | filecheck %s
// RUN: emmy-opt %s --print-op-generic | emmy-opt | filecheck %s

// CHECK-LABEL: func.func @one_result(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<32x64xf32>, %[[W:[a-z0-9_]+]]: tensor<64xf32>) -> tensor<32x64xf32> {
// CHECK-NEXT:    %[[Y:.*]] = fused.kernel @k_scale(%[[X]], %[[W]]) : (tensor<32x64xf32>, tensor<64xf32>) -> tensor<32x64xf32> {
// CHECK-NEXT:    ^bb0(%[[A:[a-z0-9_]+]]: tensor<32x64xf32>, %[[B:[a-z0-9_]+]]: tensor<64xf32>):
// CHECK-NEXT:      %[[WB:.*]] = prim.broadcast %[[B]] : tensor<64xf32> -> tensor<32x64xf32>
// CHECK-NEXT:      %[[R:.*]] = prim.map(%[[A]], %[[WB]]) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32> {
// CHECK-NEXT:      ^bb0(%[[U:[a-z0-9_]+]]: f32, %[[V:[a-z0-9_]+]]: f32):
// CHECK-NEXT:        %[[M:.*]] = arith.mulf %[[U]], %[[V]] : f32
// CHECK-NEXT:        prim.yield %[[M]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      fused.yield %[[R]] : tensor<32x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<32x64xf32>
func.func @one_result(%x: tensor<32x64xf32>, %w: tensor<64xf32>) -> tensor<32x64xf32> {
  %y = fused.kernel @k_scale(%x, %w) : (tensor<32x64xf32>, tensor<64xf32>) -> tensor<32x64xf32> {
  ^bb0(%a: tensor<32x64xf32>, %b: tensor<64xf32>):
    %wb = prim.broadcast %b : tensor<64xf32> -> tensor<32x64xf32>
    %r = prim.map(%a, %wb) : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32> {
    ^bb0(%u: f32, %v: f32):
      %m = arith.mulf %u, %v : f32
      prim.yield %m : f32
    }
    fused.yield %r : tensor<32x64xf32>
  }
  func.return %y : tensor<32x64xf32>
}

// A kernel may yield an intermediate and its input unchanged, each as its own result.

// CHECK-LABEL: func.func @several_results(
// CHECK-SAME:    %[[X:.*]]: tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8xbf16>, tensor<8x16xbf16>) {
// CHECK-NEXT:    %[[R0:[a-z0-9_]+]], %[[R1:[a-z0-9_]+]], %[[R2:[a-z0-9_]+]] = fused.kernel @k_stats(%[[X]]) : (tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8xbf16>, tensor<8x16xbf16>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<8x16xbf16>):
// CHECK-NEXT:      %[[MAX:.*]] = prim.reduce max %[[A]] axes [1] init -inf : tensor<8x16xbf16> -> tensor<8xbf16>
// CHECK-NEXT:      %[[NEG:.*]] = prim.map(%[[A]]) : (tensor<8x16xbf16>) -> tensor<8x16xbf16> {
// CHECK:           }
// CHECK-NEXT:      fused.yield %[[NEG]], %[[MAX]], %[[A]] : tensor<8x16xbf16>, tensor<8xbf16>, tensor<8x16xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R0]], %[[R1]], %[[R2]] : tensor<8x16xbf16>, tensor<8xbf16>, tensor<8x16xbf16>
func.func @several_results(%x: tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8xbf16>, tensor<8x16xbf16>) {
  %r:3 = fused.kernel @k_stats(%x) : (tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8xbf16>, tensor<8x16xbf16>) {
  ^bb0(%a: tensor<8x16xbf16>):
    %max = prim.reduce max %a axes [1] init -inf : tensor<8x16xbf16> -> tensor<8xbf16>
    %neg = prim.map(%a) : (tensor<8x16xbf16>) -> tensor<8x16xbf16> {
    ^bb0(%v: bf16):
      %n = arith.negf %v : bf16
      prim.yield %n : bf16
    }
    fused.yield %neg, %max, %a : tensor<8x16xbf16>, tensor<8xbf16>, tensor<8x16xbf16>
  }
  func.return %r#0, %r#1, %r#2 : tensor<8x16xbf16>, tensor<8xbf16>, tensor<8x16xbf16>
}

// One kernel's results feed the next; the host function only orders the launches.

// CHECK-LABEL: func.func @chained(
// CHECK-SAME:    %[[X:.*]]: tensor<4x4xf16>) -> tensor<f16> {
// CHECK-NEXT:    %[[S:.*]] = fused.kernel @k_row_sum(%[[X]]) : (tensor<4x4xf16>) -> tensor<4x1xf16> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4x4xf16>):
// CHECK-NEXT:      %[[R:.*]] = prim.reduce add %[[A]] axes [1] keepdim init 0.0 : tensor<4x4xf16> -> tensor<4x1xf16>
// CHECK-NEXT:      fused.yield %[[R]] : tensor<4x1xf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = fused.kernel @k_total(%[[S]]) : (tensor<4x1xf16>) -> tensor<f16> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: tensor<4x1xf16>):
// CHECK-NEXT:      %[[Q:.*]] = prim.reduce add %[[B]] axes [0, 1] init 0.0 : tensor<4x1xf16> -> tensor<f16>
// CHECK-NEXT:      fused.yield %[[Q]] : tensor<f16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[T]] : tensor<f16>
func.func @chained(%x: tensor<4x4xf16>) -> tensor<f16> {
  %s = fused.kernel @k_row_sum(%x) : (tensor<4x4xf16>) -> tensor<4x1xf16> {
  ^bb0(%a: tensor<4x4xf16>):
    %r = prim.reduce add %a axes [1] keepdim init 0.0 : tensor<4x4xf16> -> tensor<4x1xf16>
    fused.yield %r : tensor<4x1xf16>
  }
  %t = fused.kernel @k_total(%s) : (tensor<4x1xf16>) -> tensor<f16> {
  ^bb0(%b: tensor<4x1xf16>):
    %q = prim.reduce add %b axes [0, 1] init 0.0 : tensor<4x1xf16> -> tensor<f16>
    fused.yield %q : tensor<f16>
  }
  func.return %t : tensor<f16>
}

// A kernel without operands computes its result from nothing but its body.

// CHECK-LABEL: func.func @no_operands() -> tensor<2x2xi32> {
// CHECK-NEXT:    %[[Y:.*]] = fused.kernel @"k fill"() : () -> tensor<2x2xi32> {
// CHECK-NEXT:      %[[F:.*]] = prim.map() : () -> tensor<2x2xi32> {
// CHECK-NEXT:        %[[C:.*]] = arith.constant 1 : i32
// CHECK-NEXT:        prim.yield %[[C]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      fused.yield %[[F]] : tensor<2x2xi32>
// CHECK-NEXT:    }
func.func @no_operands() -> tensor<2x2xi32> {
  %y = fused.kernel @"k fill"() : () -> tensor<2x2xi32> {
    %f = prim.map() : () -> tensor<2x2xi32> {
      %c = arith.constant 1 : i32
      prim.yield %c : i32
    }
    fused.yield %f : tensor<2x2xi32>
  }
  func.return %y : tensor<2x2xi32>
}

// Discardable attributes survive a round trip, written before the types.

// CHECK-LABEL: func.func @attributes(
// CHECK-NEXT:    %{{.*}} = fused.kernel @k_copy(%{{.*}}) {tag = "a"} : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4xf32>):
// CHECK-NEXT:      fused.yield {tag} %[[A]] : tensor<4xf32>
// CHECK-NEXT:    }
func.func @attributes(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fused.kernel @k_copy(%x) {tag = "a"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    fused.yield {tag} %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
