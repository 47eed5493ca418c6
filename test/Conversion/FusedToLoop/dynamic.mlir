// RUN: emmy-opt %s --split-input-file --lower-fused-to-loop | filecheck %s

// A ? dim is the module's dynamic size: the host function reads it off the first argument
// with that dim, allocates the ? output with it and passes it to the kernel, whose last
// argument it is; the loop over the ? dim runs to it.

// CHECK-LABEL: loop.kernel @k_scale(
// CHECK-SAME:    %[[A:.*]]: memref<?x64xf32>, %[[B:.*]]: memref<64xf32>, %[[OUT:.*]]: memref<?x64xf32>, %[[S:[a-z0-9_]+]]: index) {
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to %[[S]] {
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 64 {
// CHECK-NEXT:        %[[X:.*]] = loop.load %[[A]][%[[I]], %[[J]]] : memref<?x64xf32>
// CHECK-NEXT:        %[[W:.*]] = loop.load %[[B]][%[[J]]] : memref<64xf32>
// CHECK-NEXT:        %[[R:.*]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK-NEXT:        loop.store %[[R]], %[[OUT]][%[[I]], %[[J]]] : memref<?x64xf32>
// CHECK:       func.func @forward(%[[HX:.*]]: memref<?x64xf32>, %[[HW:.*]]: memref<64xf32>) -> memref<?x64xf32> {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %s0 = memref.dim %[[HX]], %[[C0]] : memref<?x64xf32>
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc(%s0) : memref<?x64xf32>
// CHECK-NEXT:    loop.launch @k_scale(%[[HX]], %[[HW]], %[[Y]], %s0) : memref<?x64xf32>, memref<64xf32>, memref<?x64xf32>, index

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 4096 : i64}} {
  func.func @forward(%x: tensor<?x64xf32>, %w: tensor<64xf32>) -> tensor<?x64xf32> {
    %y = fused.kernel @k_scale(%x, %w) : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32> {
    ^bb0(%a: tensor<?x64xf32>, %b: tensor<64xf32>):
      %bb = prim.broadcast %b : tensor<64xf32> -> tensor<?x64xf32>
      %m = prim.map(%a, %bb) : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32> {
      ^bb1(%p: f32, %q: f32):
        %r = arith.mulf %p, %q : f32
        prim.yield %r : f32
      }
      fused.yield %m : tensor<?x64xf32>
    }
    func.return %y : tensor<?x64xf32>
  }
}

// -----

// A reduction over the ? dim runs to the size; its result has only static dims, and the
// kernel still takes the size. A kernel of static buffers does not.

// CHECK-LABEL: loop.kernel @k_max(
// CHECK-SAME:    %[[A:.*]]: memref<4x?xf32>, %[[OUT:.*]]: memref<4xf32>, %[[S:[a-z0-9_]+]]: index) {
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 4 {
// CHECK-NEXT:      %[[M:.*]] = loop.for %[[R:.*]] in 0 to %[[S]] reduce max init -inf : f32 {
// CHECK:         loop.store %[[M]], %[[OUT]][%[[I]]] : memref<4xf32>
// CHECK-LABEL: loop.kernel @k_double(
// CHECK-SAME:    %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) {
// CHECK:       func.func @forward
// CHECK:         %s0 = memref.dim %{{.*}}, %{{.*}} : memref<4x?xf32>
// CHECK-NEXT:    %[[MAX:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    loop.launch @k_max(%{{.*}}, %[[MAX]], %s0) : memref<4x?xf32>, memref<4xf32>, index
// CHECK-NEXT:    %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    loop.launch @k_double(%[[MAX]], %[[D]]) : memref<4xf32>, memref<4xf32>

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64}} {
  func.func @forward(%x: tensor<4x?xf32>) -> tensor<4xf32> {
    %m = fused.kernel @k_max(%x) : (tensor<4x?xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4x?xf32>):
      %r = prim.reduce max %a axes [1] init -inf : tensor<4x?xf32> -> tensor<4xf32>
      fused.yield %r : tensor<4xf32>
    }
    %d = fused.kernel @k_double(%m) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %r = prim.map(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
      ^bb1(%p: f32, %q: f32):
        %s = arith.addf %p, %q : f32
        prim.yield %s : f32
      }
      fused.yield %r : tensor<4xf32>
    }
    func.return %d : tensor<4xf32>
  }
}
