// A pipeline is given either with -p or as pass flags: both at once is an error.

// RUN: not emmy-opt %s -p canonicalize --cse 2>&1 | filecheck %s
// CHECK: emmy-opt: error: give passes either as a -p pipeline or as flags, not both (flags: --cse)
// CHECK-NOT: Traceback

func.func @f() {
  func.return
}
