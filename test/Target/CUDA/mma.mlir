// RUN: emmy-opt %s -t cuda | filecheck %s

// Warp-level tensor cores: one warp computes D (16x8, f32) = A (16x32, bf16) @ B (32x8, bf16)
// in two m16n8k16 steps. A and B are staged in shared memory with cp.async; ldmatrix x4 loads
// the A fragment (lane l gives row l % 16, column k0 + 8 (l / 16)), ldmatrix x2 trans the B
// fragment (lane l < 16 gives row k0 + l), and the accumulator is carried through the loop.
// Each warp instruction is a helper wrapping its inline PTX; the fragments are vector structs
// passed by address.

// CHECK:       // kernel.ldmatrix x2 trans: the warp loads 2 matrices of 8 rows of 16 bytes from shared memory; lane
// CHECK-NEXT:  // 8i + j gives the address of row j of matrix i, and each lane receives a 32-bit word of each
// CHECK-NEXT:  // (two 16-bit elements, or an f32), transposed.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_ldmatrix_x2_trans(void* fragment, const void* row) {
// CHECK-NEXT:    unsigned int* r = static_cast<unsigned int*>(fragment);
// CHECK-NEXT:    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
// CHECK-NEXT:                 : "=r"(r[0]), "=r"(r[1])
// CHECK-NEXT:                 : "r"(static_cast<unsigned int>(__cvta_generic_to_shared(row)))
// CHECK-NEXT:                 : "memory");
// CHECK-NEXT:  }
// CHECK:       __device__ __forceinline__ void emmy_ldmatrix_x4(void* fragment, const void* row) {
// CHECK-NEXT:    unsigned int* r = static_cast<unsigned int*>(fragment);
// CHECK-NEXT:    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
// CHECK-NEXT:                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
// CHECK:       // kernel.mma_sync m16n8k16 on bf16: D = A * B + C on the warp's 16x8 tile, accumulating in f32.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_mma_m16n8k16_bf16(void* d, const void* a, const void* b, const void* c) {
// CHECK-NEXT:    float* D = static_cast<float*>(d);
// CHECK-NEXT:    const unsigned int* A = static_cast<const unsigned int*>(a);
// CHECK-NEXT:    const unsigned int* B = static_cast<const unsigned int*>(b);
// CHECK-NEXT:    const float* C = static_cast<const float*>(c);
// CHECK-NEXT:    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
// CHECK-NEXT:                 : "=f"(D[0]), "=f"(D[1]), "=f"(D[2]), "=f"(D[3])
// CHECK-NEXT:                 : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "f"(C[0]), "f"(C[1]), "f"(C[2]), "f"(C[3]));
// CHECK-NEXT:  }
// CHECK:       // kernel.mma_sync m16n8k8 on tf32: D = A * B + C on the warp's 16x8 tile, accumulating in f32;
// CHECK-NEXT:  // A and B are tf32 words (f32 rounded by emmy_round_tf32).
// CHECK-NEXT:  __device__ __forceinline__ void emmy_mma_m16n8k8_tf32(void* d, const void* a, const void* b, const void* c) {
// CHECK-NEXT:    float* D = static_cast<float*>(d);
// CHECK-NEXT:    const unsigned int* A = static_cast<const unsigned int*>(a);
// CHECK-NEXT:    const unsigned int* B = static_cast<const unsigned int*>(b);
// CHECK-NEXT:    const float* C = static_cast<const float*>(c);
// CHECK-NEXT:    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"

// CHECK-LABEL: // kernel.func @warp_gemm: block [32, 1, 1], 1536 bytes of static shared memory
// CHECK-NEXT:  extern "C" __global__ void __launch_bounds__(32) warp_gemm(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b, float* __restrict__ d) {
// CHECK-NEXT:    __shared__ alignas(16) __nv_bfloat16 sa[512];
// CHECK-NEXT:    __shared__ alignas(16) __nv_bfloat16 sb[256];
// CHECK:         __syncthreads();
// CHECK:         emmy_f32x4 acc0 = {{[{][{]}}0.0f, 0.0f, 0.0f, 0.0f{{[}][}]}};
// CHECK-NEXT:    emmy_f32x4 acc = acc0;
// CHECK-NEXT:    for (long k0 = 0; k0 < 32; k0 += 16) {
// CHECK-NEXT:      long ac = k0 + a_off;
// CHECK-NEXT:      emmy_bf16x8 fa;
// CHECK-NEXT:      emmy_ldmatrix_x4(&fa, &sa[l16 * 32 + ac]);
// CHECK-NEXT:      long br = k0 + l16;
// CHECK-NEXT:      emmy_bf16x4 fb;
// CHECK-NEXT:      emmy_ldmatrix_x2_trans(&fb, &sb[br * 8]);
// CHECK-NEXT:      emmy_f32x4 acc_out;
// CHECK-NEXT:      emmy_mma_m16n8k16_bf16(&acc_out, &fa, &fb, &acc);
// CHECK-NEXT:      acc = acc_out;
// CHECK-NEXT:    }
// CHECK:         float d0 = acc.lane[0];
// CHECK:         d[g * 8 + n0] = d0;

