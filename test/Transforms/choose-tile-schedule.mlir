// The heuristic's schedules: the #tile.schedule it writes (SCHEDULE), and the Tile IR that
// lower-loop-to-tile makes of it.
// RUN: emmy-opt %s --split-input-file --choose-tile-schedule | filecheck %s --check-prefix=SCHEDULE
// RUN: emmy-opt %s --split-input-file --choose-tile-schedule --lower-loop-to-tile | filecheck %s
// RUN: emmy-opt %s --split-input-file --choose-tile-schedule=block-size=128 --lower-loop-to-tile | filecheck %s --check-prefix=OVERRIDE
// RUN: emmy-opt %s --split-input-file -p 'choose-tile-schedule{vector-width=1 stage=sync},lower-loop-to-tile' | filecheck %s --check-prefix=SCALAR
// RUN: emmy-opt %s --split-input-file --choose-tile-schedule=split-reductions=false --lower-loop-to-tile | filecheck %s --check-prefix=NOSPLIT

// A norm-shaped nest: the rows go to the grid, the reduction and the column loop to the
// threads of a block, 4 f32 (16 bytes) at a time; the row, read by both loops, is staged in
// shared memory with cp.async; 32 rows leave most SMs idle, so a thread takes one of the
// 2048 / 4 vectors: 512 threads.

// SCHEDULE-LABEL: loop.kernel @k_rms_norm(
// SCHEDULE-SAME:    attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] grid, [0, 0] thread vector 4, [0, 1] thread vector 4], stage [[0] arg 0 async]>} {

// CHECK-LABEL: tile.kernel @k_rms_norm(
// CHECK-SAME:    grid [32, 1, 1] block [512, 1, 1] attributes {tile.schedule = #tile.schedule<{{.*}}>} {
// CHECK:         tile.for %[[I:.*]] in 0 to 32 map grid {
// CHECK-NEXT:      tile.stage %[[X:.*]][%[[I]]] async : memref<32x2048xf32>
// CHECK-NEXT:      %[[S:.*]] = tile.for %[[R:.*]] in 0 to 2048 map thread vector 4 reduce add init 0.0 : f32 {
// CHECK-NEXT:        memref.load %[[X]][%[[I]], %[[R]]] : memref<32x2048xf32>
// CHECK:             tile.yield
// CHECK:           tile.for %[[J:.*]] in 0 to 2048 map thread vector 4 {
// CHECK:             memref.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]] : memref<32x2048xf32>
// CHECK-LABEL: func.func @forward(
// CHECK:         tile.launch @k_rms_norm(

// OVERRIDE-LABEL: tile.kernel @k_rms_norm(
// OVERRIDE-SAME:    block [128, 1, 1]

// SCALAR-LABEL: tile.kernel @k_rms_norm(
// SCALAR-SAME:    grid [32, 1, 1] block [512, 1, 1]
// SCALAR:         tile.stage %{{.*}}[%{{.*}}] sync : memref<32x2048xf32>
// SCALAR-NEXT:    tile.for %{{.*}} in 0 to 2048 map thread reduce add

loop.kernel @k_rms_norm(%x: memref<32x2048xf32>, %y: memref<32x2048xf32>) {
  loop.for %i in 0 to 32 {
    %s = loop.for %r in 0 to 2048 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %r] : memref<32x2048xf32>
      %q = arith.mulf %v, %v : f32
      loop.yield %q : f32
    }
    loop.for %j in 0 to 2048 {
      %v = loop.load %x[%i, %j] : memref<32x2048xf32>
      %o = arith.mulf %v, %s : f32
      loop.store %o, %y[%i, %j] : memref<32x2048xf32>
    }
  }
}
func.func @forward(%x: memref<32x2048xf32>) -> memref<32x2048xf32> {
  %y = memref.alloc() : memref<32x2048xf32>
  loop.launch @k_rms_norm(%x, %y) : memref<32x2048xf32>, memref<32x2048xf32>
  func.return %y : memref<32x2048xf32>
}

// -----

