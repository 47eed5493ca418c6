// RUN: emmy-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{block [100, 1, 1] has 100 threads, which is not a multiple of the warp size 32}}
tile.kernel @odd_block(%x: memref<4xf32>) grid [1, 1, 1] block [100, 1, 1] {
}

// -----

// expected-error @+1 {{block [1024, 2, 1] has 2048 threads, but a block has at most 1024 on sm_90a}}
tile.kernel @huge_block(%x: memref<4xf32>) grid [1, 1, 1] block [1024, 2, 1] {
}

// -----

tile.kernel @grid_reduction(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{a reduction cannot be mapped to grid: blocks do not combine their results}}
  %s = tile.for %i in 0 to 4 map grid reduce add init 0.0 : f32 {
    %v = memref.load %x[%i] : memref<4xf32>
    tile.yield %v : f32
  }
}

// -----

tile.kernel @unknown_mapping(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{Expected `grid`, `grid_y`, `rows`, `thread`, `global`, or `serial`.}}
  tile.for %i in 0 to 4 map warp {
  }
}

// -----

tile.kernel @reduction_yields_wrong_type(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  %c = arith.constant 1 : i32
  // expected-error @+1 {{a reduction loop body yields one f32 per iteration, but its tile.yield yields (i32)}}
  %s = tile.for %i in 0 to 4 map thread reduce add init 0.0 : f32 {
    tile.yield %c : i32
  }
}

// -----

tile.kernel @k(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
}
func.func @launch_wrong_buffers(%x: memref<8xf32>) {
  // expected-error @+1 {{launch passes (memref<8xf32>) but @k takes (memref<4xf32>)}}
  tile.launch @k(%x) : memref<8xf32>
  func.return
}

// -----

tile.kernel @odd_vector(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{vector width 3 must be one of 2, 4, 8, 16}}
  tile.for %i in 0 to 6 map thread vector 3 {
  }
}

// -----

tile.kernel @vector_not_dividing(%x: memref<6xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{vector width 4 must divide the loop's start 0 and its trip count 6}}
  tile.for %i in 0 to 6 map thread vector 4 {
  }
}

// -----

tile.kernel @serial_vector(%x: memref<8xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{only a loop mapped to thread or global is vectorised, not serial}}
  tile.for %i in 0 to 8 map serial vector 4 {
  }
}

// -----

tile.kernel @vector_around_a_loop(%x: memref<8xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{a vectorised tile.for holds no loops}}
  tile.for %i in 0 to 8 map thread vector 4 {
    tile.for %k in 0 to 2 map serial {
    }
  }
}

// -----

tile.kernel @stage_outside_grid(%x: memref<4x64xf32>) grid [1, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map thread {
    // expected-error @+1 {{a row is staged by a block: tile.stage belongs in a grid loop}}
    tile.stage %x[%i] sync : memref<4x64xf32>
  }
}

// -----

tile.kernel @stage_too_big(%x: memref<4x16384xf32>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    // expected-error @+1 {{a staged row of 65536 bytes is over the 49152 bytes of a block's static shared memory}}
    tile.stage %x[%i] async : memref<4x16384xf32>
  }
}

// -----

tile.kernel @stage_not_a_row(%x: memref<4x8x64xf32>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    // expected-error @+1 {{a staged row is the last dimension: a rank-3 buffer takes 2 leading indices, got 1}}
    tile.stage %x[%i] async : memref<4x8x64xf32>
  }
}

// -----

tile.kernel @stage_mode(%x: memref<4x64xf32>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    // expected-error @+1 {{Expected `sync`, or `async`.}}
    tile.stage %x[%i] tma : memref<4x64xf32>
  }
}

// -----

tile.kernel @split_product(%x: memref<64xf32>, %y: memref<f32>) grid [2, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{a reduction mapped to global combines the blocks' totals with atomics, which take add, max, min, not mul}}
  %s = tile.for %i in 0 to 64 map global reduce mul init 1.0 : f32 {
    %v = memref.load %x[%i] : memref<64xf32>
    tile.yield %v : f32
  }
  memref.store %s, %y[] : memref<f32>
}

// -----

tile.kernel @split_bf16(%x: memref<64xbf16>, %y: memref<bf16>) grid [2, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{on f32, f64, i32 or i64, not bf16}}
  %s = tile.for %i in 0 to 64 map global reduce add init 0.0 : bf16 {
    %v = memref.load %x[%i] : memref<64xbf16>
    tile.yield %v : bf16
  }
  memref.store %s, %y[] : memref<bf16>
}

// -----

tile.kernel @split_used(%x: memref<64xf32>, %y: memref<f32>) grid [2, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{its result has one use, a memref.store beside the loop at constant indices}}
  %s = tile.for %i in 0 to 64 map global reduce add init 0.0 : f32 {
    %v = memref.load %x[%i] : memref<64xf32>
    tile.yield %v : f32
  }
  %t = arith.mulf %s, %s : f32
  memref.store %t, %y[] : memref<f32>
}

// -----

// Two reductions split across blocks into one element would both add into it.

tile.kernel @split_twice(%x: memref<64xf32>, %y: memref<2xf32>) grid [2, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{no other op of the kernel may access that element's buffer, but 'memref.store' does}}
  %a = tile.for %i in 0 to 64 map global reduce add init 0.0 : f32 {
    %v = memref.load %x[%i] : memref<64xf32>
    tile.yield %v : f32
  }
  %c0 = arith.constant 0 : index
  memref.store %a, %y[%c0] : memref<2xf32>
  %b = tile.for %i in 0 to 64 map global reduce max init 0.0 : f32 {
    %v = memref.load %x[%i] : memref<64xf32>
    tile.yield %v : f32
  }
  %c0_1 = arith.constant 0 : index
  memref.store %b, %y[%c0_1] : memref<2xf32>
}

// -----

// A combiner region's state has no atomic that combines it: such a reduction is never split
// across blocks.

tile.kernel @state_reduction_mapped_to_global(%x: memref<64xf32>, %y: memref<1xf32>) grid [2, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{a reduction with a combiner region cannot be mapped to global: the blocks' totals are combined with atomics, which combine one value with add, max or min, not a combiner region's state (map it to thread, within one block)}}
  %s, %n = tile.for %i in 0 to 64 map global reduce (%s0: f32, %n0: f32, %s1: f32, %n1: f32) init (0.0, 0.0) {
    %s = arith.addf %s0, %s1 : f32
    %n = arith.addf %n0, %n1 : f32
    tile.yield %s, %n : f32, f32
  } {
    %v = memref.load %x[%i] : memref<64xf32>
    %one = arith.constant 1.0 : f32
    tile.yield %v, %one : f32, f32
  }
  %c0 = arith.constant 0 : index
  memref.store %s, %y[%c0] : memref<1xf32>
}

// -----

// The host sets a split reduction's element to the init before the kernel: another nest
// would read the init, not the value the buffer held.

