// RUN: emmy-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A static table read along a loop to the dynamic size verifies: the index has no bound
// known at compile time, which is not one known to be out of range (the declared range of the
// size keeps it in: torch.export checks that a slice of the table fits).

// CHECK-LABEL: loop.kernel @k_rows_of_a_table(
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to %{{.*}} {
// CHECK-NEXT:      %{{.*}} = loop.load %{{.*}}[%[[I]]] : memref<2048xf32>
loop.kernel @k_rows_of_a_table(%t: memref<2048xf32>, %x: memref<?xf32>, %s0: index) {
  loop.for %i in 0 to %s0 {
    %v = loop.load %t[%i] : memref<2048xf32>
    loop.store %v, %x[%i] : memref<?xf32>
  }
}

// -----

// A loop.contract over the dynamic size names the kernel's size as the extent of m.

// CHECK-LABEL: loop.kernel @k_linear(
// CHECK-NEXT:    loop.contract (%{{.*}}, %{{.*}}) in [%[[S:.*]], 4], k in 8, %{{.*}} = sum %{{.*}}[d0, k] * %{{.*}}[d1, k] : memref<?x8xbf16>, memref<4x8xbf16> -> f32 {
loop.kernel @k_linear(%x: memref<?x8xbf16>, %w: memref<4x8xbf16>, %y: memref<?x4xf32>, %s0: index) {
  loop.contract (%i, %j) in [%s0, 4], k in 8, %acc = sum %x[d0, k] * %w[d1, k] : memref<?x8xbf16>, memref<4x8xbf16> -> f32 {
    loop.store %acc, %y[%i, %j] : memref<?x4xf32>
  }
}

// -----

loop.kernel @dynamic_n(%x: memref<4x8xbf16>, %w: memref<?x8xbf16>, %y: memref<4x?xf32>, %s0: index) {
  // expected-error @+1 {{n of a loop.contract is static: only a batch dim or m may be the dynamic size}}
  loop.contract (%i, %j) in [4, %s0], k in 8, %acc = sum %x[d0, k] * %w[d1, k] : memref<4x8xbf16>, memref<?x8xbf16> -> f32 {
    loop.store %acc, %y[%i, %j] : memref<4x?xf32>
  }
}

// -----

loop.kernel @static_extent_of_a_dynamic_buffer(%x: memref<?x8xbf16>, %w: memref<4x8xbf16>, %y: memref<?x4xf32>, %s0: index) {
  // expected-error @+1 {{lhs dim 0 has size ?, but it is read at d0, of extent 16}}
  loop.contract (%i, %j) in [16, 4], k in 8, %acc = sum %x[d0, k] * %w[d1, k] : memref<?x8xbf16>, memref<4x8xbf16> -> f32 {
    loop.store %acc, %y[%i, %j] : memref<?x4xf32>
  }
}
