// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// Views and data movement map one to one onto prim ops: reshape, unsqueeze and squeeze are
// prim.reshape; permute and transpose prim.permute; expand prim.broadcast; slice prim.slice
// (its end is implied by the result's shape); cat prim.concat.

// CHECK-LABEL: func.func @views(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x16xf32>)
// CHECK-NEXT:    %[[R:.*]] = prim.reshape %[[X]] : tensor<2x8x16xf32> -> tensor<16x16xf32>
// CHECK-NEXT:    %[[P:.*]] = prim.permute %[[X]] [2, 0, 1] : tensor<2x8x16xf32> -> tensor<16x2x8xf32>
// CHECK-NEXT:    %[[T:.*]] = prim.permute %[[X]] [2, 1, 0] : tensor<2x8x16xf32> -> tensor<16x8x2xf32>
// CHECK-NEXT:    %[[U:.*]] = prim.reshape %[[X]] : tensor<2x8x16xf32> -> tensor<2x1x8x16xf32>
// CHECK-NEXT:    %[[S:.*]] = prim.reshape %[[U]] : tensor<2x1x8x16xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT:    %[[E:.*]] = prim.broadcast %[[U]] : tensor<2x1x8x16xf32> -> tensor<3x2x4x8x16xf32>
// CHECK-NEXT:    %[[SL:.*]] = prim.slice %[[X]] dim 2 start 1 step 2 : tensor<2x8x16xf32> -> tensor<2x8x8xf32>
// CHECK-NEXT:    %[[EMPTY:.*]] = prim.slice %[[X]] dim 1 start 3 step 1 : tensor<2x8x16xf32> -> tensor<2x0x16xf32>
// CHECK-NEXT:    %[[C:.*]] = prim.concat %[[X]], %[[S]], %[[X]] dim 1 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x24x16xf32>
// CHECK-NEXT:    func.return %[[R]], %[[P]], %[[T]], %[[E]], %[[SL]], %[[EMPTY]], %[[C]]
func.func @views(%x: tensor<2x8x16xf32>) -> (tensor<16x16xf32>, tensor<16x2x8xf32>, tensor<16x8x2xf32>, tensor<3x2x4x8x16xf32>, tensor<2x8x8xf32>, tensor<2x0x16xf32>, tensor<2x24x16xf32>) {
  %0 = torch.reshape %x : tensor<2x8x16xf32> -> tensor<16x16xf32>
  %1 = torch.permute %x dims [2, 0, 1] : tensor<2x8x16xf32> -> tensor<16x2x8xf32>
  %2 = torch.transpose %x dims 0, 2 : tensor<2x8x16xf32> -> tensor<16x8x2xf32>
  %3 = torch.unsqueeze %x dim 1 : tensor<2x8x16xf32> -> tensor<2x1x8x16xf32>
  %4 = torch.squeeze %3 dims [1] : tensor<2x1x8x16xf32> -> tensor<2x8x16xf32>
  %5 = torch.expand %3 : tensor<2x1x8x16xf32> -> tensor<3x2x4x8x16xf32>
  %6 = torch.slice %x dim 2 start 1 end 16 step 2 : tensor<2x8x16xf32> -> tensor<2x8x8xf32>
  %7 = torch.slice %x dim 1 start 3 end 3 step 1 : tensor<2x8x16xf32> -> tensor<2x0x16xf32>
  %8 = torch.cat %x, %4, %x dim 1 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x24x16xf32>
  func.return %0, %1, %2, %5, %6, %7, %8 : tensor<16x16xf32>, tensor<16x2x8xf32>, tensor<16x8x2xf32>, tensor<3x2x4x8x16xf32>, tensor<2x8x8xf32>, tensor<2x0x16xf32>, tensor<2x24x16xf32>
}

// -----

// Views that change nothing (a full slice, the identity permutation, a one-input cat) are
// their input.

// CHECK-LABEL: func.func @identities(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT:    func.return %[[X]], %[[X]], %[[X]]
func.func @identities(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = torch.slice %x dim 1 start 0 end 8 step 1 : tensor<2x8xf32> -> tensor<2x8xf32>
  %1 = torch.permute %0 dims [0, 1] : tensor<2x8xf32> -> tensor<2x8xf32>
  %2 = torch.cat %1 dim 0 : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return %0, %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// embedding is a gather of the weight's rows.

// CHECK-LABEL: func.func @embedding(
// CHECK-SAME:    %[[W:.*]]: tensor<10x4xbf16>, %[[I:.*]]: tensor<2x3xi64>, %[[J:.*]]: tensor<5xi32>)
// CHECK-NEXT:    %[[A:.*]] = prim.gather %[[W]][%[[I]]] : tensor<10x4xbf16>, tensor<2x3xi64> -> tensor<2x3x4xbf16>
// CHECK-NEXT:    %[[B:.*]] = prim.gather %[[W]][%[[J]]] : tensor<10x4xbf16>, tensor<5xi32> -> tensor<5x4xbf16>
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @embedding(%w: tensor<10x4xbf16>, %i: tensor<2x3xi64>, %j: tensor<5xi32>) -> (tensor<2x3x4xbf16>, tensor<5x4xbf16>) {
  %0 = torch.embedding %w, %i : tensor<10x4xbf16>, tensor<2x3xi64> -> tensor<2x3x4xbf16>
  %1 = torch.embedding %w, %j : tensor<10x4xbf16>, tensor<5xi32> -> tensor<5x4xbf16>
  func.return %0, %1 : tensor<2x3x4xbf16>, tensor<5x4xbf16>
}
