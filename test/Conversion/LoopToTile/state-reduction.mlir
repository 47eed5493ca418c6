// RUN: emmy-opt %s --choose-tile-schedule --lower-loop-to-tile | filecheck %s

// One long row: a named combiner's reduction would be split across blocks, each adding its
// total into the result with an atomic; no atomic combines a combiner region's state, so this
// one goes to the threads of one block, and its combiner moves to Tile IR with it.

// CHECK-LABEL: tile.kernel @k_first_maximum(
// CHECK-SAME:    grid [1, 1, 1] block [512, 1, 1]
// CHECK-NEXT:    %{{.*}}, %[[P:.*]] = tile.for %[[J:.*]] in 0 to 100000 map thread vector 4 reduce (%[[A:.*]]: f32, %[[AI:.*]]: i64, %[[B:.*]]: f32, %[[BI:.*]]: i64) init (-inf, 9223372036854775807) {
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[B]], %[[A]] : f32
// CHECK:           tile.yield %{{.*}}, %{{.*}} : f32, i64
// CHECK-NEXT:    } {
// CHECK-NEXT:      %[[V:.*]] = memref.load %{{.*}}[%[[J]]] : memref<100000xf32>
// CHECK-NEXT:      %[[POS:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:      tile.yield %[[V]], %[[POS]] : f32, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    memref.store %[[P]], %{{.*}}[%[[C0]]] : memref<1xi64>

loop.kernel @k_first_maximum(%x: memref<100000xf32>, %y: memref<1xi64>) {
  %m, %p = loop.for %j in 0 to 100000 reduce (%a: f32, %ai: i64, %b: f32, %bi: i64) init (-inf, 9223372036854775807) {
    %gt = arith.cmpf ogt, %b, %a : f32
    %eq = arith.cmpf oeq, %b, %a : f32
    %lt = arith.cmpi slt, %bi, %ai : i64
    %tie = arith.andi %eq, %lt : i1
    %take = arith.ori %gt, %tie : i1
    %m2 = arith.select %take, %b, %a : f32
    %i2 = arith.select %take, %bi, %ai : i64
    loop.yield %m2, %i2 : f32, i64
  } {
    %v = loop.load %x[%j] : memref<100000xf32>
    %pos = arith.index_cast %j : index to i64
    loop.yield %v, %pos : f32, i64
  }
  %c0 = arith.constant 0 : index
  loop.store %p, %y[%c0] : memref<1xi64>
}
