// RUN: emmy-opt %s --split-input-file --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// A staged row: a shared copy of the row, 8 bf16 = 16 bytes a cp.async, between a barrier
// for the previous row's readers and one for this row's. 32 threads of 8 cover the 256
// elements in one step, so each loop runs once per thread (and canonicalize folds it away);
// both passes read the shared row 8 at a time and the store is one vector.

// CHECK-LABEL: kernel.func @k_softmax_like(
// CHECK:         %[[TID:.*]] = kernel.thread_id x
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[ROW:.*]] = kernel.shared_alloc : memref<256xbf16, 3 : i32>
// CHECK-NEXT:      kernel.barrier
// CHECK-NEXT:      %[[J:.*]] = arith.muli %[[TID]], %{{.*}} : index
// CHECK-NEXT:      kernel.cp_async %[[ROW]][%[[J]]], %{{.*}}[%[[I]], %[[J]]] bytes 16
// CHECK-NEXT:      kernel.cp_async_commit
// CHECK-NEXT:      kernel.cp_async_wait 0
// CHECK-NEXT:      kernel.barrier
// CHECK-NEXT:      %[[VEC:.*]] = kernel.vector_load %[[ROW]][%[[J]]] : memref<256xbf16, 3 : i32>, vector<8xbf16>
// CHECK-NEXT:      %[[V:.*]] = vector.extract %[[VEC]][0] : bf16 from vector<8xbf16>
// CHECK-COUNT-7:   vector.extract %[[VEC]]
// CHECK-NEXT:      arith.maximumf %{{.*}}, %[[V]]
// CHECK:           kernel.shuffle xor
// CHECK:           %[[D:.*]] = arith.subf %[[V]]
// CHECK:           %[[D0:.*]] = vector.broadcast %[[D]] : bf16 to vector<8xbf16>
// CHECK-NEXT:      %[[D1:.*]] = vector.insert %{{.*}}, %[[D0]] [1] : bf16 into vector<8xbf16>
// CHECK-COUNT-6:   vector.insert
// CHECK-NEXT:      kernel.vector_store %[[D7:.*]], %{{.*}}[%[[I]], %[[J]]] : memref<8x256xbf16>, vector<8xbf16>

tile.kernel @k_softmax_like(%x: memref<8x256xbf16>, %y: memref<8x256xbf16>) grid [8, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 8 map grid {
    tile.stage %x[%i] async : memref<8x256xbf16>
    %m = tile.for %j in 0 to 256 map thread vector 8 reduce max init -inf : bf16 {
      %v = memref.load %x[%i, %j] : memref<8x256xbf16>
      tile.yield %v : bf16
    }
    tile.for %j in 0 to 256 map thread vector 8 {
      %v = memref.load %x[%i, %j] : memref<8x256xbf16>
      %d = arith.subf %v, %m : bf16
      memref.store %d, %y[%i, %j] : memref<8x256xbf16>
    }
  }
}

// -----

// Synchronous staging copies through registers. Accesses that do not run along the vectorised
// variable (the transposed %w, %y at an offset of 2, not a multiple of 4) stay scalar, one per
// consecutive iteration, and so do the stores to %y, which the loop also reads.

// CHECK-LABEL: kernel.func @k_mixed(
// CHECK:         kernel.barrier
// CHECK-NEXT:    %[[J0:.*]] = arith.muli
// CHECK-NEXT:    scf.for %[[J:.*]] = %[[J0]]
// CHECK-NEXT:      %[[A:.*]] = kernel.vector_load %{{.*}}[%{{.*}}, %[[J]]] : memref<4x64xf32>, vector<4xf32>
// CHECK-NEXT:      kernel.vector_store %[[A]], %{{.*}}[%[[J]]] : memref<64xf32, 3 : i32>, vector<4xf32>
// CHECK:         kernel.barrier
// CHECK-NEXT:    scf.for %[[K:.*]] =
// CHECK-NEXT:      %[[ROW:.*]] = kernel.vector_load %{{.*}}[%[[K]]] : memref<64xf32, 3 : i32>, vector<4xf32>
// CHECK-NEXT:      vector.extract %[[ROW]][0] : f32 from vector<4xf32>
// CHECK-NEXT:      memref.load %{{.*}}[%[[K]], %{{.*}}] : memref<64x4xf32>
// CHECK-NEXT:      arith.addi %[[K]]
// CHECK-NEXT:      memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x64xf32>
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[K]]] : memref<4x64xf32>
// CHECK-COUNT-3:   memref.store
// CHECK-NOT:       kernel.vector_store

