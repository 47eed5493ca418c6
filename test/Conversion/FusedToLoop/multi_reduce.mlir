// RUN: emmy-opt %s --split-input-file --lower-fused-to-loop | filecheck %s

// A prim.multi_reduce becomes one reduction loop with an accumulator per input and a copy of
// its combiner; the body yields each input's element at the iteration. Both results are known
// after the loop, so the epilogue reads each where it needs it.

// CHECK-LABEL: loop.kernel @k_first_maximum(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<4x8xf32>, %[[OUT0:[a-z0-9_]+]]: memref<4xf32>, %[[OUT1:[a-z0-9_]+]]: memref<4xi64>) {
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 4 {
// CHECK-NEXT:      %[[M:.*]], %[[P:.*]] = loop.for %[[J:.*]] in 0 to 8 reduce (%[[A:.*]]: f32, %[[AI:.*]]: i64, %[[B:.*]]: f32, %[[BI:.*]]: i64) init (-inf, 9223372036854775807) {
// CHECK-NEXT:        %[[GT:.*]] = arith.cmpf ogt, %[[B]], %[[A]] : f32
// CHECK-NEXT:        %[[EQ:.*]] = arith.cmpf oeq, %[[B]], %[[A]] : f32
// CHECK-NEXT:        %[[LT:.*]] = arith.cmpi slt, %[[BI]], %[[AI]] : i64
// CHECK-NEXT:        %[[TIE:.*]] = arith.andi %[[EQ]], %[[LT]] : i1
// CHECK-NEXT:        %[[TAKE:.*]] = arith.ori %[[GT]], %[[TIE]] : i1
// CHECK-NEXT:        %[[M2:.*]] = arith.select %[[TAKE]], %[[B]], %[[A]] : f32
// CHECK-NEXT:        %[[I2:.*]] = arith.select %[[TAKE]], %[[BI]], %[[AI]] : i64
// CHECK-NEXT:        loop.yield %[[M2]], %[[I2]] : f32, i64
// CHECK-NEXT:      } {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[X]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:        %[[POS:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:        loop.yield %[[V]], %[[POS]] : f32, i64
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[D:.*]] = arith.mulf %[[M]], %[[TWO]] : f32
// CHECK-NEXT:      loop.store %[[D]], %[[OUT0]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      loop.store %[[P]], %[[OUT1]][%[[I]]] : memref<4xi64>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

func.func @forward(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xi64>) {
  %y, %z = fused.kernel @k_first_maximum(%x) : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: tensor<4x8xf32>):
    %pos = prim.iota dim 1 : tensor<4x8xi64>
    %m, %i = prim.multi_reduce (%a, %pos) axes [1] init (-inf, 9223372036854775807) : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
    ^bb0(%p: f32, %pi: i64, %q: f32, %qi: i64):
      %gt = arith.cmpf ogt, %q, %p : f32
      %eq = arith.cmpf oeq, %q, %p : f32
      %lt = arith.cmpi slt, %qi, %pi : i64
      %tie = arith.andi %eq, %lt : i1
      %take = arith.ori %gt, %tie : i1
      %m2 = arith.select %take, %q, %p : f32
      %i2 = arith.select %take, %qi, %pi : i64
      prim.yield %m2, %i2 : f32, i64
    }
    %d = prim.map(%m) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%v: f32):
      %two = arith.constant 2.0 : f32
      %r = arith.mulf %v, %two : f32
      prim.yield %r : f32
    }
    fused.yield %d, %i : tensor<4xf32>, tensor<4xi64>
  }
  func.return %y, %z : tensor<4xf32>, tensor<4xi64>
}

// -----

// Over several axes the loops nest, each starting from the inits (a combiner region's inits are
// its identity) and the outer one folding in what the inner one accumulated: a mean over axes
// 0 and 2 as a (sum, count) pair.

// CHECK-LABEL: loop.kernel @k_mean_pair(
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 3 {
// CHECK-NEXT:      %[[S:.*]], %[[N:.*]] = loop.for %[[R0:.*]] in 0 to 2 reduce (%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32) init (0.0, 0.0) {
// CHECK:           } {
// CHECK-NEXT:        %[[S1:.*]], %[[N1:.*]] = loop.for %[[R2:.*]] in 0 to 5 reduce (%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32) init (0.0, 0.0) {
// CHECK:             } {
// CHECK-NEXT:          %[[V:.*]] = loop.load %{{.*}}[%[[R0]], %[[I]], %[[R2]]] : memref<2x3x5xf32>
// CHECK-NEXT:          loop.yield %[[V]], %[[ONE]] : f32, f32
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.yield %[[S1]], %[[N1]] : f32, f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[MEAN:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT:      loop.store %[[MEAN]], %{{.*}}[%[[I]]] : memref<3xf32>

func.func @forward(%x: tensor<2x3x5xf32>) -> tensor<3xf32> {
  %y = fused.kernel @k_mean_pair(%x) : (tensor<2x3x5xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<2x3x5xf32>):
    %ones = prim.map(%a) : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
    ^bb0(%v: f32):
      %one = arith.constant 1.0 : f32
      prim.yield %one : f32
    }
    %s, %n = prim.multi_reduce (%a, %ones) axes [0, 2] init (0.0, 0.0) : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
    ^bb0(%s0: f32, %n0: f32, %s1: f32, %n1: f32):
      %s2 = arith.addf %s0, %s1 : f32
      %n2 = arith.addf %n0, %n1 : f32
      prim.yield %s2, %n2 : f32, f32
    }
    %mean = prim.map(%s, %n) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.divf %p, %q : f32
      prim.yield %r : f32
    }
    fused.yield %mean : tensor<3xf32>
  }
  func.return %y : tensor<3xf32>
}
