// RUN: emmy-opt %s -t cuda | filecheck %s

// kernel.atomic inc is CUDA's atomicInc (on unsigned bits; relaxed). With acq_rel, an i32 add
// or inc is PTX's atom.acq_rel at the GPU's scope, which CUDA's atomic functions are not: a
// helper with the instruction inline.

// CHECK:       __device__ __forceinline__ int emmy_atomic_add_acq_rel(int* address, int value) {
// CHECK-NEXT:    int old;
// CHECK-NEXT:    asm volatile("atom.acq_rel.gpu.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(address), "r"(value) : "memory");
// CHECK-NEXT:    return old;
// CHECK-NEXT:  }
// CHECK:       __device__ __forceinline__ int emmy_atomic_inc_acq_rel(int* address, int value) {
// CHECK-NEXT:    int old;
// CHECK-NEXT:    asm volatile("atom.acq_rel.gpu.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(address), "r"(value) : "memory");

// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(32) arrive(
// CHECK-SAME:    int* __restrict__ counts, int* __restrict__ seen) {
// CHECK:         int a = (int)atomicInc(reinterpret_cast<unsigned int*>(&counts[0]), (unsigned int)7);
// CHECK-NEXT:    int b = emmy_atomic_inc_acq_rel(&counts[1], 7);
// CHECK-NEXT:    emmy_atomic_add_acq_rel(&counts[2], a);
// CHECK-NEXT:    seen[tid] = b;

kernel.func @arrive(%counts: memref<4xi32>, %seen: memref<32xi32>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : i32
  %a = kernel.atomic inc %c7, %counts[%c0] : memref<4xi32>
  %b = kernel.atomic inc acq_rel %c7, %counts[%c1] : memref<4xi32>
  %c = kernel.atomic add acq_rel %a, %counts[%c2] : memref<4xi32>
  memref.store %b, %seen[%tid] : memref<32xi32>
}
