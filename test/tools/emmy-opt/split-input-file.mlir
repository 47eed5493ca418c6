// --split-input-file processes each `// -----` piece on its own and separates the outputs the
// same way. An error in one piece does not stop the others, and its line number counts from
// the start of the file.

// RUN: not emmy-opt %s --split-input-file 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=ERR --input-file %t.err

// CHECK:      func.func @first
// CHECK:      // -----
// CHECK-NOT:  func.func
// CHECK:      // -----
// CHECK:      func.func @third
func.func @first() {
  func.return
}

// -----

// ERR: split-input-file.mlir:[[# @LINE + 2]]:3: error: 'func.return' op Expected arguments to have the same types as the function output types
func.func @second(%x: f32) -> i32 {
  func.return %x : f32
}

// -----

func.func @third() {
  func.return
}

// -----

// ERR: split-input-file.mlir:[[# @LINE + 1]]:1: error: unknown op 'func.nope'
func.nope
