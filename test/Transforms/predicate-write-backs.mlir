// RUN: emmy-opt %s --split-input-file --predicate-write-backs | filecheck %s

// A KV cache's in-place update: each lane of the stored vector is the new value where the
// row is found, else the lane loaded from the same place. The store moves into a branch on
// the condition, with the new value's loads and index arithmetic; the old value's load goes.

// CHECK-LABEL: kernel.func @k_update(
// CHECK-NOT:     kernel.vector_load %cache
// CHECK:         scf.if %found {
// CHECK-NEXT:      %[[N0:.*]] = memref.load %new[%row, %d]
// CHECK-NEXT:      %[[D1:.*]] = arith.addi %d, %c1
// CHECK-NEXT:      %[[N1:.*]] = memref.load %new[%row, %[[D1]]]
// CHECK-NEXT:      %[[V:.*]] = vector.broadcast %[[N0]] : f32 to vector<2xf32>
// CHECK-NEXT:      %[[V1:.*]] = vector.insert %[[N1]], %[[V]] [1]
// CHECK-NEXT:      kernel.vector_store %[[V1]], %cache[%p, %d]
// CHECK-NEXT:    } else {
// CHECK-NEXT:    }
// CHECK-NOT:     kernel.vector_store

kernel.func @k_update(%cache: memref<16x8xf32>, %new: memref<1x8xf32>, %p: index, %d: index, %row: index, %found: i1) block [32, 1, 1] {
  %c1 = arith.constant 1 : index
  %old = kernel.vector_load %cache[%p, %d] : memref<16x8xf32>, vector<2xf32>
  %n0 = memref.load %new[%row, %d] : memref<1x8xf32>
  %o0 = vector.extract %old[0] : f32 from vector<2xf32>
  %s0 = arith.select %found, %n0, %o0 : f32
  %d1 = arith.addi %d, %c1 : index
  %n1 = memref.load %new[%row, %d1] : memref<1x8xf32>
  %o1 = vector.extract %old[1] : f32 from vector<2xf32>
  %s1 = arith.select %found, %n1, %o1 : f32
  %v = vector.broadcast %s0 : f32 to vector<2xf32>
  %v1 = vector.insert %s1, %v [1] : f32 into vector<2xf32>
  kernel.vector_store %v1, %cache[%p, %d] : memref<16x8xf32>, vector<2xf32>
}

// -----

// A scalar store keeping the loaded value where the condition holds stores in the else
// branch; the select's other use keeps it, and with it the load.

// CHECK-LABEL: kernel.func @k_keep(
// CHECK:         %[[OLD:.*]] = memref.load %x[%i]
// CHECK:         %[[S:.*]] = arith.select %masked, %[[OLD]], %fill
// CHECK-NEXT:    scf.if %masked {
// CHECK-NEXT:    } else {
// CHECK-NEXT:      memref.store %fill, %x[%i]
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %[[S]], %y[%i]

kernel.func @k_keep(%x: memref<8xf32>, %y: memref<8xf32>, %i: index, %masked: i1, %fill: f32) block [32, 1, 1] {
  %old = memref.load %x[%i] : memref<8xf32>
  %s = arith.select %masked, %old, %fill : f32
  memref.store %s, %x[%i] : memref<8xf32>
  memref.store %s, %y[%i] : memref<8xf32>
}

// -----

// A write to another parameter between the load and the store (a k and a v cache updated
// by one kernel) leaves the store predicated: distinct parameters are distinct buffers.

// CHECK-LABEL: kernel.func @k_two_caches(
// CHECK-NOT:     memref.load %v_cache
// CHECK:         scf.if %found {
// CHECK-NEXT:      memref.store %k, %k_cache[%i]
// CHECK:         scf.if %found {
// CHECK-NEXT:      memref.store %v, %v_cache[%i]

kernel.func @k_two_caches(%k_cache: memref<8xf32>, %v_cache: memref<8xf32>, %i: index, %found: i1, %k: f32, %v: f32) block [32, 1, 1] {
  %old_v = memref.load %v_cache[%i] : memref<8xf32>
  %old_k = memref.load %k_cache[%i] : memref<8xf32>
  %new_k = arith.select %found, %k, %old_k : f32
  memref.store %new_k, %k_cache[%i] : memref<8xf32>
  %new_v = arith.select %found, %v, %old_v : f32
  memref.store %new_v, %v_cache[%i] : memref<8xf32>
}

// -----

// Not predicated: a write to the buffer between the load and the store (which the store
// would undo where the condition fails), a load from another place, lanes on different
// conditions.

// CHECK-LABEL: kernel.func @k_unchanged(
// CHECK-NOT:     scf.if

kernel.func @k_unchanged(%x: memref<8xf32>, %z: memref<8xf32>, %i: index, %j: index, %a: i1, %b: i1, %v: f32) block [32, 1, 1] {
  %old = memref.load %x[%i] : memref<8xf32>
  memref.store %v, %x[%j] : memref<8xf32>
  %s = arith.select %a, %v, %old : f32
  memref.store %s, %x[%i] : memref<8xf32>
  %elsewhere = memref.load %x[%j] : memref<8xf32>
  %t = arith.select %a, %v, %elsewhere : f32
  memref.store %t, %x[%i] : memref<8xf32>
  %pair = kernel.vector_load %z[%i] : memref<8xf32>, vector<2xf32>
  %p0 = vector.extract %pair[0] : f32 from vector<2xf32>
  %p1 = vector.extract %pair[1] : f32 from vector<2xf32>
  %q0 = arith.select %a, %v, %p0 : f32
  %q1 = arith.select %b, %v, %p1 : f32
  %w = vector.broadcast %q0 : f32 to vector<2xf32>
  %w1 = vector.insert %q1, %w [1] : f32 into vector<2xf32>
  kernel.vector_store %w1, %z[%i] : memref<8xf32>, vector<2xf32>
}
