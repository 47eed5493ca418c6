// --list-passes lists every registered pass with its description and its options, with their
// types and defaults; it reads no input.

// RUN: emmy-opt --list-passes | filecheck %s
// CHECK:      canonicalize
// CHECK-NEXT:   Applies all canonicalization patterns.
// CHECK-NEXT: choose-tile-schedule
// CHECK-NEXT:   Writes a #tile.schedule on each loop.kernel that has none
// CHECK-NEXT:   block-size: int = 0
// CHECK:      cse
// CHECK-NEXT:   Replaces each operation that repeats an earlier, equivalent one by its results.
// CHECK-NEXT: dce
// CHECK-NEXT:   Erases operations whose results are unused
// CHECK:      lower-fused-to-loop
// CHECK-NEXT:   Lowers each fused.kernel to a loop.kernel
// CHECK-NEXT:   keep-unit-dims: bool = false
// CHECK-NEXT:     Give size-1 dims their own one-trip loop

// Passes that a plugin registers are listed too.
// RUN: emmy-opt --load-pass-plugin %S/Inputs/test_passes.py --list-passes | filecheck %s --check-prefix=PLUGIN
// PLUGIN:      test-reject-op
// PLUGIN-NEXT:   Rejects the first op named `op`
// PLUGIN-NEXT:   op: str = arith.addf

// --help shows every pass as a flag.
// RUN: emmy-opt --help | filecheck %s --check-prefix=HELP
// HELP: --lower-fused-to-loop [OPTIONS]
// HELP: --canonicalize [OPTIONS]
