// RUN: emmy-opt %s --lower-fused-to-loop | filecheck %s --check-prefix=DROP
// RUN: emmy-opt %s --lower-fused-to-loop=keep-unit-dims=true | filecheck %s --check-prefix=KEEP
// RUN: emmy-opt %s -p 'lower-fused-to-loop{keep-unit-dims=true},canonicalize' | filecheck %s --check-prefix=DROP

// By default a size-1 dim is indexed at 0 without a loop; keep-unit-dims gives it a
// one-trip loop, which canonicalize folds away again.

// DROP-LABEL: loop.kernel @k_relu(
// DROP:         %[[C0:.*]] = arith.constant 0 : index
// DROP-NOT:     loop.for {{.*}} in 0 to 1 {
// DROP:         loop.for %[[J:.*]] in 0 to 5 {
// DROP:           loop.store %{{.*}}, %{{.*}}[%[[C0]], %[[J]]] : memref<1x5xf32>

// KEEP-LABEL: loop.kernel @k_relu(
// KEEP:         loop.for %[[I:.*]] in 0 to 1 {
// KEEP-NEXT:      loop.for %[[J:.*]] in 0 to 5 {
// KEEP:             loop.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]] : memref<1x5xf32>

func.func @forward(%x: tensor<1x5xf32>) -> tensor<1x5xf32> {
  %y = fused.kernel @k_relu(%x) : (tensor<1x5xf32>) -> tensor<1x5xf32> {
  ^bb0(%a: tensor<1x5xf32>):
    %r = prim.map(%a) : (tensor<1x5xf32>) -> tensor<1x5xf32> {
    ^bb0(%v: f32):
      %zero = arith.constant 0.0 : f32
      %m = arith.maximumf %v, %zero : f32
      prim.yield %m : f32
    }
    fused.yield %r : tensor<1x5xf32>
  }
  func.return %y : tensor<1x5xf32>
}
