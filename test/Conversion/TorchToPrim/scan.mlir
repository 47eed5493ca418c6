// RUN: emmy-opt %s --decompose-torch | filecheck %s

// cumsum and cumprod become a prim.scan (add, mul) along the same dim; 16-bit inputs are
// widened to f32 by a map, scanned in f32 and each element rounded once.

// CHECK-LABEL: func.func @scans(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>, %[[H:.*]]: tensor<4x8xbf16>, %[[I:.*]]: tensor<5xi64>)
// CHECK-NEXT:    %[[S:.*]] = prim.scan add %[[X]] dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[W:.*]] = prim.map(%[[H]]) : (tensor<4x8xbf16>) -> tensor<4x8xf32> {
// CHECK:           arith.extf
// CHECK:         %[[P:.*]] = prim.scan mul %[[W]] dim 0 : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[R:.*]] = prim.map(%[[P]]) : (tensor<4x8xf32>) -> tensor<4x8xbf16> {
// CHECK:           arith.truncf
// CHECK:         %[[N:.*]] = prim.scan add %[[I]] dim 0 : tensor<5xi64> -> tensor<5xi64>
// CHECK-NEXT:    func.return %[[S]], %[[R]], %[[N]]
func.func @scans(%x: tensor<4x8xf32>, %h: tensor<4x8xbf16>, %i: tensor<5xi64>) -> (tensor<4x8xf32>, tensor<4x8xbf16>, tensor<5xi64>) {
  %0 = torch.cumsum %x dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = torch.cumprod %h dim 0 : tensor<4x8xbf16> -> tensor<4x8xbf16>
  %2 = torch.cumsum %i dim 0 : tensor<5xi64> -> tensor<5xi64>
  func.return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<5xi64>
}
