// RUN: emmy-opt %s | emmy-opt | filecheck %s
// RUN: emmy-opt %s --print-op-generic | emmy-opt | filecheck %s

// CHECK-LABEL: func.func @map_unary(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %[[Y:.*]] = prim.map(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[V]] : f32
// CHECK-NEXT:      prim.yield %[[E]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<4x8xf32>
func.func @map_unary(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = prim.map(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    prim.yield %e : f32
  }
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @map_several_inputs(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<2x3xf32>, %[[Y:[a-z0-9_]+]]: tensor<2x3xf32>, %[[Z:[a-z0-9_]+]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[R:.*]] = prim.map(%[[X]], %[[Y]], %[[Z]]) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    ^bb0(%[[A:[a-z0-9_]+]]: f32, %[[B:[a-z0-9_]+]]: f32, %[[C:[a-z0-9_]+]]: f32):
// CHECK-NEXT:      %[[EPS:.*]] = arith.constant 1.000000e-05 : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[B]], %[[EPS]] : f32
// CHECK-NEXT:      %[[RS:.*]] = math.rsqrt %[[S]] : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %[[RS]] : f32
// CHECK-NEXT:      %[[O:.*]] = arith.mulf %[[M]], %[[C]] : f32
// CHECK-NEXT:      prim.yield %[[O]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<2x3xf32>
func.func @map_several_inputs(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %z: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = prim.map(%x, %y, %z) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %eps = arith.constant 1.0e-5 : f32
    %s = arith.addf %b, %eps : f32
    %rs = math.rsqrt %s : f32
    %m = arith.mulf %a, %rs : f32
    %o = arith.mulf %m, %c : f32
    prim.yield %o : f32
  }
  func.return %r : tensor<2x3xf32>
}

// The result element type is the yielded scalar's, not the inputs'.

// CHECK-LABEL: func.func @map_compare_select(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<4xf16>, %[[Y:[a-z0-9_]+]]: tensor<4xf16>)
// CHECK-NEXT:    %[[GT:.*]] = prim.map(%[[X]], %[[Y]]) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1> {
// CHECK-NEXT:    ^bb0(%[[A:[a-z0-9_]+]]: f16, %[[B:[a-z0-9_]+]]: f16):
// CHECK-NEXT:      %[[C:.*]] = arith.cmpf ogt, %[[A]], %[[B]] : f16
// CHECK-NEXT:      prim.yield %[[C]] : i1
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[MAX:.*]] = prim.map(%[[GT]], %[[X]], %[[Y]]) : (tensor<4xi1>, tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16> {
// CHECK-NEXT:    ^bb0(%[[C2:[a-z0-9_]+]]: i1, %[[A2:[a-z0-9_]+]]: f16, %[[B2:[a-z0-9_]+]]: f16):
// CHECK-NEXT:      %[[S:.*]] = arith.select %[[C2]], %[[A2]], %[[B2]] : f16
// CHECK-NEXT:      prim.yield %[[S]] : f16
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[GT]], %[[MAX]] : tensor<4xi1>, tensor<4xf16>
func.func @map_compare_select(%x: tensor<4xf16>, %y: tensor<4xf16>) -> (tensor<4xi1>, tensor<4xf16>) {
  %gt = prim.map(%x, %y) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xi1> {
  ^bb0(%a: f16, %b: f16):
    %c = arith.cmpf ogt, %a, %b : f16
    prim.yield %c : i1
  }
  %max = prim.map(%gt, %x, %y) : (tensor<4xi1>, tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16> {
  ^bb0(%c: i1, %a: f16, %b: f16):
    %s = arith.select %c, %a, %b : f16
    prim.yield %s : f16
  }
  func.return %gt, %max : tensor<4xi1>, tensor<4xf16>
}

// CHECK-LABEL: func.func @map_0d(
// CHECK-SAME:    %[[X:.*]]: tensor<bf16>) -> tensor<f32> {
// CHECK-NEXT:    %[[Y:.*]] = prim.map(%[[X]]) : (tensor<bf16>) -> tensor<f32> {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: bf16):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[V]] : bf16 to f32
// CHECK-NEXT:      %[[T:.*]] = math.tanh %[[W]] : f32
// CHECK-NEXT:      prim.yield %[[T]] : f32
// CHECK-NEXT:    }
func.func @map_0d(%x: tensor<bf16>) -> tensor<f32> {
  %y = prim.map(%x) : (tensor<bf16>) -> tensor<f32> {
  ^bb0(%v: bf16):
    %w = arith.extf %v : bf16 to f32
    %t = math.tanh %w : f32
    prim.yield %t : f32
  }
  func.return %y : tensor<f32>
}

// A map without inputs fills its result with what its body computes.

// CHECK-LABEL: func.func @map_no_inputs() -> tensor<3xi32> {
// CHECK-NEXT:    %{{.*}} = prim.map() : () -> tensor<3xi32> {
// CHECK-NEXT:      %[[C:.*]] = arith.constant 7 : i32
// CHECK-NEXT:      prim.yield %[[C]] : i32
// CHECK-NEXT:    }
func.func @map_no_inputs() -> tensor<3xi32> {
  %y = prim.map() : () -> tensor<3xi32> {
    %c = arith.constant 7 : i32
    prim.yield %c : i32
  }
  func.return %y : tensor<3xi32>
}

// CHECK-LABEL: func.func @reduce_combiners(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT:    %{{.*}} = prim.reduce add %[[X]] axes [1] init 0.0 : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = prim.reduce mul %[[X]] axes [1] init 1.0 : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = prim.reduce max %[[X]] axes [1] init -inf : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = prim.reduce min %[[X]] axes [1] init inf : tensor<4x8xf32> -> tensor<4xf32>
func.func @reduce_combiners(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %sum = prim.reduce add %x axes [1] init 0.0 : tensor<4x8xf32> -> tensor<4xf32>
  %prod = prim.reduce mul %x axes [1] init 1.0 : tensor<4x8xf32> -> tensor<4xf32>
  %max = prim.reduce max %x axes [1] init -inf : tensor<4x8xf32> -> tensor<4xf32>
  %min = prim.reduce min %x axes [1] init inf : tensor<4x8xf32> -> tensor<4xf32>
  func.return %sum, %prod, %max, %min : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Axes may come in any order; the printed order is the written one.

// CHECK-LABEL: func.func @reduce_keepdim(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4xbf16>)
// CHECK-NEXT:    %{{.*}} = prim.reduce add %[[X]] axes [1] keepdim init 0.0 : tensor<2x3x4xbf16> -> tensor<2x1x4xbf16>
// CHECK-NEXT:    %{{.*}} = prim.reduce max %[[X]] axes [0, 2] keepdim init -inf : tensor<2x3x4xbf16> -> tensor<1x3x1xbf16>
// CHECK-NEXT:    %{{.*}} = prim.reduce add %[[X]] axes [2, 0, 1] keepdim init 0.5 : tensor<2x3x4xbf16> -> tensor<1x1x1xbf16>
func.func @reduce_keepdim(%x: tensor<2x3x4xbf16>) -> (tensor<2x1x4xbf16>, tensor<1x3x1xbf16>, tensor<1x1x1xbf16>) {
  %a = prim.reduce add %x axes [1] keepdim init 0.0 : tensor<2x3x4xbf16> -> tensor<2x1x4xbf16>
  %b = prim.reduce max %x axes [0, 2] keepdim init -inf : tensor<2x3x4xbf16> -> tensor<1x3x1xbf16>
  %c = prim.reduce add %x axes [2, 0, 1] keepdim init 0.5 : tensor<2x3x4xbf16> -> tensor<1x1x1xbf16>
  func.return %a, %b, %c : tensor<2x1x4xbf16>, tensor<1x3x1xbf16>, tensor<1x1x1xbf16>
}

// An init is rounded to the element type (f16's largest finite value is 65504); a
// reduction over no axes is a copy.

// CHECK-LABEL: func.func @reduce_to_0d(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<2x3xf16>, %[[S:[a-z0-9_]+]]: tensor<f16>)
// CHECK-NEXT:    %{{.*}} = prim.reduce min %[[X]] axes [0, 1] init 65504.0 : tensor<2x3xf16> -> tensor<f16>
// CHECK-NEXT:    %{{.*}} = prim.reduce add %[[S]] axes [] init 0.0 : tensor<f16> -> tensor<f16>
func.func @reduce_to_0d(%x: tensor<2x3xf16>, %s: tensor<f16>) -> (tensor<f16>, tensor<f16>) {
  %all = prim.reduce min %x axes [0, 1] init 6.55e4 : tensor<2x3xf16> -> tensor<f16>
  %none = prim.reduce add %s axes [] init 0.0 : tensor<f16> -> tensor<f16>
  func.return %all, %none : tensor<f16>, tensor<f16>
}

// CHECK-LABEL: func.func @reduce_integers(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<5x6xi32>, %[[Y:[a-z0-9_]+]]: tensor<5xi8>)
// CHECK-NEXT:    %{{.*}} = prim.reduce add %[[X]] axes [0] init 0 : tensor<5x6xi32> -> tensor<6xi32>
// CHECK-NEXT:    %{{.*}} = prim.reduce max %[[X]] axes [1] init -2147483648 : tensor<5x6xi32> -> tensor<5xi32>
// CHECK-NEXT:    %{{.*}} = prim.reduce min %[[Y]] axes [0] init 127 : tensor<5xi8> -> tensor<i8>
// CHECK-NEXT:    %{{.*}} = prim.reduce mul %[[Y]] axes [0] init 3 : tensor<5xi8> -> tensor<i8>
func.func @reduce_integers(%x: tensor<5x6xi32>, %y: tensor<5xi8>) -> (tensor<6xi32>, tensor<5xi32>, tensor<i8>, tensor<i8>) {
  %sum = prim.reduce add %x axes [0] init 0 : tensor<5x6xi32> -> tensor<6xi32>
  %max = prim.reduce max %x axes [1] init -2147483648 : tensor<5x6xi32> -> tensor<5xi32>
  %min = prim.reduce min %y axes [0] init 127 : tensor<5xi8> -> tensor<i8>
  %prod = prim.reduce mul %y axes [0] init 3 : tensor<5xi8> -> tensor<i8>
  func.return %sum, %max, %min, %prod : tensor<6xi32>, tensor<5xi32>, tensor<i8>, tensor<i8>
}

// A float init without a fraction or with an exponent still prints as a float literal.

// CHECK-LABEL: func.func @reduce_float_init_literals(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf64>)
// CHECK-NEXT:    %{{.*}} = prim.reduce add %[[X]] axes [0] init 1.0e-07 : tensor<4xf64> -> tensor<f64>
// CHECK-NEXT:    %{{.*}} = prim.reduce max %[[X]] axes [0] init -1.0e+20 : tensor<4xf64> -> tensor<f64>
// CHECK-NEXT:    %{{.*}} = prim.reduce mul %[[X]] axes [0] init 3.0 : tensor<4xf64> -> tensor<f64>
// CHECK-NEXT:    %{{.*}} = prim.reduce min %[[X]] axes [0] init nan : tensor<4xf64> -> tensor<f64>
func.func @reduce_float_init_literals(%x: tensor<4xf64>) -> (tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>) {
  %a = prim.reduce add %x axes [0] init 1.0e-7 : tensor<4xf64> -> tensor<f64>
  %b = prim.reduce max %x axes [0] init -1.0e20 : tensor<4xf64> -> tensor<f64>
  %c = prim.reduce mul %x axes [0] init 3 : tensor<4xf64> -> tensor<f64>
  %d = prim.reduce min %x axes [0] init nan : tensor<4xf64> -> tensor<f64>
  func.return %a, %b, %c, %d : tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>
}
// A reduction that carries state folds several inputs at once with a combiner region: each
// row's first maximum and its position (argmax), in one pass.

// CHECK-LABEL: func.func @multi_reduce_first_maximum(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x1xi64>) {
// CHECK-NEXT:    %[[P:.*]] = prim.iota dim 1 : tensor<4x8xi64>
// CHECK-NEXT:    %[[M:.*]], %[[I:.*]] = prim.multi_reduce (%[[X]], %[[P]]) axes [1] keepdim init (-inf, 9223372036854775807) : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4x1xf32>, tensor<4x1xi64>) {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[AI:.*]]: i64, %[[B:.*]]: f32, %[[BI:.*]]: i64):
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[B]], %[[A]] : f32
// CHECK-NEXT:      %[[EQ:.*]] = arith.cmpf oeq, %[[B]], %[[A]] : f32
// CHECK-NEXT:      %[[LT:.*]] = arith.cmpi slt, %[[BI]], %[[AI]] : i64
// CHECK-NEXT:      %[[TIE:.*]] = arith.andi %[[EQ]], %[[LT]] : i1
// CHECK-NEXT:      %[[TAKE:.*]] = arith.ori %[[GT]], %[[TIE]] : i1
// CHECK-NEXT:      %[[M2:.*]] = arith.select %[[TAKE]], %[[B]], %[[A]] : f32
// CHECK-NEXT:      %[[I2:.*]] = arith.select %[[TAKE]], %[[BI]], %[[AI]] : i64
// CHECK-NEXT:      prim.yield %[[M2]], %[[I2]] : f32, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = prim.reshape %[[M]] : tensor<4x1xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[R]], %[[I]] : tensor<4xf32>, tensor<4x1xi64>
func.func @multi_reduce_first_maximum(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x1xi64>) {
  %pos = prim.iota dim 1 : tensor<4x8xi64>
  %m, %i = prim.multi_reduce (%x, %pos) axes [1] keepdim init (-inf, 9223372036854775807) : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4x1xf32>, tensor<4x1xi64>) {
  ^bb0(%a: f32, %ai: i64, %b: f32, %bi: i64):
    %gt = arith.cmpf ogt, %b, %a : f32
    %eq = arith.cmpf oeq, %b, %a : f32
    %lt = arith.cmpi slt, %bi, %ai : i64
    %tie = arith.andi %eq, %lt : i1
    %take = arith.ori %gt, %tie : i1
    %m2 = arith.select %take, %b, %a : f32
    %i2 = arith.select %take, %bi, %ai : i64
    prim.yield %m2, %i2 : f32, i64
  }
  %r = prim.reshape %m : tensor<4x1xf32> -> tensor<4xf32>
  func.return %r, %i : tensor<4xf32>, tensor<4x1xi64>
}

// Welford's (mean, M2, count) over two axes at once, from inits that are the combiner's identity.

// CHECK-LABEL: func.func @multi_reduce_welford(
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}} = prim.multi_reduce (%{{.*}}, %{{.*}}, %{{.*}}) axes [0, 2] init (0.0, 0.0, 0.0) : (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK:           prim.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32
func.func @multi_reduce_welford(%x: tensor<2x3x5xf32>, %zeros: tensor<2x3x5xf32>, %ones: tensor<2x3x5xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %mean, %m2, %n = prim.multi_reduce (%x, %zeros, %ones) axes [0, 2] init (0.0, 0.0, 0.0) : (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  ^bb0(%mean0: f32, %m20: f32, %n0: f32, %mean1: f32, %m21: f32, %n1: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.addf %n0, %n1 : f32
    %at_least_one = arith.maximumf %n, %one : f32
    %delta = arith.subf %mean1, %mean0 : f32
    %share = arith.divf %n1, %at_least_one : f32
    %step = arith.mulf %delta, %share : f32
    %mean = arith.addf %mean0, %step : f32
    %spread = arith.mulf %delta, %step : f32
    %cross = arith.mulf %spread, %n0 : f32
    %both = arith.addf %m20, %m21 : f32
    %m2 = arith.addf %both, %cross : f32
    prim.yield %mean, %m2, %n : f32, f32, f32
  }
  func.return %mean, %m2, %n : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}


// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME:    %[[ROW:[a-z0-9_]+]]: tensor<8xf32>, %[[COL:[a-z0-9_]+]]: tensor<4x1xf32>, %[[S:[a-z0-9_]+]]: tensor<f32>, %[[X:[a-z0-9_]+]]: tensor<4x8xf32>)
// CHECK-NEXT:    %{{.*}} = prim.broadcast %[[ROW]] : tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = prim.broadcast %[[COL]] : tensor<4x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = prim.broadcast %[[S]] : tensor<f32> -> tensor<2x4x8xf32>
// CHECK-NEXT:    %{{.*}} = prim.broadcast %[[X]] : tensor<4x8xf32> -> tensor<4x8xf32>
func.func @broadcast(%row: tensor<8xf32>, %col: tensor<4x1xf32>, %s: tensor<f32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32>) {
  %a = prim.broadcast %row : tensor<8xf32> -> tensor<4x8xf32>
  %b = prim.broadcast %col : tensor<4x1xf32> -> tensor<4x8xf32>
  %c = prim.broadcast %s : tensor<f32> -> tensor<2x4x8xf32>
  %d = prim.broadcast %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %a, %b, %c, %d : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>, tensor<4x8xf32>
}

// Leading dims are added and size-1 dims expanded in one broadcast.

// CHECK-LABEL: func.func @broadcast_low_precision(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<1x1xbf16>, %[[Y:[a-z0-9_]+]]: tensor<3x1xf16>)
// CHECK-NEXT:    %{{.*}} = prim.broadcast %[[X]] : tensor<1x1xbf16> -> tensor<5x2x3xbf16>
// CHECK-NEXT:    %{{.*}} = prim.broadcast %[[Y]] : tensor<3x1xf16> -> tensor<2x3x4xf16>
func.func @broadcast_low_precision(%x: tensor<1x1xbf16>, %y: tensor<3x1xf16>) -> (tensor<5x2x3xbf16>, tensor<2x3x4xf16>) {
  %a = prim.broadcast %x : tensor<1x1xbf16> -> tensor<5x2x3xbf16>
  %b = prim.broadcast %y : tensor<3x1xf16> -> tensor<2x3x4xf16>
  func.return %a, %b : tensor<5x2x3xbf16>, tensor<2x3x4xf16>
}

// Constants: a list, and a splat of 10^12 elements, which is held as its one element.

// CHECK-LABEL: func.func @constants(
// CHECK-NEXT:    prim.constant dense<[1.000000e+00, -2.500000e+00]> : tensor<2xf32>
// CHECK-NEXT:    prim.constant {tag} dense<-7> : tensor<1000000x1000000xi32>
func.func @constants() {
  %a = prim.constant dense<[1.0, -2.5]> : tensor<2xf32>
  %b = prim.constant {tag} dense<-7> : tensor<1000000x1000000xi32>
  func.return
}

// Discardable attributes survive a round trip, written before the types.

// CHECK-LABEL: func.func @attributes(
// CHECK-NEXT:    %[[M:.*]] = prim.map(%{{.*}}) {tag = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT:      prim.yield {tag} %[[V]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = prim.reduce add %[[M]] axes [0] keepdim init 0.0 {tag = 2 : i64} : tensor<4xf32> -> tensor<1xf32>
// CHECK-NEXT:    %{{.*}} = prim.broadcast %[[R]] {tag = 3 : i64} : tensor<1xf32> -> tensor<4xf32>
func.func @attributes(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = prim.map(%x) {tag = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: f32):
    prim.yield {tag} %v : f32
  }
  %r = prim.reduce add %m axes [0] keepdim init 0.0 {tag = 2 : i64} : tensor<4xf32> -> tensor<1xf32>
  %b = prim.broadcast %r {tag = 3 : i64} : tensor<1xf32> -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// CHECK-LABEL: func.func @scan(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>, %[[I:.*]]: tensor<3xi64>)
// CHECK-NEXT:    %{{.*}} = prim.scan add %[[X]] dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = prim.scan mul %[[X]] dim 0 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %{{.*}} = prim.scan max %[[I]] dim 0 {tag = 1 : i64} : tensor<3xi64> -> tensor<3xi64>
func.func @scan(%x: tensor<4x8xf32>, %i: tensor<3xi64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<3xi64>) {
  %s = prim.scan add %x dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  %p = prim.scan mul %x dim 0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %m = prim.scan max %i dim 0 {tag = 1 : i64} : tensor<3xi64> -> tensor<3xi64>
  func.return %s, %p, %m : tensor<4x8xf32>, tensor<4x8xf32>, tensor<3xi64>
}

// Attention with grouped-query heads (4 query heads on 2 key/value heads), a boolean mask
// broadcast from [L, S], and causality; and one without either.

// CHECK-LABEL: func.func @attention(
// CHECK:         %[[O:.*]] = prim.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale 1.250000e-01 causal : tensor<1x4x5x8xbf16>, tensor<1x2x7x8xbf16>, tensor<1x2x7x4xbf16> mask tensor<5x7xi1> -> tensor<1x4x5x4xbf16>
// CHECK-NEXT:    %[[P:.*]] = prim.attention %{{.*}}, %{{.*}}, %{{.*}} scale 3.000000e-01 : tensor<1x4x5x8xbf16>, tensor<1x2x7x8xbf16>, tensor<1x2x7x4xbf16> -> tensor<1x4x5x4xf32>
func.func @attention(%q: tensor<1x4x5x8xbf16>, %k: tensor<1x2x7x8xbf16>, %v: tensor<1x2x7x4xbf16>, %m: tensor<5x7xi1>) -> (tensor<1x4x5x4xbf16>, tensor<1x4x5x4xf32>) {
  %o = prim.attention %q, %k, %v mask %m scale 0.125 causal : tensor<1x4x5x8xbf16>, tensor<1x2x7x8xbf16>, tensor<1x2x7x4xbf16> mask tensor<5x7xi1> -> tensor<1x4x5x4xbf16>
  %p = prim.attention %q, %k, %v scale 0.3 : tensor<1x4x5x8xbf16>, tensor<1x2x7x8xbf16>, tensor<1x2x7x4xbf16> -> tensor<1x4x5x4xf32>
  func.return %o, %p : tensor<1x4x5x4xbf16>, tensor<1x4x5x4xf32>
}