tile.kernel @split_target_read(%x: memref<64xf32>, %y: memref<1xf32>, %z: memref<64xf32>) grid [2, 1, 1] block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  tile.for %i in 0 to 64 map global {
    %old = memref.load %y[%c0] : memref<1xf32>
    memref.store %old, %z[%i] : memref<64xf32>
  }
  // expected-error @+1 {{no other op of the kernel may access that element's buffer, but 'memref.load' does}}
  %a = tile.for %i in 0 to 64 map global reduce add init 0.0 : f32 {
    %v = memref.load %x[%i] : memref<64xf32>
    tile.yield %v : f32
  }
  memref.store %a, %y[%c0] : memref<1xf32>
}

// -----

tile.kernel @staged_and_written(%x: memref<4x64xf32>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    // expected-error @+1 {{a staged row is read from its shared copy, so the kernel may not write the staged buffer}}
    tile.stage %x[%i] sync : memref<4x64xf32>
    tile.for %j in 0 to 64 map thread {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

// expected-error @+1 {{grid [2, 4, 1] has 4 rows of blocks, but a nest maps no loop to grid_y: it would run once per row}}
tile.kernel @rows_of_blocks(%x: memref<4x64xf32>) grid [2, 4, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.for %j in 0 to 64 map thread {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      memref.store %v, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

// Blocks run their shares of every nest at once, and nothing orders blocks: a nest may not
// read what an earlier one writes (lower-loop-to-tile launches such nests apart) ...

// expected-error @+1 {{loop [1] reads %t, which loop [0] writes, but nothing orders them: the nests of the kernel run at once on 4 blocks, and no barrier spans the grid (launch them one after another, as lower-loop-to-tile does, or in one block)}}
tile.kernel @dependent_nests(%x: memref<8192xf32>, %t: memref<8192xf32>, %y: memref<8192xf32>) grid [4, 1, 1] block [512, 1, 1] {
  tile.for %i in 0 to 8192 map global vector 4 {
    %v = memref.load %x[%i] : memref<8192xf32>
    memref.store %v, %t[%i] : memref<8192xf32>
  }
  tile.for %i in 0 to 8192 map global vector 4 {
    %c8191 = arith.constant 8191 : index
    %j = arith.subi %c8191, %i : index
    %v = memref.load %t[%j] : memref<8192xf32>
    memref.store %v, %y[%i] : memref<8192xf32>
  }
}

// -----

// ... nor write what an earlier one reads, ...

// expected-error @+1 {{loop [1] writes %x, which loop [0] reads, but nothing orders them: the nests of the kernel run at once on 2 blocks}}
tile.kernel @overwritten_input(%x: memref<64x32xf32>, %y: memref<64x32xf32>) grid [2, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 64 map grid {
    tile.for %j in 0 to 32 map thread {
      %v = memref.load %x[%i, %j] : memref<64x32xf32>
      memref.store %v, %y[%i, %j] : memref<64x32xf32>
    }
  }
  tile.for %i in 0 to 2048 map global {
    %zero = arith.constant 0.0 : f32
    %c32 = arith.constant 32 : index
    %r = arith.divui %i, %c32 : index
    %c = arith.remui %i, %c32 : index
    memref.store %zero, %x[%r, %c] : memref<64x32xf32>
  }
}

// -----

// ... and the iterations of a grid loop, which go to different blocks, may not all store to
// the same elements (of a scratch row here).

// expected-error @+1 {{every iteration of loop [0] (grid) stores to the same elements of %s, but its iterations run at once on 4 blocks, and no barrier spans the grid (give each iteration elements of its own, at the loop's variable)}}
tile.kernel @shared_scratch(%x: memref<4x256xf32>, %s: memref<256xf32>, %y: memref<4x256xf32>) grid [4, 1, 1] block [64, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.for %j in 0 to 256 map thread {
      %v = memref.load %x[%i, %j] : memref<4x256xf32>
      memref.store %v, %s[%j] : memref<256xf32>
    }
    tile.for %j in 0 to 256 map thread {
      %v = memref.load %s[%j] : memref<256xf32>
      memref.store %v, %y[%i, %j] : memref<4x256xf32>
    }
  }
}

// -----

// The loops of a row of a two-dimensional nest run at once on the blocks of a grid row.

// expected-error @+1 {{loop [0, 1] reads %t, which loop [0, 0] writes, but nothing orders them: the ops of an iteration of loop [0] (grid_y) run at once on 4 blocks, and no barrier spans the grid (in rows of one block, barriers order them)}}
tile.kernel @dependent_loops_of_a_row(%x: memref<2x8192xf32>, %t: memref<2x8192xf32>, %y: memref<2x8192xf32>) grid [4, 2, 1] block [512, 1, 1] {
  tile.for %i in 0 to 2 map grid_y {
    tile.for %j in 0 to 8192 map global vector 4 {
      %v = memref.load %x[%i, %j] : memref<2x8192xf32>
      memref.store %v, %t[%i, %j] : memref<2x8192xf32>
    }
    tile.for %j in 0 to 8192 map global vector 4 {
      %c8191 = arith.constant 8191 : index
      %k = arith.subi %c8191, %j : index
      %v = memref.load %t[%i, %k] : memref<2x8192xf32>
      memref.store %v, %y[%i, %j] : memref<2x8192xf32>
    }
  }
}

// -----

tile.kernel @split_in_a_row(%x: memref<4x64xf32>, %y: memref<4xf32>) grid [2, 4, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid_y {
    // expected-error @+1 {{a reduction mapped to global is split across the blocks of the grid: it is a whole nest, not inside another loop}}
    %s = tile.for %j in 0 to 64 map global reduce add init 0.0 : f32 {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      tile.yield %v : f32
    }
    memref.store %s, %y[%i] : memref<4xf32>
  }
}

// -----

// A loop mapped to grid reads blockIdx.x, whatever it holds: a global loop inside it would
// read blockIdx.x again (a nest over rows of blocks maps its rows to grid_y).

tile.kernel @global_in_grid(%x: memref<4x64xf32>) grid [2, 4, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    // expected-error @+1 {{a loop mapped to global inside a loop mapped to grid would read the same block index twice (map the outer loop to grid_y, or make the loops one chain)}}
    tile.for %j in 0 to 64 map global {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      memref.store %v, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

tile.kernel @grid_in_grid(%x: memref<4x64xf32>) grid [2, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.for %j in 0 to 64 map thread {
    }
    // expected-error @+1 {{a loop mapped to grid inside a loop mapped to grid would read the same block index twice}}
    tile.for %j in 0 to 64 map grid {
    }
  }
}

// -----

tile.kernel @grid_y_reduction(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{a reduction cannot be mapped to grid_y: blocks do not combine their results}}
  %s = tile.for %i in 0 to 4 map grid_y reduce add init 0.0 : f32 {
    %v = memref.load %x[%i] : memref<4xf32>
    tile.yield %v : f32
  }
}

// -----

// The schedule a kernel keeps is the one its loops follow.

// expected-error @+1 {{loop [0, 0] is mapped thread vector 1, but the schedule says thread vector 4}}
tile.kernel @schedule_disagrees(%x: memref<4x64xf32>) grid [4, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid, [0, 0] thread vector 4]>} {
  tile.for %i in 0 to 4 map grid {
    tile.for %j in 0 to 64 map thread {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      memref.store %v, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

// expected-error @+1 {{block [32, 1, 1] is not the schedule's [64, 1, 1]}}
tile.kernel @schedule_block(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [64, 1, 1], loops []>} {
}

// -----

// expected-error @+1 {{vector width 3 must be one of 2, 4, 8, 16, on a loop mapped to thread or global}}
tile.kernel @schedule_vector(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] thread vector 3]>} {
}

// -----

// expected-error @+1 {{'pipeline', 'warp_roles', 'raster', 'split' and 'cluster' are part of a contraction's schedule}}
tile.kernel @schedule_pipeline_alone(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [], pipeline 3>} {
}

// -----

// expected-error @+1 {{'pipeline', 'warp_roles', 'raster', 'split' and 'cluster' are part of a contraction's schedule}}
tile.kernel @schedule_split_alone(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] thread], split 4>} {
}

// -----

// expected-error @+1 {{'split' is how many blocks share an output tile's reduction, at least 1, got 0}}
tile.kernel @schedule_split_zero(%x: memref<4xf32>) grid [1, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], split 0>} {
}

