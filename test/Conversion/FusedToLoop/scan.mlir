// RUN: emmy-opt %s --lower-fused-to-loop | filecheck %s

// A scan is, for each output element, a reduction loop over the whole scanned dim whose
// contributions past the element's position are the combiner's identity (1.0 for mul);
// the scanned input (here an exp fused into it) is read along the dim.

// CHECK-LABEL: loop.kernel @k_cumprod(
// CHECK-SAME:    %[[A:[a-z0-9_]+]]: memref<6x4xf32>, %[[OUT:[a-z0-9_]+]]: memref<6x4xf32>) {
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    loop.for %[[I0:.*]] in 0 to 6 {
// CHECK-NEXT:      loop.for %[[I1:.*]] in 0 to 4 {
// CHECK-NEXT:        %[[P:.*]] = loop.for %[[R:.*]] in 0 to 6 reduce mul init 1.0 : f32 {
// CHECK-NEXT:          %[[V:.*]] = loop.load %[[A]][%[[R]], %[[I1]]] : memref<6x4xf32>
// CHECK-NEXT:          %[[E:.*]] = math.exp %[[V]] : f32
// CHECK-NEXT:          %[[IN:.*]] = arith.cmpi ule, %[[R]], %[[I0]] : index
// CHECK-NEXT:          %[[C:.*]] = arith.select %[[IN]], %[[E]], %[[ONE]] : f32
// CHECK-NEXT:          loop.yield %[[C]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.store %[[P]], %[[OUT]][%[[I0]], %[[I1]]] : memref<6x4xf32>

func.func @forward(%x: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %y = fused.kernel @k_cumprod(%x) : (tensor<6x4xf32>) -> tensor<6x4xf32> {
  ^bb0(%a: tensor<6x4xf32>):
    %e = prim.map(%a) : (tensor<6x4xf32>) -> tensor<6x4xf32> {
    ^bb0(%v: f32):
      %t = math.exp %v : f32
      prim.yield %t : f32
    }
    %s = prim.scan mul %e dim 0 : tensor<6x4xf32> -> tensor<6x4xf32>
    fused.yield %s : tensor<6x4xf32>
  }
  func.return %y : tensor<6x4xf32>
}
