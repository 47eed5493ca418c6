// RUN: emmy-opt %s -t cuda | filecheck %s

// A cp.async that reads fewer bytes than it copies: PTX's src-size operand, the rest of the
// 16 bytes zero-filled. Four threads copy 8 bf16 each of a row of 24 into a tile of 32: the
// fourth copy is past the end and reads nothing (from element 0, a valid address).

// CHECK-LABEL: extern "C" __global__ void __launch_bounds__(32) tail(const __nv_bfloat16* __restrict__ x, __nv_bfloat16* __restrict__ y) {
// CHECK:         asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(static_cast<unsigned int>(__cvta_generic_to_shared(&tile[j]))), "l"(&x[source]), "r"(bytes) : "memory");

kernel.func @tail(%x: memref<24xbf16>, %y: memref<32xbf16>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c24 = arith.constant 24 : index
  %c0_i32 = arith.constant 0 : i32
  %c16_i32 = arith.constant 16 : i32
  %tile = kernel.shared_alloc : memref<32xbf16, 3 : i32>
  %copies = arith.cmpi ult, %tid, %c4 : index
  scf.if %copies {
    %j = arith.muli %tid, %c8 : index
    %inside = arith.cmpi ult, %j, %c24 : index
    %source = arith.select %inside, %j, %c0 : index
    %bytes = arith.select %inside, %c16_i32, %c0_i32 : i32
    kernel.cp_async %tile[%j], %x[%source] bytes 16 src_bytes %bytes
        : memref<32xbf16, 3 : i32>, memref<24xbf16>
  }
  kernel.cp_async_commit
  kernel.cp_async_wait 0
  kernel.barrier
  %v = memref.load %tile[%tid] : memref<32xbf16, 3 : i32>
  memref.store %v, %y[%tid] : memref<32xbf16>
}

func.func @forward(%x: memref<24xbf16>) -> memref<32xbf16> {
  %y = memref.alloc() : memref<32xbf16>
  kernel.launch @tail(%x, %y) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<24xbf16>, memref<32xbf16>
  func.return %y : memref<32xbf16>
}
