// RUN: emmy-opt %s --split-input-file --fold-reshapes | filecheck %s

// SwiGLU on [B, S, D] rows: the gate and up products are reshaped to [B, S, H], multiplied
// there and reshaped back to [B * S, H] for the down projection. The reshape back moves to the
// map's inputs, where each meets the reshape that made it, and both fold: the map reads the
// products themselves.

// CHECK-LABEL: func.func @swiglu_round_trip(
// CHECK-NEXT:    %[[M:.*]] = prim.map(%g, %u) : (tensor<256x512xbf16>, tensor<256x512xbf16>) -> tensor<256x512xbf16> {
// CHECK:         }
// CHECK-NEXT:    func.return %[[M]] : tensor<256x512xbf16>

func.func @swiglu_round_trip(%g: tensor<256x512xbf16>, %u: tensor<256x512xbf16>) -> tensor<256x512xbf16> {
  %g3 = prim.reshape %g : tensor<256x512xbf16> -> tensor<2x128x512xbf16>
  %u3 = prim.reshape %u : tensor<256x512xbf16> -> tensor<2x128x512xbf16>
  %m3 = prim.map(%g3, %u3) : (tensor<2x128x512xbf16>, tensor<2x128x512xbf16>) -> tensor<2x128x512xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %p = arith.mulf %a, %b : bf16
    prim.yield %p : bf16
  }
  %m = prim.reshape %m3 : tensor<2x128x512xbf16> -> tensor<256x512xbf16>
  func.return %m : tensor<256x512xbf16>
}

// -----

// A reshape of a reshape is one reshape of the first input.

// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    %[[R:.*]] = prim.reshape %x : tensor<4x6xf32> -> tensor<3x8xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<3x8xf32>

func.func @chain(%x: tensor<4x6xf32>) -> tensor<3x8xf32> {
  %a = prim.reshape %x : tensor<4x6xf32> -> tensor<24xf32>
  %b = prim.reshape %a : tensor<24xf32> -> tensor<3x8xf32>
  func.return %b : tensor<3x8xf32>
}

// -----

// A map with another use keeps its shape: moving the reshape would compute it twice.

// CHECK-LABEL: func.func @kept(
// CHECK-NEXT:    %[[M:.*]] = prim.map(%x) : (tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK:         %[[R:.*]] = prim.reshape %[[M]] : tensor<4x6xf32> -> tensor<24xf32>
// CHECK-NEXT:    func.return %[[R]], %[[M]] :

func.func @kept(%x: tensor<4x6xf32>) -> (tensor<24xf32>, tensor<4x6xf32>) {
  %m = prim.map(%x) : (tensor<4x6xf32>) -> tensor<4x6xf32> {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    prim.yield %n : f32
  }
  %r = prim.reshape %m : tensor<4x6xf32> -> tensor<24xf32>
  func.return %r, %m : tensor<24xf32>, tensor<4x6xf32>
}
