// Standard input is read when no file (or `-`) is given, and is called <stdin> in errors.

// RUN: emmy-opt < %s | filecheck %s --check-prefix=OUTPUT
// RUN: emmy-opt - < %s | filecheck %s --check-prefix=OUTPUT
// OUTPUT: func.func @f

// RUN: not emmy-opt --test-reject-op --load-pass-plugin %S/Inputs/test_passes.py < %s 2>&1 | filecheck %s
// CHECK: <stdin>:[[# @LINE + 3]]:3: error: pass 'test-reject-op' failed: cannot handle 'arith.addf'
// CHECK-NOT: Traceback
func.func @f(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  func.return %y : f32
}
