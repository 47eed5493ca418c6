// --dump-dir DIR writes the input and the IR after each pass, a named pipeline's passes one by
// one, to numbered files in DIR that emmy-opt reads back; a failing pass leaves the IR as it was
// then in NNN-PASS-failed.mlir. EMMY_DUMP_DIR=DIR does the same wherever emmy runs a pipeline,
// each run in a new numbered folder under DIR: emmy-opt without --dump-dir, and `emmy compile`.

// RUN: rm -rf %t && emmy-opt %s --torch-to-loop --dump-dir %t -o %t.out
// RUN: ls %t | filecheck %s --check-prefix=FILES
// FILES:      000-input.mlir
// FILES-NEXT: 001-decompose-torch.mlir
// FILES-NEXT: 002-fold-reshapes.mlir
// FILES-NEXT: 003-fuse-attention.mlir
// FILES-NEXT: 004-cse.mlir
// FILES-NEXT: 005-fuse-prims.mlir
// FILES-NEXT: 006-lower-fused-to-loop.mlir
// FILES-NEXT: 007-place-results-in-arguments.mlir
// FILES-NEXT: 008-merge-identical-kernels.mlir
// FILES-NEXT: 009-interchange-invariant-reductions.mlir
// FILES-NEXT: 010-hoist-invariant-reciprocals.mlir
// FILES-NEXT: 011-canonicalize.mlir
// FILES-NEXT: 012-cse.mlir
// FILES-NOT:  .mlir

// RUN: filecheck %s --input-file %t/000-input.mlir --check-prefix=INPUT
// INPUT: torch.softmax %input dim 2

// RUN: filecheck %s --input-file %t/005-fuse-prims.mlir --check-prefix=FUSED
// FUSED: fused.kernel @k_softmax(

// RUN: emmy-opt %t/005-fuse-prims.mlir --lower-fused-to-loop | filecheck %s --check-prefix=LOOP
// RUN: filecheck %s --input-file %t/006-lower-fused-to-loop.mlir --check-prefix=LOOP
// LOOP:      loop.kernel @k_softmax(
// LOOP:         loop.for %{{.*}} in 0 to 4 {

// RUN: rm -rf %t.failed && not emmy-opt %s --load-pass-plugin %S/Inputs/test_passes.py -p 'decompose-torch,test-reject-op{op="prim.reduce"}' --dump-dir %t.failed 2>&1 | filecheck %s --check-prefix=ERROR
// ERROR: error: pass 'test-reject-op' failed: cannot handle 'prim.reduce'
// RUN: ls %t.failed | filecheck %s --check-prefix=FAILED-FILES
// FAILED-FILES:      000-input.mlir
// FAILED-FILES-NEXT: 001-decompose-torch.mlir
// FAILED-FILES-NEXT: 002-test-reject-op-failed.mlir
// FAILED-FILES-NOT:  .mlir

// RUN: not emmy-opt %s --cse --dump-dir %s 2>&1 | filecheck %s --check-prefix=NOT-A-FOLDER
// NOT-A-FOLDER: emmy-opt: error: cannot write IR dumps to '{{.*}}dump-dir.mlir': File exists

// RUN: rm -rf %t.env
// RUN: env EMMY_DUMP_DIR=%t.env emmy-opt %s --torch-to-prim -o %t.out
// RUN: env EMMY_DUMP_DIR=%t.env emmy-opt %s --torch-to-fused -o %t.out
// RUN: env EMMY_DUMP_DIR=%t.env emmy compile -c "nn.Softmax(-1)(torch.randn(4, 8))" --ir loop -o %t.out
// RUN: ls %t.env %t.env/001-emmy-opt %t.env/003-torch-to-loop | filecheck %s --check-prefix=RUNS
// RUNS-LABEL: {{^}}{{.*}}.env:
// RUNS-NEXT:  001-emmy-opt
// RUNS-NEXT:  002-emmy-opt
// RUNS-NEXT:  003-torch-to-loop
// RUNS-LABEL: 001-emmy-opt:
// RUNS-NEXT:  000-input.mlir
// RUNS-NEXT:  001-decompose-torch.mlir
// RUNS-LABEL: 003-torch-to-loop:
// RUNS-NEXT:  000-input.mlir
// RUNS-NEXT:  001-decompose-torch.mlir
// RUNS:       012-cse.mlir
// RUN: filecheck %s --input-file %t.env/003-torch-to-loop/012-cse.mlir --check-prefix=COMPILED
// COMPILED: loop.kernel @k_softmax(

// An empty EMMY_DUMP_DIR names no folder: emmy-opt runs as without it.
// RUN: env EMMY_DUMP_DIR= emmy-opt %s --torch-to-prim -o %t.out

func.func @forward(%input: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %softmax = torch.softmax %input dim 2 : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  func.return %softmax : tensor<1x4x8xf32>
}
