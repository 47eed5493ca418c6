// RUN: emmy-opt %s -p 'lower-fused-to-loop,canonicalize' | filecheck %s

// A view that splits a dimension (a row of 8 as 2 heads of 4) and one that joins it again
// compose to (j / 4) * 4 + j % 4, which is j: the load reads at the plain index (and
// canonicalize removes the product and quotient nothing uses; xDSL's arith.remui does not
// declare itself free of memory effects, so an unused one stays, which the CUDA compiler
// drops).

// CHECK-LABEL: loop.kernel @k_relu(
// CHECK:         loop.for %[[I:.*]] in 0 to 6 {
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 8 {
// CHECK:             %{{.*}} = loop.load %{{.*}}[%[[I]], %[[J]]] : memref<6x8xf32>
// CHECK-NOT:         arith.{{addi|divui|muli}}
// CHECK:             loop.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]] : memref<6x8xf32>

func.func @forward(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %y = fused.kernel @k_relu(%x) : (tensor<6x8xf32>) -> tensor<6x8xf32> {
  ^bb0(%a: tensor<6x8xf32>):
    %heads = prim.reshape %a : tensor<6x8xf32> -> tensor<6x2x4xf32>
    %rows = prim.reshape %heads : tensor<6x2x4xf32> -> tensor<6x8xf32>
    %r = prim.map(%rows) : (tensor<6x8xf32>) -> tensor<6x8xf32> {
    ^bb0(%v: f32):
      %zero = arith.constant 0.0 : f32
      %m = arith.maximumf %v, %zero : f32
      prim.yield %m : f32
    }
    fused.yield %r : tensor<6x8xf32>
  }
  func.return %y : tensor<6x8xf32>
}
