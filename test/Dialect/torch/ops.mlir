// RUN: emmy-opt %s | emmy-opt | filecheck %s

// Every torch op prints in a form that parses back to itself. Non-finite float constants
// print as hex bit patterns and must read back as the same values.

// CHECK-LABEL: func.func @elementwise_unary(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xf32>, %[[H:.*]]: tensor<2x8xbf16>, %[[I:.*]]: tensor<4xi64>)
// CHECK:         torch.neg %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.abs %[[I]] : tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    torch.relu %[[H]] : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    torch.exp %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.log %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.sqrt %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.rsqrt %[[H]] : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    torch.floor %[[H]] : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    torch.erf %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.erfc %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.erfinv %[[H]] : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    torch.lgamma %[[H]] : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    torch.digamma %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.log1p %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.tan %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.atan %[[H]] : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    torch.asin %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.acos %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.sinh %[[H]] : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    torch.cosh %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.asinh %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.acosh %[[H]] : tensor<2x8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    torch.atanh %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.tanh %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.sigmoid %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.silu %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.gelu %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.gelu %[[X]] approximate "tanh" : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.clamp %[[X]] min -1.000000e+00 max 1.000000e+00 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.clamp %[[X]] max 5.000000e-01 : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.to %[[X]] : tensor<2x8xf32> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.to %[[I]] : tensor<4xi64> -> tensor<4xi1>
func.func @elementwise_unary(%x: tensor<2x8xf32>, %h: tensor<2x8xbf16>, %i: tensor<4xi64>) {
  %0 = torch.neg %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %1 = torch.abs %i : tensor<4xi64> -> tensor<4xi64>
  %2 = torch.relu %h : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %3 = torch.exp %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %4 = torch.log %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %5 = torch.sqrt %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %6 = torch.rsqrt %h : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %fl = torch.floor %h : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %er = torch.erf %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %erc = torch.erfc %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %eri = torch.erfinv %h : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %lg = torch.lgamma %h : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %dg = torch.digamma %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %lp = torch.log1p %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %tan = torch.tan %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %atan = torch.atan %h : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %asin = torch.asin %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %acos = torch.acos %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %sinh = torch.sinh %h : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %cosh = torch.cosh %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %asinh = torch.asinh %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %acosh = torch.acosh %h : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %atanh = torch.atanh %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %7 = torch.tanh %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %8 = torch.sigmoid %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %9 = torch.silu %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %10 = torch.gelu %x approximate "none" : tensor<2x8xf32> -> tensor<2x8xf32>
  %11 = torch.gelu %x approximate "tanh" : tensor<2x8xf32> -> tensor<2x8xf32>
  %12 = torch.clamp %x min -1.0 max 1.0 : tensor<2x8xf32> -> tensor<2x8xf32>
  %13 = torch.clamp %x max 0.5 : tensor<2x8xf32> -> tensor<2x8xf32>
  %14 = torch.to %x : tensor<2x8xf32> -> tensor<2x8xf16>
  %15 = torch.to %i : tensor<4xi64> -> tensor<4xi1>
  func.return
}

