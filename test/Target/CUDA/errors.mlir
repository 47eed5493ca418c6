// RUN: not emmy-opt %s --split-input-file -t cuda 2>&1 | filecheck %s

// What the cuda target cannot print is an error at the op, never invalid C++.

// CHECK: errors.mlir:[[# @LINE + 5]]:3: error: target 'cuda' failed: the cuda target cannot print 'math.fpowi'
kernel.func @fpowi(%x: memref<32xf32>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<32xf32>
  %n = arith.constant 3 : i32
  %p = math.fpowi %v, %n : f32, i32
  memref.store %p, %x[%tid] : memref<32xf32>
}

// -----

// CHECK: errors.mlir:[[# @LINE + 4]]:3: error: target 'cuda' failed: the cuda target cannot print 'arith.addui_extended'
kernel.func @extended(%x: memref<32xi32>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<32xi32>
  %s, %o = arith.addui_extended %v, %v : i32, i1
  memref.store %s, %x[%tid] : memref<32xi32>
}

// -----

// CHECK: errors.mlir:[[# @LINE + 4]]:3: error: target 'cuda' failed: the cuda target has no C type for i4 (it prints f16, bf16, f32, f64, i1, i8, i16, i32, i64 and index)
kernel.func @nibbles(%x: memref<32xi8>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %v = memref.load %x[%tid] : memref<32xi8>
  %n = arith.trunci %v : i8 to i4
  %w = arith.extsi %n : i4 to i8
  memref.store %w, %x[%tid] : memref<32xi8>
}

// -----

// CHECK: errors.mlir:[[# @LINE + 1]]:1: error: target 'cuda' failed: kernel name "not an identifier" is not a C identifier
kernel.func @"not an identifier"(%x: memref<32xf32>) block [32, 1, 1] {
}

// CHECK-NOT: error
