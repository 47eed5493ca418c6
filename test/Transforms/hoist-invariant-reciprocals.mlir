// RUN: emmy-opt %s --split-input-file --hoist-invariant-reciprocals | filecheck %s

// A softmax's output loop divides by the row's sum, which the loop does not change: the
// reciprocal is computed once, before the outermost loop the sum is invariant in (here the
// column loop: the sum is defined in the row loop), and the loop multiplies by it.

// CHECK-LABEL: loop.kernel @k_softmax_tail(
// CHECK:         loop.for %[[I:.*]] in 0 to 4 {
// CHECK:           %[[S:.*]] = loop.for %{{.*}} in 0 to 64 reduce add
// CHECK:           %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.divf %[[ONE]], %[[S]] : f32
// CHECK-NEXT:      loop.for %{{.*}} in 0 to 64 {
// CHECK-NEXT:        %[[E:.*]] = loop.load
// CHECK-NEXT:        %{{.*}} = arith.mulf %[[E]], %[[R]] : f32
// CHECK-NOT:         arith.divf

loop.kernel @k_softmax_tail(%x: memref<4x64xf32>, %y: memref<4x64xf32>) {
  loop.for %i in 0 to 4 {
    %s = loop.for %r in 0 to 64 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %r] : memref<4x64xf32>
      loop.yield %v : f32
    }
    loop.for %j in 0 to 64 {
      %e = loop.load %x[%i, %j] : memref<4x64xf32>
      %o = arith.divf %e, %s : f32
      loop.store %o, %y[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

// A divisor defined outside every loop (a kernel-wide constant) is hoisted out of the whole
// nest; a divisor the loop computes, and a division outside any loop, stay divisions.

// CHECK-LABEL: loop.kernel @k_scale(
// CHECK:         %[[N:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[R:.*]] = arith.divf %[[ONE]], %[[N]] : f32
// CHECK-NEXT:    loop.for %{{.*}} in 0 to 4 {
// CHECK-NEXT:      loop.for %{{.*}} in 0 to 8 {
// CHECK-NEXT:        %[[V:.*]] = loop.load
// CHECK-NEXT:        %[[Q:.*]] = arith.mulf %[[V]], %[[R]] : f32
// CHECK-NEXT:        %[[D:.*]] = arith.addf %[[V]], %[[N]] : f32
// CHECK-NEXT:        %{{.*}} = arith.divf %[[Q]], %[[D]] : f32
// CHECK:         %{{.*}} = arith.divf %{{.*}}, %[[N]] : f32
// CHECK-NEXT:    loop.store

loop.kernel @k_scale(%x: memref<4x8xf32>, %y: memref<4x8xf32>, %z: memref<f32>) {
  %n = arith.constant 3.0 : f32
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 8 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      %q = arith.divf %v, %n : f32
      %d = arith.addf %v, %n : f32
      %o = arith.divf %q, %d : f32
      loop.store %o, %y[%i, %j] : memref<4x8xf32>
    }
  }
  %c = loop.load %z[] : memref<f32>
  %t = arith.divf %c, %n : f32
  loop.store %t, %z[] : memref<f32>
}

// -----

// A loop.contract's epilogue is the body of a loop nest: a division of the accumulated
// value by a constant becomes a multiplication by its reciprocal, computed before the
// contraction; a divisor the epilogue computes stays a division.

// CHECK-LABEL: loop.kernel @k_scaled_scores(
// CHECK:         %[[D:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[R:.*]] = arith.divf %[[ONE]], %[[D]] : f32
// CHECK-NEXT:    loop.contract (%[[I:.*]], %[[J:.*]]) in [4, 6], k in 8, %[[ACC:.*]] = sum
// CHECK-NEXT:      %[[S:.*]] = arith.mulf %[[ACC]], %[[R]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.divf %[[S]], %[[ACC]] : f32
// CHECK-NEXT:      loop.store %[[T]]

loop.kernel @k_scaled_scores(%q: memref<4x8xf32>, %k: memref<6x8xf32>, %y: memref<4x6xf32>) {
  %d = arith.constant 4.0 : f32
  loop.contract (%i, %j) in [4, 6], k in 8, %acc = sum %q[d0, k] * %k[d1, k] : memref<4x8xf32>, memref<6x8xf32> -> f32 {
    %s = arith.divf %acc, %d : f32
    %t = arith.divf %s, %acc : f32
    loop.store %t, %y[%i, %j] : memref<4x6xf32>
  }
}

// -----

// A division in a combiner region stays, even by a constant from outside it (where cse merged
// the combiner's own with it): the combiner is inlined wherever the reduction is combined
// (each thread, each shuffle step), and sees only its arguments and constants.

// CHECK-LABEL: loop.kernel @k_combiner_division(
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    %{{.*}} = loop.for %{{.*}} in 0 to 8 reduce (%[[A:.*]]: f32, %[[B:.*]]: f32) init (0.0) {
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[H:.*]] = arith.divf %[[S]], %[[TWO]] : f32
// CHECK-NEXT:      loop.yield %[[H]] : f32
loop.kernel @k_combiner_division(%x: memref<8xf32>, %y: memref<1xf32>) {
  %two = arith.constant 2.0 : f32
  %h = loop.for %j in 0 to 8 reduce (%a: f32, %b: f32) init (0.0) {
    %s = arith.addf %a, %b : f32
    %half = arith.divf %s, %two : f32
    loop.yield %half : f32
  } {
    %v = loop.load %x[%j] : memref<8xf32>
    loop.yield %v : f32
  }
  %c0 = arith.constant 0 : index
  loop.store %h, %y[%c0] : memref<1xf32>
}
