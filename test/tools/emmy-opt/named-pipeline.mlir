// A named pipeline runs as its passes: --print-ir-after-all dumps the IR after each of them,
// --time-passes gives each its own row, and an option given to the pipeline goes to each of its
// passes that declares it, in every spelling a pass option has. An option that none of its
// passes declares is an error that names theirs.

// RUN: emmy-opt %s --torch-to-kernel --print-ir-after-all -o %t 2>&1 | grep "IR Dump" | filecheck %s --check-prefix=DUMPS
// DUMPS:      // -----// IR Dump After decompose-torch //----- //
// DUMPS-NEXT: // -----// IR Dump After fold-reshapes //----- //
// DUMPS-NEXT: // -----// IR Dump After fuse-attention //----- //
// DUMPS-NEXT: // -----// IR Dump After cse //----- //
// DUMPS-NEXT: // -----// IR Dump After fuse-prims //----- //
// DUMPS-NEXT: // -----// IR Dump After lower-fused-to-loop //----- //
// DUMPS-NEXT: // -----// IR Dump After place-results-in-arguments //----- //
// DUMPS-NEXT: // -----// IR Dump After merge-identical-kernels //----- //
// DUMPS-NEXT: // -----// IR Dump After interchange-invariant-reductions //----- //
// DUMPS-NEXT: // -----// IR Dump After hoist-invariant-reciprocals //----- //
// DUMPS-NEXT: // -----// IR Dump After canonicalize //----- //
// DUMPS-NEXT: // -----// IR Dump After cse //----- //
// DUMPS-NEXT: // -----// IR Dump After choose-tile-schedule //----- //
// DUMPS-NEXT: // -----// IR Dump After expand-loop-attention //----- //
// DUMPS-NEXT: // -----// IR Dump After expand-loop-contract //----- //
// DUMPS-NEXT: // -----// IR Dump After lower-loop-to-tile //----- //
// DUMPS-NEXT: // -----// IR Dump After lower-tile-to-kernel //----- //
// DUMPS-NEXT: // -----// IR Dump After predicate-write-backs //----- //
// DUMPS-NEXT: // -----// IR Dump After canonicalize //----- //
// DUMPS-NEXT: // -----// IR Dump After cse //----- //
// DUMPS-NEXT: // -----// IR Dump After merge-identical-kernels //----- //
// DUMPS-NEXT: // -----// IR Dump After reuse-identical-launches //----- //
// DUMPS-NOT:  IR Dump

// --print-ir-after-change compares the IR pass by pass: fold-reshapes finds no reshape here,
// fuse-attention no attention, the first cse no repeated value, and the next canonicalize and
// cse nothing to simplify.
// RUN: emmy-opt %s --torch-to-kernel --print-ir-after-change -o %t 2>&1 | grep "IR Dump" | filecheck %s --check-prefix=CHANGES
// CHANGES:      IR Dump After decompose-torch
// CHANGES-NEXT: IR Dump After fuse-prims
// CHANGES-NEXT: IR Dump After lower-fused-to-loop
// CHANGES-NEXT: IR Dump After hoist-invariant-reciprocals
// CHANGES-NEXT: IR Dump After choose-tile-schedule
// CHANGES-NEXT: IR Dump After lower-loop-to-tile
// CHANGES-NEXT: IR Dump After lower-tile-to-kernel
// CHANGES-NEXT: IR Dump After canonicalize
// CHANGES-NEXT: IR Dump After cse
// CHANGES-NOT:  IR Dump

// Each dump is the IR at that point: Tensor IR after decompose-torch, Loop IR after
// lower-fused-to-loop.
// RUN: emmy-opt %s --torch-to-loop --print-ir-after-all -o %t 2>&1 | filecheck %s --check-prefix=LEVELS
// LEVELS:      IR Dump After decompose-torch
// LEVELS-NEXT: builtin.module {
// LEVELS-NOT:  torch.softmax
// LEVELS:      prim.reduce max
// LEVELS:      IR Dump After lower-fused-to-loop
// LEVELS-NEXT: builtin.module {
// LEVELS-NEXT:   loop.kernel @k_softmax(

