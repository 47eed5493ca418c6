// The IR is verified after each pass given on the command line, and after a named pipeline as a
// whole: its passes are verified together at its end, as `lower()` does, and an error there
// names the pipeline. --verify-each verifies after each of its passes too, and names the pass.
// The pipeline comes from a plugin, as a pass author's own pipelines do.

// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py --test-drop-then-cse 2>&1 | filecheck %s --check-prefix=PIPELINE
// PIPELINE: verify-each.mlir:[[# @LINE + 16]]:1: error: after pipeline 'test-drop-then-cse': 'func.return' op Expected arguments to have the same types as the function output types

// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py --test-drop-then-cse --verify-each 2>&1 | filecheck %s --check-prefix=EACH
// EACH: verify-each.mlir:[[# @LINE + 13]]:1: error: after pass 'test-drop-return-values': 'func.return' op Expected arguments to have the same types as the function output types

// Without --verify-each, the pipeline's second pass runs on what its first left.
// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py --test-drop-then-cse --print-ir-after-all 2>&1 | filecheck %s --check-prefix=RUNS-ON
// RUN: not emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py --test-drop-then-cse --verify-each --print-ir-after-all 2>&1 | filecheck %s --check-prefix=STOPS
// RUNS-ON: IR Dump After test-drop-return-values
// RUNS-ON: IR Dump After cse
// STOPS:     IR Dump After test-drop-return-values
// STOPS-NOT: IR Dump After cse

// RUN: emmy-opt --load-pass-plugin %S/Inputs/test_passes.py --list-passes | filecheck %s --check-prefix=LIST
// LIST:      test-drop-then-cse
// LIST-NEXT:   Pipeline: test-drop-return-values, which leaves IR that does not verify, then cse. Passes: test-drop-return-values, cse.
func.func @f(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  func.return %y : f32
}
