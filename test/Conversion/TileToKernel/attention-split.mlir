// RUN: emmy-opt %s --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// Flash-decoding: one query of each of 8 heads on 2 key/value heads against 300 keys (5 blocks
// of 64), split 4. Block (x, y, z) takes the packed rows of the 4 query heads of key/value head
// z (one warp: a tile of 16 rows, 4 of them queries) and key blocks y * 5 / 4 to
// (y + 1) * 5 / 4; it leaves its rows, normalised, and their base-2 log-sum-exps in f32
// workspaces that the host allocates before the launch. Then its thread 0 arrives at the
// counter of its rows (acq_rel, between barriers): the 4th to arrive (old value 3, which
// `inc` resets to 0 for the next launch) weighs each part's row by 2^(its log-sum-exp - the
// largest) over the weights' sum (zeros where no part has a key), 4 columns a thread, every
// part's loads issued at once.

// CHECK-LABEL: memref.global
// CHECK-SAME:    sym_name = "decode_arrivals", type = memref<2xi32>, initial_value = dense<0> : tensor<2xi32>
// CHECK-NOT:     constant
// CHECK-LABEL: kernel.func @decode(
// CHECK-SAME:    %{{.*}}: memref<1x8x1x64xbf16>, %[[WS:.*]]: memref<4x1x8x1x64xf32>, %[[LSE:.*]]: memref<4x1x8x1xf32>, %[[ARRIVALS:.*]]: memref<2xi32>) block [32, 1, 1] {
// CHECK:         %[[PART:.*]] = kernel.block_id y
// CHECK:         %[[ARRIVED:.*]] = kernel.shared_alloc : memref<1xi32, 3 : i32>
// CHECK:           %[[FIRST_SCALED:.*]] = arith.muli %[[PART]], %c5 : index
// CHECK-NEXT:      %[[FIRST:.*]] = arith.divui %[[FIRST_SCALED]], %c4 : index
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[PART]], %c1 : index
// CHECK-NEXT:      %[[END_SCALED:.*]] = arith.muli %[[NEXT]], %c5 : index
// CHECK-NEXT:      %[[END:.*]] = arith.divui %[[END_SCALED]], %c4 : index
// CHECK:           scf.for %{{.*}} = %[[FIRST]] to %[[END]] step %c1 iter_args(
// CHECK:           kernel.vector_store %{{.*}}, %[[WS]][%[[PART]], {{.*}}] : memref<4x1x8x1x64xf32>, vector<2xf32>
// CHECK:           %[[LOG:.*]] = math.log2 %{{.*}} : f32
// CHECK-NEXT:      %[[LOG_SUM:.*]] = arith.addf %{{.*}}, %[[LOG]] : f32
// CHECK:             memref.store %[[LOG_SUM]], %[[LSE]][%[[PART]], {{.*}}] : memref<4x1x8x1xf32>
// CHECK:           kernel.barrier
// CHECK-NEXT:      %[[THREAD_0:.*]] = arith.cmpi eq, %tid, %c0 : index
// CHECK-NEXT:      scf.if %[[THREAD_0]] {
// CHECK-NEXT:        %[[OLD:.*]] = kernel.atomic inc acq_rel %c3_i32, %[[ARRIVALS]][%{{.*}}] : memref<2xi32>
// CHECK-NEXT:        memref.store %[[OLD]], %[[ARRIVED]][%c0] : memref<1xi32, 3 : i32>
// CHECK-NEXT:      }
// CHECK-NEXT:      kernel.barrier
// CHECK-NEXT:      %[[SEEN:.*]] = memref.load %[[ARRIVED]][%c0] : memref<1xi32, 3 : i32>
// CHECK-NEXT:      %[[LAST:.*]] = arith.cmpi eq, %[[SEEN]], %c3_i32 : i32
// CHECK-NEXT:      scf.if %[[LAST]] {
// CHECK:             scf.for %{{.*}} = %tid to %{{.*}} step %c32 {
// CHECK:               %[[L0:.*]] = memref.load %[[LSE]][%c0, {{.*}}] : memref<4x1x8x1xf32>
// CHECK-NEXT:          %[[L1:.*]] = memref.load %[[LSE]][%c1, {{.*}}] : memref<4x1x8x1xf32>
// CHECK-NEXT:          %[[L2:.*]] = memref.load %[[LSE]][%c2, {{.*}}] : memref<4x1x8x1xf32>
// CHECK-NEXT:          %[[L3:.*]] = memref.load %[[LSE]][%c3, {{.*}}] : memref<4x1x8x1xf32>
// CHECK-NEXT:          %[[R0:.*]] = kernel.vector_load %[[WS]][%c0, {{.*}}] : memref<4x1x8x1x64xf32>, vector<4xf32>
// CHECK-NEXT:          kernel.vector_load %[[WS]][%c1, {{.*}}] : memref<4x1x8x1x64xf32>, vector<4xf32>
// CHECK-NEXT:          kernel.vector_load %[[WS]][%c2, {{.*}}] : memref<4x1x8x1x64xf32>, vector<4xf32>
// CHECK-NEXT:          kernel.vector_load %[[WS]][%c3, {{.*}}] : memref<4x1x8x1x64xf32>, vector<4xf32>
// CHECK-NEXT:          %[[M0:.*]] = arith.maximumf %[[MINUS_INF:.*]], %[[L0]] : f32
// CHECK-NEXT:          %[[M12:.*]] = arith.maximumf %[[L1]], %[[L2]] : f32
// CHECK-NEXT:          %[[M012:.*]] = arith.maximumf %[[M0]], %[[M12]] : f32
// CHECK-NEXT:          %[[MAX:.*]] = arith.maximumf %[[M012]], %[[L3]] : f32
// CHECK-NEXT:          %[[UNSET:.*]] = arith.cmpf oeq, %[[MAX]], %[[MINUS_INF]] : f32
// CHECK-NEXT:          %[[BASE:.*]] = arith.select %[[UNSET]], %{{.*}}, %[[MAX]] : f32
// CHECK:               %[[D0:.*]] = arith.subf %[[L0]], %[[BASE]] : f32
// CHECK-NEXT:          %[[W0:.*]] = math.exp2 %[[D0]] : f32
// CHECK:               %[[E0:.*]] = vector.extract %[[R0]][0] : f32 from vector<4xf32>
// CHECK-NEXT:          arith.mulf %[[W0]], %[[E0]] : f32
// CHECK:               arith.divf
// CHECK:               arith.truncf %{{.*}} : f32 to bf16
// CHECK:               kernel.vector_store %{{.*}}, %o[{{.*}}] : memref<1x8x1x64xbf16>, vector<4xbf16>

