// RUN: emmy-opt %s | emmy-opt | filecheck %s
// RUN: emmy-opt %s --print-op-generic | emmy-opt | filecheck %s

// CHECK-LABEL: tile.kernel @every_mapping(
// CHECK-SAME:    %{{.*}}: memref<4x64xf32>, %{{.*}}: memref<4xf32>) grid [4, 1, 1] block [64, 1, 1] {
// CHECK-NEXT:    tile.for %[[I:.*]] in 0 to 4 map grid {
// CHECK-NEXT:      %[[S:.*]] = tile.for %[[J:.*]] in 0 to 64 map thread reduce max init -inf : f32 {
// CHECK:             tile.yield %{{.*}} : f32
// CHECK:           %[[T:.*]] = tile.for %{{.*}} in 0 to 3 map serial reduce add init 0.0 : f32 {
// CHECK:           memref.store
// CHECK:         tile.for %{{.*}} in 0 to 256 map global {
// CHECK-LABEL: func.func @host(
// CHECK:         tile.launch @every_mapping(%{{.*}}, %{{.*}}) : memref<4x64xf32>, memref<4xf32>
tile.kernel @every_mapping(%x: memref<4x64xf32>, %y: memref<4xf32>) grid [4, 1, 1] block [64, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    %s = tile.for %j in 0 to 64 map thread reduce max init -inf : f32 {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      tile.yield %v : f32
    }
    %t = tile.for %k in 0 to 3 map serial reduce add init 0.0 : f32 {
      tile.yield %s : f32
    }
    memref.store %t, %y[%i] : memref<4xf32>
  }
  tile.for %g in 0 to 256 map global {
  }
}
func.func @host(%x: memref<4x64xf32>) -> memref<4xf32> {
  %y = memref.alloc() : memref<4xf32>
  tile.launch @every_mapping(%x, %y) : memref<4x64xf32>, memref<4xf32>
  func.return %y : memref<4xf32>
}

// A vectorised loop and a staged row round-trip.

// CHECK-LABEL: tile.kernel @staged_and_vectorised(
// CHECK:         tile.for %[[I:.*]] in 0 to 4 map grid {
// CHECK-NEXT:      tile.stage %{{.*}}[%[[I]]] async : memref<4x64xbf16>
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 64 map thread vector 8 reduce max init -inf : bf16 {
// CHECK:           tile.for %{{.*}} in 0 to 64 map thread vector 8 {
tile.kernel @staged_and_vectorised(%x: memref<4x64xbf16>, %y: memref<4x64xbf16>) grid [4, 1, 1] block [32, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.stage %x[%i] async : memref<4x64xbf16>
    %m = tile.for %j in 0 to 64 map thread vector 8 reduce max init -inf : bf16 {
      %v = memref.load %x[%i, %j] : memref<4x64xbf16>
      tile.yield %v : bf16
    }
    tile.for %j in 0 to 64 map thread vector 8 {
      %v = memref.load %x[%i, %j] : memref<4x64xbf16>
      %d = arith.subf %v, %m : bf16
      memref.store %d, %y[%i, %j] : memref<4x64xbf16>
    }
  }
}

// A schedule round-trips, on the loop.kernel it is for and on the tile.kernel lowered with it;
// an explicit grid_y maps rows to blockIdx.y whatever the loop holds.

// CHECK-LABEL: loop.kernel @scheduled(
// CHECK-SAME:    attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [[0] grid_y, [0, 0] thread vector 4, [0, 1] thread vector 4], stage [[0] arg 0 sync]>} {
loop.kernel @scheduled(%x: memref<4x64xf32>, %y: memref<4x64xf32>) attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [[0] grid_y, [0, 0] thread vector 4, [0, 1] thread vector 4], stage [[0] arg 0 sync]>} {
}

// CHECK-LABEL: tile.kernel @rows(
// CHECK-SAME:    grid [1, 4, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid_y, [0, 0] thread]>} {
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 4 map grid_y {
// CHECK-NEXT:      tile.for %{{.*}} in 0 to 64 map thread {
tile.kernel @rows(%x: memref<4x64xf32>) grid [1, 4, 1] block [32, 1, 1] attributes {tile.schedule = #tile.schedule<block [32, 1, 1], loops [[0] grid_y, [0, 0] thread]>} {
  tile.for %i in 0 to 4 map grid_y {
    tile.for %j in 0 to 64 map thread {
      %v = memref.load %x[%i, %j] : memref<4x64xf32>
      memref.store %v, %x[%i, %j] : memref<4x64xf32>
    }
  }
}

// A tile.for keeps its attributes, as a loop.for does (both are a `ForOpBase`).
// CHECK-LABEL: tile.kernel @annotated(
// CHECK-NEXT:    tile.for %{{.*}} in 0 to 64 map thread vector 4 reduce add init 0.0 : f32 attributes {note = "kept"} {
tile.kernel @annotated(%x: memref<64xf32>, %y: memref<f32>) grid [1, 1, 1] block [32, 1, 1] {
  %s = tile.for %j in 0 to 64 map thread vector 4 reduce add init 0.0 : f32 attributes {note = "kept"} {
    %v = memref.load %x[%j] : memref<64xf32>
    tile.yield %v : f32
  }
  memref.store %s, %y[] : memref<f32>
}
