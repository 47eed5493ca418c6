// An op of an unknown dialect, or an unknown op of a known dialect, is reported at its name.

// RUN: not emmy-opt %s --split-input-file 2>&1 | filecheck %s --strict-whitespace --match-full-lines

//      CHECK:{{.*}}unknown-op.mlir:[[# @LINE + 4]]:8: error: unknown dialect 'nope' in op 'nope.relu'
// CHECK-NEXT:  %y = nope.relu %x : f32
// CHECK-NEXT:       ^~~~~~~~~
func.func @unknown_dialect(%x: f32) -> f32 {
  %y = nope.relu %x : f32
  func.return %y : f32
}

// -----

//      CHECK:{{.*}}unknown-op.mlir:[[# @LINE + 4]]:8: error: unknown op 'prim.relu'
// CHECK-NEXT:  %y = prim.relu %x : f32
// CHECK-NEXT:       ^~~~~~~~~
func.func @unknown_op(%x: f32) -> f32 {
  %y = prim.relu %x : f32
  func.return %y : f32
}

// -----

// The generic form too.
//      CHECK:{{.*}}unknown-op.mlir:[[# @LINE + 1]]:2: error: unknown dialect 'nope' in op 'nope.op'
"nope.op"() : () -> ()

//  CHECK-NOT:{{.*}}Traceback{{.*}}
