// RUN: emmy-opt %s -t cuda | filecheck %s

// Hopper cluster features: a cluster of 2 blocks streams two 16 x 32 f32 tiles through a ring
// of one 128-byte-swizzled stage per block. Thread 0 of the block of rank r loads half of
// each tile (rows 8r on) with a TMA load multicast to both blocks (ctaMask 0b11, a 16-bit
// register), completing its bytes on the full mbarrier of each; the consumer warp of each
// block releases the stage with an arrival on the empty mbarrier of its own block and of
// the other (mapa to the other block's barrier, then a cluster-scope release arrival), so
// each producer waits for the consumers of both blocks it writes to. Without `multicast`,
// kernel.tma_load prints as emmy_tma_load_2d, which this kernel does not use.

// CHECK-NOT:   emmy_tma_load_2d
// CHECK:       // kernel.mbarrier_arrive rank: one arrival on the same mbarrier of the cluster's block of this rank.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_mbarrier_arrive_cluster(unsigned long long* barrier, unsigned int rank) {
// CHECK-NEXT:    asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\nmbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" :: "r"(emmy_shared_address(barrier)), "r"(rank) : "memory");
// CHECK-NEXT:  }
// CHECK-NOT:   emmy_tma_load_2d
// CHECK:       // kernel.tma_load multicast of a rank-2 box at (c0, ..) into the shared
// CHECK-NEXT:  // memory of each block of the cluster in the mask, completing its bytes on each
// CHECK-NEXT:  // block's mbarrier.
// CHECK-NEXT:  __device__ __forceinline__ void emmy_tma_load_multicast_2d(void* destination, const void* map, unsigned long long* barrier, unsigned short mask, int c0, int c1) {
// CHECK-NEXT:    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;\n"
// CHECK-NEXT:                 :: "r"(emmy_shared_address(destination)), "l"(reinterpret_cast<unsigned long long>(map)),
// CHECK-NEXT:                    "r"(emmy_shared_address(barrier)), "h"(mask), "r"(c1), "r"(c0)
// CHECK-NEXT:                 : "memory");
// CHECK-NEXT:  }
// CHECK-NOT:   emmy_tma_load_2d
// CHECK:       extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(64) ring(const __grid_constant__ emmy_CUtensorMap map, float* __restrict__ out) {
// CHECK:       emmy_mbarrier_arrive_expect_tx(&full[0], 2048);
// CHECK-NEXT:  long tile = k * 16;
// CHECK-NEXT:  long row = tile + half;
// CHECK-NEXT:  emmy_tma_load_multicast_2d(&stage[half * 32], &map, &full[0], (unsigned short)3, (int)row, (int)0);
// CHECK:       emmy_mbarrier_arrive_cluster(&empty[0], (unsigned int)r);
// CHECK-NEXT:  emmy_mbarrier_arrive_cluster(&empty[0], (unsigned int)other);
kernel.func @ring(%map: !kernel.tensor_map<memref<32x32xf32>, box [8, 32], swizzle 128>, %out: memref<2x32x32xf32>) block [64, 1, 1] cluster 2 {
  %tid = kernel.thread_id x
  %bid = kernel.block_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %rounds = arith.constant 2 : index
  %full = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %empty = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %stage = kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>} : memref<16x32xf32, 3 : i32>
  %r = arith.remui %bid, %c2 : index
  %other = arith.subi %c1, %r : index
  %half = arith.muli %r, %c8 : index
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {
    kernel.mbarrier_init %full[%c0], arrivals 1 : !kernel.mbarrier<1>
    kernel.mbarrier_init %empty[%c0], arrivals 64 : !kernel.mbarrier<1>
  }
  kernel.cluster_barrier
  %producer = arith.cmpi ult, %tid, %c32 : index
  scf.if %producer {
    scf.if %first {
      scf.for %k = %c0 to %rounds step %c1 {
        %later = arith.cmpi ugt, %k, %c0 : index
        scf.if %later {
          %previous = arith.subi %k, %c1 : index
          %released = arith.remui %previous, %c2 : index
          kernel.mbarrier_wait %empty[%c0], %released : !kernel.mbarrier<1>
        }
        kernel.mbarrier_arrive_expect_tx %full[%c0], bytes 2048 : !kernel.mbarrier<1>
        %tile = arith.muli %k, %c16 : index
        %row = arith.addi %tile, %half : index
        kernel.tma_load %map[%row, %c0], %stage[%half, %c0], %full[%c0] multicast %c3
            : !kernel.tensor_map<memref<32x32xf32>, box [8, 32], swizzle 128>, memref<16x32xf32, 3 : i32>, !kernel.mbarrier<1>
      }
    }
  } else {
    %column = arith.subi %tid, %c32 : index
    scf.for %k = %c0 to %rounds step %c1 {
      %parity = arith.remui %k, %c2 : index
      kernel.mbarrier_wait %full[%c0], %parity : !kernel.mbarrier<1>
      %tile = arith.muli %k, %c16 : index
      scf.for %i = %c0 to %c16 step %c1 {
        %value = memref.load %stage[%i, %column] : memref<16x32xf32, 3 : i32>
        %row = arith.addi %tile, %i : index
        memref.store %value, %out[%bid, %row, %column] : memref<2x32x32xf32>
      }
      kernel.mbarrier_arrive %empty[%c0] rank %r : !kernel.mbarrier<1>
      kernel.mbarrier_arrive %empty[%c0] rank %other : !kernel.mbarrier<1>
    }
  }
  kernel.cluster_barrier
}

func.func @forward(%x: memref<32x32xf32>) -> memref<2x32x32xf32> {
  %out = memref.alloc() : memref<2x32x32xf32>
  kernel.launch @ring(%x, %out) grid [2, 1, 1] block [64, 1, 1] smem 2048 : memref<32x32xf32>, memref<2x32x32xf32>
  func.return %out : memref<2x32x32xf32>
}
