// -o replaces the output file only with a whole, successful result: a failing chunk under
// --split-input-file leaves the old file as it was (no partial output, no empty file), and no
// temporary file is left beside it.

// RUN: rm -rf %t && mkdir %t
// RUN: echo "the old output" > %t/out.mlir
// RUN: not emmy-opt %s --split-input-file -o %t/out.mlir
// RUN: cat %t/out.mlir | filecheck %s --check-prefix=OLD
// RUN: ls -A %t | filecheck %s --check-prefix=FILES
// RUN: emmy-opt %s --split-input-file --verify-diagnostics -o %t/out.mlir
// RUN: cat %t/out.mlir | filecheck %s --check-prefix=NEW

// OLD: the old output
// OLD-NOT: func.func
// FILES: out.mlir
// FILES-NOT: tmp
// NEW: func.func @fine
// NEW: // -----

func.func @fine(%x: f32) -> f32 {
  func.return %x : f32
}

// -----

func.func @broken(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{reduce axis 3 is out of range for a rank-2 input}}
  %r = prim.reduce add %x axes [3] keepdim init 0.0 : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