// CHECK-LABEL: func.func @elementwise_binary(
// CHECK-SAME:    %[[A:.*]]: tensor<2x8xf16>, %[[B:.*]]: tensor<8xf16>, %[[S:.*]]: tensor<f16>, %[[M:.*]]: tensor<2x1xi1>)
// CHECK:         torch.add %[[A]], %[[B]] : tensor<2x8xf16>, tensor<8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.sub %[[B]], %[[A]] : tensor<8xf16>, tensor<2x8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.mul %[[A]], %[[S]] : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.div %[[S]], %[[A]] : tensor<f16>, tensor<2x8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.pow %[[A]], %[[S]] : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.remainder %[[A]], %[[S]] : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.fmod %[[A]], %[[S]] : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.floor_divide %[[B]], %[[A]] : tensor<8xf16>, tensor<2x8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.trunc_divide %[[B]], %[[A]] : tensor<8xf16>, tensor<2x8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.atan2 %[[A]], %[[B]] : tensor<2x8xf16>, tensor<8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.hypot %[[S]], %[[A]] : tensor<f16>, tensor<2x8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.copysign %[[A]], %[[B]] : tensor<2x8xf16>, tensor<8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.maximum %[[A]], %[[A]] : tensor<2x8xf16>, tensor<2x8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.minimum %[[A]], %[[B]] : tensor<2x8xf16>, tensor<8xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    torch.gt %[[A]], %[[S]] : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xi1>
// CHECK-NEXT:    torch.lt %[[A]], %[[B]] : tensor<2x8xf16>, tensor<8xf16> -> tensor<2x8xi1>
// CHECK-NEXT:    torch.ge %[[A]], %[[A]] : tensor<2x8xf16>, tensor<2x8xf16> -> tensor<2x8xi1>
// CHECK-NEXT:    torch.le %[[A]], %[[A]] : tensor<2x8xf16>, tensor<2x8xf16> -> tensor<2x8xi1>
// CHECK-NEXT:    torch.eq %[[M]], %[[M]] : tensor<2x1xi1>, tensor<2x1xi1> -> tensor<2x1xi1>
// CHECK-NEXT:    torch.ne %[[B]], %[[S]] : tensor<8xf16>, tensor<f16> -> tensor<8xi1>
// CHECK-NEXT:    torch.where %[[M]], %[[A]], %[[S]] : tensor<2x1xi1>, tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
func.func @elementwise_binary(%a: tensor<2x8xf16>, %b: tensor<8xf16>, %s: tensor<f16>, %m: tensor<2x1xi1>) {
  %0 = torch.add %a, %b : tensor<2x8xf16>, tensor<8xf16> -> tensor<2x8xf16>
  %1 = torch.sub %b, %a : tensor<8xf16>, tensor<2x8xf16> -> tensor<2x8xf16>
  %2 = torch.mul %a, %s : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
  %3 = torch.div %s, %a : tensor<f16>, tensor<2x8xf16> -> tensor<2x8xf16>
  %4 = torch.pow %a, %s : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
  %r = torch.remainder %a, %s : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
  %fm = torch.fmod %a, %s : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
  %q = torch.floor_divide %b, %a : tensor<8xf16>, tensor<2x8xf16> -> tensor<2x8xf16>
  %tq = torch.trunc_divide %b, %a : tensor<8xf16>, tensor<2x8xf16> -> tensor<2x8xf16>
  %at = torch.atan2 %a, %b : tensor<2x8xf16>, tensor<8xf16> -> tensor<2x8xf16>
  %hy = torch.hypot %s, %a : tensor<f16>, tensor<2x8xf16> -> tensor<2x8xf16>
  %cs = torch.copysign %a, %b : tensor<2x8xf16>, tensor<8xf16> -> tensor<2x8xf16>
  %5 = torch.maximum %a, %a : tensor<2x8xf16>, tensor<2x8xf16> -> tensor<2x8xf16>
  %6 = torch.minimum %a, %b : tensor<2x8xf16>, tensor<8xf16> -> tensor<2x8xf16>
  %7 = torch.gt %a, %s : tensor<2x8xf16>, tensor<f16> -> tensor<2x8xi1>
  %8 = torch.lt %a, %b : tensor<2x8xf16>, tensor<8xf16> -> tensor<2x8xi1>
  %9 = torch.ge %a, %a : tensor<2x8xf16>, tensor<2x8xf16> -> tensor<2x8xi1>
  %10 = torch.le %a, %a : tensor<2x8xf16>, tensor<2x8xf16> -> tensor<2x8xi1>
  %11 = torch.eq %m, %m : tensor<2x1xi1>, tensor<2x1xi1> -> tensor<2x1xi1>
  %12 = torch.ne %b, %s : tensor<8xf16>, tensor<f16> -> tensor<8xi1>
  %13 = torch.where %m, %a, %s : tensor<2x1xi1>, tensor<2x8xf16>, tensor<f16> -> tensor<2x8xf16>
  func.return
}

