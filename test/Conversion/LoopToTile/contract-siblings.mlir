// RUN: emmy-opt %s --lower-loop-to-tile | filecheck %s

// A loop.contract of sibling rhs under a contraction's schedule becomes one tile.gemm of the
// same rhs and epilogue; the grid counts N tiles of the tile's share of each sibling (tile N
// 64 is 32 output columns of each: N = 50 takes 2).

// CHECK-LABEL: tile.kernel @k_gate_up(
// CHECK-SAME:    grid [2, 2, 1] block [128, 1, 1]
// CHECK-NEXT:    tile.gemm %x[m, k] * (%wg, %wu)[n, k] : memref<70x40xbf16>, memref<50x40xbf16>, memref<50x40xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%i, %j, %gate, %up) {
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[N:.*]] = arith.negf %gate : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT:      %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.divf %gate, %[[D]] : f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[S]], %up : f32
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT:      memref.store %[[T]], %out[%i, %j] : memref<70x50xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

loop.kernel @k_gate_up(%x: memref<70x40xbf16>, %wg: memref<50x40xbf16>, %wu: memref<50x40xbf16>, %out: memref<70x50xbf16>) attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>} {
  %one = arith.constant 1.0 : f32
  loop.contract (%i, %j) in [70, 50], k in 40, (%gate, %up) = sum %x[d0, k] * (%wg, %wu)[d1, k] : memref<70x40xbf16>, memref<50x40xbf16>, memref<50x40xbf16> -> f32 {
    %n = arith.negf %gate : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %gate, %d : f32
    %p = arith.mulf %s, %up : f32
    %t = arith.truncf %p : f32 to bf16
    loop.store %t, %out[%i, %j] : memref<70x50xbf16>
  }
}
