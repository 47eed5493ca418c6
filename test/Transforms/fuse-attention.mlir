// RUN: emmy-opt %s --split-input-file --decompose-torch --fuse-attention | filecheck %s

// F.scaled_dot_product_attention, causal, in bf16: decompose-torch writes a product, a map
// scaling and masking the scores, a softmax and a second product; they become one op on the
// unwidened inputs, giving the rounded result.

// CHECK-LABEL: func.func @sdpa_causal(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x4x8x16xbf16>, %[[K:.*]]: tensor<2x4x6x16xbf16>, %[[V:.*]]: tensor<2x4x6x8xbf16>)
// CHECK-NEXT:    %[[O:.*]] = prim.attention %[[Q]], %[[K]], %[[V]] scale 2.500000e-01 causal : tensor<2x4x8x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x6x8xbf16> -> tensor<2x4x8x8xbf16>
// CHECK-NEXT:    func.return %[[O]]
func.func @sdpa_causal(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x6x16xbf16>, %v: tensor<2x4x6x8xbf16>) -> tensor<2x4x8x8xbf16> {
  %0 = torch.sdpa %q, %k, %v causal scale 0.25 : tensor<2x4x8x16xbf16>, tensor<2x4x6x16xbf16>, tensor<2x4x6x8xbf16> -> tensor<2x4x8x8xbf16>
  func.return %0 : tensor<2x4x8x8xbf16>
}

// -----

// A boolean mask selects -inf where false, an additive one is added (widened): each is read
// as it is, unbroadcast.

// CHECK-LABEL: func.func @sdpa_masks(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x8x16xf16>, %[[K:.*]]: tensor<2x6x16xf16>, %[[B:.*]]: tensor<8x6xi1>, %[[M:.*]]: tensor<2x1x6xf16>)
// CHECK-NEXT:    %[[O:.*]] = prim.attention %[[Q]], %[[K]], %[[K]] mask %[[B]] scale 0.10000000149011612 : tensor<2x8x16xf16>, tensor<2x6x16xf16>, tensor<2x6x16xf16> mask tensor<8x6xi1> -> tensor<2x8x16xf16>
// CHECK-NEXT:    %[[P:.*]] = prim.attention %[[Q]], %[[K]], %[[K]] mask %[[M]] scale 2.500000e-01 : tensor<2x8x16xf16>, tensor<2x6x16xf16>, tensor<2x6x16xf16> mask tensor<2x1x6xf16> -> tensor<2x8x16xf16>
// CHECK-NEXT:    func.return %[[O]], %[[P]]
func.func @sdpa_masks(%q: tensor<2x8x16xf16>, %k: tensor<2x6x16xf16>, %b: tensor<8x6xi1>, %m: tensor<2x1x6xf16>) -> (tensor<2x8x16xf16>, tensor<2x8x16xf16>) {
  %0 = torch.sdpa %q, %k, %k mask %b scale 0.1 : tensor<2x8x16xf16>, tensor<2x6x16xf16>, tensor<2x6x16xf16> mask tensor<8x6xi1> -> tensor<2x8x16xf16>
  %1 = torch.sdpa %q, %k, %k mask %m scale 0.25 : tensor<2x8x16xf16>, tensor<2x6x16xf16>, tensor<2x6x16xf16> mask tensor<2x1x6xf16> -> tensor<2x8x16xf16>
  func.return %0, %1 : tensor<2x8x16xf16>, tensor<2x8x16xf16>
}

// -----

// A boolean mask that PyTorch's decomposition of sdpa made additive, `where(b, 0, -inf)`, is
// read as the boolean (a byte an element, one select a score); `where(b, 1, -inf)` is a bias
// and stays additive.

