// RUN: emmy-opt %s --split-input-file --lower-tile-to-kernel --canonicalize --cse | filecheck %s

// A grid loop to the dynamic size strides over the blocks up to the kernel's size argument;
// the launch runs a block per row of it (`sized [1, 1, 1]`), at most the grid's 4096.

// CHECK-LABEL: kernel.func @k_scale(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: index) block [32, 1, 1] {
// CHECK:         %[[BLOCK:.*]] = kernel.block_id x
// CHECK-NEXT:    %[[GRID:.*]] = kernel.grid_dim x
// CHECK:         scf.for %{{.*}} = %[[BLOCK]] to %[[S]] step %[[GRID]] {
// CHECK:       kernel.launch @k_scale(%{{.*}}, %{{.*}}, %{{.*}}, %s0) grid [4096, 1, 1] sized [1, 1, 1] block [32, 1, 1] smem 0

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 4096 : i64}} {
  tile.kernel @k_scale(%a: memref<?x64xf32>, %b: memref<64xf32>, %out: memref<?x64xf32>, %s0: index) grid [4096, 1, 1] block [32, 1, 1] {
    tile.for %i0 in 0 to %s0 map grid {
      tile.for %i1 in 0 to 64 map thread vector 4 {
        %0 = memref.load %a[%i0, %i1] : memref<?x64xf32>
        %1 = memref.load %b[%i1] : memref<64xf32>
        %r = arith.mulf %0, %1 : f32
        memref.store %r, %out[%i0, %i1] : memref<?x64xf32>
      }
    }
  }
  func.func @forward(%x: memref<?x64xf32>, %w: memref<64xf32>) -> memref<?x64xf32> {
    %c0 = arith.constant 0 : index
    %s0 = memref.dim %x, %c0 : memref<?x64xf32>
    %y = memref.alloc(%s0) : memref<?x64xf32>
    tile.launch @k_scale(%x, %w, %y, %s0) : memref<?x64xf32>, memref<64xf32>, memref<?x64xf32>, index
    func.return %y : memref<?x64xf32>
  }
}

// -----

// A chain of grid loops over [4, ?, ?] (attention's scores): its rows are 4 * size * size,
// which the grid loop runs to and takes apart with the size; the launch runs that many
// blocks (`sized [4, 1, 2]`: 4 * size^2 / 1).

// CHECK-LABEL: kernel.func @k_scores(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: index) block [32, 1, 1] {
// CHECK:         %[[ROW:.*]] = arith.muli %[[S]], %[[S]] : index
// CHECK-NEXT:    %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[ROWS:.*]] = arith.muli %[[ROW]], %[[C4]] : index
// CHECK-NEXT:    scf.for %[[L:.*]] = %{{.*}} to %[[ROWS]] step %{{.*}} {
// CHECK-NEXT:      %[[H:.*]] = arith.divui %[[L]], %[[ROW]] : index
// CHECK-NEXT:      %[[Q:.*]] = arith.divui %[[L]], %[[S]] : index
// CHECK-NEXT:      %[[QS:.*]] = arith.remui %[[Q]], %[[S]] : index
// CHECK-NEXT:      %[[K:.*]] = arith.remui %[[L]], %[[S]] : index
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[H]], %[[QS]], %[[K]]] : memref<4x?x?xf32>
// CHECK:       kernel.launch @k_scores(%{{.*}}, %{{.*}}, %s0) grid [65536, 1, 1] sized [4, 1, 2] block [32, 1, 1] smem 0

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 128 : i64}} {
  tile.kernel @k_scores(%a: memref<4x?x?xf32>, %out: memref<4x?x?xf32>, %s0: index) grid [65536, 1, 1] block [32, 1, 1] {
    tile.for %h in 0 to 4 map grid {
      tile.for %q in 0 to %s0 map grid {
        tile.for %k in 0 to %s0 map grid {
          %0 = memref.load %a[%h, %q, %k] : memref<4x?x?xf32>
          %1 = arith.mulf %0, %0 : f32
          memref.store %1, %out[%h, %q, %k] : memref<4x?x?xf32>
        }
      }
    }
  }
  func.func @forward(%x: memref<4x?x?xf32>) -> memref<4x?x?xf32> {
    %c1 = arith.constant 1 : index
    %s0 = memref.dim %x, %c1 : memref<4x?x?xf32>
    %y = memref.alloc(%s0, %s0) : memref<4x?x?xf32>
    tile.launch @k_scores(%x, %y, %s0) : memref<4x?x?xf32>, memref<4x?x?xf32>, index
    func.return %y : memref<4x?x?xf32>
  }
}

