// RUN: emmy-opt %s --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// Split-K: Y (5x40) = X (5x300) W^T + b in 16x32x64 tiles, split 3. K is 5 slices of 64, 2 a
// block (the third block's second slice lies past K and adds zeros): block x of the grid's 6
// is N tile x / 3 and rank x % 3 of its cluster, which is kernel.func's `cluster 3`; rank r
// copies slices 2r and 2r + 1, zero-filling past K = 300. After its K loop each block stores
// its accumulators to its f32 partial tile in shared memory and passes a cluster barrier;
// then rank r sums the pairs of columns 86r to 86r + 85 of the tile's 256 over the partials
// of ranks 0, 1 and 2 (distributed shared memory, in rank order) and runs their epilogue,
// one thread a pair; a last cluster barrier keeps every block's partials until all are read.

// CHECK-LABEL: kernel.func @decode(
// CHECK-SAME:    block [128, 1, 1] cluster 3 {
// CHECK:         %[[BX:.*]] = kernel.block_id x
// CHECK:         %[[PARTIALS:.*]] = kernel.shared_alloc : memref<16x32xf32, 3 : i32>
// CHECK-NEXT:    %[[RANK:.*]] = arith.remui %[[BX]], %c3 : index
// CHECK-NEXT:    %[[FIRST:.*]] = arith.muli %[[RANK]], %c2 : index
// CHECK-NEXT:    %[[TILE:.*]] = arith.divui %[[BX]], %c3 : index
// CHECK-NEXT:    %{{.*}} = arith.muli %[[TILE]], %c32 : index
// CHECK:         scf.for %{{.*}} = %c0 to %c2 step %c1
// CHECK:         kernel.vector_store %{{.*}}, %[[PARTIALS]][%{{.*}}, %{{.*}}] : memref<16x32xf32, 3 : i32>, vector<2xf32>
// CHECK:         kernel.vector_store %{{.*}}, %[[PARTIALS]][%{{.*}}, %{{.*}}] : memref<16x32xf32, 3 : i32>, vector<2xf32>
// CHECK-NEXT:    kernel.cluster_barrier
// CHECK-NEXT:    %[[R0:.*]] = kernel.map_shared_rank %[[PARTIALS]], %c0 : memref<16x32xf32, 3 : i32>
// CHECK-NEXT:    %[[R1:.*]] = kernel.map_shared_rank %[[PARTIALS]], %c1 : memref<16x32xf32, 3 : i32>
// CHECK-NEXT:    %[[R2:.*]] = kernel.map_shared_rank %[[PARTIALS]], %c2 : memref<16x32xf32, 3 : i32>
// CHECK-NEXT:    %[[START:.*]] = arith.muli %[[RANK]], %c86 : index
// CHECK-NEXT:    %[[MINE:.*]] = arith.cmpi ult, %[[TID:.*]], %c86 : index
// CHECK-NEXT:    %[[PAIR:.*]] = arith.addi %[[START]], %[[TID]] : index
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpi ult, %[[PAIR]], %c256 : index
// CHECK-NEXT:    %[[BOTH:.*]] = arith.andi %[[MINE]], %[[IN]] : i1
// CHECK-NEXT:    scf.if %[[BOTH]] {
// CHECK-NEXT:      %[[ROW:.*]] = arith.divui %[[PAIR]], %c16 : index
// CHECK-NEXT:      %[[P:.*]] = arith.remui %[[PAIR]], %c16 : index
// CHECK-NEXT:      %[[COL:.*]] = arith.muli %[[P]], %c2 : index
// CHECK-NEXT:      %[[V0:.*]] = kernel.vector_load %[[R0]][%[[ROW]], %[[COL]]] : memref<16x32xf32, 3 : i32>, vector<2xf32>
// CHECK-NEXT:      %[[A0:.*]] = vector.extract %[[V0]][0] : f32 from vector<2xf32>
// CHECK-NEXT:      %[[B0:.*]] = vector.extract %[[V0]][1] : f32 from vector<2xf32>
// CHECK-NEXT:      %[[V1:.*]] = kernel.vector_load %[[R1]][%[[ROW]], %[[COL]]] : memref<16x32xf32, 3 : i32>, vector<2xf32>
// CHECK-NEXT:      %[[A1:.*]] = vector.extract %[[V1]][0] : f32 from vector<2xf32>
// CHECK-NEXT:      %[[B1:.*]] = vector.extract %[[V1]][1] : f32 from vector<2xf32>
// CHECK-NEXT:      %[[SA:.*]] = arith.addf %[[A0]], %[[A1]] : f32
// CHECK-NEXT:      %[[SB:.*]] = arith.addf %[[B0]], %[[B1]] : f32
// CHECK-NEXT:      %[[V2:.*]] = kernel.vector_load %[[R2]][%[[ROW]], %[[COL]]] : memref<16x32xf32, 3 : i32>, vector<2xf32>
// CHECK:           %[[SUM:.*]] = arith.addf %[[SA]], %{{.*}} : f32
// CHECK:           scf.if %{{.*}} {
// CHECK-NEXT:        %[[BIAS:.*]] = memref.load %{{.*}}[%[[N:.*]]] : memref<40xf32>
// CHECK-NEXT:        %{{.*}} = arith.addf %[[SUM]], %[[BIAS]] : f32
// CHECK:             kernel.vector_store %{{.*}}, %{{.*}}[%{{.*}}, %[[N]]] : memref<5x40xbf16>, vector<2xbf16>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.cluster_barrier
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @forward(
// CHECK:         kernel.launch @decode(%{{.*}}) grid [6, 1, 1] block [128, 1, 1] smem 0

tile.kernel @decode(%x: memref<5x300xbf16>, %w: memref<40x300xbf16>, %bias: memref<40xf32>, %y: memref<5x40xbf16>) grid [6, 1, 1] block [128, 1, 1] {
  tile.gemm %x[m, k] * %w[n, k] : memref<5x300xbf16>, memref<40x300xbf16> -> f32 atom mma_sync m16n8k16 tile [16, 32, 64] warps [1, 4] pipeline 2 split 3 epilogue(%m, %n, %acc) {
    %b = memref.load %bias[%n] : memref<40xf32>
    %s = arith.addf %acc, %b : f32
    %t = arith.truncf %s : f32 to bf16
    memref.store %t, %y[%m, %n] : memref<5x40xbf16>
  }
}
func.func @forward(%x: memref<5x300xbf16>, %w: memref<40x300xbf16>, %bias: memref<40xf32>) -> memref<5x40xbf16> {
  %y = memref.alloc() : memref<5x40xbf16>
  tile.launch @decode(%x, %w, %bias, %y) : memref<5x300xbf16>, memref<40x300xbf16>, memref<40xf32>, memref<5x40xbf16>
  func.return %y : memref<5x40xbf16>
}
