// A verifier failure is reported at the op that breaks its invariant, innermost first: the
// prim.reduce, not the func.func around it.

// RUN: not emmy-opt %s --split-input-file 2>&1 | filecheck %s --strict-whitespace --match-full-lines

//      CHECK:{{.*}}verifier-error.mlir:[[# @LINE + 4]]:3: error: 'prim.reduce' op reduce axis 3 is out of range for a rank-2 input
// CHECK-NEXT:  %r = prim.reduce add %x axes [3] keepdim init 0.0 : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:  ^
func.func @reduce(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = prim.reduce add %x axes [3] keepdim init 0.0 : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}

// -----

// Inside a loop nest.
//      CHECK:{{.*}}verifier-error.mlir:[[# @LINE + 5]]:5: error: 'loop.load' op {{.*}}memref<4x8xf32>{{.*}}
// CHECK-NEXT:    %v = loop.load %x[%i] : memref<4x8xf32>
// CHECK-NEXT:    ^
loop.kernel @k(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  loop.for %i in 0 to 4 {
    %v = loop.load %x[%i] : memref<4x8xf32>
    loop.store %v, %y[%i] : memref<4xf32>
  }
}

// -----

// An attribute that rejects its value while the op is built is reported at the op.
//      CHECK:{{.*}}verifier-error.mlir:[[# @LINE + 2]]:3: error: Integer value 300 is out of range for type i8{{.*}}
func.func @constant() -> i8 {
  %c = arith.constant 300 : i8
  func.return %c : i8
}

//  CHECK-NOT:{{.*}}Traceback{{.*}}
