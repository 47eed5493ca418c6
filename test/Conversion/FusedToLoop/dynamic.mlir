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

// -----

// nn.Linear over a dynamic number of tokens stays one loop.contract: its m extent is the
// kernel's size argument, in the space of the product's [?, N] rows (the most rows, then the
// fewest dims), which reads the [1, ?, K] input's batch of one at 0.

// CHECK-LABEL: loop.kernel @k_linear(
// CHECK-SAME:    %[[W:[a-z0-9_]+]]: memref<4x8xbf16>, %[[X:[a-z0-9_]+]]: memref<1x?x8xbf16>, %[[OUT:[a-z0-9_]+]]: memref<1x?x4xbf16>, %[[S:[a-z0-9_]+]]: index) {
// CHECK-NEXT:    %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    loop.contract (%[[I0:.*]], %[[I1:.*]]) in [%[[S]], 4], k in 8, %[[ACC:.*]] = sum %[[X]][0, d0, k] * %[[W]][d1, k] : memref<1x?x8xbf16>, memref<4x8xbf16> -> f32 {
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK-NEXT:      loop.store %[[T]], %[[OUT]][%[[C0]], %[[I0]], %[[I1]]] : memref<1x?x4xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK:         %s0 = memref.dim %{{.*}}, %{{.*}} : memref<1x?x8xbf16>
// CHECK:         loop.launch @k_linear(%{{.*}}, %{{.*}}, %{{.*}}, %s0)

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 2048 : i64}} {
  func.func @forward(%p_weight: tensor<4x8xbf16>, %input: tensor<1x?x8xbf16>) -> tensor<1x?x4xbf16> {
    %linear = fused.kernel @k_linear(%p_weight, %input) : (tensor<4x8xbf16>, tensor<1x?x8xbf16>) -> tensor<1x?x4xbf16> {
    ^bb0(%w: tensor<4x8xbf16>, %x: tensor<1x?x8xbf16>):
      %x2 = prim.reshape %x : tensor<1x?x8xbf16> -> tensor<?x8xbf16>
      %xf = prim.map(%x2) : (tensor<?x8xbf16>) -> tensor<?x8xf32> {
      ^bb0(%v: bf16):
        %e = arith.extf %v : bf16 to f32
        prim.yield %e : f32
      }
      %wt = prim.permute %w [1, 0] : tensor<4x8xbf16> -> tensor<8x4xbf16>
      %wf = prim.map(%wt) : (tensor<8x4xbf16>) -> tensor<8x4xf32> {
      ^bb0(%v: bf16):
        %e = arith.extf %v : bf16 to f32
        prim.yield %e : f32
      }
      %c = prim.contract %xf, %wf : tensor<?x8xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
      %y = prim.map(%c) : (tensor<?x4xf32>) -> tensor<?x4xbf16> {
      ^bb0(%s: f32):
        %t = arith.truncf %s : f32 to bf16
        prim.yield %t : bf16
      }
      %y3 = prim.reshape %y : tensor<?x4xbf16> -> tensor<1x?x4xbf16>
      fused.yield %y3 : tensor<1x?x4xbf16>
    }
    func.return %linear : tensor<1x?x4xbf16>
  }
}

// -----

// A product whose n is the dynamic size (attention's scores over the keys) stays a reduction
// loop per output element: the tensor-core kernels tile n at a size they know.

// CHECK-LABEL: loop.kernel @k_scores(
// CHECK-NOT:     loop.contract
// CHECK:         loop.for %{{.*}} in 0 to %{{.*}} {
// CHECK:           loop.for %{{.*}} in 0 to 8 reduce add

builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 2048 : i64}} {
  func.func @forward(%q: tensor<4x8xf32>, %k: tensor<8x?xf32>) -> tensor<4x?xf32> {
    %s = fused.kernel @k_scores(%q, %k) : (tensor<4x8xf32>, tensor<8x?xf32>) -> tensor<4x?xf32> {
    ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x?xf32>):
      %c = prim.contract %a, %b : tensor<4x8xf32>, tensor<8x?xf32> -> tensor<4x?xf32>
      fused.yield %c : tensor<4x?xf32>
    }
    func.return %s : tensor<4x?xf32>
  }
}
