// An unknown pass is an error that names the closest registered pass.

// RUN: not emmy-opt %s -p 'canonicalize,lower-fused-to-loops' 2>&1 | filecheck %s --check-prefix=PIPELINE
// PIPELINE: emmy-opt: error: unknown pass 'lower-fused-to-loops'; did you mean 'lower-fused-to-loop'?
// PIPELINE-NOT: Traceback

// RUN: not emmy-opt %s --canonicalise 2>&1 | filecheck %s --check-prefix=FLAG
// FLAG: emmy-opt: error: unknown pass or option '--canonicalise'; did you mean '--canonicalize'?
// FLAG-NOT: Traceback

// RUN: not emmy-opt %s --lower-fuse-to-loop=keep-unit-dims=true 2>&1 | filecheck %s --check-prefix=FLAG-WITH-OPTIONS
// FLAG-WITH-OPTIONS: emmy-opt: error: unknown pass or option '--lower-fuse-to-loop'; did you mean '--lower-fused-to-loop'?

// RUN: not emmy-opt %s -p 'xyzzy' 2>&1 | filecheck %s --check-prefix=NOTHING-CLOSE
// NOTHING-CLOSE: emmy-opt: error: unknown pass 'xyzzy' (--list-passes lists them)

func.func @f() {
  func.return
}
