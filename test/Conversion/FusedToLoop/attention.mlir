// RUN: emmy-opt %s --split-input-file --verify-diagnostics --lower-fused-to-loop | filecheck %s

// A kernel of one prim.attention is one loop.attention over its input buffers, storing into
// its output buffer (grouped-query heads, a mask broadcast from [L, S], causal).

// CHECK-LABEL: loop.kernel @k_attention(
// CHECK-SAME:    %[[Q:.*]]: memref<2x4x5x8xbf16>, %[[K:.*]]: memref<2x2x7x8xbf16>, %[[V:.*]]: memref<2x2x7x8xbf16>, %[[M:.*]]: memref<5x7xi1>, %[[OUT:.*]]: memref<2x4x5x8xbf16>) {
// CHECK-NEXT:    loop.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] scale 1.250000e-01 causal into %[[OUT]] : memref<2x4x5x8xbf16>, memref<2x2x7x8xbf16>, memref<2x2x7x8xbf16> mask memref<5x7xi1> into memref<2x4x5x8xbf16>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @forward(
// CHECK:         loop.launch @k_attention
func.func @forward(%q: tensor<2x4x5x8xbf16>, %k: tensor<2x2x7x8xbf16>, %v: tensor<2x2x7x8xbf16>, %m: tensor<5x7xi1>) -> tensor<2x4x5x8xbf16> {
  %o = fused.kernel @k_attention(%q, %k, %v, %m) : (tensor<2x4x5x8xbf16>, tensor<2x2x7x8xbf16>, tensor<2x2x7x8xbf16>, tensor<5x7xi1>) -> tensor<2x4x5x8xbf16> {
  ^bb0(%q_1: tensor<2x4x5x8xbf16>, %k_1: tensor<2x2x7x8xbf16>, %v_1: tensor<2x2x7x8xbf16>, %m_1: tensor<5x7xi1>):
    %o_1 = prim.attention %q_1, %k_1, %v_1 mask %m_1 scale 1.250000e-01 causal : tensor<2x4x5x8xbf16>, tensor<2x2x7x8xbf16>, tensor<2x2x7x8xbf16> mask tensor<5x7xi1> -> tensor<2x4x5x8xbf16>
    fused.yield %o_1 : tensor<2x4x5x8xbf16>
  }
  func.return %o : tensor<2x4x5x8xbf16>
}

// -----

// An attention kernel computes nothing else: fuse-prims never makes one that does.

func.func @forward(%q: tensor<2x5x8xf32>, %k: tensor<2x7x8xf32>) -> tensor<2x5x8xf32> {
  // expected-error @+1 {{kernel @k_attention holds a prim.attention, so it holds it alone, on its inputs, and yields its value}}
  %o = fused.kernel @k_attention(%q, %k) : (tensor<2x5x8xf32>, tensor<2x7x8xf32>) -> tensor<2x5x8xf32> {
  ^bb0(%a: tensor<2x5x8xf32>, %b: tensor<2x7x8xf32>):
    %r = prim.attention %a, %b, %b scale 0.5 : tensor<2x5x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32> -> tensor<2x5x8xf32>
    %s = prim.map(%r) : (tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
    ^bb0(%x: f32):
      %y = arith.addf %x, %x : f32
      prim.yield %y : f32
    }
    fused.yield %s : tensor<2x5x8xf32>
  }
  func.return %o : tensor<2x5x8xf32>
}
