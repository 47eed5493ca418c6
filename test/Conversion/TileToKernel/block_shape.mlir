// RUN: emmy-opt %s --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// A block of [32, 2, 1] has 64 threads, numbered threadIdx.x + threadIdx.y * 32 as CUDA numbers
// them into warps: a loop mapped to thread starts at that number and steps by 64, and a loop
// mapped to global starts at blockIdx.x * 64 plus it, so every element is written once.

// CHECK-LABEL: kernel.func @k_scale(
// CHECK-SAME:    block [32, 2, 1] {
// CHECK-DAG:     %[[TX:.*]] = kernel.thread_id x
// CHECK-DAG:     %[[TY:.*]] = kernel.thread_id y
// CHECK-DAG:     %[[ROW:.*]] = arith.muli %[[TY]], %c32 : index
// CHECK-DAG:     %[[T:.*]] = arith.addi %[[TX]], %[[ROW]] : index
// CHECK:         memref.load %{{.*}}[%[[T]]] : memref<128xf32>
// CHECK:         memref.store %{{.*}}, %{{.*}}[%[[T]]] : memref<128xf32>
// CHECK:         %[[T64:.*]] = arith.addi %[[T]], %c64 : index
// CHECK:         memref.load %{{.*}}[%[[T64]]] : memref<128xf32>
// CHECK:         memref.store %{{.*}}, %{{.*}}[%[[T64]]] : memref<128xf32>
// CHECK-NEXT:  }

// CHECK-LABEL: kernel.func @k_sum(
// CHECK-SAME:    block [32, 2, 1] {
// CHECK-DAG:     %[[TX:.*]] = kernel.thread_id x
// CHECK-DAG:     %[[TY:.*]] = kernel.thread_id y
// CHECK-DAG:     %[[BX:.*]] = kernel.block_id x
// CHECK-DAG:     %[[ROW:.*]] = arith.muli %[[TY]], %c32 : index
// CHECK-DAG:     %[[T:.*]] = arith.addi %[[TX]], %[[ROW]] : index
// CHECK-DAG:     %[[BASE:.*]] = arith.muli %[[BX]], %c64 : index
// CHECK:         %[[FIRST:.*]] = arith.addi %[[BASE]], %[[T]] : index
// CHECK:         scf.for %{{.*}} = %[[FIRST]] to %c1000 step %{{.*}}
// The warps of the block reduction are the linear thread id's runs of 32.
// CHECK:         arith.remui %[[T]], %c32 : index
// CHECK:         arith.divui %[[T]], %c32 : index

tile.kernel @k_scale(%x: memref<128xf32>, %y: memref<128xf32>) grid [1, 1, 1] block [32, 2, 1] {
  tile.for %j in 0 to 128 map thread {
    %v = memref.load %x[%j] : memref<128xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %y[%j] : memref<128xf32>
  }
}
tile.kernel @k_sum(%x: memref<1000xf32>, %s: memref<1xf32>) grid [4, 1, 1] block [32, 2, 1] {
  %total = tile.for %j in 0 to 1000 map global reduce add init 0.0 : f32 {
    %v = memref.load %x[%j] : memref<1000xf32>
    tile.yield %v : f32
  }
  %c0 = arith.constant 0 : index
  memref.store %total, %s[%c0] : memref<1xf32>
}
func.func @forward(%x: memref<128xf32>, %z: memref<1000xf32>) -> (memref<128xf32>, memref<1xf32>) {
  %y = memref.alloc() : memref<128xf32>
  tile.launch @k_scale(%x, %y) : memref<128xf32>, memref<128xf32>
  %s = memref.alloc() : memref<1xf32>
  tile.launch @k_sum(%z, %s) : memref<1000xf32>, memref<1xf32>
  func.return %y, %s : memref<128xf32>, memref<1xf32>
}
