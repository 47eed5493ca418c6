// --print-ir-after-all (or MLIR's --mlir-print-ir-after-all) prints the IR after each pass to
// stderr under an MLIR-style header.

// RUN: emmy-opt %s --print-ir-after-all --cse --canonicalize -o %t 2>&1 | filecheck %s
// RUN: emmy-opt %s --mlir-print-ir-after-all --cse --canonicalize -o %t 2>&1 | filecheck %s

// CHECK:      // -----// IR Dump After cse //----- //
// CHECK-NEXT: builtin.module {
// CHECK:        %[[SUM:.*]] = arith.addf %x, %x : f32
// CHECK-NEXT:   func.return %[[SUM]], %[[SUM]] : f32, f32
// CHECK:      // -----// IR Dump After canonicalize //----- //
// CHECK-NEXT: builtin.module {
func.func @twice(%x: f32) -> (f32, f32) {
  %a = arith.addf %x, %x : f32
  %b = arith.addf %x, %x : f32
  func.return %a, %b : f32, f32
}
