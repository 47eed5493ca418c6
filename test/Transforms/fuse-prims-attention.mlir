// RUN: emmy-opt %s --fuse-prims | filecheck %s

// A prim.attention is a kernel of its own, without an epilogue: the permute of its output
// is another kernel's, which reads the stored output.

// CHECK-LABEL: func.func @forward(
// CHECK-NEXT:    %[[O:.*]] = fused.kernel @k_attention(%q, %k, %v, %m)
// CHECK-NEXT:    ^bb0(%[[Q:.*]]: tensor<2x4x5x8xbf16>, %[[K:.*]]: tensor<2x2x7x8xbf16>, %[[V:.*]]: tensor<2x2x7x8xbf16>, %[[M:.*]]: tensor<5x7xi1>):
// CHECK-NEXT:      %[[A:.*]] = prim.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] scale 1.250000e-01 causal
// CHECK-NEXT:      fused.yield %[[A]] : tensor<2x4x5x8xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[T:.*]] = fused.kernel @k_permute(%[[O]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      prim.permute
// CHECK-NEXT:      fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[T]]
func.func @forward(%q: tensor<2x4x5x8xbf16>, %k: tensor<2x2x7x8xbf16>, %v: tensor<2x2x7x8xbf16>, %m: tensor<5x7xi1>) -> tensor<2x5x4x8xbf16> {
  %o = prim.attention %q, %k, %v mask %m scale 0.125 causal : tensor<2x4x5x8xbf16>, tensor<2x2x7x8xbf16>, tensor<2x2x7x8xbf16> mask tensor<5x7xi1> -> tensor<2x4x5x8xbf16>
  %t = prim.permute %o [0, 2, 1, 3] : tensor<2x4x5x8xbf16> -> tensor<2x5x4x8xbf16>
  func.return %t : tensor<2x5x4x8xbf16>
}
