// RUN: emmy-opt %s | filecheck %s

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
