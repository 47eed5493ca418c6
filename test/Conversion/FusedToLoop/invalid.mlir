// RUN: not emmy-opt %s --lower-fused-to-loop 2>&1 | filecheck %s

// A host function at the fused level holds only kernel launches and constants: anything
// else is a pass failure located at the offending op, not a traceback.

// CHECK: invalid.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: {{.*}}'arith.addf' in host function @forward: a host function holds only fused.kernel launches, dense prim.constants and func.return at this level
// CHECK-NOT: Traceback

func.func @forward(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  func.return %y : f32
}