// -----

// expected-error @+1 {{a wgmma m64n256k16 block of warps [8, 1] has warp roles ["producer", "consumer", "consumer"], got ['producer', 'consumer']}}
tile.kernel @schedule_wrong_roles(%x: memref<4xf32>) grid [1, 1, 1] block [384, 1, 1] attributes {tile.schedule = #tile.schedule<block [384, 1, 1], loops [], tile [128, 256, 64], atom wgmma m64n256k16, warps [8, 1], pipeline 4, warp_roles ["producer", "consumer"]>} {
}

// -----

// expected-error @+1 {{a mma_sync m16n8k16 block of warps [2, 2] has warp roles none, got ['producer']}}
tile.kernel @schedule_roles_without_wgmma(%x: memref<4xf32>) grid [1, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], warp_roles ["producer"]>} {
}

// -----

// expected-error @+1 {{a contraction's schedule gives its 'tile', 'atom' and 'warps' together}}
tile.kernel @schedule_tile_alone(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [], tile [64, 64, 32]>} {
}

// -----

// expected-error @+1 {{tile [64, 64, 24] over warps [2, 2] gives each warp 32x32 and K slices of 24, which must be whole mma_sync m16n8k16 atoms (16x8, K 16)}}
tile.kernel @schedule_tile_atoms(%x: memref<4xf32>) grid [1, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 24], atom mma_sync m16n8k16, warps [2, 2]>} {
}

// -----

// expected-error @+1 {{a mma_sync atom is m16n8k16 (f16, bf16) or m16n8k8 (f32 as tf32), got mma_sync m16n8k32}}
tile.kernel @schedule_atom_shape(%x: memref<4xf32>) grid [1, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k32, warps [2, 2]>} {
}

// -----

// expected-error @+1 {{a contraction's schedule maps no loops and stages no rows: its tile.gemm says how the blocks tile the product}}
tile.kernel @schedule_tile_and_loops(%x: memref<4xf32>) grid [1, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [[0] thread], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2]>} {
}

// -----

// expected-error @+1 {{a row is staged by a block: staging at loop [0] needs that loop mapped to grid or grid_y}}
tile.kernel @schedule_stage(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] thread], stage [[0] arg 0 sync]>} {
}

// -----

// expected-error @+1 {{expected one of stage, tile, atom, warps, pipeline, raster, split, cluster, warp_roles, each at most once}}
tile.kernel @schedule_keyword(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [], tiles [64, 64]>} {
}

// -----

// expected-error @+1 {{loops [[0], [0]] must be distinct, non-empty paths of non-negative loop indices}}
tile.kernel @schedule_paths(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] thread, [0] serial]>} {
}
// -----

// The lowering spreads no loop over the grid's z dimension: every block of a z layer would
// run the whole kernel again.
// expected-error @+1 {{grid [4, 1, 2]: no mapping spreads loops over the grid's z dimension, so it is 1}}
tile.kernel @grid_z(%x: memref<256xf32>) grid [4, 1, 2] block [64, 1, 1] {
  tile.for %j in 0 to 256 map global {
    %v = memref.load %x[%j] : memref<256xf32>
    memref.store %v, %x[%j] : memref<256xf32>
  }
}

// -----

// Each processor index splits one loop of a nest: a thread loop inside a thread loop would
// run only the iterations where both loops give a thread the same share.
tile.kernel @thread_in_thread(%x: memref<4x64xf32>) grid [1, 1, 1] block [64, 1, 1] {
  tile.for %i in 0 to 4 map thread {
    // expected-error @+1 {{a loop mapped to thread cannot be inside a loop mapped to thread: the threads already split the outer loop's iterations}}
    tile.for %j in 0 to 64 map thread {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      memref.store %v, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

tile.kernel @grid_in_global(%x: memref<64x4xf32>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 64 map global {
    // expected-error @+1 {{a loop mapped to grid inside a loop mapped to global would read the same block index twice}}
    tile.for %j in 0 to 4 map grid {
      %v = memref.load %x[%i, %j] : memref<64x4xf32>
      memref.store %v, %x[%i, %j] : memref<64x4xf32>
    }
  }
}

// -----

tile.kernel @global_in_serial(%x: memref<4x64xf32>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.for %k in 0 to 1 map serial {
      // expected-error @+1 {{a loop mapped to global inside a loop mapped to grid would read the same block index twice}}
      tile.for %j in 0 to 64 map global {
        %v = memref.load %x[%i, %j] : memref<4x64xf32>
        memref.store %v, %x[%i, %j] : memref<4x64xf32>
      }
    }
  }
}

// -----

tile.kernel @stage_per_thread(%x: memref<64x4x64xf32>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %j in 0 to 64 map thread {
    tile.for %i in 0 to 4 map grid {
      // expected-error @+1 {{a row is staged by the whole block: tile.stage is not inside a loop mapped to thread, whose iterations differ between the threads}}
      tile.stage %x[%j, %i] sync : memref<64x4x64xf32>
    }
  }
}


// -----

// A tile.kernel is a kernel symbol like those of the other levels: module-level, no results,
// its body's arguments those of its signature.
func.func @host() {
  // expected-error @+1 {{a tile.kernel is a module-level symbol that tile.launch can find, but its parent is 'func.func'}}
  tile.kernel @nested(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  }
  func.return
}

// -----

// expected-error @+1 {{a tile.kernel returns nothing, it writes its buffer arguments; its type (memref<4xf32>) -> f32 has results}}
"tile.kernel"() <{sym_name = "with_results", function_type = (memref<4xf32>) -> f32, grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>}> ({
^bb0(%x: memref<4xf32>):
}) : () -> ()

// -----

// expected-error @+1 {{kernel body takes (memref<4xf16>) but the kernel signature says (memref<4xf32>)}}
"tile.kernel"() <{sym_name = "signature_mismatch", function_type = (memref<4xf32>) -> (), grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>}> ({
^bb0(%x: memref<4xf16>):
}) : () -> ()

// --- tile.gemm ------------------------------------------------------------------------------

// -----

tile.kernel @gemm_f32_on_tensor_cores(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{a mma_sync m16n8k16 atom multiplies f16 or bf16 on tensor cores (f32 takes the fma atom, or mma_sync m16n8k8 or wgmma m64nNk8 as tf32), got f32}}
  tile.gemm %a[m, k] * %b[k, n] : memref<64x64xf32>, memref<64x64xf32> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @gemm_bf16_as_tf32(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{a mma_sync m16n8k8 atom multiplies f32, rounded to tf32, on tensor cores (f16 and bf16 take mma_sync m16n8k16 or wgmma m64nNk16), got bf16}}
  tile.gemm %a[m, k] * %b[k, n] : memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k8 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @gemm_split_on_wgmma(%a: memref<128x256xbf16>, %b: memref<128x256xbf16>, %y: memref<128x128xf32>) grid [1, 1, 1] block [384, 1, 1] {
  // expected-error @+1 {{split > 1 is lowered on the mma_sync and fma atoms, whose blocks each own one output tile; the persistent blocks of a wgmma kernel take split 1}}
  tile.gemm %a[m, k] * %b[n, k] : memref<128x256xbf16>, memref<128x256xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2 split 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<128x128xf32>
  }
}

// -----

tile.kernel @gemm_split_past_a_cluster(%a: memref<16x4096xbf16>, %b: memref<64x4096xbf16>, %y: memref<16x64xf32>) grid [32, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{the blocks of a split sum their partial tiles in a thread-block cluster, of at most 8 blocks on sm_90a, got split 16}}
  tile.gemm %a[m, k] * %b[n, k] : memref<16x4096xbf16>, memref<64x4096xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 4] pipeline 4 split 16 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<16x64xf32>
  }
}