// RUN: emmy-opt %s --torch-to-tile --time-passes -o %t 2>&1 | filecheck %s --check-prefix=TIMING
// TIMING:      ----Wall Time----  ----Name----
// TIMING-NEXT: %)  Parser
// TIMING-NEXT: %)  decompose-torch
// TIMING-NEXT: %)  fold-reshapes
// TIMING-NEXT: %)  fuse-attention
// TIMING-NEXT: %)  cse
// TIMING-NEXT: %)  fuse-prims
// TIMING-NEXT: %)  lower-fused-to-loop
// TIMING-NEXT: %)  place-results-in-arguments
// TIMING-NEXT: %)  merge-identical-kernels
// TIMING-NEXT: %)  interchange-invariant-reductions
// TIMING-NEXT: %)  hoist-invariant-reciprocals
// TIMING-NEXT: %)  canonicalize
// TIMING-NEXT: %)  cse
// TIMING-NEXT: %)  choose-tile-schedule
// TIMING-NEXT: %)  expand-loop-attention
// TIMING-NEXT: %)  expand-loop-contract
// TIMING-NEXT: %)  lower-loop-to-tile
// TIMING-NEXT: %)  Verifier
// TIMING-NEXT: %)  Output
// TIMING-NEXT: (100.0%)  Total

// RUN: emmy-opt %s --torch-to-tile | filecheck %s --check-prefix=DEFAULT
// DEFAULT: tile.kernel @k_softmax({{.*}}) grid [4, 1, 1] block [32, 1, 1]

// RUN: emmy-opt %s --torch-to-tile=block-size=64 | filecheck %s --check-prefix=BLOCK-64
// RUN: emmy-opt %s --torch-to-tile="block_size=64" | filecheck %s --check-prefix=BLOCK-64
// RUN: emmy-opt %s -p 'torch-to-tile{block-size=64}' | filecheck %s --check-prefix=BLOCK-64
// RUN: emmy-opt %s --torch-to-kernel=block-size=64 | filecheck %s --check-prefix=BLOCK-64-KERNEL
// BLOCK-64: tile.kernel @k_softmax({{.*}}) grid [4, 1, 1] block [64, 1, 1]
// BLOCK-64-KERNEL: kernel.launch @k_softmax({{.*}}) grid [4, 1, 1] block [64, 1, 1]

// Two options for two passes: keep-unit-dims to lower-fused-to-loop, vector-width to
// choose-tile-schedule.
// RUN: emmy-opt %s --torch-to-tile='keep-unit-dims=true vector-width=1' --print-ir-after-all 2>&1 | filecheck %s --check-prefix=TWO
// TWO:      IR Dump After lower-fused-to-loop
// TWO:        loop.for %{{.*}} in 0 to 1 {
// TWO:      IR Dump After lower-loop-to-tile
// TWO:      tile.kernel @k_softmax({{.*}}) grid [4, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid, [0, 0] thread, [0, 1] thread, [0, 2] thread]

// RUN: not emmy-opt %s --torch-to-tile=blocksize=64 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not emmy-opt %s -p 'torch-to-tile{blocksize=64}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: emmy-opt: error: pipeline 'torch-to-tile' has no option 'blocksize'; did you mean 'block-size'? (its options: keep-unit-dims, block-size, vector-width, stage, split-reductions, tuned)
// UNKNOWN-NOT: Traceback

// RUN: not emmy-opt %s --torch-to-fused=block-size=64 2>&1 | filecheck %s --check-prefix=NONE
// NONE: emmy-opt: error: pipeline 'torch-to-fused' has no option 'block-size' (its options: none)

// A bad value is reported for the pass that declares the option.
// RUN: not emmy-opt %s --torch-to-tile=block-size=many 2>&1 | filecheck %s --check-prefix=VALUE
// VALUE: emmy-opt: error: option 'block-size' of pass 'choose-tile-schedule' expects int, got 'many'

// --list-passes and --help show a pipeline's passes and options.
// RUN: emmy-opt --list-passes | filecheck %s --check-prefix=LIST
// LIST:      torch-to-loop
// LIST-NEXT:   Pipeline: Torch IR to Loop IR. Passes: decompose-torch, fold-reshapes, fuse-attention, cse, fuse-prims, lower-fused-to-loop, place-results-in-arguments, merge-identical-kernels, interchange-invariant-reductions, hoist-invariant-reciprocals, canonicalize, cse.
// LIST-NEXT:   keep-unit-dims: bool = false
// RUN: emmy-opt --help | filecheck %s --check-prefix=HELP
// HELP:      {{^}}  --torch-to-tile [OPTIONS]
// HELP-NEXT: Pipeline: Torch IR to Tile IR. Passes: decompose-
// HELP:      lower-loop-to-tile. Options:
// HELP-NEXT: keep-unit-dims, block-size,

func.func @forward(%input: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %softmax = torch.softmax %input dim 2 : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  func.return %softmax : tensor<1x4x8xf32>
}
