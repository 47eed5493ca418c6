// A bad pass option is an error naming the pass and the option.

// RUN: not emmy-opt %s --lower-fused-to-loop=keep-dims=true 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not emmy-opt %s -p 'lower-fused-to-loop{keep-dims=true}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: emmy-opt: error: pass 'lower-fused-to-loop' has no option 'keep-dims'; did you mean 'keep-unit-dims'? (its options: keep-unit-dims)
// UNKNOWN-NOT: Traceback

// RUN: not emmy-opt %s --lower-fused-to-loop=keep-unit-dims=maybe 2>&1 | filecheck %s --check-prefix=VALUE
// VALUE: emmy-opt: error: option 'keep-unit-dims' of pass 'lower-fused-to-loop' expects bool, got 'maybe'

// RUN: not emmy-opt %s --lower-fused-to-loop=keep-unit-dims 2>&1 | filecheck %s --check-prefix=NO-VALUE
// NO-VALUE: emmy-opt: error: option 'keep-unit-dims' of pass 'lower-fused-to-loop' expects bool, got no value

// RUN: not emmy-opt %s --canonicalize=max-iterations=3 2>&1 | filecheck %s --check-prefix=NO-OPTIONS
// NO-OPTIONS: emmy-opt: error: pass 'canonicalize' has no option 'max-iterations' (its options: none)

// RUN: not emmy-opt %s -p 'lower-fused-to-loop{keep-unit-dims=true' 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX:      emmy-opt: error: bad pass pipeline: pass-pipeline:1:40
// SYNTAX-NEXT: lower-fused-to-loop{keep-unit-dims=true
// SYNTAX-NEXT: ^
// SYNTAX-NEXT: Malformed pass arguments, expected either a space or `}` here
// SYNTAX-NOT: Traceback

func.func @f() {
  func.return
}
