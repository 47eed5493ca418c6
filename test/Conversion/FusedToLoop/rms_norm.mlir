// RUN: emmy-opt %s --lower-fused-to-loop | filecheck %s

// An RMSNorm kernel is one loop.kernel: per row, a reduction loop over the columns, then
// the row's scale computed once, then a parallel loop over the columns.

// CHECK-LABEL: loop.kernel @k_rms_norm(
// CHECK-SAME:    %{{.*}}: memref<32x2048xf32>, %{{.*}}: memref<2048xf32>, %[[OUT:.*]]: memref<32x2048xf32>) {
// CHECK-NEXT:    %[[N:.*]] = arith.constant 2.048000e+03 : f32
// CHECK-NEXT:    %[[EPS:.*]] = arith.constant 1.000000e-06 : f32
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 32 {
// CHECK-NEXT:      %[[SS:.*]] = loop.for %[[R:.*]] in 0 to 2048 reduce add init 0.0 : f32 {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[X:[a-z0-9_]+]][%[[I]], %[[R]]] : memref<32x2048xf32>
// CHECK-NEXT:        %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT:        loop.yield %[[SQ]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[SS]], %[[N]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.addf %[[MEAN]], %[[EPS]] : f32
// CHECK-NEXT:      %[[RS:.*]] = math.rsqrt %[[T]] : f32
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 2048 {
// CHECK-NEXT:        %[[XV:.*]] = loop.load %[[X]][%[[I]], %[[J]]] : memref<32x2048xf32>
// CHECK-NEXT:        %[[WV:.*]] = loop.load %{{.*}}[%[[J]]] : memref<2048xf32>
// CHECK-NEXT:        %[[U:.*]] = arith.mulf %[[XV]], %[[RS]] : f32
// CHECK-NEXT:        %[[O:.*]] = arith.mulf %[[U]], %[[WV]] : f32
// CHECK-NEXT:        loop.store %[[O]], %[[OUT]][%[[I]], %[[J]]] : memref<32x2048xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NOT:   loop.kernel
// CHECK-LABEL: func.func @forward(%{{.*}}: memref<32x2048xf32>, %{{.*}}: memref<2048xf32>) -> memref<32x2048xf32> {
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<32x2048xf32>
// CHECK-NEXT:    loop.launch @k_rms_norm(%{{.*}}, %{{.*}}, %[[Y]]) : memref<32x2048xf32>, memref<2048xf32>, memref<32x2048xf32>
// CHECK-NEXT:    func.return %[[Y]] : memref<32x2048xf32>
// CHECK-NOT:   fused.
// CHECK-NOT:   prim.

func.func @forward(%x: tensor<32x2048xf32>, %w: tensor<2048xf32>) -> tensor<32x2048xf32> {
  %y = fused.kernel @k_rms_norm(%x, %w) : (tensor<32x2048xf32>, tensor<2048xf32>) -> tensor<32x2048xf32> {
  ^bb0(%a: tensor<32x2048xf32>, %b: tensor<2048xf32>):
    %sq = prim.map(%a) : (tensor<32x2048xf32>) -> tensor<32x2048xf32> {
    ^bb0(%v: f32):
      %m = arith.mulf %v, %v : f32
      prim.yield %m : f32
    }
    %ss = prim.reduce add %sq axes [1] keepdim init 0.0 : tensor<32x2048xf32> -> tensor<32x1xf32>
    %ssb = prim.broadcast %ss : tensor<32x1xf32> -> tensor<32x2048xf32>
    %wb = prim.broadcast %b : tensor<2048xf32> -> tensor<32x2048xf32>
    %r = prim.map(%a, %ssb, %wb) : (tensor<32x2048xf32>, tensor<32x2048xf32>, tensor<32x2048xf32>) -> tensor<32x2048xf32> {
    ^bb0(%v: f32, %s: f32, %g: f32):
      %n = arith.constant 2048.0 : f32
      %eps = arith.constant 1.0e-6 : f32
      %mean = arith.divf %s, %n : f32
      %t = arith.addf %mean, %eps : f32
      %rs = math.rsqrt %t : f32
      %u = arith.mulf %v, %rs : f32
      %o = arith.mulf %u, %g : f32
      prim.yield %o : f32
    }
    fused.yield %r : tensor<32x2048xf32>
  }
  func.return %y : tensor<32x2048xf32>
}
