// `emmy compile` prints a PyTorch program at each level, and what it prints re-parses.

// RUN: emmy compile -c "nn.RMSNorm(2048)(torch.randn(1,32,2048))" --ir torch | filecheck %s --check-prefix=TORCH
// TORCH:      func.func @forward(%[[W:.*]]: tensor<2048xf32> {emmy.param = "weight"}, %[[X:.*]]: tensor<1x32x2048xf32> {emmy.input = "x"}) -> tensor<1x32x2048xf32> {
// TORCH-NEXT:   torch.rms_norm %[[X]] weight %[[W]]
// TORCH-NOT:    prim.

// RUN: emmy compile -c "nn.RMSNorm(2048)(torch.randn(1,32,2048))" --ir prim | filecheck %s --check-prefix=PRIM
// PRIM:     prim.reduce add {{.*}} axes [2] keepdim
// PRIM-NOT: torch.
// PRIM-NOT: fused.kernel

// RUN: emmy compile -c "nn.RMSNorm(2048)(torch.randn(1,32,2048))" --ir fused | filecheck %s --check-prefix=FUSED
// FUSED:         fused.kernel @k_rms_norm(
// FUSED:           prim.reduce add
// FUSED:           fused.yield
// FUSED-NOT:     fused.kernel
// FUSED:         func.return

// RUN: emmy compile -c "nn.RMSNorm(2048)(torch.randn(1,32,2048))" --ir loop | filecheck %s --check-prefix=LOOP
// LOOP:          loop.kernel @k_rms_norm(
// LOOP:            loop.for %[[I:.*]] in 0 to 32 {
// LOOP-NEXT:         loop.for %{{.*}} in 0 to 2048 reduce add init 0.0 : f32 {
// LOOP:              loop.for %{{.*}} in 0 to 2048 {
// LOOP-NOT:      loop.kernel
// LOOP:          func.func @forward(
// LOOP:            memref.alloc() : memref<1x32x2048xf32>
// LOOP-NEXT:       loop.launch @k_rms_norm

// RUN: emmy compile -c "nn.RMSNorm(2048)(torch.randn(1,32,2048))" --ir torch | emmy-opt --torch-to-loop | filecheck %s --check-prefix=LOOP
// RUN: emmy compile -c "nn.Linear(3, 2, bias=False)(torch.randn(4, 3))" --ir fused | emmy-opt | filecheck %s --check-prefix=LINEAR
// LINEAR: fused.kernel @k_linear(
// LINEAR:   prim.contract

// RUN: emmy compile -c "nn.Linear(3, 2)(torch.randn(4, 3))" --ir loop -o %t && emmy-opt %t | filecheck %s --check-prefix=FILE
// FILE: loop.kernel @k_linear(

// RUN: emmy compile -c "nn.RMSNorm(2048)(torch.randn(1,32,2048))" --ir tile | filecheck %s --check-prefix=TILE
// TILE:          tile.kernel @k_rms_norm({{.*}}) grid [32, 1, 1] block [512, 1, 1] attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] grid, [0, 0] thread vector 4, [0, 1] thread vector 4], stage [[0] arg 1 async]>} {
// TILE:            tile.for %[[I:.*]] in 0 to 32 map grid {
// TILE-NEXT:         tile.stage %{{.*}}[%{{.*}}, %[[I]]] async
// TILE-NEXT:         tile.for %{{.*}} in 0 to 2048 map thread vector 4 reduce add
// TILE:            tile.for %{{.*}} in 0 to 2048 map thread vector 4 {
// TILE:          tile.launch @k_rms_norm

// RUN: emmy compile -c "nn.RMSNorm(2048)(torch.randn(1,32,2048))" --ir kernel | emmy-opt | filecheck %s --check-prefix=KERNEL
// KERNEL:        kernel.func @k_rms_norm(
// KERNEL:          kernel.cp_async
// KERNEL:          kernel.vector_load
// KERNEL:          kernel.shuffle xor
// KERNEL:          kernel.vector_store
// KERNEL:        kernel.launch @k_rms_norm({{.*}}) grid [32, 1, 1] block [512, 1, 1] smem 0

// RUN: emmy compile -c "nn.RMSNorm(2048).to(torch.bfloat16)(torch.randn(1,48,2048,dtype=torch.bfloat16))" --ir cuda -o %t.cu && filecheck %s --check-prefix=CUDA < %t.cu
// RUN: nvcc -arch=sm_90a -c %t.cu -o %t.o
// CUDA:          #include <cuda_bf16.h>
// CUDA:          extern "C" __global__ void __launch_bounds__(256) k_rms_norm(const __nv_bfloat16* __restrict__ p_weight, const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ out) {
// CUDA:            cp.async.cg.shared.global
// CUDA:            *reinterpret_cast<uint4*>
