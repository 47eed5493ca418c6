// RUN: emmy-opt %s --split-input-file --verify-diagnostics --lower-loop-to-tile

// lower-loop-to-tile decides nothing: a kernel without a schedule is an error at the kernel.

// expected-error @+1 {{pass 'lower-loop-to-tile' failed: @k_unscheduled has no #tile.schedule attribute 'tile.schedule' (choose-tile-schedule writes one)}}
loop.kernel @k_unscheduled(%x: memref<64xf32>) {
  loop.for %i in 0 to 64 {
    %v = loop.load %x[%i] : memref<64xf32>
    loop.store %v, %x[%i] : memref<64xf32>
  }
}

// -----

// expected-error @+1 {{cannot apply the schedule of @k_no_such_loop: loop [0, 0] of the schedule is not in the kernel}}
loop.kernel @k_no_such_loop(%x: memref<64xf32>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] global, [0, 0] serial]>} {
  loop.for %i in 0 to 64 {
    %v = loop.load %x[%i] : memref<64xf32>
    loop.store %v, %x[%i] : memref<64xf32>
  }
}

// -----

// expected-error @+1 {{cannot apply the schedule of @k_odd_vector: vector width 8 must divide the loop's start 0 and its trip count 60}}
loop.kernel @k_odd_vector(%x: memref<60xf32>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] global vector 8]>} {
  loop.for %i in 0 to 60 {
    %v = loop.load %x[%i] : memref<60xf32>
    loop.store %v, %x[%i] : memref<60xf32>
  }
}

// -----

// expected-error @+1 {{cannot apply the schedule of @k_global_in_grid: a loop mapped to global inside a loop mapped to grid would read the same block index twice}}
loop.kernel @k_global_in_grid(%x: memref<4x64xf32>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid, [0, 0] global]>} {
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 64 {
      %v = loop.load %x[%i, %j] : memref<4x64xf32>
      loop.store %v, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

// expected-error @+1 {{cannot apply the schedule of @k_stage_written: staging at loop [0]: the kernel writes argument 0, so a staged copy of its row could go stale}}
loop.kernel @k_stage_written(%x: memref<4x64xf32>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid, [0, 0] thread], stage [[0] arg 0 async]>} {
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 64 {
      %v = loop.load %x[%i, %j] : memref<4x64xf32>
      loop.store %v, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

// expected-error @+1 {{cannot apply the schedule of @k_stage_unread: staging at loop [0]: the loops inside it read no row of argument 1 known at its top}}
loop.kernel @k_stage_unread(%x: memref<4x64xf32>, %w: memref<64xf32>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid, [0, 0] thread], stage [[0] arg 1 async]>} {
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 64 {
      %v = loop.load %x[%i, %j] : memref<4x64xf32>
      loop.store %v, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

// expected-error @+1 {{cannot apply the schedule of @k_stage_argument: staging at loop [0]: the kernel has no argument 3}}
loop.kernel @k_stage_argument(%x: memref<4x64xf32>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid, [0, 0] thread], stage [[0] arg 3 async]>} {
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 64 {
      %v = loop.load %x[%i, %j] : memref<4x64xf32>
      loop.store %v, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

// A contraction's schedule is for a kernel that computes a contraction (a loop.contract).

// expected-error @+1 {{cannot apply the schedule of @k_contraction_schedule: a contraction's schedule (with a tile) is for a kernel whose body is one loop.contract (and constants)}}
loop.kernel @k_contraction_schedule(%x: memref<64xf32>) attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [128, 128, 64], atom mma_sync m16n8k16, warps [2, 2]>} {
  loop.for %i in 0 to 64 {
    %v = loop.load %x[%i] : memref<64xf32>
    loop.store %v, %x[%i] : memref<64xf32>
  }
}

// -----

// A loop.contract is lowered by a contraction's schedule only; others map the loop nest that
// expand-loop-contract makes of it.

// expected-error @+1 {{cannot apply the schedule of @k_contract_loop_schedule: a loop.contract takes a contraction's schedule (with a tile); expand-loop-contract gives the loop nest that other schedules map}}
loop.kernel @k_contract_loop_schedule(%x: memref<16x32xf32>, %w: memref<8x32xf32>, %y: memref<16x8xf32>) attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [[0] grid]>} {
  loop.contract (%i, %j) in [16, 8], k in 32, %acc = sum %x[d0, k] * %w[d1, k] : memref<16x32xf32>, memref<8x32xf32> -> f32 {
    loop.store %acc, %y[%i, %j] : memref<16x8xf32>
  }
}

// -----

// The tile.gemm's verifier decides what a contraction's schedule can lower: mma_sync takes
// f16 or bf16.

// expected-error @+1 {{cannot apply the schedule of @k_f32_on_tensor_cores: a mma_sync m16n8k16 atom multiplies f16 or bf16 on tensor cores (f32 takes the fma atom, or mma_sync m16n8k8 or wgmma m64nNk8 as tf32), got f32}}
loop.kernel @k_f32_on_tensor_cores(%x: memref<16x32xf32>, %w: memref<8x32xf32>, %y: memref<16x8xf32>) attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2]>} {
  loop.contract (%i, %j) in [16, 8], k in 32, %acc = sum %x[d0, k] * %w[d1, k] : memref<16x32xf32>, memref<8x32xf32> -> f32 {
    loop.store %acc, %y[%i, %j] : memref<16x8xf32>
  }
}

// -----

// A tile.gemm's rhs walks n: a matrix-vector product's vector, one column read at index 0,
// has no map there.

// expected-error @+1 {{cannot apply the schedule of @k_matvec: the contract's rhs is one column read at index 0, which a tile.gemm's operand map cannot say (it walks n)}}
loop.kernel @k_matvec(%x: memref<16x32xbf16>, %v: memref<32x1xbf16>, %y: memref<16x1xf32>) attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2]>} {
  loop.contract (%i, %j) in [16, 1], k in 32, %acc = sum %x[d0, k] * %v[k, 0] : memref<16x32xbf16>, memref<32x1xbf16> -> f32 {
    loop.store %acc, %y[%i, %j] : memref<16x1xf32>
  }
}