// CHECK-LABEL: func.func @bitwise(
// CHECK-SAME:    %[[M:.*]]: tensor<2x8xi1>, %[[N:.*]]: tensor<8xi1>, %[[I:.*]]: tensor<4xi64>)
// CHECK:         torch.bitwise_and %[[M]], %[[N]] : tensor<2x8xi1>, tensor<8xi1> -> tensor<2x8xi1>
// CHECK-NEXT:    torch.bitwise_or %[[I]], %[[I]] : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    torch.bitwise_xor %[[N]], %[[M]] : tensor<8xi1>, tensor<2x8xi1> -> tensor<2x8xi1>
// CHECK-NEXT:    torch.shift_left %[[I]], %[[I]] : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    torch.shift_right %[[I]], %[[I]] : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    torch.gcd %[[I]], %[[I]] : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    torch.lcm %[[I]], %[[I]] : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
// CHECK-NEXT:    torch.bitwise_not %[[I]] : tensor<4xi64> -> tensor<4xi64>
func.func @bitwise(%m: tensor<2x8xi1>, %n: tensor<8xi1>, %i: tensor<4xi64>) {
  %0 = torch.bitwise_and %m, %n : tensor<2x8xi1>, tensor<8xi1> -> tensor<2x8xi1>
  %1 = torch.bitwise_or %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %2 = torch.bitwise_xor %n, %m : tensor<8xi1>, tensor<2x8xi1> -> tensor<2x8xi1>
  %sl = torch.shift_left %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %sr = torch.shift_right %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %g = torch.gcd %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %l = torch.lcm %i, %i : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %3 = torch.bitwise_not %i : tensor<4xi64> -> tensor<4xi64>
  func.return
}

// CHECK-LABEL: func.func @reductions(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x16xf32>, %[[I:.*]]: tensor<4x4xi64>)
// CHECK:         torch.sum %[[X]] dims [2] : tensor<2x8x16xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.sum %[[I]] dims [0, 1] : tensor<4x4xi64> -> tensor<i64>
// CHECK-NEXT:    torch.prod %[[X]] dims [1] keepdim : tensor<2x8x16xf32> -> tensor<2x1x16xf32>
// CHECK-NEXT:    torch.mean %[[X]] dims [1, 2] keepdim : tensor<2x8x16xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    torch.amax %[[X]] dims [2] keepdim : tensor<2x8x16xf32> -> tensor<2x8x1xf32>
// CHECK-NEXT:    torch.amin %[[X]] dims [0] : tensor<2x8x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:    torch.var %[[X]] dims [2] : tensor<2x8x16xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    torch.var %[[X]] dims [2] keepdim correction 0 : tensor<2x8x16xf32> -> tensor<2x8x1xf32>
func.func @reductions(%x: tensor<2x8x16xf32>, %i: tensor<4x4xi64>) {
  %0 = torch.sum %x dims [2] : tensor<2x8x16xf32> -> tensor<2x8xf32>
  %1 = torch.sum %i dims [0, 1] : tensor<4x4xi64> -> tensor<i64>
  %p = torch.prod %x dims [1] keepdim : tensor<2x8x16xf32> -> tensor<2x1x16xf32>
  %2 = torch.mean %x dims [1, 2] keepdim : tensor<2x8x16xf32> -> tensor<2x1x1xf32>
  %3 = torch.amax %x dims [2] keepdim : tensor<2x8x16xf32> -> tensor<2x8x1xf32>
  %4 = torch.amin %x dims [0] : tensor<2x8x16xf32> -> tensor<8x16xf32>
  %5 = torch.var %x dims [2] correction 1 : tensor<2x8x16xf32> -> tensor<2x8xf32>
  %6 = torch.var %x dims [2] keepdim correction 0 : tensor<2x8x16xf32> -> tensor<2x8x1xf32>
  func.return
}

// CHECK-LABEL: func.func @arg_reductions(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x16xf32>)
// CHECK-NEXT:    torch.argmax %[[X]] dims [2] : tensor<2x8x16xf32> -> tensor<2x8xi64>
// CHECK-NEXT:    torch.argmin %[[X]] dims [0] keepdim : tensor<2x8x16xf32> -> tensor<1x8x16xi64>
func.func @arg_reductions(%x: tensor<2x8x16xf32>) {
  %0 = torch.argmax %x dims [2] : tensor<2x8x16xf32> -> tensor<2x8xi64>
  %1 = torch.argmin %x dims [0] keepdim : tensor<2x8x16xf32> -> tensor<1x8x16xi64>
  func.return
}