// -----

// A reduction along the dynamic size, mapped to the threads of a block: each thread strides
// from its id to the size; a launch of static grid loops is not sized.

// CHECK-LABEL: kernel.func @k_max(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: index) block [512, 1, 1] {
// CHECK:         %[[T:.*]] = kernel.thread_id x
// CHECK:         scf.for %{{.*}} = %[[T]] to %[[S]] step %c512 iter_args(
// CHECK:       kernel.launch @k_max(%{{.*}}, %{{.*}}, %s0) grid [4, 1, 1] block [512, 1, 1] smem 0

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64}} {
  tile.kernel @k_max(%a: memref<4x?xf32>, %out: memref<4xf32>, %s0: index) grid [4, 1, 1] block [512, 1, 1] {
    tile.for %i0 in 0 to 4 map grid {
      %m = tile.for %r1 in 0 to %s0 map thread reduce max init -inf : f32 {
        %x = memref.load %a[%i0, %r1] : memref<4x?xf32>
        tile.yield %x : f32
      }
      memref.store %m, %out[%i0] : memref<4xf32>
    }
  }
  func.func @forward(%x: memref<4x?xf32>) -> memref<4xf32> {
    %c1 = arith.constant 1 : index
    %s0 = memref.dim %x, %c1 : memref<4x?xf32>
    %m = memref.alloc() : memref<4xf32>
    tile.launch @k_max(%x, %m, %s0) : memref<4x?xf32>, memref<4xf32>, index
    func.return %m : memref<4xf32>
  }
}

// -----

// A tile.gemm over a dynamic number of rows: block y is the N tile, and the blocks along x
// stride through the ceil(size / 64) M tiles, each after a barrier (the last tile's slices
// may still be read); copies and stores past the size are predicated on it. The launch
// runs a block per 64 rows of the size, at most the grid's 8 (`sized [1, 64, 1]`).

// CHECK-LABEL: kernel.func @k_linear(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<1x?x64xbf16>, %[[OUT:[a-z0-9_]+]]: memref<1x?x96xbf16>, %[[S:[a-z0-9_]+]]: index) block [128, 1, 1] {
// CHECK:         %[[BX:.*]] = kernel.block_id x
// CHECK-NEXT:    %[[BY:.*]] = kernel.block_id y
// CHECK-NEXT:    %{{.*}} = arith.muli %[[BY]], %c64 : index
// CHECK-NEXT:    %[[UP:.*]] = arith.addi %[[S]], %c63 : index
// CHECK-NEXT:    %[[TILES:.*]] = arith.divui %[[UP]], %c64 : index
// CHECK-NEXT:    %[[GX:.*]] = kernel.grid_dim x
// CHECK:         scf.for %[[T:.*]] = %[[BX]] to %[[TILES]] step %[[GX]] {
// CHECK-NEXT:      kernel.barrier
// CHECK-NEXT:      %[[TM:.*]] = arith.remui %[[T]], %[[TILES]] : index
// CHECK-NEXT:      %[[ROW0:.*]] = arith.muli %[[TM]], %c64 : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.addi %[[ROW0]], %{{.*}} : index
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[S]] : index
// CHECK:           kernel.cp_async
// CHECK:           kernel.mma_sync
// CHECK:           arith.cmpi ult, %{{.*}}, %[[S]] : index
// CHECK:           kernel.vector_store %{{.*}}, %[[OUT]]
// CHECK:       kernel.launch @k_linear(%{{.*}}, %{{.*}}, %{{.*}}, %s0) grid [8, 2, 1] sized [1, 64, 1] block [128, 1, 1] smem 0

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 512 : i64}} {
  tile.kernel @k_linear(%w: memref<96x64xbf16>, %x: memref<1x?x64xbf16>, %out: memref<1x?x96xbf16>, %s0: index) grid [8, 2, 1] block [128, 1, 1] attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>} {
    tile.gemm %x[b0, m, k] * %w[n, k] : memref<1x?x64xbf16>, memref<96x64xbf16> -> f32 atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%i0, %i1, %i2, %acc) {
      %t = arith.truncf %acc : f32 to bf16
      memref.store %t, %out[%i0, %i1, %i2] : memref<1x?x96xbf16>
    }
  }
  func.func @forward(%w: memref<96x64xbf16>, %x: memref<1x?x64xbf16>) -> memref<1x?x96xbf16> {
    %c1 = arith.constant 1 : index
    %s0 = memref.dim %x, %c1 : memref<1x?x64xbf16>
    %y = memref.alloc(%s0) : memref<1x?x96xbf16>
    tile.launch @k_linear(%w, %x, %y, %s0) : memref<96x64xbf16>, memref<1x?x64xbf16>, memref<1x?x96xbf16>, index
    func.return %y : memref<1x?x96xbf16>
  }
}

