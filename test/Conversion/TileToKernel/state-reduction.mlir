// RUN: emmy-opt %s --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// A reduction with a combiner region over the threads of a block: each thread folds its
// elements from the inits through the inlined combiner, then every step of the butterfly
// shuffles each accumulator and combines the pairs with the combiner again; one shared slot
// per warp and accumulator carries the warps' partials, read back (the inits past the last
// warp) and combined the same way, so that every thread holds both totals.

// CHECK-LABEL: kernel.func @k_row_statistics(
// CHECK-DAG:     %[[NEG_INF:.*]] = arith.constant 0xff800000 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %c8 step %{{.*}} {
// CHECK:           %[[VEC:.*]] = kernel.vector_load %{{.*}}[%[[I]], %{{.*}}] : memref<8x1024xf32>, vector<4xf32>
// CHECK:           %[[M0:.*]] = arith.maximumf %[[NEG_INF]], %{{.*}} : f32
// CHECK-COUNT-2:   kernel.shuffle xor %{{.*}}, %{{.*}} : f32
// CHECK:           arith.maximumf
// CHECK:           %[[MS:.*]] = kernel.shared_alloc : memref<8xf32, 3 : i32>
// CHECK-NEXT:      %[[LS:.*]] = kernel.shared_alloc : memref<8xf32, 3 : i32>
// CHECK:           scf.if %{{.*}} {
// CHECK-NEXT:        memref.store %{{.*}}, %[[MS]][%{{.*}}] : memref<8xf32, 3 : i32>
// CHECK-NEXT:        memref.store %{{.*}}, %[[LS]][%{{.*}}] : memref<8xf32, 3 : i32>
// CHECK:           kernel.barrier
// CHECK:           %[[MW:.*]] = memref.load %[[MS]][%{{.*}}] : memref<8xf32, 3 : i32>
// CHECK-NEXT:      %{{.*}} = arith.select %{{.*}}, %[[MW]], %[[NEG_INF]] : f32
// CHECK-NEXT:      %[[LW:.*]] = memref.load %[[LS]][%{{.*}}] : memref<8xf32, 3 : i32>
// CHECK-NEXT:      %{{.*}} = arith.select %{{.*}}, %[[LW]], %[[ZERO]] : f32
// CHECK-COUNT-2:   kernel.shuffle xor %{{.*}}, %{{.*}} : f32
// CHECK:           kernel.barrier
// CHECK-NEXT:      memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<8xf32>
// CHECK-NEXT:      memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<8xf32>
// CHECK-NEXT:    }

tile.kernel @k_row_statistics(%x: memref<8x1024xf32>, %m: memref<8xf32>, %l: memref<8xf32>) grid [8, 1, 1] block [256, 1, 1] {
  tile.for %i in 0 to 8 map grid {
    %mx, %sum = tile.for %j in 0 to 1024 map thread vector 4 reduce (%m0: f32, %l0: f32, %m1: f32, %l1: f32) init (-inf, 0.0) {
      %one = arith.constant 1.0 : f32
      %m2 = arith.maximumf %m0, %m1 : f32
      %d0 = arith.subf %m0, %m2 : f32
      %d1 = arith.subf %m1, %m2 : f32
      %e0 = math.exp %d0 : f32
      %e1 = math.exp %d1 : f32
      %same0 = arith.cmpf oeq, %m0, %m2 : f32
      %same1 = arith.cmpf oeq, %m1, %m2 : f32
      %s0 = arith.select %same0, %one, %e0 : f32
      %s1 = arith.select %same1, %one, %e1 : f32
      %a0 = arith.mulf %l0, %s0 : f32
      %a1 = arith.mulf %l1, %s1 : f32
      %l2 = arith.addf %a0, %a1 : f32
      tile.yield %m2, %l2 : f32, f32
    } {
      %v = memref.load %x[%i, %j] : memref<8x1024xf32>
      %one = arith.constant 1.0 : f32
      tile.yield %v, %one : f32, f32
    }
    memref.store %mx, %m[%i] : memref<8xf32>
    memref.store %sum, %l[%i] : memref<8xf32>
  }
}