// CHECK-LABEL: func.func @contractions(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x16xbf16>, %[[W:.*]]: tensor<4x16xbf16>, %[[B:.*]]: tensor<4xbf16>, %[[P:.*]]: tensor<3x1x8x16xf32>, %[[Q:.*]]: tensor<5x16x4xf32>)
// CHECK:         torch.linear %[[X]], %[[W]] : tensor<2x8x16xbf16>, tensor<4x16xbf16> -> tensor<2x8x4xbf16>
// CHECK-NEXT:    torch.linear %[[X]], %[[W]] bias %[[B]] : tensor<2x8x16xbf16>, tensor<4x16xbf16> bias tensor<4xbf16> -> tensor<2x8x4xbf16>
// CHECK-NEXT:    torch.matmul %[[P]], %[[Q]] : tensor<3x1x8x16xf32>, tensor<5x16x4xf32> -> tensor<3x5x8x4xf32>
// CHECK-NEXT:    %[[C:.*]] = torch.constant dense<1.000000e+00> : tensor<5x8x16xf32>
// CHECK-NEXT:    torch.bmm %[[C]], %[[Q]] : tensor<5x8x16xf32>, tensor<5x16x4xf32> -> tensor<5x8x4xf32>
func.func @contractions(%x: tensor<2x8x16xbf16>, %w: tensor<4x16xbf16>, %b: tensor<4xbf16>, %p: tensor<3x1x8x16xf32>, %q: tensor<5x16x4xf32>) {
  %0 = torch.linear %x, %w : tensor<2x8x16xbf16>, tensor<4x16xbf16> -> tensor<2x8x4xbf16>
  %1 = torch.linear %x, %w bias %b : tensor<2x8x16xbf16>, tensor<4x16xbf16> bias tensor<4xbf16> -> tensor<2x8x4xbf16>
  %2 = torch.matmul %p, %q : tensor<3x1x8x16xf32>, tensor<5x16x4xf32> -> tensor<3x5x8x4xf32>
  %3 = torch.constant dense<1.0> : tensor<5x8x16xf32>
  %4 = torch.bmm %3, %q : tensor<5x8x16xf32>, tensor<5x16x4xf32> -> tensor<5x8x4xf32>
  func.return
}

// CHECK-LABEL: func.func @normalizations(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x64xf16>, %[[W:.*]]: tensor<64xf16>, %[[W2:.*]]: tensor<8x64xf16>)
// CHECK:         torch.rms_norm %[[X]] weight %[[W]] normalized_shape [64] eps 1.1920928955078125e-07 : tensor<2x8x64xf16> weight tensor<64xf16> -> tensor<2x8x64xf16>
// CHECK-NEXT:    torch.rms_norm %[[X]] normalized_shape [8, 64] eps 1.000000e-05 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
// CHECK-NEXT:    torch.layer_norm %[[X]] weight %[[W]] bias %[[W]] normalized_shape [64] eps 1.000000e-05 : tensor<2x8x64xf16> weight tensor<64xf16> bias tensor<64xf16> -> tensor<2x8x64xf16>
// CHECK-NEXT:    torch.layer_norm %[[X]] weight %[[W2]] normalized_shape [8, 64] eps 1.000000e-05 : tensor<2x8x64xf16> weight tensor<8x64xf16> -> tensor<2x8x64xf16>
// CHECK-NEXT:    torch.layer_norm %[[X]] bias %[[W]] normalized_shape [64] eps 1.000000e-05 : tensor<2x8x64xf16> bias tensor<64xf16> -> tensor<2x8x64xf16>
// CHECK-NEXT:    torch.layer_norm %[[X]] normalized_shape [64] eps 1.000000e-05 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
// CHECK-NEXT:    torch.softmax %[[X]] dim 1 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
// CHECK-NEXT:    torch.log_softmax %[[X]] dim 2 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
// CHECK-NEXT:    torch.cumsum %[[X]] dim 2 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
// CHECK-NEXT:    torch.cumprod %[[X]] dim 0 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
func.func @normalizations(%x: tensor<2x8x64xf16>, %w: tensor<64xf16>, %w2: tensor<8x64xf16>) {
  %0 = torch.rms_norm %x weight %w normalized_shape [64] eps 1.1920928955078125e-07 : tensor<2x8x64xf16> weight tensor<64xf16> -> tensor<2x8x64xf16>
  %1 = torch.rms_norm %x normalized_shape [8, 64] eps 1.0e-05 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
  %2 = torch.layer_norm %x weight %w bias %w normalized_shape [64] eps 1.0e-05 : tensor<2x8x64xf16> weight tensor<64xf16> bias tensor<64xf16> -> tensor<2x8x64xf16>
  %3 = torch.layer_norm %x weight %w2 normalized_shape [8, 64] eps 1.0e-05 : tensor<2x8x64xf16> weight tensor<8x64xf16> -> tensor<2x8x64xf16>
  %4 = torch.layer_norm %x bias %w normalized_shape [64] eps 1.0e-05 : tensor<2x8x64xf16> bias tensor<64xf16> -> tensor<2x8x64xf16>
  %5 = torch.layer_norm %x normalized_shape [64] eps 1.0e-05 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
  %6 = torch.softmax %x dim 1 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
  %7 = torch.log_softmax %x dim 2 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
  %8 = torch.cumsum %x dim 2 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
  %9 = torch.cumprod %x dim 0 : tensor<2x8x64xf16> -> tensor<2x8x64xf16>
  func.return
}

