// RUN: emmy-opt %s -t cuda | filecheck %s
// RUN: sed 's/sm_80/sm_90a/' %s | emmy-opt -t cuda | filecheck %s --check-prefix=H200

// The CUDA is for the module's `kernel.target`, which its header names; without one, for an
// H200 (sm_90a).

// CHECK:       // Target: sm_80 (A100).
// CHECK:       __shfl_xor_sync(0xffffffffu, v, 1)
// H200:        // Target: sm_90a (H200).
builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  kernel.func @k(%x: memref<32xf32>) block [32, 1, 1] {
    %t = kernel.thread_id x
    %v = memref.load %x[%t] : memref<32xf32>
    %one = arith.constant 1 : i32
    %s = kernel.shuffle xor %v, %one : f32
    memref.store %s, %x[%t] : memref<32xf32>
  }
}