// -----

// Over several blocks the second nest, which overwrites what the first reads, must be
// launched after it, but it uses the first's sum, a value no launch passes to the next.

// expected-error @+1 {{cannot apply the schedule of @k_sum_used_after_overwrite: loop [1] writes %t, which loop [0] reads, so they must run in separate launches (the blocks of one run their shares of every nest at once), but values pass between them in registers too, which launches do not share}}
loop.kernel @k_sum_used_after_overwrite(%x: memref<8192xf32>, %t: memref<8192xf32>) attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] thread vector 4, [1] global vector 4]>} {
  %s = loop.for %i in 0 to 8192 reduce add init 0.0 : f32 {
    %v = loop.load %t[%i] : memref<8192xf32>
    loop.yield %v : f32
  }
  loop.for %i in 0 to 8192 {
    %v = loop.load %x[%i] : memref<8192xf32>
    %w = arith.addf %v, %s : f32
    loop.store %w, %t[%i] : memref<8192xf32>
  }
}

// -----

// A schedule's numbers are checked where it is parsed: one past 64 bits used to crash the pass.

// expected-error @+1 {{99999999999999999999 is too large a number for a schedule (below 2**31)}}
loop.kernel @k_huge_block(%x: memref<64xf32>, %y: memref<64xf32>) attributes {tile.schedule = #tile.schedule<block [99999999999999999999, 1, 1], loops [[0] global]>} {
  loop.for %i in 0 to 64 {
    %v = loop.load %x[%i] : memref<64xf32>
    loop.store %v, %y[%i] : memref<64xf32>
  }
}
