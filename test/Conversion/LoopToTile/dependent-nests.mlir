// RUN: emmy-opt %s --split-input-file --lower-loop-to-tile | filecheck %s

// The nests of a loop.kernel run in order, those of a tile.kernel of several blocks at once:
// a nest that reads what an earlier one writes starts a new tile kernel, launched after the
// one before it, each with its own grid and the part of the schedule for its nests (their
// paths counted from 0 again). Here the second nest reads %t reversed, which the first
// writes: two kernels of 4 blocks each.

// CHECK-LABEL: tile.kernel @k_reverse(
// CHECK-SAME:    grid [4, 1, 1] block [512, 1, 1] attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] global vector 4]>} {
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 8192 map global vector 4 {
// CHECK:           memref.store %{{.*}}, %t[%{{.*}}] : memref<8192xf32>
// CHECK:         }
// CHECK-NEXT:  }
// CHECK-NEXT:  tile.kernel @k_reverse_1(%x: memref<8192xf32>, %t: memref<8192xf32>, %y: memref<8192xf32>) grid [4, 1, 1] block [512, 1, 1] attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] global vector 4]>} {
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 8192 map global vector 4 {
// CHECK:           memref.load %t[%{{.*}}] : memref<8192xf32>
// CHECK-LABEL: func.func @forward(
// CHECK:         tile.launch @k_reverse(%x, %t, %y)
// CHECK-NEXT:    tile.launch @k_reverse_1(%x, %t, %y)
// CHECK-NEXT:    func.return

loop.kernel @k_reverse(%x: memref<8192xf32>, %t: memref<8192xf32>, %y: memref<8192xf32>) attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] global vector 4, [1] global vector 4]>} {
  loop.for %i in 0 to 8192 {
    %v = loop.load %x[%i] : memref<8192xf32>
    loop.store %v, %t[%i] : memref<8192xf32>
  }
  loop.for %i in 0 to 8192 {
    %c8191 = arith.constant 8191 : index
    %j = arith.subi %c8191, %i : index
    %v = loop.load %t[%j] : memref<8192xf32>
    loop.store %v, %y[%i] : memref<8192xf32>
  }
}
func.func @forward(%x: memref<8192xf32>) -> memref<8192xf32> {
  %t = memref.alloc() : memref<8192xf32>
  %y = memref.alloc() : memref<8192xf32>
  loop.launch @k_reverse(%x, %t, %y) : memref<8192xf32>, memref<8192xf32>, memref<8192xf32>
  func.return %y : memref<8192xf32>
}

// -----

// A nest that depends on no nest of the kernel so far stays in it: the first two nests share
// only %x, which both read, and the third, which reads %t, starts the second kernel, with
// its staging and the constant it uses (and only that).

// CHECK-LABEL: tile.kernel @k_three(
// CHECK-SAME:    grid [8, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [[0] grid, [0, 0] thread, [1] grid, [1, 0] thread]>} {
// CHECK-NOT:     arith.constant 1023
// CHECK:         memref.store %{{.*}}, %t[
// CHECK:         memref.store %{{.*}}, %z[
// CHECK:       tile.kernel @k_three_1(
// CHECK-SAME:    grid [8, 1, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [[0] grid, [0, 0] thread], stage [[0] arg 0 sync]>} {
// CHECK-NEXT:    %[[LAST:.*]] = arith.constant 1023 : index
// CHECK-NEXT:    tile.for %[[I:.*]] in 0 to 8 map grid {
// CHECK-NEXT:      tile.stage %x[%[[I]]] sync : memref<8x1024xf32>
// CHECK-NEXT:      tile.for %[[J:.*]] in 0 to 1024 map thread {
// CHECK-NEXT:        %{{.*}} = arith.subi %[[LAST]], %[[J]] : index
// CHECK-LABEL: func.func @forward(
// CHECK:         tile.launch @k_three(
// CHECK-NEXT:    tile.launch @k_three_1(

