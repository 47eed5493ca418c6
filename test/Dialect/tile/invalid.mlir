// RUN: emmy-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{a block of 100 threads must be a multiple of 32 and at most 1024}}
tile.kernel @odd_block(%x: memref<4xf32>) grid [1, 1, 1] block [100, 1, 1] {
}

// -----

// expected-error @+1 {{a block of 2048 threads must be a multiple of 32 and at most 1024}}
tile.kernel @huge_block(%x: memref<4xf32>) grid [1, 1, 1] block [1024, 2, 1] {
}

// -----

tile.kernel @grid_reduction(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{a reduction cannot be mapped to grid: blocks do not combine their results}}
  %s = tile.for %i in 0 to 4 map grid reduce add init 0.0 : f32 {
    %v = memref.load %x[%i] : memref<4xf32>
    tile.yield %v : f32
  }
}

// -----

tile.kernel @unknown_mapping(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  // expected-error @+1 {{unknown mapping 'warp'; expected one of grid, thread, global, serial}}
  tile.for %i in 0 to 4 map warp {
  }
}

// -----

tile.kernel @reduction_yields_wrong_type(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
  %c = arith.constant 1 : i32
  // expected-error @+1 {{a reduction tile.for has one result and yields one value of its init type f32}}
  %s = tile.for %i in 0 to 4 map thread reduce add init 0.0 : f32 {
    tile.yield %c : i32
  }
}

// -----

tile.kernel @k(%x: memref<4xf32>) grid [1, 1, 1] block [32, 1, 1] {
}
func.func @launch_wrong_buffers(%x: memref<8xf32>) {
  // expected-error @+1 {{launch passes (memref<8xf32>) but @k takes (memref<4xf32>)}}
  tile.launch @k(%x) : memref<8xf32>
  func.return
}
