// RUN: emmy-opt %s --split-input-file --choose-tile-schedule | filecheck %s --check-prefix=SCHEDULE
// RUN: emmy-opt %s --split-input-file -p 'choose-tile-schedule,lower-loop-to-tile' | filecheck %s

// Rows of the dynamic size: the schedule is chosen for its representative size (the
// declared maximum, 4096 rows); the columns, static, are vectorised, 16 vectors a row, so
// a block takes 8 rows of 16 threads (4096 / 8 = 512 blocks). The rows loop runs to the size.

// SCHEDULE-LABEL: loop.kernel @k_scale(
// SCHEDULE-SAME:    tile.schedule = #tile.schedule<block [16, 8, 1], loops [[0] rows, [0, 0] thread vector 4]>
// CHECK-LABEL: tile.kernel @k_scale(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: index) grid [512, 1, 1] block [16, 8, 1]
// CHECK-NEXT:    tile.for %[[I:.*]] in 0 to %[[S]] map rows {
// CHECK-NEXT:      tile.for %[[J:.*]] in 0 to 64 map thread vector 4 {
// CHECK:         tile.launch @k_scale(%{{.*}}, %{{.*}}, %{{.*}}, %s0) : memref<?x64xf32>, memref<64xf32>, memref<?x64xf32>, index

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 4096 : i64}} {
  loop.kernel @k_scale(%a: memref<?x64xf32>, %b: memref<64xf32>, %out: memref<?x64xf32>, %s0: index) {
    loop.for %i0 in 0 to %s0 {
      loop.for %i1 in 0 to 64 {
        %0 = loop.load %a[%i0, %i1] : memref<?x64xf32>
        %1 = loop.load %b[%i1] : memref<64xf32>
        %r = arith.mulf %0, %1 : f32
        loop.store %r, %out[%i0, %i1] : memref<?x64xf32>
      }
    }
  }
  func.func @forward(%x: memref<?x64xf32>, %w: memref<64xf32>) -> memref<?x64xf32> {
    %c0 = arith.constant 0 : index
    %s0 = memref.dim %x, %c0 : memref<?x64xf32>
    %y = memref.alloc(%s0) : memref<?x64xf32>
    loop.launch @k_scale(%x, %w, %y, %s0) : memref<?x64xf32>, memref<64xf32>, memref<?x64xf32>, index
    func.return %y : memref<?x64xf32>
  }
}

// -----

// A reduction along the dynamic size: no vector width (the size may be any), and no row
// staged in shared memory (it has no size to allocate); the block is sized for the
// representative length (2048, none being declared) and the loop runs to the size.

// SCHEDULE-LABEL: loop.kernel @k_max(
// SCHEDULE-SAME:    tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] grid, [0, 0] thread]>}
// CHECK-LABEL: tile.kernel @k_max(
// CHECK-SAME:    %[[S:[a-z0-9_]+]]: index) grid [4, 1, 1] block [512, 1, 1]
// CHECK-NEXT:    tile.for %[[I:.*]] in 0 to 4 map grid {
// CHECK-NEXT:      %{{.*}} = tile.for %[[R:.*]] in 0 to %[[S]] map thread reduce max init -inf : f32 {

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64}} {
  loop.kernel @k_max(%a: memref<4x?xf32>, %out: memref<4xf32>, %s0: index) {
    loop.for %i0 in 0 to 4 {
      %m = loop.for %r1 in 0 to %s0 reduce max init -inf : f32 {
        %x = loop.load %a[%i0, %r1] : memref<4x?xf32>
        loop.yield %x : f32
      }
      loop.store %m, %out[%i0] : memref<4xf32>
    }
  }
  func.func @forward(%x: memref<4x?xf32>) -> memref<4xf32> {
    %c1 = arith.constant 1 : index
    %s0 = memref.dim %x, %c1 : memref<4x?xf32>
    %m = memref.alloc() : memref<4xf32>
    loop.launch @k_max(%x, %m, %s0) : memref<4x?xf32>, memref<4xf32>, index
    func.return %m : memref<4xf32>
  }
}

// -----

// A product over the dynamic size is scheduled as the static product of its representative
// size: 2048 rows take wgmma's tile on sm_90a, whose persistent grid is a block an SM for the
// 16 x 16 tiles of that size; planned at a few rows, it would stream the weights in thin tiles.

// SCHEDULE-LABEL: loop.kernel @k_linear(
// SCHEDULE-SAME:    tile.schedule = #tile.schedule<block [384, 1, 1], loops [], tile [128, 256, 64], atom wgmma m64n256k16, warps [8, 1], pipeline 4, warp_roles ["producer", "consumer", "consumer"]>
// CHECK-LABEL: tile.kernel @k_linear(
// CHECK-SAME:    grid [132, 1, 1] block [384, 1, 1]
// CHECK-NEXT:    tile.gemm %{{.*}}[m, k] * %{{.*}}[n, k] : memref<?x4096xbf16>, memref<4096x4096xbf16> -> f32 atom wgmma m64n256k16

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 2048 : i64}} {
  loop.kernel @k_linear(%x: memref<?x4096xbf16>, %w: memref<4096x4096xbf16>, %y: memref<?x4096xbf16>, %s0: index) {
    loop.contract (%i, %j) in [%s0, 4096], k in 4096, %acc = sum %x[d0, k] * %w[d1, k] : memref<?x4096xbf16>, memref<4096x4096xbf16> -> f32 {
      %t = arith.truncf %acc : f32 to bf16
      loop.store %t, %y[%i, %j] : memref<?x4096xbf16>
    }
  }
  func.func @forward(%x: memref<?x4096xbf16>, %w: memref<4096x4096xbf16>) -> memref<?x4096xbf16> {
    %c0 = arith.constant 0 : index
    %s0 = memref.dim %x, %c0 : memref<?x4096xbf16>
    %y = memref.alloc(%s0) : memref<?x4096xbf16>
    loop.launch @k_linear(%x, %w, %y, %s0) : memref<?x4096xbf16>, memref<4096x4096xbf16>, memref<?x4096xbf16>, index
    func.return %y : memref<?x4096xbf16>
  }
}