loop.kernel @k_three(%x: memref<8x1024xf32>, %t: memref<8x1024xf32>, %z: memref<8x1024xf32>, %y: memref<8x1024xf32>) attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [[0] grid, [0, 0] thread, [1] grid, [1, 0] thread, [2] grid, [2, 0] thread], stage [[2] arg 0 sync]>} {
  %c1023 = arith.constant 1023 : index
  loop.for %i in 0 to 8 {
    loop.for %j in 0 to 1024 {
      %v = loop.load %x[%i, %j] : memref<8x1024xf32>
      %w = arith.addf %v, %v : f32
      loop.store %w, %t[%i, %j] : memref<8x1024xf32>
    }
  }
  loop.for %i in 0 to 8 {
    loop.for %j in 0 to 1024 {
      %v = loop.load %x[%i, %j] : memref<8x1024xf32>
      %w = arith.mulf %v, %v : f32
      loop.store %w, %z[%i, %j] : memref<8x1024xf32>
    }
  }
  loop.for %i in 0 to 8 {
    loop.for %j in 0 to 1024 {
      %k = arith.subi %c1023, %j : index
      %v = loop.load %t[%i, %k] : memref<8x1024xf32>
      %w = loop.load %x[%i, %j] : memref<8x1024xf32>
      %s = arith.addf %v, %w : f32
      loop.store %s, %y[%i, %j] : memref<8x1024xf32>
    }
  }
}
func.func @forward(%x: memref<8x1024xf32>) -> memref<8x1024xf32> {
  %t = memref.alloc() : memref<8x1024xf32>
  %z = memref.alloc() : memref<8x1024xf32>
  %y = memref.alloc() : memref<8x1024xf32>
  loop.launch @k_three(%x, %t, %z, %y) : memref<8x1024xf32>, memref<8x1024xf32>, memref<8x1024xf32>, memref<8x1024xf32>
  func.return %y : memref<8x1024xf32>
}

// -----

// A kernel of one block keeps its nests together (lower-tile-to-kernel orders them with a
// barrier).

// CHECK-LABEL: tile.kernel @k_small(
// CHECK-SAME:    grid [1, 1, 1] block [32, 1, 1]
// CHECK-COUNT-2: tile.for %{{.*}} in 0 to 64 map global vector 4 {
// CHECK-NOT:   tile.kernel

loop.kernel @k_small(%x: memref<64xf32>, %t: memref<64xf32>, %y: memref<64xf32>) attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] global vector 4, [1] global vector 4]>} {
  loop.for %i in 0 to 64 {
    %v = loop.load %x[%i] : memref<64xf32>
    loop.store %v, %t[%i] : memref<64xf32>
  }
  loop.for %i in 0 to 64 {
    %c63 = arith.constant 63 : index
    %j = arith.subi %c63, %i : index
    %v = loop.load %t[%j] : memref<64xf32>
    loop.store %v, %y[%i] : memref<64xf32>
  }
}

// -----

// A part takes a name no symbol has: @k_two_1 is taken, so the second part of @k_two is
// @k_two_1_1.

// CHECK-LABEL: tile.kernel @k_two(
// CHECK:       tile.kernel @k_two_1_1(
// CHECK:       tile.kernel @k_two_1(

loop.kernel @k_two(%x: memref<8192xf32>, %y: memref<8192xf32>) attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] global vector 4, [1] global vector 4]>} {
  loop.for %i in 0 to 8192 {
    %v = loop.load %x[%i] : memref<8192xf32>
    loop.store %v, %y[%i] : memref<8192xf32>
  }
  loop.for %i in 0 to 8192 {
    %c8191 = arith.constant 8191 : index
    %j = arith.subi %c8191, %i : index
    %v = loop.load %y[%j] : memref<8192xf32>
    loop.store %v, %x[%i] : memref<8192xf32>
  }
}
loop.kernel @k_two_1(%x: memref<8192xf32>) attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] global vector 4]>} {
  loop.for %i in 0 to 8192 {
    %v = loop.load %x[%i] : memref<8192xf32>
    loop.store %v, %x[%i] : memref<8192xf32>
  }
}

// -----

// A value passes in registers only within a kernel: the store of the sum goes with the
// reduction that computes it, into the first kernel, before the nest that overwrites what
// the reduction read (the two share nothing in memory).

// CHECK-LABEL: tile.kernel @k_sum_then_overwrite(
// CHECK-SAME:    grid [4, 1, 1]
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[SUM:.*]] = tile.for %{{.*}} in 0 to 8192 map global vector 4 reduce add
// CHECK:         memref.store %[[SUM]], %y[%[[C0]]] : memref<1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  tile.kernel @k_sum_then_overwrite_1(
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 8192 map global vector 4 {
// CHECK:           memref.store %{{.*}}, %t[

loop.kernel @k_sum_then_overwrite(%x: memref<8192xf32>, %t: memref<8192xf32>, %y: memref<1xf32>) attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] global vector 4, [1] global vector 4]>} {
  %s = loop.for %i in 0 to 8192 reduce add init 0.0 : f32 {
    %v = loop.load %t[%i] : memref<8192xf32>
    loop.yield %v : f32
  }
  loop.for %i in 0 to 8192 {
    %v = loop.load %x[%i] : memref<8192xf32>
    loop.store %v, %t[%i] : memref<8192xf32>
  }
  %c0 = arith.constant 0 : index
  loop.store %s, %y[%c0] : memref<1xf32>
}
