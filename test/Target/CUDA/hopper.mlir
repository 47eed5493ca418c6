// RUN: emmy-opt %s -t cuda | filecheck %s

// A warp-specialised Hopper GEMM tile, 128x256 of y = x @ w.T over K = 256 in two stages:
// warpgroup 0 (its first thread) waits until a stage is empty, expects its bytes on the full
// mbarrier and issues two TMA loads (x's and w's boxes) into 128-byte-swizzled shared memory;
// warpgroups 1 and 2 wait until the stage is full, run four wgmma m64n256k16 on it (A rows
// 64 * (warpgroup - 1) on), commit, wait, and release the stage on the empty mbarrier.
// Registers move from the producer to the consumers (setmaxnreg), so the kernel has
// __launch_bounds__(384, 1). Each op is inline PTX, most through a helper; a tensor map is a
// const __grid_constant__ CUtensorMap, whose address TMA takes.

// CHECK:       struct __align__(64) emmy_CUtensorMap { unsigned char bytes[128]; };
// CHECK-EMPTY:
// CHECK-NEXT:  struct __align__(16) emmy_f32x128 { float lane[128]; };
// CHECK-EMPTY:
// CHECK-NEXT:  __device__ __forceinline__ unsigned int emmy_shared_address(const void* p) {
// CHECK-NEXT:    return static_cast<unsigned int>(__cvta_generic_to_shared(p));
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  // kernel.mbarrier_init: the arrivals that complete each phase.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_mbarrier_init(unsigned long long* barrier, unsigned int arrivals) {
// CHECK-NEXT:    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(emmy_shared_address(barrier)), "r"(arrivals) : "memory");
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  // kernel.mbarrier_arrive: one arrival on the current phase.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_mbarrier_arrive(unsigned long long* barrier) {
// CHECK-NEXT:    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(emmy_shared_address(barrier)) : "memory");
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  // kernel.mbarrier_arrive_expect_tx: one arrival; the phase also waits for these bytes.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_mbarrier_arrive_expect_tx(unsigned long long* barrier, unsigned int bytes) {
// CHECK-NEXT:    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(emmy_shared_address(barrier)), "r"(bytes) : "memory");
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  // kernel.mbarrier_wait: spins until the phase of this parity has completed.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_mbarrier_wait(unsigned long long* barrier, unsigned int parity) {
// CHECK-NEXT:    asm volatile("{\n"
// CHECK-NEXT:                 ".reg .pred p;\n"
// CHECK-NEXT:                 "EMMY_MBARRIER_WAIT_%=:\n"
// CHECK-NEXT:                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
// CHECK-NEXT:                 "@!p bra EMMY_MBARRIER_WAIT_%=;\n"
// CHECK-NEXT:                 "}\n"
// CHECK-NEXT:                 :: "r"(emmy_shared_address(barrier)), "r"(parity) : "memory");
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  // kernel.tma_load of a rank-2 box at (c0, ..) into shared memory, completing
// CHECK-NEXT:  // its bytes on the mbarrier.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_tma_load_2d(void* destination, const void* map, unsigned long long* barrier, int c0, int c1) {
// CHECK-NEXT:    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
// CHECK-NEXT:                 :: "r"(emmy_shared_address(destination)), "l"(reinterpret_cast<unsigned long long>(map)),
// CHECK-NEXT:                    "r"(emmy_shared_address(barrier)), "r"(c1), "r"(c0)
// CHECK-NEXT:                 : "memory");
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  // The shared-memory matrix descriptor of a wgmma tile of 128-byte rows in the
// CHECK-NEXT:  // 128-byte swizzle (PTX ISA, Matrix Descriptor; CUTLASS make_gmma_desc): start
// CHECK-NEXT:  // address >> 4, leading byte offset >> 4 (K-major: unused, 16; MN-major: the stride
// CHECK-NEXT:  // of the panels of 64 N-elements), stride byte offset 1024 >> 4 (8 rows), layout
// CHECK-NEXT:  // type 1 (128-byte swizzle).
// CHECK-NEXT:  __device__ __forceinline__ unsigned long long emmy_wgmma_descriptor(const void* tile, unsigned int leading_bytes) {
// CHECK-NEXT:    unsigned long long address = emmy_shared_address(tile);
// CHECK-NEXT:    return ((address & 0x3FFFF) >> 4) | ((unsigned long long)(leading_bytes >> 4) << 16) |
// CHECK-NEXT:           ((1024ull >> 4) << 32) | (1ull << 62);
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  // kernel.wgmma m64n256k16 on bf16: the warpgroup starts D += A * B, A a
// CHECK-NEXT:  // K-major and B a K-major tile in shared memory (descriptors), D in f32 registers.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_wgmma_m64n256k16_bf16(float* d, unsigned long long a, unsigned long long b) {
// CHECK-NEXT:    asm volatile("{\n"
// CHECK-NEXT:                 ".reg .pred p;\n"
// CHECK-NEXT:                 "setp.ne.b32 p, %130, 0;\n"
// CHECK-NEXT:                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{.*}} %128, %129, p, 1, 1, 0, 0;\n"
// CHECK-NEXT:                 "}\n"
// CHECK-NEXT:                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"({{.*}}), "+f"(d[126]), "+f"(d[127])
// CHECK-NEXT:                 : "l"(a), "l"(b), "r"(1));
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  // Keeps nvcc from moving reads of wgmma accumulators before their wgmma.wait_group.
// CHECK-NEXT:  template <int N>
// CHECK-NEXT:  __device__ __forceinline__ void emmy_fence_registers(float* r) {
// CHECK-NEXT:  #pragma unroll
// CHECK-NEXT:    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i]) :: "memory");
// CHECK-NEXT:  }
// CHECK-EMPTY:
// CHECK-NEXT:  // kernel.func @ws_gemm: block [384, 1, 1], 32 bytes of static shared memory, at least 98304 bytes of dynamic shared memory
// CHECK-NEXT:  extern "C" __global__ void __launch_bounds__(384, 1) ws_gemm(const __g{{.*}}bmap, float* __restrict__ y) {
// CHECK-NEXT:    __shared__ __align__(8) unsigned long long full[2];
// CHECK-NEXT:    __shared__ __align__(8) unsigned long long empty[2];
// CHECK-NEXT:    extern __shared__ __align__(1024) unsigned char emmy_smem[];
// CHECK-NEXT:    __nv_bfloat16* a = reinterpret_cast<__nv_bfloat16*>(emmy_smem + 0);
// CHECK-NEXT:    __nv_bfloat16* b = reinterpret_cast<__nv_bfloat16*>(emmy_smem + 32768);
// CHECK-NEXT:    long t = threadIdx.x;
// CHECK-NEXT:    bool first = t == 0;
// CHECK-NEXT:    if (first) {
// CHECK-NEXT:      for (long s = 0; s < 2; s += 1) {
// CHECK-NEXT:        emmy_mbarrier_init(&full[s], 1);
// CHECK-NEXT:        emmy_mbarrier_init(&empty[s], 2);
// CHECK-NEXT:      }
// CHECK-NEXT:      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
// CHECK-NEXT:    }
// CHECK-NEXT:    __syncthreads();
// CHECK-NEXT:    long wg = (long)((unsigned long)t / 128);
// CHECK-NEXT:    long lane_in_wg = (long)((unsigned long)t % 128);
// CHECK-NEXT:    bool leader = lane_in_wg == 0;
// CHECK-NEXT:    bool producer = wg == 0;
// CHECK-NEXT:    if (producer) {
// CHECK-NEXT:      asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
// CHECK-NEXT:      if (leader) {
// CHECK-NEXT:        for (long kt = 0; kt < 4; kt += 1) {
// CHECK-NEXT:          long s_1 = (long)((unsigned long)kt % 2);
// CHECK-NEXT:          long round_ = (long)((unsigned long)kt / 2);
// CHECK-NEXT:          long round_parity = (long)((unsigned long)round_ % 2);
// CHECK-NEXT:          long parity = round_parity ^ 1;
// CHECK-NEXT:          emmy_mbarrier_wait(&empty[s_1], (unsigned int)parity);
// CHECK-NEXT:          emmy_mbarrier_arrive_expect_tx(&full[s_1], 49152);
// CHECK-NEXT:          long k = kt * 64;
// CHECK-NEXT:          emmy_tma_load_2d(&a[s_1 * 8192], &amap, &full[s_1], (int)0, (int)k);
// CHECK-NEXT:          emmy_tma_load_2d(&b[s_1 * 16384], &bmap, &full[s_1], (int)0, (int)k);
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    } else {
// CHECK-NEXT:      asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
// CHECK-NEXT:      long consumer = wg - 1;
// CHECK-NEXT:      long row = consumer * 64;
// CHECK-NEXT:      emmy_f32x128 init = {{.*}}.0f, 0.0f, 0.0f, 0.0f, 0.0f}};
// CHECK-NEXT:      emmy_f32x128 acc = init;
// CHECK-NEXT:      for (long kt_1 = 0; kt_1 < 4; kt_1 += 1) {
// CHECK-NEXT:        long s_2 = (long)((unsigned long)kt_1 % 2);
// CHECK-NEXT:        long round__1 = (long)((unsigned long)kt_1 / 2);
// CHECK-NEXT:        long parity_1 = (long)((unsigned long)round__1 % 2);
// CHECK-NEXT:        emmy_mbarrier_wait(&full[s_2], (unsigned int)parity_1);
// CHECK-NEXT:        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
// CHECK-NEXT:        emmy_wgmma_m64n256k16_bf16(acc.lane, emmy_wgmma_descriptor(&a[s_2 * 8192 + row * 64], 16), emmy_wgmma_descriptor(&b[s_2 * 16384], 16));
// CHECK-NEXT:        emmy_wgmma_m64n256k16_bf16(acc.lane, emmy_wgmma_descriptor(&a[s_2 * 8192 + row * 64 + 16], 16), emmy_wgmma_descriptor(&b[s_2 * 16384 + 16], 16));
// CHECK-NEXT:        emmy_wgmma_m64n256k16_bf16(acc.lane, emmy_wgmma_descriptor(&a[s_2 * 8192 + row * 64 + 32], 16), emmy_wgmma_descriptor(&b[s_2 * 16384 + 32], 16));
// CHECK-NEXT:        emmy_wgmma_m64n256k16_bf16(acc.lane, emmy_wgmma_descriptor(&a[s_2 * 8192 + row * 64 + 48], 16), emmy_wgmma_descriptor(&b[s_2 * 16384 + 48], 16));
// CHECK-NEXT:        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
// CHECK-NEXT:        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
// CHECK-NEXT:        emmy_fence_registers<128>(acc.lane);
// CHECK-NEXT:        emmy_f32x128 done = acc;
// CHECK-NEXT:        if (leader) {
// CHECK-NEXT:          emmy_mbarrier_arrive(&empty[s_2]);
// CHECK-NEXT:        }
// CHECK-NEXT:        acc = done;
// CHECK-NEXT:      }
// CHECK-NEXT:      long warp = (long)((unsigned long)lane_in_wg / 32);
// CHECK-NEXT:      long lane = (long)((unsigned long)lane_in_wg % 32);
// CHECK-NEXT:      long g = (long)((unsigned long)lane / 4);
// CHECK-NEXT:      long q = (long)((unsigned long)lane % 4);
// CHECK-NEXT:      long warp_rows = warp * 16;
// CHECK-NEXT:      long rows = row + warp_rows;
// CHECK-NEXT:      long row0 = rows + g;
// CHECK-NEXT:      long q2 = q * 2;
// CHECK-NEXT:      for (long i = 0; i < 128; i += 1) {
// CHECK-NEXT:        long half = (long)((unsigned long)i / 2);
// CHECK-NEXT:        long upper = (long)((unsigned long)half % 2);
// CHECK-NEXT:        long upper_rows = upper * 8;
// CHECK-NEXT:        long r = row0 + upper_rows;
// CHECK-NEXT:        long quad = (long)((unsigned long)i / 4);
// CHECK-NEXT:        long quad_cols = quad * 8;
// CHECK-NEXT:        long odd = (long)((unsigned long)i % 2);
// CHECK-NEXT:        long col_base = quad_cols + q2;
// CHECK-NEXT:        long col = col_base + odd;
// CHECK-NEXT:        float v = acc.lane[i];
// CHECK-NEXT:        y[r * 256 + col] = v;
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }

kernel.func @ws_gemm(%amap: !kernel.tensor_map<memref<128x256xbf16>, box [128, 64], swizzle 128>, %bmap: !kernel.tensor_map<memref<256x256xbf16>, box [256, 64], swizzle 128>, %y: memref<128x256xf32>) block [384, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %full = kernel.mbarrier_alloc : !kernel.mbarrier<2>
  %empty = kernel.mbarrier_alloc : !kernel.mbarrier<2>
  %a = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<2x128x64xbf16, 3 : i32>
  %b = kernel.dynamic_shared offset 32768 {layout = #kernel.swizzle<128>} : memref<2x256x64xbf16, 3 : i32>
  %t = kernel.thread_id x
  %first = arith.cmpi eq, %t, %c0 : index
  scf.if %first {
    scf.for %s = %c0 to %c2 step %c1 {
      kernel.mbarrier_init %full[%s], arrivals 1 : !kernel.mbarrier<2>
      kernel.mbarrier_init %empty[%s], arrivals 2 : !kernel.mbarrier<2>
    }
    kernel.fence_proxy_async
  }
  kernel.barrier
  %wg = arith.divui %t, %c128 : index
  %lane_in_wg = arith.remui %t, %c128 : index
  %leader = arith.cmpi eq, %lane_in_wg, %c0 : index
  %producer = arith.cmpi eq, %wg, %c0 : index
  scf.if %producer {
    kernel.setmaxnreg dec 40
    scf.if %leader {
      scf.for %kt = %c0 to %c4 step %c1 {
        %s = arith.remui %kt, %c2 : index
        %round = arith.divui %kt, %c2 : index
        %round_parity = arith.remui %round, %c2 : index
        %parity = arith.xori %round_parity, %c1 : index
        kernel.mbarrier_wait %empty[%s], %parity : !kernel.mbarrier<2>
        kernel.mbarrier_arrive_expect_tx %full[%s], bytes 49152 : !kernel.mbarrier<2>
        %k = arith.muli %kt, %c64 : index
        kernel.tma_load %amap[%c0, %k], %a[%s, %c0, %c0], %full[%s] : !kernel.tensor_map<memref<128x256xbf16>, box [128, 64], swizzle 128>, memref<2x128x64xbf16, 3 : i32>, !kernel.mbarrier<2>
        kernel.tma_load %bmap[%c0, %k], %b[%s, %c0, %c0], %full[%s] : !kernel.tensor_map<memref<256x256xbf16>, box [256, 64], swizzle 128>, memref<2x256x64xbf16, 3 : i32>, !kernel.mbarrier<2>
      }
    }
  } else {
    kernel.setmaxnreg inc 232
    %consumer = arith.subi %wg, %c1 : index
    %row = arith.muli %consumer, %c64 : index
    %zero = arith.constant 0.0 : f32
    %init = vector.broadcast %zero : f32 to vector<128xf32>
    %acc = scf.for %kt = %c0 to %c4 step %c1 iter_args(%acc_in = %init) -> (vector<128xf32>) {
      %s = arith.remui %kt, %c2 : index
      %round = arith.divui %kt, %c2 : index
      %parity = arith.remui %round, %c2 : index
      kernel.mbarrier_wait %full[%s], %parity : !kernel.mbarrier<2>
      kernel.wgmma_fence
      %d0 = kernel.wgmma m64n256k16 %a[%s, %row, %c0], %b[%s, %c0, %c0], %acc_in : memref<2x128x64xbf16, 3 : i32>, memref<2x256x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>
      %d1 = kernel.wgmma m64n256k16 %a[%s, %row, %c16], %b[%s, %c0, %c16], %d0 : memref<2x128x64xbf16, 3 : i32>, memref<2x256x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>
      %d2 = kernel.wgmma m64n256k16 %a[%s, %row, %c32], %b[%s, %c0, %c32], %d1 : memref<2x128x64xbf16, 3 : i32>, memref<2x256x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>
      %d3 = kernel.wgmma m64n256k16 %a[%s, %row, %c48], %b[%s, %c0, %c48], %d2 : memref<2x128x64xbf16, 3 : i32>, memref<2x256x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>
      kernel.wgmma_commit
      %done = kernel.wgmma_wait 0, %d3 : vector<128xf32>
      scf.if %leader {
        kernel.mbarrier_arrive %empty[%s] : !kernel.mbarrier<2>
      }
      scf.yield %done : vector<128xf32>
    }
    %warp = arith.divui %lane_in_wg, %c32 : index
    %lane = arith.remui %lane_in_wg, %c32 : index
    %g = arith.divui %lane, %c4 : index
    %q = arith.remui %lane, %c4 : index
    %warp_rows = arith.muli %warp, %c16 : index
    %rows = arith.addi %row, %warp_rows : index
    %row0 = arith.addi %rows, %g : index
    %q2 = arith.muli %q, %c2 : index
    scf.for %i = %c0 to %c128 step %c1 {
      %half = arith.divui %i, %c2 : index
      %upper = arith.remui %half, %c2 : index
      %upper_rows = arith.muli %upper, %c8 : index
      %r = arith.addi %row0, %upper_rows : index
      %quad = arith.divui %i, %c4 : index
      %quad_cols = arith.muli %quad, %c8 : index
      %odd = arith.remui %i, %c2 : index
      %col_base = arith.addi %quad_cols, %q2 : index
      %col = arith.addi %col_base, %odd : index
      %v = vector.extract %acc[%i] : f32 from vector<128xf32>
      memref.store %v, %y[%r, %col] : memref<128x256xf32>
    }
  }
}

func.func @forward(%x: memref<128x256xbf16>, %w: memref<256x256xbf16>) -> memref<128x256xf32> {
  %y = memref.alloc() : memref<128x256xf32>
  kernel.launch @ws_gemm(%x, %w, %y) grid [1, 1, 1] block [384, 1, 1] smem 98304 : memref<128x256xbf16>, memref<256x256xbf16>, memref<128x256xf32>
  func.return %y : memref<128x256xf32>
}