// -----

builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  tile.kernel @gemm_split_without_clusters(%a: memref<16x4096xbf16>, %b: memref<64x4096xbf16>, %y: memref<16x64xf32>) grid [4, 1, 1] block [128, 1, 1] {
    // expected-error @+1 {{the blocks of a split sum their partial tiles in a thread-block cluster, which sm_80 (A100) does not have}}
    tile.gemm %a[m, k] * %b[n, k] : memref<16x4096xbf16>, memref<64x4096xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 4] pipeline 4 split 2 epilogue(%m, %n, %acc) {
      memref.store %acc, %y[%m, %n] : memref<16x64xf32>
    }
  }
}

// -----

// K = 520 is 5 slices of 128: 4 blocks of 2 slices would leave the fourth nothing.
tile.kernel @gemm_split_with_an_empty_block(%a: memref<16x520xbf16>, %b: memref<64x520xbf16>, %y: memref<16x64xf32>) grid [8, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{K = 520 is 5 slices of 128: split 4 blocks, 2 slices each, would leave the last one none}}
  tile.gemm %a[m, k] * %b[n, k] : memref<16x520xbf16>, memref<64x520xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 4] pipeline 4 split 4 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<16x64xf32>
  }
}

// -----

// expected-error @+1 {{grid [2, 1, 1] is not the [4, 1, 1] blocks that the tile.gemm's tiles take (2 along x per tile: split)}}
tile.kernel @gemm_split_grid(%a: memref<16x4096xbf16>, %b: memref<64x4096xbf16>, %y: memref<16x64xf32>) grid [2, 1, 1] block [128, 1, 1] {
  tile.gemm %a[m, k] * %b[n, k] : memref<16x4096xbf16>, memref<64x4096xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 4] pipeline 4 split 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<16x64xf32>
  }
}

// -----

tile.kernel @gemm_mixed_types(%a: memref<64x64xbf16>, %b: memref<64x64xf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{a tile.gemm multiplies operands of one type, got bf16 and f16}}
  tile.gemm %a[m, k] * %b[k, n] : memref<64x64xbf16>, memref<64x64xf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @gemm_f16_accumulator(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %y: memref<64x64xf16>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{a tile.gemm accumulates in f32, got f16}}
  tile.gemm %a[m, k] * %b[k, n] : memref<64x64xf16>, memref<64x64xf16> -> f16 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf16>
  }
}

// -----

tile.kernel @gemm_sizes_disagree(%a: memref<64x48xbf16>, %b: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{dimension k is 48 in one operand and 64 in another}}
  tile.gemm %a[m, k] * %b[k, n] : memref<64x48xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @gemm_rhs_walks_m(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{rhs walks n and k, not m, got [k, m]}}
  tile.gemm %a[m, k] * %b[k, m] : memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @gemm_batch_last(%a: memref<64x64x2xbf16>, %b: memref<2x64x64xbf16>, %y: memref<2x64x64xf32>) grid [1, 1, 2] block [128, 1, 1] {
  // expected-error @+1 {{lhs's last, contiguous dimension is one of its matrix dimensions (m or k), got [m, k, b0]}}
  tile.gemm %a[m, k, b0] * %b[b0, k, n] : memref<64x64x2xbf16>, memref<2x64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%i, %m, %n, %acc) {
    memref.store %acc, %y[%i, %m, %n] : memref<2x64x64xf32>
  }
}

// -----

tile.kernel @gemm_unknown_dimension(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{'b0' is not an iteration dimension of this tile.gemm (m, n, k)}}
  tile.gemm %a[b0, k] * %b[k, n] : memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @gemm_warps_and_block(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [256, 1, 1] {
  // expected-error @+1 {{warps [2, 2] are a block of [128, 1, 1] threads, but the kernel's block is [256, 1, 1]}}
  tile.gemm %a[m, k] * %b[k, n] : memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @gemm_tile_not_atoms(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [2, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{tile [64, 40, 32] over warps [2, 2] gives each warp 32x20 and K slices of 32, which must be whole mma_sync m16n8k16 atoms (16x8, K 16)}}
  tile.gemm %a[m, k] * %b[k, n] : memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 40, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @gemm_row_width(%a: memref<64x96xbf16>, %b: memref<96x64xbf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{lhs's tile is stored in shared memory by its last dimension k, 96 bytes a row, which must be 32, 64 or a multiple of 128 bytes for a swizzle that keeps ldmatrix free of bank conflicts}}
  tile.gemm %a[m, k] * %b[k, n] : memref<64x96xbf16>, memref<96x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 48] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @gemm_shared_memory(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %y: memref<256x256xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{4 K slices of tile [256, 256, 64] take 262144 bytes of shared memory, over the 232448 bytes a block may have on sm_90a}}
  tile.gemm %a[m, k] * %b[k, n] : memref<256x256xbf16>, memref<256x256xbf16> -> f32 atom mma_sync m16n8k16 tile [256, 256, 64] warps [2, 2] pipeline 4 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<256x256xf32>
  }
}

// -----

tile.kernel @gemm_epilogue_writes_operand(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{a tile.gemm epilogue does not store to the operands, which every block reads}}
  tile.gemm %a[m, k] * %b[k, n] : memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    %t = arith.truncf %acc : f32 to bf16
    memref.store %t, %a[%m, %n] : memref<64x64xbf16>
  }
}