// CHECK-LABEL: func.func @attention(
// CHECK-SAME:    %[[Q:.*]]: tensor<2x4x8x16xf32>, %[[KV:.*]]: tensor<2x4x6x16xf32>, %[[M:.*]]: tensor<8x6xi1>, %[[A:.*]]: tensor<2x1x8x6xf32>)
// CHECK:         torch.sdpa %[[Q]], %[[KV]], %[[KV]] scale 2.500000e-01 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT:    torch.sdpa %[[Q]], %[[Q]], %[[Q]] causal scale 2.500000e-01 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-NEXT:    torch.sdpa %[[Q]], %[[KV]], %[[KV]] mask %[[M]] scale 1.000000e-01 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> mask tensor<8x6xi1> -> tensor<2x4x8x16xf32>
// CHECK-NEXT:    torch.sdpa %[[Q]], %[[KV]], %[[KV]] mask %[[A]] scale 2.500000e-01 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> mask tensor<2x1x8x6xf32> -> tensor<2x4x8x16xf32>
func.func @attention(%q: tensor<2x4x8x16xf32>, %kv: tensor<2x4x6x16xf32>, %m: tensor<8x6xi1>, %a: tensor<2x1x8x6xf32>) {
  %0 = torch.sdpa %q, %kv, %kv scale 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> -> tensor<2x4x8x16xf32>
  %1 = torch.sdpa %q, %q, %q causal scale 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %2 = torch.sdpa %q, %kv, %kv mask %m scale 0.1 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> mask tensor<8x6xi1> -> tensor<2x4x8x16xf32>
  %3 = torch.sdpa %q, %kv, %kv mask %a scale 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32> mask tensor<2x1x8x6xf32> -> tensor<2x4x8x16xf32>
  func.return
}

// CHECK-LABEL: func.func @embedding(
// CHECK:         torch.embedding %{{.*}}, %{{.*}} : tensor<10x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
// CHECK-NEXT:    torch.embedding %{{.*}}, %{{.*}} : tensor<10x4xf32>, tensor<5xi32> -> tensor<5x4xf32>
func.func @embedding(%w: tensor<10x4xf32>, %i: tensor<2x3xi64>, %j: tensor<5xi32>) {
  %0 = torch.embedding %w, %i : tensor<10x4xf32>, tensor<2x3xi64> -> tensor<2x3x4xf32>
  %1 = torch.embedding %w, %j : tensor<10x4xf32>, tensor<5xi32> -> tensor<5x4xf32>
  func.return
}

// CHECK-LABEL: func.func @iota(
// CHECK:         torch.iota dim 0 : tensor<16x1xi64>
// CHECK-NEXT:    torch.iota dim 1 : tensor<2x5xi32>
func.func @iota() {
  %0 = torch.iota dim 0 : tensor<16x1xi64>
  %1 = torch.iota dim 1 : tensor<2x5xi32>
  func.return
}

