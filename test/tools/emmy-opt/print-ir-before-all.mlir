// --print-ir-before-all (or MLIR's --mlir-print-ir-before-all) prints the IR before each pass
// to stderr under an MLIR-style header.

// RUN: emmy-opt %s --print-ir-before-all --cse --canonicalize -o %t 2>&1 | filecheck %s
// RUN: emmy-opt %s --mlir-print-ir-before-all --cse --canonicalize -o %t 2>&1 | filecheck %s

// CHECK:      // -----// IR Dump Before cse //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        %a = arith.addf %x, %x : f32
// CHECK-NEXT:   %b = arith.addf %x, %x : f32
// CHECK:      // -----// IR Dump Before canonicalize //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        %[[SUM:.*]] = arith.addf %x, %x : f32
// CHECK-NEXT:   func.return %[[SUM]], %[[SUM]] : f32, f32
// CHECK-NOT:  IR Dump
func.func @twice(%x: f32) -> (f32, f32) {
  %a = arith.addf %x, %x : f32
  %b = arith.addf %x, %x : f32
  func.return %a, %b : f32, f32
}
