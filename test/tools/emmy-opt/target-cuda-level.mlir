// The cuda target prints Kernel IR: IR at a level above it is an error at its first op of that
// level's dialect, naming the level and the passes that take it to Kernel IR (a named pipeline
// from Torch IR), rather than a file of CUDA C++ with no kernels in it.

// RUN: not emmy-opt %s -t cuda 2>&1 | filecheck %s --check-prefix=TORCH
// TORCH:      target-cuda-level.mlir:[[# @LINE + 28]]:3: error: target 'cuda' failed: expects Kernel IR, and this is Torch IR ('torch.softmax' here): --torch-to-kernel takes it to Kernel IR
// TORCH-NEXT: {{^}}  %softmax = torch.softmax
// TORCH-NOT:  CUDA C++

// RUN: emmy-opt %s --torch-to-prim | not emmy-opt -t cuda 2>&1 | filecheck %s --check-prefix=PRIM
// PRIM: <stdin>:3:5: error: target 'cuda' failed: expects Kernel IR, and this is Tensor IR ('prim.reduce' here): -p 'fold-reshapes,fuse-attention,cse,fuse-prims,lower-fused-to-loop,place-results-in-arguments,merge-identical-kernels,interchange-invariant-reductions,hoist-invariant-reciprocals,canonicalize,cse,choose-tile-schedule,expand-loop-attention,expand-loop-contract,lower-loop-to-tile,lower-tile-to-kernel,predicate-write-backs,canonicalize,cse,merge-identical-kernels,reuse-identical-launches' takes it to Kernel IR

// Fused IR holds prim ops too, inside its fused.kernels: its level is the lowest it uses.
// RUN: emmy-opt %s --torch-to-fused | not emmy-opt -t cuda 2>&1 | filecheck %s --check-prefix=FUSED
// FUSED: <stdin>:3:5: error: target 'cuda' failed: expects Kernel IR, and this is Fused IR ('fused.kernel' here): -p 'lower-fused-to-loop,

// RUN: emmy-opt %s --torch-to-loop | not emmy-opt -t cuda 2>&1 | filecheck %s --check-prefix=LOOP
// LOOP: <stdin>:2:3: error: target 'cuda' failed: expects Kernel IR, and this is Loop IR ('loop.kernel' here): -p 'choose-tile-schedule,expand-loop-attention,expand-loop-contract,lower-loop-to-tile,lower-tile-to-kernel,predicate-write-backs,canonicalize,cse,merge-identical-kernels,reuse-identical-launches' takes it to Kernel IR

// RUN: emmy-opt %s --torch-to-tile | not emmy-opt -t cuda 2>&1 | filecheck %s --check-prefix=TILE
// TILE: <stdin>:2:3: error: target 'cuda' failed: expects Kernel IR, and this is Tile IR ('tile.kernel' here): -p 'lower-tile-to-kernel,predicate-write-backs,canonicalize,cse,merge-identical-kernels,reuse-identical-launches' takes it to Kernel IR

// What the error suggests does take the program to Kernel IR.
// RUN: emmy-opt %s --torch-to-loop | emmy-opt -p 'choose-tile-schedule,expand-loop-attention,expand-loop-contract,lower-loop-to-tile,lower-tile-to-kernel,canonicalize,cse' -t cuda | filecheck %s --check-prefix=KERNEL
// RUN: emmy-opt %s --torch-to-kernel | emmy-opt -t cuda | filecheck %s --check-prefix=KERNEL
// KERNEL: extern "C" __global__ void __launch_bounds__(32) k_softmax(

// IR of no level's dialect is Kernel IR without kernels: only the header is printed.
// RUN: echo "func.func @f() { func.return }" | emmy-opt -t cuda | filecheck %s --check-prefix=NO-KERNELS
// NO-KERNELS:     // CUDA C++ printed by emmy's cuda target
// NO-KERNELS-NOT: __global__

func.func @forward(%input: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %softmax = torch.softmax %input dim 2 : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  func.return %softmax : tensor<1x4x8xf32>
}
