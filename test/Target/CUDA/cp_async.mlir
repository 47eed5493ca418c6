// RUN: emmy-opt %s -t cuda | filecheck %s

// A tile of 32x64 f32 staged through shared memory with cp.async: each of 128 threads starts
// four 16-byte copies (.cg, L2 only) into a static shared tile and one 8-byte copy (.ca) into a
// view of the dynamic shared memory, commits them as one group, waits for it, and after a
// barrier reads the tile transposed.

// CHECK-LABEL: // kernel.func @stage_tile: block [128, 1, 1], 8192 bytes of static shared memory, at least 1040 bytes of dynamic shared memory
// CHECK-NEXT:  extern "C" __global__ void __launch_bounds__(128) stage_tile(const float* __restrict__ x, float* __restrict__ y) {
// CHECK-NEXT:    __shared__ alignas(16) float tile[2048];
// CHECK-NEXT:    extern __shared__ __align__(16) unsigned char emmy_smem[];
// CHECK-NEXT:    long tid = threadIdx.x;
// CHECK-NEXT:    long r = (long)((unsigned long)tid / 4);
// CHECK-NEXT:    long q = (long)((unsigned long)tid % 4);
// CHECK-NEXT:    long c = q * 16;
// CHECK-NEXT:    for (long k = 0; k < 16; k += 4) {
// CHECK-NEXT:      long col = c + k;
// CHECK-NEXT:      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(static_cast<unsigned int>(__cvta_generic_to_shared(&tile[r * 64 + col]))), "l"(&x[r * 64 + col]) : "memory");
// CHECK-NEXT:    }
// CHECK-NEXT:    float* extra = reinterpret_cast<float*>(emmy_smem + 16);
// CHECK-NEXT:    long t2 = tid * 2;
// CHECK-NEXT:    long q2 = q * 2;
// CHECK-NEXT:    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" :: "r"(static_cast<unsigned int>(__cvta_generic_to_shared(&extra[t2]))), "l"(&x[r * 64 + q2]) : "memory");
// CHECK-NEXT:    asm volatile("cp.async.commit_group;\n" ::: "memory");
// CHECK-NEXT:    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
// CHECK-NEXT:    __syncthreads();
// CHECK-NEXT:    for (long k_1 = 0; k_1 < 16; k_1 += 1) {
// CHECK-NEXT:      long col_1 = c + k_1;
// CHECK-NEXT:      long tr = (long)((unsigned long)col_1 % 32);
// CHECK-NEXT:      float v = tile[tr * 64 + r];
// CHECK-NEXT:      float e = extra[t2];
// CHECK-NEXT:      float s = v + e;
// CHECK-NEXT:      y[r * 64 + col_1] = s;
// CHECK-NEXT:    }
// CHECK-NEXT:  }

kernel.func @stage_tile(%x: memref<32x64xf32>, %y: memref<32x64xf32>) block [128, 1, 1] {
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %tile = kernel.shared_alloc : memref<32x64xf32, 3 : i32>
  %r = arith.divui %tid, %c4 : index
  %q = arith.remui %tid, %c4 : index
  %c = arith.muli %q, %c16 : index
  scf.for %k = %c0 to %c16 step %c4 {
    %col = arith.addi %c, %k : index
    kernel.cp_async %tile[%r, %col], %x[%r, %col] bytes 16 : memref<32x64xf32, 3 : i32>, memref<32x64xf32>
  }
  %extra = kernel.dynamic_shared offset 16 : memref<256xf32, 3 : i32>
  %t2 = arith.muli %tid, %c2 : index
  %q2 = arith.muli %q, %c2 : index
  kernel.cp_async %extra[%t2], %x[%r, %q2] bytes 8 : memref<256xf32, 3 : i32>, memref<32x64xf32>
  kernel.cp_async_commit
  kernel.cp_async_wait 0
  kernel.barrier
  scf.for %k = %c0 to %c16 step %c1 {
    %col = arith.addi %c, %k : index
    %tr = arith.remui %col, %c32 : index
    %v = memref.load %tile[%tr, %r] : memref<32x64xf32, 3 : i32>
    %e = memref.load %extra[%t2] : memref<256xf32, 3 : i32>
    %s = arith.addf %v, %e : f32
    memref.store %s, %y[%r, %col] : memref<32x64xf32>
  }
}

func.func @forward(%x: memref<32x64xf32>) -> memref<32x64xf32> {
  %y = memref.alloc() : memref<32x64xf32>
  kernel.launch @stage_tile(%x, %y) grid [1, 1, 1] block [128, 1, 1] smem 1040 : memref<32x64xf32>, memref<32x64xf32>
  func.return %y : memref<32x64xf32>
}