// An elementwise nest with few rows (3 x 4 = 12 grid iterations, under two per SM) is
// two-dimensional: the leading dims go to rows of blocks (grid_y) and the last dim to the
// blocks of a row, 4 f32 a thread at a time; a row of 40 is 10 vectors, so one warp and one
// block per row (two blocks of a warp for 40 scalars); nothing is read twice, so nothing is
// staged.

// SCHEDULE-LABEL: loop.kernel @k_add(
// SCHEDULE-SAME:    attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid_y, [0, 0] grid_y, [0, 0, 0] global vector 4]>} {

// CHECK-LABEL: tile.kernel @k_add(
// CHECK-SAME:    grid [1, 12, 1] block [32, 1, 1]
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 3 map grid_y {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 4 map grid_y {
// CHECK-NEXT:        tile.for %{{.*}} in 0 to 40 map global vector 4 {

// SCALAR-LABEL: tile.kernel @k_add(
// SCALAR-SAME:    grid [2, 12, 1] block [32, 1, 1]
// SCALAR-NOT:     tile.stage
// SCALAR:         tile.for %{{.*}} in 0 to 40 map global {

loop.kernel @k_add(%x: memref<3x4x40xf32>, %y: memref<3x4x40xf32>) {
  loop.for %a in 0 to 3 {
    loop.for %b in 0 to 4 {
      loop.for %c in 0 to 40 {
        %v = loop.load %x[%a, %b, %c] : memref<3x4x40xf32>
        %w = arith.addf %v, %v : f32
        loop.store %w, %y[%a, %b, %c] : memref<3x4x40xf32>
      }
    }
  }
}

// -----

// 8192 rows of a head dim of 128 bf16 (q and k of a decoder layer, rotated): a row is 16
// vectors of 8, half a warp, so a block takes 16 rows of 16 threads (the grid loops map to
// rows: threadIdx.y picks the row), 256 threads, and the grid 8192 / 16 = 512 blocks; a row of 4096 (next) is more than
// a warp's vectors and keeps blocks of one row.

// SCHEDULE-LABEL: loop.kernel @k_rotate(
// SCHEDULE-SAME:    attributes {tile.schedule = #tile.schedule<block [16, 16, 1], loops [[0] rows, [0, 0] rows, [0, 0, 0] thread vector 8]>} {

// CHECK-LABEL: tile.kernel @k_rotate(
// CHECK-SAME:    grid [512, 1, 1] block [16, 16, 1]
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 16 map rows {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 512 map rows {
// CHECK-NEXT:        tile.for %{{.*}} in 0 to 128 map thread vector 8 {

// OVERRIDE-LABEL: tile.kernel @k_rotate(
// OVERRIDE-SAME:    grid [8192, 1, 1] block [128, 1, 1]

loop.kernel @k_rotate(%x: memref<16x512x128xbf16>, %cos: memref<512x128xbf16>, %y: memref<16x512x128xbf16>) {
  loop.for %h in 0 to 16 {
    loop.for %s in 0 to 512 {
      loop.for %d in 0 to 128 {
        %v = loop.load %x[%h, %s, %d] : memref<16x512x128xbf16>
        %c = loop.load %cos[%s, %d] : memref<512x128xbf16>
        %w = arith.mulf %v, %c : bf16
        loop.store %w, %y[%h, %s, %d] : memref<16x512x128xbf16>
      }
    }
  }
}

// -----

// 16 rows of 4096 (a decode-sized activation) would be 16 blocks, one row each, on a GPU
// of 132 SMs: two-dimensional, the blocks are sized so that the grid has about one per SM
// (16 x 1024 vectors / 132 = 125 threads, a warp multiple: 128), 8 per row.

// CHECK-LABEL: tile.kernel @k_silu(
// CHECK-SAME:    grid [8, 16, 1] block [128, 1, 1]
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 16 map grid_y {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 4096 map global vector 4 {

loop.kernel @k_silu(%x: memref<16x4096xf32>, %y: memref<16x4096xf32>) {
  loop.for %i in 0 to 16 {
    loop.for %j in 0 to 4096 {
      %v = loop.load %x[%i, %j] : memref<16x4096xf32>
      %w = arith.mulf %v, %v : f32
      loop.store %w, %y[%i, %j] : memref<16x4096xf32>
    }
  }
}

// -----

// The same rows, passed through %t from one loop to the next (reversed): spread over the
// blocks of a row, nothing would order the two loops, so each row stays in one block, its
// loops over the block's threads (lower-tile-to-kernel puts a barrier between them).

// SCHEDULE-LABEL: loop.kernel @k_reverse_rows(
// SCHEDULE-SAME:    loops [[0] grid, [0, 0] thread vector 4, [0, 1] thread vector 4]>} {

// CHECK-LABEL: tile.kernel @k_reverse_rows(
// CHECK-SAME:    grid [16, 1, 1] block [512, 1, 1]

loop.kernel @k_reverse_rows(%x: memref<16x4096xf32>, %t: memref<16x4096xf32>, %y: memref<16x4096xf32>) {
  loop.for %i in 0 to 16 {
    loop.for %j in 0 to 4096 {
      %v = loop.load %x[%i, %j] : memref<16x4096xf32>
      loop.store %v, %t[%i, %j] : memref<16x4096xf32>
    }
    loop.for %j in 0 to 4096 {
      %c4095 = arith.constant 4095 : index
      %k = arith.subi %c4095, %j : index
      %v = loop.load %t[%i, %k] : memref<16x4096xf32>
      loop.store %v, %y[%i, %j] : memref<16x4096xf32>
    }
  }
}

// -----

// With two rows per SM or more (264 on an H200), the rows alone fill the GPU: a row per grid
// iteration, its columns over the threads of a block, 4 vectors a thread (64 / 4 / 4 = 4
// threads, one warp).

// CHECK-LABEL: tile.kernel @k_square(
// CHECK-SAME:    grid [264, 1, 1] block [32, 1, 1]
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 264 map grid {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 64 map thread vector 4 {

loop.kernel @k_square(%x: memref<264x64xf32>, %y: memref<264x64xf32>) {
  loop.for %i in 0 to 264 {
    loop.for %j in 0 to 64 {
      %v = loop.load %x[%i, %j] : memref<264x64xf32>
      %w = arith.mulf %v, %v : f32
      loop.store %w, %y[%i, %j] : memref<264x64xf32>
    }
  }
}

// -----

// Two nests in one kernel share its grid, so neither is two-dimensional (a second row of
// blocks would run the other nest twice).

// CHECK-LABEL: tile.kernel @k_two_outputs(
// CHECK-SAME:    grid [4, 1, 1]
// CHECK:         tile.for %{{.*}} in 0 to 64 map thread vector 4 {
// CHECK:         tile.for %{{.*}} in 0 to 64 map thread vector 4 {

loop.kernel @k_two_outputs(%x: memref<4x64xf32>, %y: memref<4x64xf32>, %z: memref<4x64xf32>) {
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 64 {
      %v = loop.load %x[%i, %j] : memref<4x64xf32>
      loop.store %v, %y[%i, %j] : memref<4x64xf32>
    }
  }
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 64 {
      %v = loop.load %x[%i, %j] : memref<4x64xf32>
      %w = arith.addf %v, %v : f32
      loop.store %w, %z[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

// A one-dimensional nest spreads over every thread of the grid, 4 f32 a thread at a time; a
// schedule written on the kernel is kept, whatever the options: 10000 / (1024 * 4) is 3
// blocks.

// CHECK-LABEL: tile.kernel @k_scale(
// CHECK-SAME:    grid [3, 1, 1] block [1024, 1, 1]
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 10000 map global vector 4 {

// OVERRIDE-LABEL: tile.kernel @k_scale(
// OVERRIDE-SAME:    block [1024, 1, 1]

loop.kernel @k_scale(%x: memref<10000xf32>, %y: memref<10000xf32>) attributes {tile.schedule = #tile.schedule<block [1024, 1, 1], loops [[0] global vector 4]>} {
  loop.for %i in 0 to 10000 {
    %v = loop.load %x[%i] : memref<10000xf32>
    loop.store %v, %y[%i] : memref<10000xf32>
  }
}

// -----

// A contraction: every output element goes to the grid and its inner product to the threads
// of a block (tensor-core schedules come with the contraction work); the row of %a is read
// along the reduction, 4 at a time.

// CHECK-LABEL: tile.kernel @k_matmul(
// CHECK-SAME:    grid [32, 1, 1] block [32, 1, 1]
// CHECK:         tile.for %{{.*}} in 0 to 4 map grid {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 8 map grid {
// CHECK-NEXT:        tile.for %{{.*}} in 0 to 16 map thread vector 4 reduce add init 0.0 : f32 {

loop.kernel @k_matmul(%a: memref<4x16xf32>, %b: memref<16x8xf32>, %c: memref<4x8xf32>) {
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 8 {
      %s = loop.for %k in 0 to 16 reduce add init 0.0 : f32 {
        %u = loop.load %a[%i, %k] : memref<4x16xf32>
        %v = loop.load %b[%k, %j] : memref<16x8xf32>
        %p = arith.mulf %u, %v : f32
        loop.yield %p : f32
      }
      loop.store %s, %c[%i, %j] : memref<4x8xf32>
    }
  }
}

// -----

// A schedule written on a kernel fixes it: no vectors, no staging. A bf16 row that is read
// twice is otherwise staged; a row that the kernel writes is never staged.

// CHECK-LABEL: tile.kernel @k_pinned(
// CHECK-SAME:    grid [8, 1, 1] block [256, 1, 1]
// CHECK-NOT:     tile.stage
// CHECK:         tile.for %{{.*}} in 0 to 256 map thread reduce max
// CHECK-LABEL: tile.kernel @k_bf16(
// CHECK-SAME:    grid [8, 1, 1] block [32, 1, 1]
// CHECK-NEXT:    tile.for %[[I:.*]] in 0 to 8 map grid {
// CHECK-NEXT:      tile.stage %{{.*}}[%[[I]]] async : memref<8x256xbf16>
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 256 map thread vector 8 reduce max
// CHECK-LABEL: tile.kernel @k_in_place(
// CHECK-NOT:     tile.stage
// CHECK-LABEL: tile.kernel @k_many_rows(
// CHECK-SAME:    grid [512, 1, 1] block [64, 1, 1]
// CHECK:         tile.launch

loop.kernel @k_pinned(%x: memref<8x256xbf16>, %y: memref<8x256xbf16>) attributes {tile.schedule = #tile.schedule<block [256, 1, 1], loops [[0] grid, [0, 0] thread, [0, 1] thread]>} {
  loop.for %i in 0 to 8 {
    %m = loop.for %r in 0 to 256 reduce max init -inf : bf16 {
      %v = loop.load %x[%i, %r] : memref<8x256xbf16>
      loop.yield %v : bf16
    }
    loop.for %j in 0 to 256 {
      %v = loop.load %x[%i, %j] : memref<8x256xbf16>
      %d = arith.subf %v, %m : bf16
      loop.store %d, %y[%i, %j] : memref<8x256xbf16>
    }
  }
}
loop.kernel @k_bf16(%x: memref<8x256xbf16>, %y: memref<8x256xbf16>) {
  loop.for %i in 0 to 8 {
    %m = loop.for %r in 0 to 256 reduce max init -inf : bf16 {
      %v = loop.load %x[%i, %r] : memref<8x256xbf16>
      loop.yield %v : bf16
    }
    loop.for %j in 0 to 256 {
      %v = loop.load %x[%i, %j] : memref<8x256xbf16>
      %d = arith.subf %v, %m : bf16
      loop.store %d, %y[%i, %j] : memref<8x256xbf16>
    }
  }
}
loop.kernel @k_in_place(%x: memref<8x256xf32>) {
  loop.for %i in 0 to 8 {
    %m = loop.for %r in 0 to 256 reduce max init -inf : f32 {
      %v = loop.load %x[%i, %r] : memref<8x256xf32>
      loop.yield %v : f32
    }
    loop.for %j in 0 to 256 {
      %v = loop.load %x[%i, %j] : memref<8x256xf32>
      %d = arith.subf %v, %m : f32
      loop.store %d, %x[%i, %j] : memref<8x256xf32>
    }
  }
}
// 512 rows: a thread takes 4 of the 1024 / 4 vectors of a row.
loop.kernel @k_many_rows(%x: memref<512x1024xf32>, %y: memref<512x1024xf32>) {
  loop.for %i in 0 to 512 {
    loop.for %j in 0 to 1024 {
      %v = loop.load %x[%i, %j] : memref<512x1024xf32>
      %d = arith.mulf %v, %v : f32
      loop.store %d, %y[%i, %j] : memref<512x1024xf32>
    }
  }
}
func.func @forward(%x: memref<8x256xf32>) {
  loop.launch @k_in_place(%x) : memref<8x256xf32>
  func.return
}

// -----

// A long reduction of a whole buffer, whose result is only stored, is split across the grid:
// 65536 / (512 threads * 4) = 32 blocks, whose totals meet through atomics. Without the
// split, or for a combiner atomics lack (mul), it stays in one block.

// SCHEDULE-LABEL: loop.kernel @k_sum(
// SCHEDULE-SAME:    attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] global vector 4]>} {
// SCHEDULE-LABEL: loop.kernel @k_prod(
// SCHEDULE-SAME:    attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] thread vector 4]>} {

// CHECK-LABEL: tile.kernel @k_sum(
// CHECK-SAME:    grid [32, 1, 1] block [512, 1, 1]
// CHECK-NEXT:    %[[S:.*]] = tile.for %{{.*}} in 0 to 65536 map global vector 4 reduce add init 0.0 : f32 {
// CHECK:         memref.store %[[S]], %{{.*}}[] : memref<f32>
// CHECK-LABEL: tile.kernel @k_prod(
// CHECK-SAME:    grid [1, 1, 1] block [512, 1, 1]
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 65536 map thread vector 4 reduce mul

// NOSPLIT-LABEL: tile.kernel @k_sum(
// NOSPLIT-SAME:    grid [1, 1, 1] block [512, 1, 1]
// NOSPLIT-NEXT:    tile.for %{{.*}} in 0 to 65536 map thread vector 4 reduce add

loop.kernel @k_sum(%x: memref<65536xf32>, %y: memref<f32>) {
  %s = loop.for %i in 0 to 65536 reduce add init 0.0 : f32 {
    %v = loop.load %x[%i] : memref<65536xf32>
    loop.yield %v : f32
  }
  loop.store %s, %y[] : memref<f32>
}
loop.kernel @k_prod(%x: memref<65536xf32>, %y: memref<f32>) {
  %s = loop.for %i in 0 to 65536 reduce mul init 1.0 : f32 {
    %v = loop.load %x[%i] : memref<65536xf32>
    loop.yield %v : f32
  }
  loop.store %s, %y[] : memref<f32>
}

// -----

// A small one-dimensional nest beside a grid nest of short rows (a KV cache update's lookup
// of positions beside the cache's rows): the rows' thread loop, 8 vectors of 4 f32, takes
// blocks of 16 rows of 8 threads (a block of one row would leave 24 of a warp's lanes idle),
// and the global loop spreads over all 128 threads of each block (sized by the 1024 vectors
// of the global loop, 8192 blocks would each idle most of 256 threads).

// SCHEDULE-LABEL: loop.kernel @k_lookup_and_rows(
// SCHEDULE-SAME:    attributes {tile.schedule = #tile.schedule<block [8, 16, 1], loops [[0] global vector 4, [1] rows, [1, 0] thread vector 4]>} {

loop.kernel @k_lookup_and_rows(%p: memref<4096xf32>, %x: memref<8192x32xf32>, %q: memref<4096xf32>, %y: memref<8192x32xf32>) {
  loop.for %i in 0 to 4096 {
    %v = loop.load %p[%i] : memref<4096xf32>
    loop.store %v, %q[%i] : memref<4096xf32>
  }
  loop.for %r in 0 to 8192 {
    loop.for %c in 0 to 32 {
      %v = loop.load %x[%r, %c] : memref<8192x32xf32>
      loop.store %v, %y[%r, %c] : memref<8192x32xf32>
    }
  }
}
