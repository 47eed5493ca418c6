// RUN: emmy-opt %s --split-input-file --lower-loop-to-tile | filecheck %s

// lower-loop-to-tile applies the schedule as written: each loop gets the mapping and vector
// width of its path, a loop it does not name runs serially, each staging stages the row its
// grid loop reads, and the grid is the blocks the mapped loops need (here 8 rows).

// CHECK-LABEL: tile.kernel @k_norm(
// CHECK-SAME:    grid [8, 1, 1] block [64, 1, 1] attributes {tile.schedule = #tile.schedule<block [64, 1, 1], loops [[0] grid, [0, 0] thread vector 2, [0, 1] thread], stage [[0] arg 0 sync]>} {
// CHECK-NEXT:    tile.for %[[I:.*]] in 0 to 8 map grid {
// CHECK-NEXT:      tile.stage %[[X:.*]][%[[I]]] sync : memref<8x256xf32>
// CHECK-NEXT:      %{{.*}} = tile.for %{{.*}} in 0 to 256 map thread vector 2 reduce add init 0.0 : f32 {
// CHECK:           tile.for %[[J:.*]] in 0 to 256 map thread {
// CHECK-NEXT:        tile.for %{{.*}} in 0 to 2 map serial {
// CHECK-LABEL: func.func @forward(
// CHECK:         tile.launch @k_norm(

loop.kernel @k_norm(%x: memref<8x256xf32>, %y: memref<8x256xf32>) attributes {tile.schedule = #tile.schedule<block [64, 1, 1], loops [[0] grid, [0, 0] thread vector 2, [0, 1] thread], stage [[0] arg 0 sync]>} {
  loop.for %i in 0 to 8 {
    %s = loop.for %r in 0 to 256 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %r] : memref<8x256xf32>
      loop.yield %v : f32
    }
    loop.for %j in 0 to 256 {
      loop.for %k in 0 to 2 {
        %v = loop.load %x[%i, %j] : memref<8x256xf32>
        %o = arith.mulf %v, %s : f32
        loop.store %o, %y[%i, %j] : memref<8x256xf32>
      }
    }
  }
}
func.func @forward(%x: memref<8x256xf32>) -> memref<8x256xf32> {
  %y = memref.alloc() : memref<8x256xf32>
  loop.launch @k_norm(%x, %y) : memref<8x256xf32>, memref<8x256xf32>
  func.return %y : memref<8x256xf32>
}

// -----

// The same elementwise nest under two hand-written schedules: its rows over rows of blocks
// and each row over the blocks of a row (grid [256 / (32 * 4) = 2, 8, 1]), or a row a block.

// CHECK-LABEL: tile.kernel @k_rows_of_blocks(
// CHECK-SAME:    grid [2, 8, 1] block [32, 1, 1]
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 8 map grid_y {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 256 map global vector 4 {
// CHECK-LABEL: tile.kernel @k_row_a_block(
// CHECK-SAME:    grid [8, 1, 1] block [256, 1, 1]
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 8 map grid {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 256 map thread {

loop.kernel @k_rows_of_blocks(%x: memref<8x256xf32>, %y: memref<8x256xf32>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid_y, [0, 0] global vector 4]>} {
  loop.for %i in 0 to 8 {
    loop.for %j in 0 to 256 {
      %v = loop.load %x[%i, %j] : memref<8x256xf32>
      loop.store %v, %y[%i, %j] : memref<8x256xf32>
    }
  }
}
loop.kernel @k_row_a_block(%x: memref<8x256xf32>, %y: memref<8x256xf32>) attributes {tile.schedule = #tile.schedule<block [256, 1, 1], loops [[0] grid, [0, 0] thread]>} {
  loop.for %i in 0 to 8 {
    loop.for %j in 0 to 256 {
      %v = loop.load %x[%i, %j] : memref<8x256xf32>
      loop.store %v, %y[%i, %j] : memref<8x256xf32>
    }
  }
}
