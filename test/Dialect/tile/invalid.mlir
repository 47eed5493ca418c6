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
  // expected-error @+1 {{Expected `grid`, `grid_y`, `thread`, `global`, or `serial`.}}
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

// expected-error @+1 {{'pipeline' is reserved for tensor-core schedules, which no pass honours yet}}
tile.kernel @schedule_reserved(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [], pipeline 3>} {
}

// -----

// expected-error @+1 {{a row is staged by a block: staging at loop [0] needs that loop mapped to grid or grid_y}}
tile.kernel @schedule_stage(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] thread], stage [[0] arg 0 sync]>} {
}

// -----

// expected-error @+1 {{expected one of stage, tile, atom, pipeline, warp_roles, each at most once}}
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
