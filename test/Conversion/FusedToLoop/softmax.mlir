// RUN: emmy-opt %s --lower-fused-to-loop | filecheck %s

// Softmax over the last dim of a 1x4x8 tensor: the size-1 batch dim gets no loop; per row,
// the max reduction, then the sum of exponentials reading that max, then the parallel loop.
// The max is computed once per row although both the sum and the output need it.

// CHECK-LABEL: loop.kernel @k_softmax(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<1x4x8xf32>, %[[OUT:[a-z0-9_]+]]: memref<1x4x8xf32>) {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 4 {
// CHECK-NEXT:      %[[MAX:.*]] = loop.for %[[R:.*]] in 0 to 8 reduce max init -inf : f32 {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[X]][%[[C0]], %[[I]], %[[R]]] : memref<1x4x8xf32>
// CHECK-NEXT:        loop.yield %[[V]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[SUM:.*]] = loop.for %{{.*}} in 0 to 8 reduce add init 0.0 : f32 {
// CHECK-NEXT:        loop.load
// CHECK-NEXT:        arith.subf %{{.*}}, %[[MAX]] : f32
// CHECK-NEXT:        math.exp
// CHECK-NEXT:        loop.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 8 {
// CHECK-NEXT:        loop.load %[[X]][%[[C0]], %[[I]], %[[J]]]
// CHECK-NEXT:        arith.subf %{{.*}}, %[[MAX]] : f32
// CHECK-NEXT:        %[[E:.*]] = math.exp
// CHECK-NEXT:        %[[Q:.*]] = arith.divf %[[E]], %[[SUM]] : f32
// CHECK-NEXT:        loop.store %[[Q]], %[[OUT]][%[[C0]], %[[I]], %[[J]]] : memref<1x4x8xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }

func.func @forward(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %y = fused.kernel @k_softmax(%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%a: tensor<1x4x8xf32>):
    %m = prim.reduce max %a axes [2] keepdim init -inf : tensor<1x4x8xf32> -> tensor<1x4x1xf32>
    %mb = prim.broadcast %m : tensor<1x4x1xf32> -> tensor<1x4x8xf32>
    %e = prim.map(%a, %mb) : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    ^bb0(%v: f32, %w: f32):
      %d = arith.subf %v, %w : f32
      %ex = math.exp %d : f32
      prim.yield %ex : f32
    }
    %s = prim.reduce add %e axes [2] keepdim init 0.0 : tensor<1x4x8xf32> -> tensor<1x4x1xf32>
    %sb = prim.broadcast %s : tensor<1x4x1xf32> -> tensor<1x4x8xf32>
    %r = prim.map(%e, %sb) : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
    ^bb0(%v: f32, %w: f32):
      %q = arith.divf %v, %w : f32
      prim.yield %q : f32
    }
    fused.yield %r : tensor<1x4x8xf32>
  }
  func.return %y : tensor<1x4x8xf32>
}
