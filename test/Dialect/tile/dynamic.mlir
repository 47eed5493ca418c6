// RUN: emmy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A tile.kernel of ? buffers takes the dynamic size last; a loop mapped to the grid or the
// threads runs to it.

// CHECK-LABEL: tile.kernel @k_dynamic(
// CHECK-SAME:    %{{.*}}: memref<?x64xf32>, %[[S:[a-z0-9_]+]]: index) grid [2048, 1, 1] block [32, 1, 1] {
// CHECK-NEXT:    tile.for %{{.*}} in 0 to %[[S]] map grid {
// CHECK:       tile.launch @k_dynamic(%{{.*}}, %{{.*}}) : memref<?x64xf32>, index
tile.kernel @k_dynamic(%x: memref<?x64xf32>, %s0: index) grid [2048, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to %s0 map grid {
    tile.for %j in 0 to 64 map thread vector 4 {
      %v = memref.load %x[%i, %j] : memref<?x64xf32>
      memref.store %v, %x[%i, %j] : memref<?x64xf32>
    }
  }
}
func.func @forward(%x: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %s0 = memref.dim %x, %c0 : memref<?x64xf32>
  tile.launch @k_dynamic(%x, %s0) : memref<?x64xf32>, index
  func.return
}

// -----

tile.kernel @vector_to_the_size(%x: memref<4x?xf32>, %s0: index) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    // expected-error @+1 {{vector width 4 must divide the loop's trip count, but it runs to the dynamic size}}
    tile.for %j in 0 to %s0 map thread vector 4 {
      %v = memref.load %x[%i, %j] : memref<4x?xf32>
      memref.store %v, %x[%i, %j] : memref<4x?xf32>
    }
  }
}

// -----

// expected-error @+1 {{a kernel whose buffers have a dynamic dim (?) takes the dynamic size as its last argument, an index}}
tile.kernel @no_size(%x: memref<?xf32>) grid [1, 1, 1] block [32, 1, 1] {
}