// CHECK-LABEL: func.func @views(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x16xf32>)
// CHECK:         torch.reshape %[[X]] : tensor<2x8x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT:    torch.permute %[[X]] dims [2, 0, 1] : tensor<2x8x16xf32> -> tensor<16x2x8xf32>
// CHECK-NEXT:    torch.transpose %[[X]] dims 0, 2 : tensor<2x8x16xf32> -> tensor<16x8x2xf32>
// CHECK-NEXT:    %[[U:.*]] = torch.unsqueeze %[[X]] dim 1 : tensor<2x8x16xf32> -> tensor<2x1x8x16xf32>
// CHECK-NEXT:    torch.squeeze %[[U]] dims [1] : tensor<2x1x8x16xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT:    torch.expand %[[U]] : tensor<2x1x8x16xf32> -> tensor<3x2x4x8x16xf32>
// CHECK-NEXT:    torch.slice %[[X]] dim 2 start 1 end 16 step 2 : tensor<2x8x16xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT:    torch.slice %[[X]] dim 1 start 3 end 3 step 1 : tensor<2x8x16xf32> -> tensor<2x0x16xf32>
// CHECK-NEXT:    torch.cat %[[X]], %[[X]], %[[X]] dim 1 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x24x16xf32>
func.func @views(%x: tensor<2x8x16xf32>) {
  %0 = torch.reshape %x : tensor<2x8x16xf32> -> tensor<16x16xf32>
  %1 = torch.permute %x dims [2, 0, 1] : tensor<2x8x16xf32> -> tensor<16x2x8xf32>
  %2 = torch.transpose %x dims 0, 2 : tensor<2x8x16xf32> -> tensor<16x8x2xf32>
  %3 = torch.unsqueeze %x dim 1 : tensor<2x8x16xf32> -> tensor<2x1x8x16xf32>
  %4 = torch.squeeze %3 dims [1] : tensor<2x1x8x16xf32> -> tensor<2x8x16xf32>
  %5 = torch.expand %3 : tensor<2x1x8x16xf32> -> tensor<3x2x4x8x16xf32>
  %6 = torch.slice %x dim 2 start 1 end 16 step 2 : tensor<2x8x16xf32> -> tensor<2x8x8xf32>
  %7 = torch.slice %x dim 1 start 3 end 3 step 1 : tensor<2x8x16xf32> -> tensor<2x0x16xf32>
  %8 = torch.cat %x, %x, %x dim 1 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x24x16xf32>
  func.return
}

// CHECK-LABEL: func.func @constants(
// CHECK:         torch.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    torch.constant dense<[1, 2, 3]> : tensor<3xi64>
// CHECK-NEXT:    torch.constant dense<0.000000e+00> : tensor<4x4xbf16>
// CHECK-NEXT:    torch.constant dense<0xff800000> : tensor<f32>
// CHECK-NEXT:    torch.constant dense<[0x7ff0000000000000, -1.500000e+00]> : tensor<2xf64>
// CHECK-NEXT:    torch.constant dense<0x7e00> : tensor<2x2xf16>
// CHECK-NEXT:    torch.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    torch.constant dense<1.000000e+00> : tensor<2xf16> {note = "kept"}
// CHECK-NEXT:    torch.constant dense<-3> : tensor<10000000x1000000xi32>
// CHECK-NEXT:    torch.constant dense<"0x0000000000000040{{[0-9A-F]+}}00004843"> : tensor<101xf32>
func.func @constants() {
  %0 = torch.constant dense<0.25> : tensor<f32>
  %1 = torch.constant dense<[1, 2, 3]> : tensor<3xi64>
  %2 = torch.constant dense<0.0> : tensor<4x4xbf16>
  %3 = torch.constant dense<0xFF800000> : tensor<f32>
  %4 = torch.constant dense<[0x7FF0000000000000, -1.5]> : tensor<2xf64>
  %5 = torch.constant dense<0x7E00> : tensor<2x2xf16>
  %6 = torch.constant dense<[true, false]> : tensor<2xi1>
  %7 = torch.constant dense<1.0> : tensor<2xf16> {note = "kept"}
  // A splat of 10^13 elements is its one element.
  %8 = torch.constant dense<-3> : tensor<10000000x1000000xi32>
  // More than 100 elements print as a hex string, which parses back as bytes.
  %9 = torch.constant dense<"0x0000000000000040000080400000C0400000004100002041000040410000604100008041000090410000A0410000B0410000C0410000D0410000E0410000F0410000004200000842000010420000184200002042000028420000304200003842000040420000484200005042000058420000604200006842000070420000784200008042000084420000884200008C4200009042000094420000984200009C420000A0420000A4420000A8420000AC420000B0420000B4420000B8420000BC420000C0420000C4420000C8420000CC420000D0420000D4420000D8420000DC420000E0420000E4420000E8420000EC420000F0420000F4420000F8420000FC42000000430000024300000443000006430000084300000A4300000C4300000E43000010430000124300001443000016430000184300001A4300001C4300001E43000020430000224300002443000026430000284300002A4300002C4300002E43000030430000324300003443000036430000384300003A4300003C4300003E430000404300004243000044430000464300004843"> : tensor<101xf32>
  func.return
}
