// RUN: emmy-opt %s --decompose-torch --print-debuginfo | filecheck %s

// Every op made for a torch op, scalar body ops included, is located at
// NameLoc("<torch op short name>", <the torch op's location>): fuse-prims names kernels after
// these names.

// CHECK-LABEL: func.func @block(
// CHECK:         prim.map
// CHECK:           arith.mulf {{.*}} loc("rms_norm"("{{.*}}locations.mlir":[[# @LINE + 18]]:3))
// CHECK:         } loc("rms_norm"("{{.*}}locations.mlir":[[# @LINE + 17]]:3))
// CHECK-NEXT:    prim.reduce add {{.*}} loc("rms_norm"("{{.*}}locations.mlir":[[# @LINE + 16]]:3))
// CHECK:         prim.broadcast {{.*}} loc("rms_norm"(
// CHECK:         prim.permute {{.*}} loc("linear"("{{.*}}locations.mlir":[[# @LINE + 15]]:3))
// CHECK-NEXT:    prim.contract {{.*}} loc("linear"(
// CHECK-NEXT:    prim.broadcast {{.*}} loc("linear"(
// CHECK-NEXT:    prim.map
// CHECK:         } loc("linear"(
// CHECK-NEXT:    prim.map
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.constant 1.000000e+00 : f32 loc("silu"("{{.*}}locations.mlir":[[# @LINE + 9]]:3))
// CHECK:         } loc("silu"(
// CHECK-NEXT:    prim.map
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.mulf {{.*}} loc("mul"("{{.*}}locations.mlir":[[# @LINE + 6]]:3))
// CHECK:         } loc("mul"(
func.func @block(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %p: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = torch.rms_norm %x weight %w normalized_shape [8] eps 1.0e-06 : tensor<2x8xf32> weight tensor<8xf32> -> tensor<2x8xf32>
  %1 = torch.linear %0, %p bias %b : tensor<2x8xf32>, tensor<4x8xf32> bias tensor<4xf32> -> tensor<2x4xf32>
  %2 = torch.silu %1 : tensor<2x4xf32> -> tensor<2x4xf32>
  %3 = torch.mul %2, %1 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %3 : tensor<2x4xf32>
}
