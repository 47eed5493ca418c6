// RUN: emmy-opt %s --split-input-file --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// The ops that a block runs in order pass data through memory only across a barrier: a loop
// that reads (or writes) a buffer an earlier one of the block wrote (or read) since the last
// barrier gets one before it. Here each row passes through %t: a barrier between the loops.
// Every row has its own elements of %t (indexed by the grid loop's variable), so nothing
// passes from one row to the next and the body needs no barrier at its end.

// CHECK-LABEL: kernel.func @k_reverse_rows(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %c4 step %{{.*}} {
// CHECK-COUNT-4:   memref.store %{{.*}}, %t[%[[I]], %{{.*}}] : memref<4x256xf32>
// CHECK-NEXT:      kernel.barrier
// CHECK-NEXT:      %{{.*}} = arith.subi %c255, %{{.*}} : index
// CHECK-NEXT:      %{{.*}} = memref.load %t[%[[I]], %{{.*}}] : memref<4x256xf32>
// CHECK-COUNT-4:   memref.store %{{.*}}, %y[%[[I]], %{{.*}}] : memref<4x256xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

tile.kernel @k_reverse_rows(%x: memref<4x256xf32>, %t: memref<4x256xf32>, %y: memref<4x256xf32>) grid [4, 1, 1] block [64, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.for %j in 0 to 256 map thread {
      %v = memref.load %x[%i, %j] : memref<4x256xf32>
      memref.store %v, %t[%i, %j] : memref<4x256xf32>
    }
    tile.for %j in 0 to 256 map thread {
      %c255 = arith.constant 255 : index
      %m = arith.subi %c255, %j : index
      %v = memref.load %t[%i, %m] : memref<4x256xf32>
      memref.store %v, %y[%i, %j] : memref<4x256xf32>
    }
  }
}

// -----

// One scratch row %s for every row, in a grid of one block (over more blocks the rows would
// share it at once, which the tile.kernel verifier refuses): the next row's first loop
// overwrites what this row's second loop reads, so the body ends with a barrier too.

// CHECK-LABEL: kernel.func @k_scratch(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %c4 step %{{.*}} {
// CHECK-COUNT-4:   memref.store %{{.*}}, %s[%{{.*}}] : memref<256xf32>
// CHECK-NEXT:      kernel.barrier
// CHECK-COUNT-4:   memref.store %{{.*}}, %y[%[[I]], %{{.*}}] : memref<4x256xf32>
// CHECK-NEXT:      kernel.barrier
// CHECK-NEXT:    }

tile.kernel @k_scratch(%x: memref<4x256xf32>, %s: memref<256xf32>, %y: memref<4x256xf32>) grid [1, 1, 1] block [64, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.for %j in 0 to 256 map thread {
      %v = memref.load %x[%i, %j] : memref<4x256xf32>
      memref.store %v, %s[%j] : memref<256xf32>
    }
    tile.for %j in 0 to 256 map thread {
      %c255 = arith.constant 255 : index
      %m = arith.subi %c255, %j : index
      %v = memref.load %s[%m] : memref<256xf32>
      memref.store %v, %y[%i, %j] : memref<4x256xf32>
    }
  }
}

// -----

// Loops that share only what they read need no barrier.

// CHECK-LABEL: kernel.func @k_independent(
// CHECK-NOT:     kernel.barrier
// CHECK:         kernel.launch

tile.kernel @k_independent(%x: memref<4x256xf32>, %y: memref<4x256xf32>, %z: memref<4x256xf32>) grid [4, 1, 1] block [64, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.for %j in 0 to 256 map thread {
      %v = memref.load %x[%i, %j] : memref<4x256xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %y[%i, %j] : memref<4x256xf32>
    }
    tile.for %j in 0 to 256 map thread {
      %v = memref.load %x[%i, %j] : memref<4x256xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %z[%i, %j] : memref<4x256xf32>
    }
  }
}
func.func @forward(%x: memref<4x256xf32>) -> memref<4x256xf32> {
  %y = memref.alloc() : memref<4x256xf32>
  %z = memref.alloc() : memref<4x256xf32>
  tile.launch @k_independent(%x, %y, %z) : memref<4x256xf32>, memref<4x256xf32>, memref<4x256xf32>
  func.return %y : memref<4x256xf32>
}

// -----

// The nests of a kernel of one block are ordered like the loops of a row: a barrier between
// dependent ones. (Over more blocks nothing can order them: the verifier refuses the kernel,
// and lower-loop-to-tile launches such nests one after another instead.)

