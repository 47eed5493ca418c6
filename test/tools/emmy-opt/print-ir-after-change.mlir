// --print-ir-after-change (or --mlir-print-ir-after-change) prints the IR after each pass that
// changed it, and alone: the second cse, canonicalize and dce find nothing to do here. With
// --print-ir-after-all it narrows that flag's dumps to the same ones, as in MLIR.

// RUN: emmy-opt %s --print-ir-after-change -p cse,cse,canonicalize,dce -o %t 2>&1 | filecheck %s
// RUN: emmy-opt %s --mlir-print-ir-after-change --mlir-print-ir-after-all -p cse,cse,canonicalize,dce -o %t 2>&1 | filecheck %s

// CHECK:      // -----// IR Dump After cse //----- //
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @twice(%x: f32) -> (f32, f32) {
// CHECK-NEXT:     %a = arith.addf %x, %x : f32
// CHECK-NEXT:     func.return %a, %a : f32, f32
// CHECK-NOT:  IR Dump

func.func @twice(%x: f32) -> (f32, f32) {
  %a = arith.addf %x, %x : f32
  %b = arith.addf %x, %x : f32
  func.return %a, %b : f32, f32
}
