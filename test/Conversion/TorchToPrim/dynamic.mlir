// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// The module's dynamic size stays `?` in the primitives: a norm over the static dim counts
// its 64 elements; the row broadcasts keep the dynamic dim.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:.*]]: tensor<?x64xf32>, %[[W:.*]]: tensor<64xf32>) -> tensor<?xf32> {
// CHECK:         prim.reduce add %{{.*}} axes [1] keepdim init 0.0 : tensor<?x64xf32> -> tensor<?x1xf32>
// CHECK:           arith.constant 6.400000e+01 : f32
// CHECK:         prim.broadcast %{{.*}} : tensor<?x1xf32> -> tensor<?x64xf32>
// CHECK:         prim.broadcast %[[W]] : tensor<64xf32> -> tensor<?x64xf32>
// CHECK:         prim.reduce add %{{.*}} axes [1] init 0.0 : tensor<?x64xf32> -> tensor<?xf32>

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 2048 : i64}} {
  func.func @forward(%x: tensor<?x64xf32>, %w: tensor<64xf32>) -> tensor<?xf32> {
    %n = torch.rms_norm %x weight %w normalized_shape [64] eps 1.0e-05 : tensor<?x64xf32> weight tensor<64xf32> -> tensor<?x64xf32>
    %s = torch.sum %n dims [1] : tensor<?x64xf32> -> tensor<?xf32>
    func.return %s : tensor<?xf32>
  }
}
