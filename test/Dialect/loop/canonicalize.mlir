// RUN: emmy-opt %s --split-input-file --canonicalize | filecheck %s

// CHECK-LABEL: loop.kernel @fold_unit_parallel_loop(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<1x4xf32>, %[[Y:[a-z0-9_]+]]: memref<1x4xf32>) {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    loop.for %[[J:.*]] in 0 to 4 {
// CHECK-NEXT:      %[[V:.*]] = loop.load %[[X]][%[[C0]], %[[J]]] : memref<1x4xf32>
// CHECK-NEXT:      loop.store %[[V]], %[[Y]][%[[C0]], %[[J]]] : memref<1x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
loop.kernel @fold_unit_parallel_loop(%x: memref<1x4xf32>, %y: memref<1x4xf32>) {
  loop.for %i in 0 to 1 {
    loop.for %j in 0 to 4 {
      %v = loop.load %x[%i, %j] : memref<1x4xf32>
      loop.store %v, %y[%i, %j] : memref<1x4xf32>
    }
  }
}

// -----

// A one-trip reduction from its identity is its contribution; from another init, the init
// combined with it; a zero-trip reduction is its init and a zero-trip parallel loop vanishes.

// CHECK-LABEL: loop.kernel @fold_unit_reductions(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<3xf32>, %[[Y:[a-z0-9_]+]]: memref<3xf32>) {
// CHECK:         %[[V:.*]] = loop.load %[[X]][%{{.*}}] : memref<3xf32>
// CHECK:         %[[W:.*]] = loop.load %[[X]][%{{.*}}] : memref<3xf32>
// CHECK-NEXT:    %[[INIT:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[M:.*]] = arith.maximumf %[[INIT]], %[[W]] : f32
// CHECK-NEXT:    %[[EMPTY:.*]] = arith.constant 7.000000e+00 : f32
// CHECK-NEXT:    loop.store %[[V]], %[[Y]][%{{.*}}]
// CHECK-NEXT:    loop.store %[[M]], %[[Y]][%{{.*}}]
// CHECK-NEXT:    loop.store %[[EMPTY]], %[[Y]][%{{.*}}]
// CHECK-NOT:     loop.for
loop.kernel @fold_unit_reductions(%x: memref<3xf32>, %y: memref<3xf32>) {
  %c2 = arith.constant 2 : index
  %a = loop.for %i in 2 to 3 reduce add init 0.0 : f32 {
    %v = loop.load %x[%i] : memref<3xf32>
    loop.yield %v : f32
  }
  %b = loop.for %i in 2 to 3 reduce max init 0.5 : f32 {
    %v = loop.load %x[%i] : memref<3xf32>
    loop.yield %v : f32
  }
  %c = loop.for %i in 0 to 0 reduce add init 7.0 : f32 {
    %v = loop.load %x[%i] : memref<3xf32>
    loop.yield %v : f32
  }
  loop.store %a, %y[%c2] : memref<3xf32>
  loop.store %b, %y[%c2] : memref<3xf32>
  loop.store %c, %y[%c2] : memref<3xf32>
  loop.for %i in 1 to 1 {
    loop.store %a, %y[%i] : memref<3xf32>
  }
}

// -----

// A one-trip loop with a combiner region becomes its body combined with the inits through the
// combiner; one of no trips becomes its inits.

// CHECK-LABEL: loop.kernel @fold_unit_state_reductions(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<3xf32>, %[[Y:[a-z0-9_]+]]: memref<3xf32>) {
// CHECK:         %[[V:.*]] = loop.load %[[X]][%{{.*}}] : memref<3xf32>
// CHECK:         %[[S:.*]] = arith.addf %{{.*}}, %[[V]] : f32
// CHECK:         %[[EMPTY:.*]] = arith.constant 7.000000e+00 : f32
// CHECK:         loop.store %[[S]], %[[Y]][%{{.*}}]
// CHECK-NEXT:    loop.store %[[EMPTY]], %[[Y]][%{{.*}}]
// CHECK-NOT:     loop.for
loop.kernel @fold_unit_state_reductions(%x: memref<3xf32>, %y: memref<3xf32>) {
  %c2 = arith.constant 2 : index
  %a, %n = loop.for %i in 2 to 3 reduce (%s0: f32, %n0: i32, %s1: f32, %n1: i32) init (0.5, 0) {
    %s = arith.addf %s0, %s1 : f32
    %n = arith.addi %n0, %n1 : i32
    loop.yield %s, %n : f32, i32
  } {
    %v = loop.load %x[%i] : memref<3xf32>
    %one = arith.constant 1 : i32
    loop.yield %v, %one : f32, i32
  }
  %e = loop.for %i in 0 to 0 reduce (%s0: f32, %s1: f32) init (7.0) {
    %s = arith.addf %s0, %s1 : f32
    loop.yield %s : f32
  } {
    %v = loop.load %x[%i] : memref<3xf32>
    loop.yield %v : f32
  }
  loop.store %a, %y[%c2] : memref<3xf32>
  loop.store %e, %y[%c2] : memref<3xf32>
}

// -----

// A load that reads the same element on every iteration moves out of the loop...

// CHECK-LABEL: loop.kernel @hoist_invariant_load(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<4x8xf32>, %[[S:[a-z0-9_]+]]: memref<4xf32>, %[[Y:[a-z0-9_]+]]: memref<4x8xf32>) {
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 4 {
// CHECK-NEXT:      %[[SV:.*]] = loop.load %[[S]][%[[I]]] : memref<4xf32>
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 8 {
// CHECK-NEXT:        %[[XV:.*]] = loop.load %[[X]][%[[I]], %[[J]]] : memref<4x8xf32>
// CHECK-NEXT:        %[[P:.*]] = arith.mulf %[[XV]], %[[SV]] : f32
loop.kernel @hoist_invariant_load(%x: memref<4x8xf32>, %s: memref<4xf32>, %y: memref<4x8xf32>) {
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 8 {
      %xv = loop.load %x[%i, %j] : memref<4x8xf32>
      %sv = loop.load %s[%i] : memref<4xf32>
      %p = arith.mulf %xv, %sv : f32
      loop.store %p, %y[%i, %j] : memref<4x8xf32>
    }
  }
}

// -----

// ...unless the kernel also writes that buffer.

// CHECK-LABEL: loop.kernel @keep_load_of_written_buffer(
// CHECK:         loop.for %[[J:.*]] in 0 to 8 {
// CHECK-NEXT:      loop.load %{{.*}}[%{{.*}}] : memref<4xf32>
loop.kernel @keep_load_of_written_buffer(%s: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  loop.for %j in 0 to 8 {
    %v = loop.load %s[%c0] : memref<4xf32>
    %w = arith.addf %v, %v : f32
    loop.store %w, %s[%c0] : memref<4xf32>
  }
}
