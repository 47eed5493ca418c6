// RUN: emmy-opt %s --lower-tile-to-kernel --canonicalize --cse -t cuda | filecheck %s

// A tile.gemm as CUDA: Y (70x50, f32) = A (70x40) B (40x50, [K, N]) in f16, 64x64 tiles of 2x2
// warps, K slices of 32 three deep. The K-slice tiles are swizzled __shared__ arrays; the
// copies are cp.async with PTX's src-size (zero-filling past the ends of M, N and K), 4 bytes
// a copy for B (its rows of 50 elements keep only 4-byte alignment); the warps load fragments
// with ldmatrix (x4 for A, x4 trans for B's [K, N] tiles) and multiply with mma.sync, and the
// accumulators stay in registers through the K loop.

// CHECK:       // kernel.ldmatrix x4: the warp loads 4 matrices of 8 rows of 16 bytes from shared memory; lane
// CHECK:       // kernel.ldmatrix x4 trans: the warp loads 4 matrices
// CHECK:       // kernel.mma_sync m16n8k16 on f16: D = A * B + C on the warp's 16x8 tile, accumulating in f32.
// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(128) gemm(const __half* __restrict__ a, const __half* __restrict__ b, float* __restrict__ y) {
// CHECK-NEXT:    __shared__ alignas(512) __half a_tiles[6144];
// CHECK-NEXT:    __shared__ alignas(1024) __half b_tiles[6144];
// CHECK:         asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(static_cast<unsigned int>(__cvta_generic_to_shared(&a_tiles[emmy_swizzle({{.*}}, 6, 3, 3)]))), "l"(&a[{{.*}}]), "r"({{.*}}) : "memory");
// CHECK:         asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(static_cast<unsigned int>(__cvta_generic_to_shared(&b_tiles[emmy_swizzle({{.*}}, 6, 7, 3)]))), "l"(&b[{{.*}}]), "r"({{.*}}) : "memory");
// CHECK:         asm volatile("cp.async.commit_group;\n" ::: "memory");
// CHECK:         for (long [[KT:.*]] = 0; [[KT]] < 2; [[KT]] += 1) {
// CHECK-NEXT:      asm volatile("cp.async.wait_group 1;\n" ::: "memory");
// CHECK-NEXT:      __syncthreads();
// CHECK:           emmy_ldmatrix_x4(&{{.*}}, &a_tiles[{{.*}} * 2048 + emmy_swizzle({{.*}})]);
// CHECK:           emmy_ldmatrix_x4_trans(&{{.*}}, &b_tiles[{{.*}} * 2048 + emmy_swizzle({{.*}})]);
// CHECK:           emmy_mma_m16n8k16_f16(&{{.*}}, &{{.*}}, &{{.*}}, &{{.*}});
// CHECK:         if ({{.*}}) {
// CHECK-NEXT:      emmy_f32x2 [[PAIR:.*]] = {{[{][{]}}[[E0:.*]], [[E0]]{{[}][}]}};
// CHECK-NEXT:      [[PAIR]].lane[1] = {{.*}};
// CHECK-NEXT:      *reinterpret_cast<float2*>(&y[{{.*}}]) = *reinterpret_cast<const float2*>(&[[PAIR]]);
// CHECK-NEXT:    }

tile.kernel @gemm(%a: memref<70x40xf16>, %b: memref<40x50xf16>, %y: memref<70x50xf32>) grid [1, 2, 1] block [128, 1, 1] {
  tile.gemm %a[m, k] * %b[k, n] : memref<70x40xf16>, memref<40x50xf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<70x50xf32>
  }
}

func.func @forward(%a: memref<70x40xf16>, %b: memref<40x50xf16>) -> memref<70x50xf32> {
  %y = memref.alloc() : memref<70x50xf32>
  tile.launch @gemm(%a, %b, %y) : memref<70x40xf16>, memref<40x50xf16>, memref<70x50xf32>
  func.return %y : memref<70x50xf32>
}
