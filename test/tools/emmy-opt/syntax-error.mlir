// A syntax error is reported at the offending token: file:line:col, the line, and a caret.

// RUN: not emmy-opt %s 2>&1 | filecheck %s --strict-whitespace --match-full-lines

//      CHECK:{{.*}}syntax-error.mlir:[[# @LINE + 5]]:22: error: Expected ','
// CHECK-NEXT:  %y = arith.addf %x %x : f32
// CHECK-NEXT:                     ^~
//  CHECK-NOT:{{.*}}Traceback{{.*}}
func.func @f(%x: f32) -> f32 {
  %y = arith.addf %x %x : f32
  func.return %y : f32
}