// -----

// On wgmma, the persistent blocks count their tiles from the size (ceil(size / 128) M tiles
// of the 2 N tiles); the tensor maps come before the size, which stays the last argument,
// and the launch passes the operands and the output again for them before it (the output's
// map is encoded at launch, with the run-time rows). It runs 2 blocks per 128
// rows, at most the grid's 8 (`sized [2, 128, 1]`).

// CHECK-LABEL: kernel.func @k_wide(
// CHECK-SAME:    %[[OUT:[a-z0-9_]+]]: memref<?x256xbf16>, %[[AMAP:[a-z0-9_]+]]: !kernel.tensor_map<memref<?x64xbf16>, box [128, 64], swizzle 128>, %[[BMAP:[a-z0-9_]+]]: !kernel.tensor_map<memref<256x64xbf16>, box [128, 64], swizzle 128>, %[[OUTMAP:[a-z0-9_]+]]: !kernel.tensor_map<memref<?x256xbf16>, box [64, 64], swizzle 128>, %[[S:[a-z0-9_]+]]: index) block [384, 1, 1] {
// CHECK:         %[[UP:.*]] = arith.addi %[[S]], %c127 : index
// CHECK-NEXT:    %[[TILES_M:.*]] = arith.divui %[[UP]], %c128 : index
// CHECK-NEXT:    %[[PER_BATCH:.*]] = arith.muli %[[TILES_M]], %c2 : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[PER_BATCH]] step %{{.*}} {
// CHECK:           kernel.tma_load %[[AMAP]]
// CHECK:           kernel.tma_store %[[OUTMAP]]
// CHECK:       kernel.launch @k_wide(%[[W:.*]], %[[XH:.*]], %[[Y:.*]], %[[XH]], %[[W]], %[[Y]], %s0) grid [8, 1, 1] sized [2, 128, 1] block [384, 1, 1] smem 163840

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 512 : i64}} {
  tile.kernel @k_wide(%w: memref<256x64xbf16>, %x: memref<?x64xbf16>, %out: memref<?x256xbf16>, %s0: index) grid [8, 1, 1] block [384, 1, 1] attributes {tile.schedule = #tile.schedule<block [384, 1, 1], loops [], tile [128, 128, 64], atom wgmma m64n128k16, warps [8, 1], pipeline 4, warp_roles ["producer", "consumer", "consumer"]>} {
    tile.gemm %x[m, k] * %w[n, k] : memref<?x64xbf16>, memref<256x64xbf16> -> f32 atom wgmma m64n128k16 tile [128, 128, 64] warps [8, 1] pipeline 4 epilogue(%i0, %i1, %acc) {
      %t = arith.truncf %acc : f32 to bf16
      memref.store %t, %out[%i0, %i1] : memref<?x256xbf16>
    }
  }
  func.func @forward(%w: memref<256x64xbf16>, %x: memref<?x64xbf16>) -> memref<?x256xbf16> {
    %c0 = arith.constant 0 : index
    %s0 = memref.dim %x, %c0 : memref<?x64xbf16>
    %y = memref.alloc(%s0) : memref<?x256xbf16>
    tile.launch @k_wide(%w, %x, %y, %s0) : memref<256x64xbf16>, memref<?x64xbf16>, memref<?x256xbf16>, index
    func.return %y : memref<?x256xbf16>
  }
}