// -----

tile.kernel @gemm_epilogue_loop(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{a tile.gemm epilogue runs once per output element, without tile.for}}
  tile.gemm %a[m, k] * %b[k, n] : memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    tile.for %i in 0 to 4 map serial {
    }
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @gemm_wgmma_warps(%a: memref<128x64xbf16>, %b: memref<64x128xbf16>, %y: memref<128x128xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{a wgmma is issued by a warp group of 4 warps along M, but warps [2, 2] has 2 along M}}
  tile.gemm %a[m, k] * %b[k, n] : memref<128x64xbf16>, memref<64x128xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<128x128xf32>
  }
}

// -----

// expected-error @+1 {{grid [1, 1, 1] is not the [2, 2, 1] blocks that the tile.gemm's tiles take}}
tile.kernel @gemm_grid(%a: memref<70x64xbf16>, %b: memref<64x80xbf16>, %y: memref<70x80xf32>) grid [1, 1, 1] block [128, 1, 1] {
  tile.gemm %a[m, k] * %b[k, n] : memref<70x64xbf16>, memref<64x80xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<70x80xf32>
  }
}

// -----

// expected-error @+1 {{a contraction's tile.kernel holds its tile.gemm and nothing else}}
tile.kernel @gemm_and_loop(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] {
  tile.gemm %a[m, k] * %b[k, n] : memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
  tile.for %i in 0 to 4 map serial {
  }
}

// -----

// expected-error @+1 {{the tile.gemm's tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2] and pipeline 2 are not its schedule's}}
tile.kernel @gemm_schedule(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>} {
  tile.gemm %a[m, k] * %b[k, n] : memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

// expected-error @+1 {{a contraction's schedule (with a tile) is the schedule of a tile.gemm's or a tile.attention's kernel, and only of one}}
tile.kernel @loops_with_gemm_schedule(%x: memref<4xf32>) grid [1, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2]>} {
}

// -----

// expected-error @+1 {{an atom's shape is written mMnNkK, as in m16n8k16}}
func.func @atom_shape() attributes {atom = #tile.atom<mma_sync m16n8>} {
  func.return
}

// -----

// expected-error @+1 {{a wgmma atom is m64nNk16 (f16, bf16) or m64nNk8 (f32 as tf32), N from 8 to 256 in steps of 8, got wgmma m64n260k16}}
func.func @wgmma_n() attributes {atom = #tile.atom<wgmma m64n260k16>} {
  func.return
}

// -----

// expected-error @+1 {{Expected `mma_sync`, `wgmma`, or `fma`.}}
func.func @atom_kind() attributes {atom = #tile.atom<hmma m16n8k16>} {
  func.return
}

// -----

tile.kernel @wgmma_km_lhs(%a: memref<64x128xbf16>, %b: memref<128x64xbf16>, %y: memref<128x128xf32>) grid [1, 1, 1] block [384, 1, 1] {
  // expected-error @+1 {{a wgmma reads a K-major lhs and a K- or N-major rhs: lhs's last dimension is k, got [k, m]}}
  tile.gemm %a[k, m] * %b[n, k] : memref<64x128xbf16>, memref<128x64xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<128x128xf32>
  }
}

// -----

tile.kernel @wgmma_kn_rhs_partial_panels(%a: memref<128x64xbf16>, %b: memref<64x128xbf16>, %y: memref<128x128xf32>) grid [1, 1, 1] block [256, 1, 1] {
  // expected-error @+1 {{a wgmma reads a [k, n] rhs in panels of 64 columns: the atom's N is a multiple of 64, got wgmma m64n32k16}}
  tile.gemm %a[m, k] * %b[k, n] : memref<128x64xbf16>, memref<64x128xbf16> -> f32 atom wgmma m64n32k16 tile [64, 64, 64] warps [4, 1] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<128x128xf32>
  }
}

// -----

tile.kernel @wgmma_tf32_kn_rhs(%a: memref<128x32xf32>, %b: memref<32x128xf32>, %y: memref<128x128xf32>) grid [1, 1, 1] block [384, 1, 1] {
  // expected-error @+1 {{a wgmma m64n128k8 atom reads the rhs K-major (PTX has no transposed tf32 wgmma), got an rhs whose N is contiguous; it takes mma_sync m16n8k8}}
  tile.gemm %a[m, k] * %b[k, n] : memref<128x32xf32>, memref<32x128xf32> -> f32 atom wgmma m64n128k8 tile [128, 128, 32] warps [8, 1] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<128x128xf32>
  }
}

// -----

tile.kernel @wgmma_narrow_k_slice(%a: memref<128x64xbf16>, %b: memref<128x64xbf16>, %y: memref<128x128xf32>) grid [1, 1, 1] block [384, 1, 1] {
  // expected-error @+1 {{a wgmma's K slice is one 128-byte swizzled row, 64 elements, got tile K 32}}
  tile.gemm %a[m, k] * %b[n, k] : memref<128x64xbf16>, memref<128x64xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 32] warps [8, 1] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<128x128xf32>
  }
}

// -----

tile.kernel @wgmma_rows_tma_cannot_copy(%a: memref<128x60xbf16>, %b: memref<128x60xbf16>, %y: memref<128x128xf32>) grid [1, 1, 1] block [384, 1, 1] {
  // expected-error @+1 {{TMA copies rows of whole 16 bytes: lhs's rows of 60 elements are not}}
  tile.gemm %a[m, k] * %b[n, k] : memref<128x60xbf16>, memref<128x60xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<128x128xf32>
  }
}

// -----

tile.kernel @wgmma_without_producer(%a: memref<128x64xbf16>, %b: memref<128x64xbf16>, %y: memref<128x128xf32>) grid [1, 1, 1] block [256, 1, 1] {
  // expected-error @+1 {{warps [8, 1] and a producer warp group are a block of [384, 1, 1] threads, but the kernel's block is [256, 1, 1]}}
  tile.gemm %a[m, k] * %b[n, k] : memref<128x64xbf16>, memref<128x64xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<128x128xf32>
  }
}

// -----

tile.kernel @gemm_fma_warp_tile_smaller_than_a_warp(%a: memref<8x8xf32>, %b: memref<2x8xf32>, %y: memref<8x2xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{an fma warp tile of 8x2 must split among the 32 lanes of a warp into equal register tiles}}
  tile.gemm %a[m, k] * %b[n, k] : memref<8x8xf32>, memref<2x8xf32> -> f32 atom fma tile [8, 2, 8] warps [1, 1] pipeline 1 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<8x2xf32>
  }
}

