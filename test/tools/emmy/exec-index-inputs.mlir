// `emmy exec` draws an input that indexes a table below the table's size: here the 64
// indices of an embedding of 10 rows (integers that index nothing take 0 to 15).

// RUN: emmy exec %s | filecheck %s
// RUN: emmy exec %s --seed 1 | filecheck %s
// CHECK: @forward on random inputs (seed {{[01]}}): 1 result
// CHECK-NEXT: #0 memref<64x8xf32>: 64x8 float32

loop.kernel @k_embedding(%p_weight: memref<10x8xf32>, %input: memref<64xi64>, %out: memref<64x8xf32>) {
  loop.for %i0 in 0 to 64 {
    %0 = loop.load %input[%i0] : memref<64xi64>
    %1 = arith.index_cast %0 : i64 to index
    loop.for %i1 in 0 to 8 {
      %2 = loop.load %p_weight[%1, %i1] : memref<10x8xf32>
      loop.store %2, %out[%i0, %i1] : memref<64x8xf32>
    }
  }
}
func.func @forward(%p_weight: memref<10x8xf32>, %input: memref<64xi64>) -> memref<64x8xf32> {
  %embedding = memref.alloc() : memref<64x8xf32>
  loop.launch @k_embedding(%p_weight, %input, %embedding) : memref<10x8xf32>, memref<64xi64>, memref<64x8xf32>
  func.return %embedding : memref<64x8xf32>
}