// CHECK-LABEL: func.func @forward(
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<1x8x1x64xbf16>
// CHECK-NEXT:    %[[PARTS:.*]] = memref.alloc() : memref<4x1x8x1x64xf32>
// CHECK-NEXT:    %[[LOG_SUMS:.*]] = memref.alloc() : memref<4x1x8x1xf32>
// CHECK-NEXT:    %[[COUNTERS:.*]] = memref.get_global @decode_arrivals : memref<2xi32>
// CHECK-NEXT:    kernel.launch @decode(%{{.*}}, %[[OUT]], %[[PARTS]], %[[LOG_SUMS]], %[[COUNTERS]]) grid [1, 4, 2] block [32, 1, 1] smem 0
// CHECK-NEXT:    func.return %[[OUT]]
tile.kernel @decode(%q: memref<1x8x1x64xbf16>, %k: memref<1x2x300x64xbf16>, %v: memref<1x2x300x64xbf16>, %o: memref<1x8x1x64xbf16>) grid [1, 4, 2] block [32, 1, 1] {
  tile.attention %q, %k, %v scale 0.125 into %o : memref<1x8x1x64xbf16>, memref<1x2x300x64xbf16>, memref<1x2x300x64xbf16> into memref<1x8x1x64xbf16> atom mma_sync m16n8k16 tile [16, 64, 64] warps [1, 1] pipeline 2 split 4
}
func.func @forward(%q: memref<1x8x1x64xbf16>, %k: memref<1x2x300x64xbf16>, %v: memref<1x2x300x64xbf16>) -> memref<1x8x1x64xbf16> {
  %o = memref.alloc() : memref<1x8x1x64xbf16>
  tile.launch @decode(%q, %k, %v, %o) : memref<1x8x1x64xbf16>, memref<1x2x300x64xbf16>, memref<1x2x300x64xbf16>, memref<1x8x1x64xbf16>
  func.return %o : memref<1x8x1x64xbf16>
}
