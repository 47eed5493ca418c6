// Input that xDSL refuses other than with a diagnostic is an error at the input, not an
// internal error: a block label of digits (MLIR's ^0; xDSL's block names start with a
// letter), a number out of its type's range where an op builds an attribute from it, and a
// memref.load or memref.store with the wrong number of indices (whose verifier raises a plain
// Exception).

// RUN: emmy-opt %s --split-input-file --verify-diagnostics

func.func @digit_label(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{a block label starts with a letter, as ^bb12, got ^12}}
  ^12(%a: f32):
    prim.yield %a : f32
  }
  func.return %y : tensor<4xf32>
}

// -----

func.func @extract_position(%v: vector<4xf32>) -> f32 {
  // expected-error @+1 {{a literal out of its type's range: Integer value 18446744073709551616 is out of range for type i64}}
  %e = vector.extract %v[18446744073709551616] : f32 from vector<4xf32>
  func.return %e : f32
}

// -----

func.func @dense_overflow() {
  // expected-error @+1 {{a literal out of its type's range: float too large to pack}}
  %c = prim.constant dense<[1.0, 70000.0]> : tensor<2xf16>
  func.return
}

// -----

func.func @dims_out_of_range(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{a literal out of its type's range: argument out of range}}
  %v = torch.var %x dims [18446744073709551616] correction 1 : tensor<2x8xf32> -> tensor<2xf32>
  func.return %v : tensor<2xf32>
}

// -----

func.func @load_indices(%x: memref<4x4xf32>, %i: index) -> f32 {
  // expected-error @+1 {{'memref.load' op expected an index for each dimension}}
  %v = memref.load %x[%i] : memref<4x4xf32>
  func.return %v : f32
}
