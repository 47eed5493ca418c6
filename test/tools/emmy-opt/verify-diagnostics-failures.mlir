// --verify-diagnostics fails, naming the line, for an annotation that no error meets and for
// an error that no annotation expects.

// RUN: not emmy-opt %s --split-input-file --verify-diagnostics -o %t 2>&1 | filecheck %s

// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 3]]:6: error: expected error "no such error" was not produced
// CHECK-NEXT: // expected{{-}}error @+1 {{.*}}no such error
func.func @nothing_wrong() {
  // expected-error @+1 {{no such error}}
  func.return
}

// -----

// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 2]]:8: error: unexpected error: unknown dialect 'nope' in op 'nope.op'
func.func @unannotated() {
  %0 = nope.op
}

// -----

// An annotation on the wrong line is not met, and the error is unexpected.
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 3]]:3: error: unexpected error: 'prim.broadcast' op cannot broadcast shape [4] to [8]
// CHECK: verify-diagnostics-failures.mlir:[[# @LINE + 3]]:6: error: expected error "cannot broadcast" was not produced
func.func @wrong_line(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = prim.broadcast %x : tensor<4xf32> -> tensor<8xf32>
  // expected-error @+1 {{cannot broadcast}}
  func.return %x : tensor<4xf32>
}

// CHECK-NOT: Traceback
