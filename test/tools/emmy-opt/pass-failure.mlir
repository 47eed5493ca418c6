// A failing pass is reported at the op it names, else at the start of the module; a pass that
// crashes is an internal error without a traceback (unless EMMY_DEBUG=1); IR that a pass leaves
// invalid is reported at the op, or at its nearest ancestor with a location.
// The failing passes come from a plugin, as a pass author's own passes do.

// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py --test-reject-op 2>&1 | filecheck %s --check-prefix=AT-OP
// AT-OP: pass-failure.mlir:[[# @LINE + 22]]:3: error: pass 'test-reject-op' failed: cannot handle 'arith.addf'
// AT-OP-NEXT: {{^}}  %y = arith.addf %x, %x : f32
// AT-OP-NOT: Traceback

// Two options in MLIR's form, and a string in quotes.
// RUN: not emmy-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-reject-op='op="arith.mulf" reason=refuses' 2>&1 | filecheck %s --check-prefix=AT-MODULE
// AT-MODULE: pass-failure.mlir:[[# @LINE + 15]]:1: error: pass 'test-reject-op' failed: found no 'arith.mulf' that it refuses

// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py --test-crash 2>&1 | filecheck %s --check-prefix=CRASH
// CRASH: pass-failure.mlir:[[# @LINE + 12]]:1: error: internal error in pass 'test-crash': KeyError: 'missing-key' (EMMY_DEBUG=1 prints the traceback)
// CRASH-NOT: Traceback

// RUN: not env EMMY_DEBUG=1 emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py --test-crash 2>&1 | filecheck %s --check-prefix=DEBUG
// DEBUG: Traceback (most recent call last):
// DEBUG: KeyError: 'missing-key'
// DEBUG: pass-failure.mlir:[[# @LINE + 6]]:1: error: internal error in pass 'test-crash': KeyError: 'missing-key'

// The new func.return has no location: the error points at its function.
// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py --test-drop-return-values 2>&1 | filecheck %s --check-prefix=INVALID-IR
// INVALID-IR: pass-failure.mlir:[[# @LINE + 2]]:1: error: after pass 'test-drop-return-values': 'func.return' op Expected arguments to have the same types as the function output types
// INVALID-IR-NOT: Traceback
func.func @f(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  func.return %y : f32
}
