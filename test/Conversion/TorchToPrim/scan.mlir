// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

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

// -----

// A long dim is scanned in blocks of about sqrt(n): 40 elements padded with the identity to
// 6 blocks of 7, scanned within each block; the block totals are scanned, shifted by one
// block (the identity first) and added to every element of the block; the padding is
// sliced off.

// CHECK-LABEL: func.func @blocked(
// CHECK-SAME:    %[[X:.*]]: tensor<3x40xf32>)
// CHECK:         %[[PAD:.*]] = prim.map() : () -> tensor<3x2xf32> {
// CHECK:         %[[FULL:.*]] = prim.concat %[[X]], %[[PAD]] dim 1 : tensor<3x40xf32>, tensor<3x2xf32> -> tensor<3x42xf32>
// CHECK-NEXT:    %[[BLOCKS:.*]] = prim.reshape %[[FULL]] : tensor<3x42xf32> -> tensor<3x6x7xf32>
// CHECK-NEXT:    %[[WITHIN:.*]] = prim.scan add %[[BLOCKS]] dim 2 : tensor<3x6x7xf32> -> tensor<3x6x7xf32>
// CHECK-NEXT:    %[[TOTALS:.*]] = prim.reduce add %[[BLOCKS]] axes [2] keepdim init 0.0 : tensor<3x6x7xf32> -> tensor<3x6x1xf32>
// CHECK-NEXT:    %[[RUNNING:.*]] = prim.scan add %[[TOTALS]] dim 1 : tensor<3x6x1xf32> -> tensor<3x6x1xf32>
// CHECK-NEXT:    %[[EARLIER:.*]] = prim.slice %[[RUNNING]] dim 1 start 0 step 1 : tensor<3x6x1xf32> -> tensor<3x5x1xf32>
// CHECK:         %[[FIRST:.*]] = prim.map() : () -> tensor<3x1x1xf32> {
// CHECK:         %[[BEFORE:.*]] = prim.concat %[[FIRST]], %[[EARLIER]] dim 1 : tensor<3x1x1xf32>, tensor<3x5x1xf32> -> tensor<3x6x1xf32>
// CHECK-NEXT:    %[[SPREAD:.*]] = prim.broadcast %[[BEFORE]] : tensor<3x6x1xf32> -> tensor<3x6x7xf32>
// CHECK-NEXT:    %[[SUM:.*]] = prim.map(%[[SPREAD]], %[[WITHIN]])
// CHECK:           arith.addf
// CHECK:         %[[FLAT:.*]] = prim.reshape %[[SUM]] : tensor<3x6x7xf32> -> tensor<3x42xf32>
// CHECK-NEXT:    %[[R:.*]] = prim.slice %[[FLAT]] dim 1 start 0 step 1 : tensor<3x42xf32> -> tensor<3x40xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @blocked(%x: tensor<3x40xf32>) -> tensor<3x40xf32> {
  %0 = torch.cumsum %x dim 1 : tensor<3x40xf32> -> tensor<3x40xf32>
  func.return %0 : tensor<3x40xf32>
}
