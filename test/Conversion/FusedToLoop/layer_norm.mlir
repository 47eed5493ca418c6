// RUN: emmy-opt %s --lower-fused-to-loop | filecheck %s

// LayerNorm: per row, the mean's reduction, then the variance's reduction (which reads the
// mean computed once for the row), then the parallel loop over the columns.

// CHECK-LABEL: loop.kernel @k_layer_norm(
// CHECK:         loop.for %[[I:.*]] in 0 to 16 {
// CHECK-NEXT:      %[[SUM:.*]] = loop.for %{{.*}} in 0 to 64 reduce add init 0.0 : f32 {
// CHECK:             loop.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[SUM]], %{{.*}} : f32
// CHECK-NEXT:      %[[SQS:.*]] = loop.for %{{.*}} in 0 to 64 reduce add init 0.0 : f32 {
// CHECK-NEXT:        loop.load
// CHECK-NEXT:        %[[C:.*]] = arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK-NEXT:        %[[C2:.*]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK-NEXT:        loop.yield %[[C2]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[VAR:.*]] = arith.divf %[[SQS]], %{{.*}} : f32
// CHECK-NEXT:      arith.addf %[[VAR]]
// CHECK-NEXT:      %[[RSTD:.*]] = math.rsqrt
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 64 {
// CHECK-NOT:         reduce
// CHECK:             arith.mulf %{{.*}}, %[[RSTD]] : f32
// CHECK:             loop.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]] : memref<16x64xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }

func.func @forward(%x: tensor<16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %y = fused.kernel @k_layer_norm(%x, %w, %b) : (tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<16x64xf32> {
  ^bb0(%xa: tensor<16x64xf32>, %wa: tensor<64xf32>, %ba: tensor<64xf32>):
    %sum = prim.reduce add %xa axes [1] keepdim init 0.0 : tensor<16x64xf32> -> tensor<16x1xf32>
    %mean = prim.map(%sum) : (tensor<16x1xf32>) -> tensor<16x1xf32> {
    ^bb0(%s: f32):
      %n = arith.constant 64.0 : f32
      %m = arith.divf %s, %n : f32
      prim.yield %m : f32
    }
    %meanb = prim.broadcast %mean : tensor<16x1xf32> -> tensor<16x64xf32>
    %xc = prim.map(%xa, %meanb) : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32> {
    ^bb0(%v: f32, %m: f32):
      %c = arith.subf %v, %m : f32
      prim.yield %c : f32
    }
    %sq = prim.map(%xc) : (tensor<16x64xf32>) -> tensor<16x64xf32> {
    ^bb0(%c: f32):
      %c2 = arith.mulf %c, %c : f32
      prim.yield %c2 : f32
    }
    %sqs = prim.reduce add %sq axes [1] keepdim init 0.0 : tensor<16x64xf32> -> tensor<16x1xf32>
    %rstd = prim.map(%sqs) : (tensor<16x1xf32>) -> tensor<16x1xf32> {
    ^bb0(%s: f32):
      %n = arith.constant 64.0 : f32
      %eps = arith.constant 1.0e-5 : f32
      %var = arith.divf %s, %n : f32
      %t = arith.addf %var, %eps : f32
      %r = math.rsqrt %t : f32
      prim.yield %r : f32
    }
    %rstdb = prim.broadcast %rstd : tensor<16x1xf32> -> tensor<16x64xf32>
    %wb = prim.broadcast %wa : tensor<64xf32> -> tensor<16x64xf32>
    %bb = prim.broadcast %ba : tensor<64xf32> -> tensor<16x64xf32>
    %out = prim.map(%xc, %rstdb, %wb, %bb) : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32> {
    ^bb0(%c: f32, %r: f32, %g: f32, %h: f32):
      %n = arith.mulf %c, %r : f32
      %s = arith.mulf %n, %g : f32
      %o = arith.addf %s, %h : f32
      prim.yield %o : f32
    }
    fused.yield %out : tensor<16x64xf32>
  }
  func.return %y : tensor<16x64xf32>
}