// -----

tile.kernel @gemm_fma_rows_of_partial_panels(%a: memref<32x40xf32>, %b: memref<32x40xf32>, %y: memref<32x32xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{lhs's tile is stored in shared memory by its last dimension k, 160 bytes a row, which must be at most 128 bytes or whole panels of 128}}
  tile.gemm %a[m, k] * %b[n, k] : memref<32x40xf32>, memref<32x40xf32> -> f32 atom fma tile [32, 32, 40] warps [1, 1] pipeline 1 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<32x32xf32>
  }
}

// -----

// expected-error @+1 {{'raster' orders the tiles of persistent (wgmma) blocks, a positive number of rows of tiles; got 4 for a mma_sync m16n8k16 atom}}
tile.kernel @schedule_raster_without_wgmma(%x: memref<4xf32>) grid [1, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], raster 4>} {
}

// -----

// expected-error @+1 {{'cluster' is how many persistent (wgmma) blocks share the rhs's K slices, at least 1; got 2 for a mma_sync m16n8k16 atom}}
tile.kernel @schedule_cluster_without_wgmma(%x: memref<4xf32>) grid [1, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], cluster 2>} {
}

// -----

// The blocks of a cluster each copy 1/cluster of a [k, n] rhs's panels of 64 columns.
tile.kernel @gemm_cluster_share_of_panels(%a: memref<256x64xbf16>, %b: memref<64x64xbf16>, %y: memref<256x64xf32>) grid [4, 1, 1] block [256, 1, 1] {
  // expected-error @+1 {{the 2 blocks of a cluster each copy an equal share of the 64 columns of N of an rhs piece of a K slice, in whole panels of 64 columns}}
  tile.gemm %a[m, k] * %b[k, n] : memref<256x64xbf16>, memref<64x64xbf16> -> f32 atom wgmma m64n64k16 tile [64, 64, 64] warps [4, 1] pipeline 2 cluster 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<256x64xf32>
  }
}

// -----

tile.kernel @gemm_cluster_too_large(%a: memref<256x64xbf16>, %b: memref<128x64xbf16>, %y: memref<256x128xf32>) grid [4, 1, 1] block [256, 1, 1] {
  // expected-error @+1 {{the blocks of a cluster share the rhs's slices in a thread-block cluster, of at most 8 blocks on sm_90a, got cluster 16}}
  tile.gemm %a[m, k] * %b[n, k] : memref<256x64xbf16>, memref<128x64xbf16> -> f32 atom wgmma m64n128k16 tile [64, 128, 64] warps [4, 1] pipeline 2 cluster 16 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<256x128xf32>
  }
}

// -----

tile.kernel @gemm_raster_without_wgmma(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [1, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{'raster' orders the tiles of persistent (wgmma) blocks, a positive number of rows of tiles; got 2 for a mma_sync m16n8k16 atom}}
  tile.gemm %a[m, k] * %b[n, k] : memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 raster 2 epilogue(%m, %n, %acc) {
    memref.store %acc, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @k_scale(%x: memref<4xf32>, %out: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map thread {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %out[%i] : memref<4xf32>
  }
}
func.func @host(%x: memref<4xf32>) -> memref<4xf32> {
  // expected-error @+1 {{launch passes one buffer as arguments #0 and #1 of @k_scale, which writes one of them; kernel arguments must not alias (they are __restrict__)}}
  tile.launch @k_scale(%x, %x) : memref<4xf32>, memref<4xf32>
  func.return %x : memref<4xf32>
}

// -----

// --- index ranges: bounds that fit, accesses in range (issue 12 §1) ----------------------------

tile.kernel @bound_over_index_width(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{loop bound 18446744073709551616 does not fit the 64-bit index a kernel counts iterations in (at most 9223372036854775807)}}
  tile.for %i in 0 to 18446744073709551616 map global {
  }
}

// -----

tile.kernel @loop_over_the_dimension(%x: memref<4xf32>, %y: memref<8xf32>) grid [1, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 8 map global vector 4 {
    // expected-error @+1 {{index %i of memref<4xf32> ranges over [0, 7], outside dimension 0 of size 4}}
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %y[%i] : memref<8xf32>
  }
}

// -----

tile.kernel @constant_index_outside(%x: memref<4xf32>, %y: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  %c4 = arith.constant 4 : index
  tile.for %i in 0 to 4 map thread {
    %v = memref.load %x[%i] : memref<4xf32>
    // expected-error @+1 {{index %c4 of memref<4xf32> is 4, outside dimension 0 of size 4}}
    memref.store %v, %y[%c4] : memref<4xf32>
  }
}

// -----

tile.kernel @stage_row_outside(%x: memref<4x64xf32>, %y: memref<4x64xf32>) grid [8, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 8 map grid {
    // expected-error @+1 {{index %i of memref<4x64xf32> ranges over [0, 7], outside dimension 0 of size 4}}
    tile.stage %x[%i] sync : memref<4x64xf32>
  }
}

// -----

// The epilogue runs at each point of the 70 x 50 output.
tile.kernel @gemm_epilogue_outside(%a: memref<70x40xbf16>, %b: memref<50x40xbf16>, %y: memref<50x70xf32>) grid [1, 2, 1] block [128, 1, 1] {
  tile.gemm %a[m, k] * %b[n, k] : memref<70x40xbf16>, memref<50x40xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %acc) {
    // expected-error @+1 {{index %m of memref<50x70xf32> ranges over [0, 69], outside dimension 0 of size 50}}
    memref.store %acc, %y[%m, %n] : memref<50x70xf32>
  }
}

// -----

// --- use before definition ---------------------------------------------------------------------

tile.kernel @use_before_definition(%x: memref<4xf32>, %y: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map thread {
    // expected-error @+1 {{operand #1 (%c0) is used before its definition}}
    %v = memref.load %x[%c0] : memref<4xf32>
    memref.store %v, %y[%i] : memref<4xf32>
  }
  %c0 = arith.constant 0 : index
}

// -----

// --- attention ---------------------------------------------------------------------------------

tile.kernel @attention_warps(%q: memref<2x64x64xbf16>, %k: memref<2x64x64xbf16>, %o: memref<2x64x64xbf16>) grid [1, 1, 2] block [64, 1, 1] {
  // expected-error @+1 {{tile [64, 64, 64] takes warps [4, 1] (16 query rows each) and a head dim of 64 for the query, key and value, got warps [2, 1] and head dims [64]}}
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x64x64xbf16>, memref<2x64x64xbf16>, memref<2x64x64xbf16> into memref<2x64x64xbf16> atom mma_sync m16n8k16 tile [64, 64, 64] warps [2, 1] pipeline 2
}

// -----

