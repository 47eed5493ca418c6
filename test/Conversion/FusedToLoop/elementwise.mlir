// RUN: emmy-opt %s --split-input-file --lower-fused-to-loop | filecheck %s

// A chain of maps with a broadcast bias is one parallel loop nest; no intermediate buffer.

// CHECK-LABEL: loop.kernel @k_add_silu(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<2x3x8xbf16>, %[[B:[a-z0-9_]+]]: memref<8xbf16>, %[[OUT:[a-z0-9_]+]]: memref<2x3x8xbf16>) {
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : bf16
// CHECK-NEXT:    loop.for %[[I:.*]] in 0 to 2 {
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 3 {
// CHECK-NEXT:        loop.for %[[K:.*]] in 0 to 8 {
// CHECK-NEXT:          %[[XV:.*]] = loop.load %[[X]][%[[I]], %[[J]], %[[K]]] : memref<2x3x8xbf16>
// CHECK-NEXT:          %[[BV:.*]] = loop.load %[[B]][%[[K]]] : memref<8xbf16>
// CHECK-NEXT:          %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : bf16
// CHECK-NEXT:          %[[N:.*]] = arith.negf %[[S]] : bf16
// CHECK-NEXT:          %[[E:.*]] = math.exp %[[N]] : bf16
// CHECK-NEXT:          %[[D:.*]] = arith.addf %[[E]], %[[ONE]] : bf16
// CHECK-NEXT:          %[[Y:.*]] = arith.divf %[[S]], %[[D]] : bf16
// CHECK-NEXT:          loop.store %[[Y]], %[[OUT]][%[[I]], %[[J]], %[[K]]] : memref<2x3x8xbf16>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NOT:   memref.alloc() : memref<2x3x8xbf16>
// CHECK-LABEL: func.func @forward(
// CHECK:         memref.alloc() : memref<2x3x8xbf16>
// CHECK-NEXT:    loop.launch @k_add_silu
// CHECK-NEXT:    func.return

func.func @forward(%x: tensor<2x3x8xbf16>, %b: tensor<8xbf16>) -> tensor<2x3x8xbf16> {
  %y = fused.kernel @k_add_silu(%x, %b) : (tensor<2x3x8xbf16>, tensor<8xbf16>) -> tensor<2x3x8xbf16> {
  ^bb0(%xa: tensor<2x3x8xbf16>, %ba: tensor<8xbf16>):
    %bb = prim.broadcast %ba : tensor<8xbf16> -> tensor<2x3x8xbf16>
    %s = prim.map(%xa, %bb) : (tensor<2x3x8xbf16>, tensor<2x3x8xbf16>) -> tensor<2x3x8xbf16> {
    ^bb0(%u: bf16, %v: bf16):
      %r = arith.addf %u, %v : bf16
      prim.yield %r : bf16
    }
    %y = prim.map(%s) : (tensor<2x3x8xbf16>) -> tensor<2x3x8xbf16> {
    ^bb0(%u: bf16):
      %one = arith.constant 1.0 : bf16
      %n = arith.negf %u : bf16
      %e = math.exp %n : bf16
      %d = arith.addf %e, %one : bf16
      %r = arith.divf %u, %d : bf16
      prim.yield %r : bf16
    }
    fused.yield %y : tensor<2x3x8xbf16>
  }
  func.return %y : tensor<2x3x8xbf16>
}

// -----

// Two kernels: the second reads the first one's buffer; a repeated kernel name is made unique.

// CHECK-LABEL: loop.kernel @k_scale(
// CHECK-LABEL: loop.kernel @k_scale_1(
// CHECK-LABEL: func.func @forward(%{{.*}}: memref<4xf32>) -> memref<4xf32> {
// CHECK-NEXT:    %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    loop.launch @k_scale(%{{.*}}, %[[A]]) : memref<4xf32>, memref<4xf32>
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:    loop.launch @k_scale_1(%[[A]], %[[B]]) : memref<4xf32>, memref<4xf32>
// CHECK-NEXT:    func.return %[[B]] : memref<4xf32>

func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = fused.kernel @k_scale(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %r = prim.map(%v) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%e: f32):
      %two = arith.constant 2.0 : f32
      %m = arith.mulf %e, %two : f32
      prim.yield %m : f32
    }
    fused.yield %r : tensor<4xf32>
  }
  %b = fused.kernel @k_scale(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %r = prim.map(%v) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%e: f32):
      %two = arith.constant 2.0 : f32
      %m = arith.mulf %e, %two : f32
      prim.yield %m : f32
    }
    fused.yield %r : tensor<4xf32>
  }
  func.return %b : tensor<4xf32>
}