// CHECK-LABEL: kernel.func @k_nests(
// CHECK:         scf.for
// CHECK:           kernel.vector_store %{{.*}}, %t[%{{.*}}] : memref<64xf32>, vector<4xf32>
// CHECK:         }
// CHECK-NEXT:    kernel.barrier
// CHECK:         scf.for
// CHECK:           memref.load %t[
// CHECK-NOT:     kernel.barrier

tile.kernel @k_nests(%x: memref<64xf32>, %t: memref<64xf32>, %y: memref<64xf32>) grid [1, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 64 map global vector 4 {
    %v = memref.load %x[%i] : memref<64xf32>
    memref.store %v, %t[%i] : memref<64xf32>
  }
  tile.for %i in 0 to 64 map global vector 4 {
    %c63 = arith.constant 63 : index
    %j = arith.subi %c63, %i : index
    %v = memref.load %t[%j] : memref<64xf32>
    memref.store %v, %y[%i] : memref<64xf32>
  }
}

// -----

// A serial loop of a block orders its body the same way: its rounds each add %x to the
// reverse of %y through %s, a barrier between the two loops, and one at the end, where the
// next round's first loop overwrites %s, which this round's second loop reads.

// CHECK-LABEL: kernel.func @k_rounds(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %c2 step %{{.*}} {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c3 step %c1 {
// CHECK-COUNT-2:     memref.store %{{.*}}, %s[%[[I]], %{{.*}}] : memref<2x64xf32>
// CHECK-NEXT:        kernel.barrier
// CHECK-COUNT-2:     memref.store %{{.*}}, %y[%[[I]], %{{.*}}] : memref<2x64xf32>
// CHECK-NEXT:        kernel.barrier
// CHECK-NEXT:      }
// CHECK-NEXT:    }

tile.kernel @k_rounds(%x: memref<2x64xf32>, %s: memref<2x64xf32>, %y: memref<2x64xf32>) grid [2, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 2 map grid {
    tile.for %k in 0 to 3 map serial {
      tile.for %j in 0 to 64 map thread {
        %v = memref.load %y[%i, %j] : memref<2x64xf32>
        memref.store %v, %s[%i, %j] : memref<2x64xf32>
      }
      tile.for %j in 0 to 64 map thread {
        %c63 = arith.constant 63 : index
        %m = arith.subi %c63, %j : index
        %v = memref.load %s[%i, %m] : memref<2x64xf32>
        %w = memref.load %x[%i, %j] : memref<2x64xf32>
        %a = arith.addf %v, %w : f32
        memref.store %a, %y[%i, %j] : memref<2x64xf32>
      }
    }
  }
}

// -----

// A reduction over the block ends with a barrier (after the warps' partials are read back),
// which orders its loads of %t before the loop that then overwrites %t (each element in
// another thread than the one that read it): no barrier is added. A block of one warp
// reduces with shuffles alone, so there the loop gets a barrier.

// CHECK-LABEL: kernel.func @k_sum_then_scale(
// CHECK-SAME:    block [64, 1, 1]
// CHECK:         scf.for
// CHECK-COUNT-2:   kernel.barrier
// CHECK-NOT:       kernel.barrier
// CHECK:           memref.store %{{.*}}, %t[
// CHECK-LABEL: kernel.func @k_sum_then_scale_warp(
// CHECK-SAME:    block [32, 1, 1]
// CHECK:         scf.for
// CHECK:           kernel.shuffle
// CHECK-NOT:       memref.store
// CHECK:           kernel.barrier
// CHECK:           memref.store %{{.*}}, %t[

tile.kernel @k_sum_then_scale(%t: memref<4x64xf32>) grid [4, 1, 1] block [64, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    %sum = tile.for %j in 0 to 64 map thread reduce add init 0.0 : f32 {
      %v = memref.load %t[%i, %j] : memref<4x64xf32>
      tile.yield %v : f32
    }
    tile.for %j in 0 to 64 map thread {
      %c63 = arith.constant 63 : index
      %m = arith.subi %c63, %j : index
      %v = memref.load %t[%i, %m] : memref<4x64xf32>
      %w = arith.divf %v, %sum : f32
      memref.store %w, %t[%i, %m] : memref<4x64xf32>
    }
  }
}
tile.kernel @k_sum_then_scale_warp(%t: memref<4x64xf32>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    %sum = tile.for %j in 0 to 64 map thread reduce add init 0.0 : f32 {
      %v = memref.load %t[%i, %j] : memref<4x64xf32>
      tile.yield %v : f32
    }
    tile.for %j in 0 to 64 map thread {
      %c63 = arith.constant 63 : index
      %m = arith.subi %c63, %j : index
      %v = memref.load %t[%i, %m] : memref<4x64xf32>
      %w = arith.divf %v, %sum : f32
      memref.store %w, %t[%i, %m] : memref<4x64xf32>
    }
  }
}