// expected-error @+1 {{grid [1, 1, 2] is not the [2, 1, 2] blocks that the tile.attention's tiles take}}
tile.kernel @attention_grid(%q: memref<2x100x64xf16>, %k: memref<2x64x64xf16>, %o: memref<2x100x64xf16>) grid [1, 1, 2] block [128, 1, 1] {
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x100x64xf16>, memref<2x64x64xf16>, memref<2x64x64xf16> into memref<2x100x64xf16> atom mma_sync m16n8k16 tile [64, 64, 64] warps [4, 1] pipeline 2
}

// -----

tile.kernel @attention_f32(%q: memref<2x64x64xf32>, %k: memref<2x64x64xf32>, %o: memref<2x64x64xf32>) grid [1, 1, 2] block [128, 1, 1] {
  // expected-error @+1 {{an mma_sync m16n8k16 atom multiplies f16 or bf16, got f32}}
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x64x64xf32>, memref<2x64x64xf32>, memref<2x64x64xf32> into memref<2x64x64xf32> atom mma_sync m16n8k16 tile [64, 64, 64] warps [4, 1] pipeline 2
}

// -----

tile.kernel @attention_keys(%q: memref<2x64x48xbf16>, %k: memref<2x64x48xbf16>, %o: memref<2x64x48xbf16>) grid [1, 1, 2] block [128, 1, 1] {
  // expected-error @+1 {{tile [64, 64, 48] takes keys 16 at a time (P is the A operand of k-steps of 16) and rows of 32, 64 or a multiple of 128 bytes (swizzled), got 64 keys and rows of 96 bytes}}
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x64x48xbf16>, memref<2x64x48xbf16>, memref<2x64x48xbf16> into memref<2x64x48xbf16> atom mma_sync m16n8k16 tile [64, 64, 48] warps [4, 1] pipeline 2
}

// -----

tile.kernel @attention_split_zero(%q: memref<2x1x64xbf16>, %k: memref<2x300x64xbf16>, %o: memref<2x1x64xbf16>) grid [1, 0, 2] block [32, 1, 1] {
  // expected-error @+1 {{'split' is how many blocks share an output tile's reduction, at least 1, got 0}}
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x1x64xbf16>, memref<2x300x64xbf16>, memref<2x300x64xbf16> into memref<2x1x64xbf16> atom mma_sync m16n8k16 tile [16, 64, 64] warps [1, 1] pipeline 2 split 0
}

// -----

tile.kernel @attention_split_grid_y(%q: memref<2x1x64xbf16>, %k: memref<2x300x64xbf16>, %o: memref<2x1x64xbf16>) grid [1, 65535, 2] block [32, 1, 1] {
  // expected-error @+1 {{split 70000 is a block of the grid's y for each part of the keys, at most 65535}}
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x1x64xbf16>, memref<2x300x64xbf16>, memref<2x300x64xbf16> into memref<2x1x64xbf16> atom mma_sync m16n8k16 tile [16, 64, 64] warps [1, 1] pipeline 2 split 70000
}

// -----

// Each part of the keys is a block of the grid's y.

// expected-error @+1 {{grid [1, 1, 2] is not the [1, 4, 2] blocks that the tile.attention's tiles take}}
tile.kernel @attention_split_grid(%q: memref<2x1x64xbf16>, %k: memref<2x300x64xbf16>, %o: memref<2x1x64xbf16>) grid [1, 1, 2] block [32, 1, 1] {
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x1x64xbf16>, memref<2x300x64xbf16>, memref<2x300x64xbf16> into memref<2x1x64xbf16> atom mma_sync m16n8k16 tile [16, 64, 64] warps [1, 1] pipeline 2 split 4
}

// -----

// --- attention on wgmma --------------------------------------------------------------------------

// A block is a producer warp group and a consumer warp group for each 64 query rows.

tile.kernel @attention_wgmma_block(%q: memref<2x64x64xbf16>, %k: memref<2x64x64xbf16>, %o: memref<2x64x64xbf16>) grid [1, 1, 2] block [128, 1, 1] {
  // expected-error @+1 {{warps [4, 1] and a producer warp group are a block of [256, 1, 1] threads, but the kernel's block is [128, 1, 1]}}
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x64x64xbf16>, memref<2x64x64xbf16>, memref<2x64x64xbf16> into memref<2x64x64xbf16> atom wgmma m64n128k16 tile [64, 128, 64] warps [4, 1] pipeline 2
}

// -----

tile.kernel @attention_wgmma_atom_n(%q: memref<2x64x64xbf16>, %k: memref<2x64x64xbf16>, %o: memref<2x64x64xbf16>) grid [1, 1, 2] block [256, 1, 1] {
  // expected-error @+1 {{attention on wgmma takes query rows 64 a warp group (at most 256) and its atom's N is the tile's keys, m64n128k16, got wgmma m64n64k16 for tile [64, 128, 64]}}
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x64x64xbf16>, memref<2x64x64xbf16>, memref<2x64x64xbf16> into memref<2x64x64xbf16> atom wgmma m64n64k16 tile [64, 128, 64] warps [4, 1] pipeline 2
}

// -----

tile.kernel @attention_wgmma_head_dim(%q: memref<2x64x32xbf16>, %k: memref<2x64x32xbf16>, %o: memref<2x64x32xbf16>) grid [1, 1, 2] block [256, 1, 1] {
  // expected-error @+1 {{attention on wgmma takes a head dim of whole 128-byte rows (64 elements), got 32}}
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x64x32xbf16>, memref<2x64x32xbf16>, memref<2x64x32xbf16> into memref<2x64x32xbf16> atom wgmma m64n128k16 tile [64, 128, 32] warps [4, 1] pipeline 2
}

// -----

tile.kernel @attention_wgmma_split(%q: memref<2x64x64xbf16>, %k: memref<2x512x64xbf16>, %o: memref<2x64x64xbf16>) grid [1, 2, 2] block [256, 1, 1] {
  // expected-error @+1 {{attention on wgmma copies by TMA from tensors of rank 2 to 5 and takes no split, got rank 3 and split 2}}
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x64x64xbf16>, memref<2x512x64xbf16>, memref<2x512x64xbf16> into memref<2x64x64xbf16> atom wgmma m64n128k16 tile [64, 128, 64] warps [4, 1] pipeline 2 split 2
}

// -----

builtin.module attributes {kernel.target = #kernel.target<"sm_80">} {
  tile.kernel @attention_wgmma_sm_80(%q: memref<2x64x64xbf16>, %k: memref<2x64x64xbf16>, %o: memref<2x64x64xbf16>) grid [1, 1, 2] block [256, 1, 1] {
    // expected-error @+1 {{the wgmma atom needs warp-group tensor cores and TMA, which target sm_80 (A100) does not have}}
    tile.attention %q, %k, %k scale 0.125 into %o : memref<2x64x64xbf16>, memref<2x64x64xbf16>, memref<2x64x64xbf16> into memref<2x64x64xbf16> atom wgmma m64n128k16 tile [64, 128, 64] warps [4, 1] pipeline 2
  }
}

// -----

// Persistent wgmma blocks, one an SM, take one query head's rows at a time (2 items here), not
// the packed rows of the heads that share a key/value head.