// CHECK-LABEL: func.func @sdpa_boolean_made_additive(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x8x16xf16>, %[[K:.*]]: tensor<2x6x16xf16>, %[[B:.*]]: tensor<8x6xi1>)
// CHECK:         %[[BIASED:biased]] = prim.map(%[[B]])
// CHECK:         %[[O:.*]] = prim.attention %[[Q]], %[[K]], %[[K]] mask %[[B]] scale 2.500000e-01 : tensor<2x8x16xf16>, tensor<2x6x16xf16>, tensor<2x6x16xf16> mask tensor<8x6xi1> -> tensor<2x8x16xf16>
// CHECK-NEXT:    %[[P:.*]] = prim.attention %[[Q]], %[[K]], %[[K]] mask %[[BIASED]] scale 2.500000e-01 : tensor<2x8x16xf16>, tensor<2x6x16xf16>, tensor<2x6x16xf16> mask tensor<8x6xf16> -> tensor<2x8x16xf16>
// CHECK-NEXT:    func.return %[[O]], %[[P]]
func.func @sdpa_boolean_made_additive(%q: tensor<2x8x16xf16>, %k: tensor<2x6x16xf16>, %b: tensor<8x6xi1>) -> (tensor<2x8x16xf16>, tensor<2x8x16xf16>) {
  %zero = torch.constant dense<0.0> : tensor<f16>
  %one = torch.constant dense<1.0> : tensor<f16>
  %minus_inf = torch.constant dense<0xFC00> : tensor<f16>
  %additive = torch.where %b, %zero, %minus_inf : tensor<8x6xi1>, tensor<f16>, tensor<f16> -> tensor<8x6xf16>
  %biased = torch.where %b, %one, %minus_inf : tensor<8x6xi1>, tensor<f16>, tensor<f16> -> tensor<8x6xf16>
  %0 = torch.sdpa %q, %k, %k mask %additive scale 0.25 : tensor<2x8x16xf16>, tensor<2x6x16xf16>, tensor<2x6x16xf16> mask tensor<8x6xf16> -> tensor<2x8x16xf16>
  %1 = torch.sdpa %q, %k, %k mask %biased scale 0.25 : tensor<2x8x16xf16>, tensor<2x6x16xf16>, tensor<2x6x16xf16> mask tensor<8x6xf16> -> tensor<2x8x16xf16>
  func.return %0, %1 : tensor<2x8x16xf16>, tensor<2x8x16xf16>
}

// -----

// Grouped-query attention as the importer writes it: each key and value head repeated by a
// reshape, broadcast and reshape. The op reads them unrepeated (4 query heads on 2).

// CHECK-LABEL: func.func @sdpa_gqa(
// CHECK-SAME:    %[[Q:.*]]: tensor<1x4x5x8xf32>, %[[K:.*]]: tensor<1x2x7x8xf32>, %[[V:.*]]: tensor<1x2x7x8xf32>)
// CHECK-NEXT:    %[[O:.*]] = prim.attention %[[Q]], %[[K]], %[[V]] scale 5.000000e-01 causal : tensor<1x4x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32> -> tensor<1x4x5x8xf32>
// CHECK-NEXT:    func.return %[[O]]
func.func @sdpa_gqa(%q: tensor<1x4x5x8xf32>, %k: tensor<1x2x7x8xf32>, %v: tensor<1x2x7x8xf32>) -> tensor<1x4x5x8xf32> {
  %k1 = torch.unsqueeze %k dim 2 : tensor<1x2x7x8xf32> -> tensor<1x2x1x7x8xf32>
  %k2 = torch.expand %k1 : tensor<1x2x1x7x8xf32> -> tensor<1x2x2x7x8xf32>
  %k3 = torch.reshape %k2 : tensor<1x2x2x7x8xf32> -> tensor<1x4x7x8xf32>
  %v1 = torch.unsqueeze %v dim 2 : tensor<1x2x7x8xf32> -> tensor<1x2x1x7x8xf32>
  %v2 = torch.expand %v1 : tensor<1x2x1x7x8xf32> -> tensor<1x2x2x7x8xf32>
  %v3 = torch.reshape %v2 : tensor<1x2x2x7x8xf32> -> tensor<1x4x7x8xf32>
  %0 = torch.sdpa %q, %k3, %v3 causal scale 0.5 : tensor<1x4x5x8xf32>, tensor<1x4x7x8xf32>, tensor<1x4x7x8xf32> -> tensor<1x4x5x8xf32>
  func.return %0 : tensor<1x4x5x8xf32>
}

