// --pass-pipeline takes a pipeline in MLIR's textual form, anchored on the module, or without
// the anchor as -p does; spaces may surround the passes. A nested anchor is an error: every
// emmy pass runs on the module.

// RUN: emmy-opt %s --pass-pipeline='builtin.module(cse,canonicalize)' --print-ir-after-all -o %t 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: emmy-opt %s --pass-pipeline=' builtin.module( cse , canonicalize ) ' --print-ir-after-all -o %t 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: emmy-opt %s --pass-pipeline 'cse,canonicalize' --print-ir-after-all -o %t 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: emmy-opt %s -p 'builtin.module(cse, canonicalize)' --print-ir-after-all -o %t 2>&1 | filecheck %s --check-prefix=ORDER
// ORDER:     IR Dump After cse
// ORDER:     IR Dump After canonicalize
// ORDER-NOT: IR Dump

// Options in braces.
// RUN: emmy-opt %s --pass-pipeline='builtin.module(lower-fused-to-loop{keep-unit-dims=true},cse)' | filecheck %s --check-prefix=KEEP
// KEEP-LABEL: loop.kernel @k_relu(
// KEEP:         loop.for %{{.*}} in 0 to 1 {
// KEEP-NEXT:      loop.for %{{.*}} in 0 to 5 {

// RUN: emmy-opt %s --pass-pipeline='builtin.module()' | filecheck %s --check-prefix=EMPTY
// EMPTY: fused.kernel @k_relu

// RUN: not emmy-opt %s --pass-pipeline='builtin.module(func.func(cse))' 2>&1 | filecheck %s --check-prefix=NESTED
// NESTED: emmy-opt: error: bad pass pipeline: 'func.func(...)' anchors passes on other ops, and emmy's passes all run on the module: list them in builtin.module(...) itself
// NESTED-NOT: Traceback

// RUN: not emmy-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | filecheck %s --check-prefix=UNCLOSED
// UNCLOSED: emmy-opt: error: bad pass pipeline: 'builtin.module(' has no ')' at its end

// A syntax error inside the anchor is shown in the pipeline the anchor holds.
// RUN: not emmy-opt %s --pass-pipeline='builtin.module(lower-fused-to-loop{keep-unit-dims=true)' 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX:      emmy-opt: error: bad pass pipeline: pass-pipeline:1:40
// SYNTAX-NEXT: lower-fused-to-loop{keep-unit-dims=true
// SYNTAX-NEXT: {{^ {39}\^$}}
// SYNTAX-NEXT: Malformed pass arguments, expected either a space or `}` here

// RUN: not emmy-opt %s --pass-pipeline='builtin.module(cse)' --cse 2>&1 | filecheck %s --check-prefix=BOTH
// BOTH: emmy-opt: error: give passes either as a -p pipeline or as flags, not both (flags: --cse)

func.func @forward(%x: tensor<1x5xf32>) -> tensor<1x5xf32> {
  %y = fused.kernel @k_relu(%x) : (tensor<1x5xf32>) -> tensor<1x5xf32> {
  ^bb0(%a: tensor<1x5xf32>):
    %r = prim.map(%a) : (tensor<1x5xf32>) -> tensor<1x5xf32> {
    ^bb0(%v: f32):
      %zero = arith.constant 0.0 : f32
      %m = arith.maximumf %v, %zero : f32
      prim.yield %m : f32
    }
    fused.yield %r : tensor<1x5xf32>
  }
  func.return %y : tensor<1x5xf32>
}