tile.kernel @k_mixed(%x: memref<4x64xf32>, %w: memref<64x4xf32>, %y: memref<4x64xf32>) grid [4, 1, 1] block [32, 1, 1] {
  %c2 = arith.constant 2 : index
  tile.for %i in 0 to 4 map grid {
    tile.stage %x[%i] sync : memref<4x64xf32>
    tile.for %j in 0 to 60 map thread vector 4 {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      %t = memref.load %w[%j, %i] : memref<64x4xf32>
      %jj = arith.addi %j, %c2 : index
      %u = memref.load %y[%i, %jj] : memref<4x64xf32>
      %s = arith.addf %v, %t : f32
      %r = arith.addf %s, %u : f32
      memref.store %r, %y[%i, %j] : memref<4x64xf32>
    }
  }
}

// -----

// A reduction split across blocks: each block reduces its part (warp shuffles, then shared
// memory), and its first thread adds the block's total into %y with an atomic; an init
// kernel, launched first on the same buffers, stores the init (here 0.0) into %y.

// CHECK-LABEL: kernel.func @k_sum_init(%x: memref<4096xf32>, %y: memref<f32>) block [32, 1, 1] {
// CHECK:         scf.if
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      memref.store %[[ZERO]], %y[] : memref<f32>
// CHECK-LABEL: kernel.func @k_sum(
// CHECK:         kernel.vector_load
// CHECK:         kernel.shuffle xor
// CHECK:         kernel.barrier
// CHECK:         kernel.barrier
// CHECK-NEXT:    %[[FIRST:.*]] = arith.cmpi eq
// CHECK-NEXT:    scf.if %[[FIRST]] {
// CHECK-NEXT:      kernel.atomic add %{{.*}}, %y[] : memref<f32>
// CHECK-NOT:     memref.store
// CHECK-LABEL: func.func @forward(
// CHECK-NEXT:    %[[OUT:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT:    kernel.launch @k_sum_init(%{{.*}}, %[[OUT]]) grid [1, 1, 1] block [32, 1, 1] smem 0
// CHECK-NEXT:    kernel.launch @k_sum(%{{.*}}, %[[OUT]]) grid [2, 1, 1] block [512, 1, 1] smem 0

tile.kernel @k_sum(%x: memref<4096xf32>, %y: memref<f32>) grid [2, 1, 1] block [512, 1, 1] {
  %s = tile.for %i in 0 to 4096 map global vector 4 reduce add init 0.0 : f32 {
    %v = memref.load %x[%i] : memref<4096xf32>
    tile.yield %v : f32
  }
  memref.store %s, %y[] : memref<f32>
}
func.func @forward(%x: memref<4096xf32>) -> memref<f32> {
  %y = memref.alloc() : memref<f32>
  tile.launch @k_sum(%x, %y) : memref<4096xf32>, memref<f32>
  func.return %y : memref<f32>
}

// -----

// A result computed in place (`place-results-in-arguments`): the vector loop reads %x only at
// the element it then stores, so its stores are held back to one vector store, after the one
// vector load; where it also reads another row of %x, which an earlier store could have
// written, each element is stored in turn.

// CHECK-LABEL: kernel.func @k_in_place(
// CHECK:         %[[OLD:.*]] = kernel.vector_load %[[X:.*]][%{{.*}}, %[[J:.*]]] : memref<4x128xf32>, vector<4xf32>
// CHECK-NOT:     memref.store
// CHECK:         kernel.vector_store %{{.*}}, %[[X]][%{{.*}}, %[[J]]] : memref<4x128xf32>, vector<4xf32>
// CHECK-LABEL: kernel.func @k_reads_another_row(
// CHECK-NOT:     kernel.vector_store
// CHECK-COUNT-4: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<4x128xf32>
// CHECK-NOT:     kernel.vector_store

tile.kernel @k_in_place(%x: memref<4x128xf32>, %k: memref<128xf32>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.for %j in 0 to 128 map thread vector 4 {
      %new = memref.load %k[%j] : memref<128xf32>
      %old = memref.load %x[%i, %j] : memref<4x128xf32>
      %v = arith.addf %new, %old : f32
      memref.store %v, %x[%i, %j] : memref<4x128xf32>
    }
  }
}
tile.kernel @k_reads_another_row(%x: memref<4x128xf32>, %k: memref<128xf32>) grid [4, 1, 1] block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  tile.for %i in 0 to 4 map grid {
    tile.for %j in 0 to 128 map thread vector 4 {
      %new = memref.load %k[%j] : memref<128xf32>
      %old = memref.load %x[%c0, %j] : memref<4x128xf32>
      %v = arith.addf %new, %old : f32
      memref.store %v, %x[%i, %j] : memref<4x128xf32>
    }
  }
}
func.func @forward(%x: memref<4x128xf32>, %k: memref<128xf32>) {
  tile.launch @k_in_place(%x, %k) : memref<4x128xf32>, memref<128xf32>
  tile.launch @k_reads_another_row(%x, %k) : memref<4x128xf32>, memref<128xf32>
  func.return
}