// CHECK-LABEL: // kernel.func @tf32_tile: block [32, 1, 1], 0 bytes of static shared memory
// The fragments are rounded to tf32 once, for both products that read them.
// CHECK:         unsigned int fa_tf32[4];
// CHECK-NEXT:    emmy_round_tf32(fa_tf32, &fa, 4);
// CHECK-NEXT:    unsigned int fb_tf32[2];
// CHECK-NEXT:    emmy_round_tf32(fb_tf32, &fb, 2);
// CHECK-NEXT:    emmy_f32x4 fd;
// CHECK-NEXT:    emmy_mma_m16n8k8_tf32(&fd, &fa_tf32, &fb_tf32, &fc);
// CHECK-NEXT:    emmy_f32x4 fe;
// CHECK-NEXT:    emmy_mma_m16n8k8_tf32(&fe, &fa_tf32, &fb_tf32, &fd);
// CHECK-NEXT:    *reinterpret_cast<float4*>(&d[lane * 4]) = *reinterpret_cast<const float4*>(&fe);

kernel.func @warp_gemm(%a: memref<16x32xbf16>, %b: memref<32x8xbf16>, %d: memref<16x8xf32>) block [32, 1, 1] {
  %lane = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %sa = kernel.shared_alloc : memref<16x32xbf16, 3 : i32>
  %sb = kernel.shared_alloc : memref<32x8xbf16, 3 : i32>
  scf.for %v = %lane to %c64 step %c32 {
    %r = arith.divui %v, %c4 : index
    %q = arith.remui %v, %c4 : index
    %c = arith.muli %q, %c8 : index
    kernel.cp_async %sa[%r, %c], %a[%r, %c] bytes 16 : memref<16x32xbf16, 3 : i32>, memref<16x32xbf16>
  }
  kernel.cp_async %sb[%lane, %c0], %b[%lane, %c0] bytes 16 : memref<32x8xbf16, 3 : i32>, memref<32x8xbf16>
  kernel.cp_async_commit
  kernel.cp_async_wait 0
  kernel.barrier
  %l16 = arith.remui %lane, %c16 : index
  %half = arith.divui %lane, %c16 : index
  %a_off = arith.muli %half, %c8 : index
  %zero = arith.constant 0.0 : f32
  %acc0 = vector.broadcast %zero : f32 to vector<4xf32>
  %acc = scf.for %k0 = %c0 to %c32 step %c16 iter_args(%acc_in = %acc0) -> (vector<4xf32>) {
    %ac = arith.addi %k0, %a_off : index
    %fa = kernel.ldmatrix %sa[%l16, %ac] : memref<16x32xbf16, 3 : i32>, vector<8xbf16>
    %br = arith.addi %k0, %l16 : index
    %fb = kernel.ldmatrix %sb[%br, %c0] trans : memref<32x8xbf16, 3 : i32>, vector<4xbf16>
    %acc_out = kernel.mma_sync m16n8k16 %fa, %fb, %acc_in : vector<8xbf16>, vector<4xbf16>, vector<4xf32> -> vector<4xf32>
    scf.yield %acc_out : vector<4xf32>
  }
  %g = arith.divui %lane, %c4 : index
  %g8 = arith.addi %g, %c8 : index
  %q4 = arith.remui %lane, %c4 : index
  %n0 = arith.muli %q4, %c2 : index
  %n1 = arith.addi %n0, %c1 : index
  %d0 = vector.extract %acc[0] : f32 from vector<4xf32>
  %d1 = vector.extract %acc[1] : f32 from vector<4xf32>
  %d2 = vector.extract %acc[2] : f32 from vector<4xf32>
  %d3 = vector.extract %acc[3] : f32 from vector<4xf32>
  memref.store %d0, %d[%g, %n0] : memref<16x8xf32>
  memref.store %d1, %d[%g, %n1] : memref<16x8xf32>
  memref.store %d2, %d[%g8, %n0] : memref<16x8xf32>
  memref.store %d3, %d[%g8, %n1] : memref<16x8xf32>
}

// Each lane's tf32 fragments, given per lane.
kernel.func @tf32_tile(%a: memref<32x4xf32>, %b: memref<32x2xf32>, %c: memref<32x4xf32>, %d: memref<32x4xf32>) block [32, 1, 1] {
  %lane = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %fa = kernel.vector_load %a[%lane, %c0] : memref<32x4xf32>, vector<4xf32>
  %fb = kernel.vector_load %b[%lane, %c0] : memref<32x2xf32>, vector<2xf32>
  %fc = kernel.vector_load %c[%lane, %c0] : memref<32x4xf32>, vector<4xf32>
  %fd = kernel.mma_sync m16n8k8 tf32 %fa, %fb, %fc : vector<4xf32>, vector<2xf32>, vector<4xf32> -> vector<4xf32>
  %fe = kernel.mma_sync m16n8k8 tf32 %fa, %fb, %fd : vector<4xf32>, vector<2xf32>, vector<4xf32> -> vector<4xf32>
  kernel.vector_store %fe, %d[%lane, %c0] : memref<32x4xf32>, vector<4xf32>
}