// -----

// Attention written by hand in bf16, as decompose-torch makes `softmax(q @ k^T * 0.125) @ v`:
// the scores rounded to bf16 after the product and after the scale, the softmax's max in
// bf16. The same op as the sdpa form: its scores stay f32.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[Q:.*]]: tensor<1x2x64x64xbf16>, %[[K:.*]]: tensor<1x2x64x64xbf16>, %[[V:.*]]: tensor<1x2x64x64xbf16>)
// CHECK-NEXT:    %[[O:.*]] = prim.attention %[[Q]], %[[K]], %[[V]] scale 1.250000e-01 : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16> -> tensor<1x2x64x64xbf16>
// CHECK-NEXT:    func.return %[[O]]

func.func @forward(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %transpose = prim.permute %k [0, 1, 3, 2] : tensor<1x2x64x64xbf16> -> tensor<1x2x64x64xbf16>
  %0 = prim.map(%q) : (tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xf32> {
  ^bb0(%1: bf16):
    %2 = arith.extf %1 : bf16 to f32
    prim.yield %2 : f32
  }
  %3 = prim.map(%transpose) : (tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xf32> {
  ^bb0(%4: bf16):
    %5 = arith.extf %4 : bf16 to f32
    prim.yield %5 : f32
  }
  %6 = prim.contract %0, %3 : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32> -> tensor<1x2x64x64xf32>
  %matmul = prim.map(%6) : (tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xbf16> {
  ^bb0(%7: f32):
    %8 = arith.truncf %7 : f32 to bf16
    prim.yield %8 : bf16
  }
  %mul = prim.map(%matmul) : (tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  ^bb0(%9: bf16):
    %10 = arith.extf %9 : bf16 to f32
    %11 = arith.constant 1.250000e-01 : f32
    %12 = arith.mulf %10, %11 : f32
    %13 = arith.truncf %12 : f32 to bf16
    prim.yield %13 : bf16
  }
  %14 = prim.reduce max %mul axes [3] keepdim init -inf : tensor<1x2x64x64xbf16> -> tensor<1x2x64x1xbf16>
  %15 = prim.broadcast %14 : tensor<1x2x64x1xbf16> -> tensor<1x2x64x64xbf16>
  %16 = prim.map(%mul, %15) : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xf32> {
  ^bb0(%17: bf16, %18: bf16):
    %19 = arith.extf %17 : bf16 to f32
    %20 = arith.extf %18 : bf16 to f32
    %21 = arith.subf %19, %20 : f32
    %22 = math.exp %21 : f32
    prim.yield %22 : f32
  }
  %23 = prim.reduce add %16 axes [3] keepdim init 0.0 : tensor<1x2x64x64xf32> -> tensor<1x2x64x1xf32>
  %24 = prim.broadcast %23 : tensor<1x2x64x1xf32> -> tensor<1x2x64x64xf32>
  %softmax = prim.map(%16, %24) : (tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xbf16> {
  ^bb0(%25: f32, %26: f32):
    %27 = arith.divf %25, %26 : f32
    %28 = arith.truncf %27 : f32 to bf16
    prim.yield %28 : bf16
  }
  %29 = prim.map(%softmax) : (tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xf32> {
  ^bb0(%30: bf16):
    %31 = arith.extf %30 : bf16 to f32
    prim.yield %31 : f32
  }
  %32 = prim.map(%v) : (tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xf32> {
  ^bb0(%33: bf16):
    %34 = arith.extf %33 : bf16 to f32
    prim.yield %34 : f32
  }
  %35 = prim.contract %29, %32 : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32> -> tensor<1x2x64x64xf32>
  %matmul_1 = prim.map(%35) : (tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xbf16> {
  ^bb0(%36: f32):
    %37 = arith.truncf %36 : f32 to bf16
    prim.yield %37 : bf16
  }
  func.return %matmul_1 : tensor<1x2x64x64xbf16>
}
