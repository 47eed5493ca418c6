// RUN: emmy-opt %s -t cuda | filecheck %s

// A cluster of 2 blocks along x: each stores a row to its shared buffer, waits at the cluster
// barrier (release at the arrival, acquire at the wait), reads the other block's buffer
// through mapa (distributed shared memory) and waits again, so that neither block ends while
// the other still reads its memory.

// CHECK:       template <typename T>
// CHECK-NEXT:  __device__ __forceinline__ T* emmy_map_shared_rank(T* p, unsigned int rank) {
// CHECK-NEXT:    unsigned long long address;
// CHECK-NEXT:    asm("mapa.u64 %0, %1, %2;\n" : "=l"(address) : "l"(p), "r"(rank));
// CHECK-NEXT:    return reinterpret_cast<T*>(address);
// CHECK-NEXT:  }
// CHECK:       extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(32) k_swap(float* __restrict__ y) {
// CHECK-NEXT:    __shared__ alignas(16) float s[32];
// CHECK:         s[t] = v;
// CHECK-NEXT:    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
// CHECK-NEXT:    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
// CHECK-NEXT:    long o = 1 - r;
// CHECK-NEXT:    float* m = emmy_map_shared_rank(s, (unsigned int)o);
// CHECK-NEXT:    float w = m[t];
// CHECK-NEXT:    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
// CHECK-NEXT:    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
// CHECK-NEXT:    y[b * 32 + t] = w;
// CHECK-NEXT:  }
builtin.module attributes {kernel.target = #kernel.target<"sm_90a">} {
  kernel.func @k_swap(%y: memref<4x32xf32>) block [32, 1, 1] cluster 2 {
    %s = kernel.shared_alloc : memref<32xf32, 3 : i32>
    %t = kernel.thread_id x
    %b = kernel.block_id x
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %r = arith.remui %b, %c2 : index
    %v = memref.load %y[%b, %t] : memref<4x32xf32>
    memref.store %v, %s[%t] : memref<32xf32, 3 : i32>
    kernel.cluster_barrier
    %o = arith.subi %c1, %r : index
    %m = kernel.map_shared_rank %s, %o : memref<32xf32, 3 : i32>
    %w = memref.load %m[%t] : memref<32xf32, 3 : i32>
    kernel.cluster_barrier
    memref.store %w, %y[%b, %t] : memref<4x32xf32>
  }
}
