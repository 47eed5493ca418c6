// RUN: emmy-opt %s --split-input-file --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// The loops over a row take the same 2 steps of 4 columns in every thread (512 columns, 64
// threads), emitted one after another with the same index values: the second pass's loads of
// the staged row reuse the first pass's, so its exps are the first pass's too (cse merges the
// arithmetic on equal values), and the output pass is a multiplication per element. (The max
// pass's loads are reused by the sum pass, whose exps read them.)

// CHECK-LABEL: kernel.func @k_softmax_like(
// CHECK:         kernel.cp_async_wait 0
// CHECK-COUNT-2: kernel.vector_load %{{.*}}_row[
// CHECK-NOT:     kernel.vector_load %{{.*}}_row[
// CHECK-COUNT-8: math.exp
// CHECK:         kernel.shuffle xor
// CHECK-NOT:     math.exp
// CHECK-COUNT-2: kernel.vector_store

tile.kernel @k_softmax_like(%x: memref<8x512xf32>, %y: memref<8x512xf32>) grid [8, 1, 1] block [64, 1, 1] {
  %half = arith.constant 0.5 : f32
  tile.for %i in 0 to 8 map grid {
    tile.stage %x[%i] async : memref<8x512xf32>
    %m = tile.for %j in 0 to 512 map thread vector 4 reduce max init -inf : f32 {
      %v = memref.load %x[%i, %j] : memref<8x512xf32>
      tile.yield %v : f32
    }
    %s = tile.for %j in 0 to 512 map thread vector 4 reduce add init 0.0 : f32 {
      %v = memref.load %x[%i, %j] : memref<8x512xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      tile.yield %e : f32
    }
    tile.for %j in 0 to 512 map thread vector 4 {
      %v = memref.load %x[%i, %j] : memref<8x512xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      %o = arith.mulf %e, %s : f32
      memref.store %o, %y[%i, %j] : memref<8x512xf32>
    }
  }
}

// -----

// A later loop that computes no math function from its loads makes them again (from the
// staged row): reusing them would only hold them in registers from one loop to the next.

// CHECK-LABEL: kernel.func @k_rms_like(
// CHECK:         kernel.cp_async_wait 0
// CHECK-COUNT-2: kernel.vector_load %{{.*}}_row[
// CHECK:         kernel.shuffle xor
// CHECK:         math.rsqrt
// CHECK-COUNT-2: kernel.vector_load %{{.*}}_row[

tile.kernel @k_rms_like(%x: memref<8x512xf32>, %y: memref<8x512xf32>) grid [8, 1, 1] block [64, 1, 1] {
  tile.for %i in 0 to 8 map grid {
    tile.stage %x[%i] async : memref<8x512xf32>
    %s = tile.for %j in 0 to 512 map thread vector 4 reduce add init 0.0 : f32 {
      %v = memref.load %x[%i, %j] : memref<8x512xf32>
      %q = arith.mulf %v, %v : f32
      tile.yield %q : f32
    }
    %r = math.rsqrt %s : f32
    tile.for %j in 0 to 512 map thread vector 4 {
      %v = memref.load %x[%i, %j] : memref<8x512xf32>
      %o = arith.mulf %v, %r : f32
      memref.store %o, %y[%i, %j] : memref<8x512xf32>
    }
  }
}
