// --print-ir-after-failure (or --mlir-print-ir-after-failure) prints the IR as a failing pass
// left it, under an `IR Dump After PASS Failed` header, before the error; IR that a pass leaves
// invalid counts as its failure, as in MLIR. Passes that succeed print nothing.
// The failing passes come from a plugin, as a pass author's own passes do.

// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py --print-ir-after-failure --cse --test-reject-op 2>&1 | filecheck %s --check-prefix=REJECT
// REJECT-NOT:  IR Dump After cse
// REJECT:      // -----// IR Dump After test-reject-op Failed //----- //
// REJECT-NEXT: builtin.module {
// REJECT-NEXT:   func.func @f(%x: f32) -> f32 {
// REJECT-NEXT:     %y = arith.addf %x, %x : f32
// REJECT-NEXT:     func.return %y : f32
// REJECT:      print-ir-after-failure.mlir:[[# @LINE + 16]]:3: error: pass 'test-reject-op' failed: cannot handle 'arith.addf'

// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py --mlir-print-ir-after-failure --test-drop-return-values --cse 2>&1 | filecheck %s --check-prefix=INVALID
// INVALID:      // -----// IR Dump After test-drop-return-values Failed //----- //
// INVALID-NEXT: builtin.module {
// INVALID-NEXT:   func.func @f(%x: f32) -> f32 {
// INVALID-NEXT:     %y = arith.addf %x, %x : f32
// INVALID-NEXT:     func.return
// INVALID:      error: after pass 'test-drop-return-values': 'func.return' op Expected arguments to have the same types as the function output types
// INVALID-NOT:  IR Dump After cse

// Without a failure, nothing is printed.
// RUN: emmy-opt %s --print-ir-after-failure --cse -o %t 2>&1 | filecheck %s --allow-empty --check-prefix=QUIET
// QUIET-NOT: {{.}}

func.func @f(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  func.return %y : f32
}