// expected-error @+1 {{grid [1, 1, 1] is not the [2, 1, 1] blocks that the tile.attention's tiles take}}
tile.kernel @attention_wgmma_grid(%q: memref<2x64x64xbf16>, %k: memref<1x64x64xbf16>, %o: memref<2x64x64xbf16>) grid [1, 1, 1] block [256, 1, 1] {
  tile.attention %q, %k, %k scale 0.125 into %o : memref<2x64x64xbf16>, memref<1x64x64xbf16>, memref<1x64x64xbf16> into memref<2x64x64xbf16> atom wgmma m64n128k16 tile [64, 128, 64] warps [4, 1] pipeline 2
}

// -----

tile.kernel @siblings_split(%x: memref<16x4096xbf16>, %wg: memref<4096x4096xbf16>, %wu: memref<4096x4096xbf16>, %y: memref<16x4096xf32>) grid [512, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{2 sibling rhs take split 1: a split's blocks sum one accumulator tile through shared memory, not 2 side by side}}
  tile.gemm %x[m, k] * (%wg, %wu)[n, k] : memref<16x4096xbf16>, memref<4096x4096xbf16>, memref<4096x4096xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 64, 128] warps [1, 4] pipeline 4 split 2 epilogue(%m, %n, %gate, %up) {
    memref.store %gate, %y[%m, %n] : memref<16x4096xf32>
  }
}

// -----

tile.kernel @siblings_share(%x: memref<64x64xbf16>, %wg: memref<64x64xbf16>, %wu: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [4, 4, 1] block [128, 1, 1] {
  // expected-error @+1 {{a warp's 8 columns of tile N 32 are 2 siblings' equal shares, each whole groups of 8 columns (those whose accumulators a thread holds), got 4 columns a sibling}}
  tile.gemm %x[m, k] * (%wg, %wu)[n, k] : memref<64x64xbf16>, memref<64x64xbf16>, memref<64x64xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 32] warps [1, 4] pipeline 2 epilogue(%m, %n, %gate, %up) {
    memref.store %gate, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @siblings_types(%x: memref<64x64xbf16>, %wg: memref<64x64xbf16>, %wu: memref<64x64xf16>, %y: memref<64x64xf32>) grid [2, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{sibling rhs have one type, got memref<64x64xbf16>, memref<64x64xf16>}}
  tile.gemm %x[m, k] * (%wg, %wu)[n, k] : memref<64x64xbf16>, memref<64x64xbf16>, memref<64x64xf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 2 epilogue(%m, %n, %gate, %up) {
    memref.store %gate, %y[%m, %n] : memref<64x64xf32>
  }
}

// -----

tile.kernel @siblings_accumulators(%x: memref<64x64xbf16>, %wg: memref<64x64xbf16>, %wu: memref<64x64xbf16>, %y: memref<64x64xf32>) grid [2, 1, 1] block [128, 1, 1] {
  // expected-error @+1 {{a tile.gemm accumulates in f32, got f16}}
  "tile.gemm"(%x, %wg, %wu) <{lhs_map = array<i64: 0, 2>, rhs_map = array<i64: 1, 2>, atom = #tile.atom<mma_sync m16n8k16>, tile = array<i64: 64, 64, 32>, warps = array<i64: 2, 2>, pipeline = #builtin.int<2>}> ({
  ^bb0(%m: index, %n: index, %gate: f32, %up: f16):
    tile.yield
  }) : (memref<64x64xbf16>, memref<64x64xbf16>, memref<64x64xbf16>) -> ()
}

// -----

// A block of 4 rows gives each row its own iteration of the rows loop: a sum over the
// threads of the whole block would mix rows.

// expected-error @+1 {{block [32, 4, 1] gives each iteration of a rows loop a row of threads, but loop [0, 0] (thread) reduces across the threads of the whole block}}
tile.kernel @rows_reduce(%x: memref<64x64xf32>, %y: memref<64xf32>) grid [16, 1, 1] block [32, 4, 1] {
  tile.for %i in 0 to 64 map rows {
    %s = tile.for %j in 0 to 64 map thread reduce add init 0.0 : f32 {
      %v = memref.load %x[%i, %j] : memref<64x64xf32>
      tile.yield %v : f32
    }
    memref.store %s, %y[%i] : memref<64xf32>
  }
}

// -----

// A global loop beside the rows runs on every thread of the block, but not a global
// reduction, whose partial sums meet across the whole block.

// expected-error @+1 {{block [32, 4, 1] gives each iteration of a rows loop a row of threads, but loop [0] is mapped to global, not rows (every nest's threads are numbered in rows)}}
tile.kernel @rows_beside_a_global_sum(%x: memref<64x64xf32>, %s: memref<f32>) grid [16, 1, 1] block [32, 4, 1] {
  %t = tile.for %i in 0 to 64 map global reduce add init 0.0 : f32 {
    %v = memref.load %x[%i, %i] : memref<64x64xf32>
    tile.yield %v : f32
  }
  memref.store %t, %s[] : memref<f32>
  tile.for %i in 0 to 64 map rows {
    tile.for %j in 0 to 64 map thread {
      %v = memref.load %x[%i, %j] : memref<64x64xf32>
      memref.store %v, %x[%i, %j] : memref<64x64xf32>
    }
  }
}

// -----

// expected-error @+1 {{block [32, 4, 1] gives each iteration of a rows loop a row of threads, but global loop [0] has loops inside}}
tile.kernel @rows_beside_a_global_nest(%x: memref<64x64xf32>) grid [16, 1, 1] block [32, 4, 1] {
  tile.for %i in 0 to 64 map global {
    tile.for %j in 0 to 64 map serial {
      %v = memref.load %x[%i, %j] : memref<64x64xf32>
      memref.store %v, %x[%i, %j] : memref<64x64xf32>
    }
  }
  tile.for %i in 0 to 64 map rows {
    tile.for %j in 0 to 64 map thread {
      %v = memref.load %x[%i, %j] : memref<64x64xf32>
      memref.store %v, %x[%i, %j] : memref<64x64xf32>
    }
  }
}

// -----

// The rows of a block run apart, so no barrier orders a row's second loop after its first.

// expected-error @+1 {{but block [32, 4, 1] gives each iteration of a rows loop a row of threads, and no barrier orders a row's own ops}}
tile.kernel @rows_pass_values(%x: memref<64x64xf32>, %t: memref<64x64xf32>) grid [16, 1, 1] block [32, 4, 1] {
  %c63 = arith.constant 63 : index
  tile.for %i in 0 to 64 map rows {
    tile.for %j in 0 to 64 map thread {
      %v = memref.load %x[%i, %j] : memref<64x64xf32>
      memref.store %v, %t[%i, %j] : memref<64x64xf32>
    }
    tile.for %j in 0 to 64 map thread {
      %r = arith.subi %c63, %j : index
      %v = memref.load %t[%i, %r] : memref<64x64xf32>
      memref.store %v, %x[%i, %j] : memref<64x64xf32>
    }
  }
}
