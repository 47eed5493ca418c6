// RUN: emmy-opt --split-input-file -p fuse-prims %s | filecheck %s

// SwiGLU's gate and up read one input (each through its own widening cast) with weights of one
// shape: siblings, one kernel, whose epilogue is silu(gate) * up; down reads the product.

// CHECK-LABEL: func.func @swiglu(
// CHECK-NEXT:    %mul = fused.kernel @k_gate_up_silu(%x, %wg, %wu) : (tensor<4x16xbf16>, tensor<8x16xbf16>, tensor<8x16xbf16>) -> tensor<4x8xbf16> {
// CHECK:           %[[G:.*]] = prim.contract
// CHECK:           %[[U:.*]] = prim.contract
// CHECK:           prim.map(%{{.*}}, %{{.*}}) : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
// CHECK:           fused.yield %{{.*}} : tensor<4x8xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}} = fused.kernel @k_down(%wd, %mul) :
// CHECK-COUNT-1:   prim.contract
// CHECK-NOT:       prim.contract
// CHECK:           fused.yield

func.func @swiglu(%x: tensor<4x16xbf16>, %wg: tensor<8x16xbf16>, %wu: tensor<8x16xbf16>, %wd: tensor<16x8xbf16>) -> tensor<4x16xbf16> {
  %xg = prim.map(%x) : (tensor<4x16xbf16>) -> tensor<4x16xf32> {
  ^bb0(%a: bf16):
    %e = arith.extf %a : bf16 to f32
    prim.yield %e : f32
  } loc("gate")
  %wgt = prim.permute %wg [1, 0] : tensor<8x16xbf16> -> tensor<16x8xbf16> loc("gate")
  %wgf = prim.map(%wgt) : (tensor<16x8xbf16>) -> tensor<16x8xf32> {
  ^bb0(%a: bf16):
    %e = arith.extf %a : bf16 to f32
    prim.yield %e : f32
  } loc("gate")
  %g = prim.contract %xg, %wgf : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("gate")
  %g16 = prim.map(%g) : (tensor<4x8xf32>) -> tensor<4x8xbf16> {
  ^bb0(%a: f32):
    %t = arith.truncf %a : f32 to bf16
    prim.yield %t : bf16
  } loc("gate")
  %xu = prim.map(%x) : (tensor<4x16xbf16>) -> tensor<4x16xf32> {
  ^bb0(%a: bf16):
    %e = arith.extf %a : bf16 to f32
    prim.yield %e : f32
  } loc("up")
  %wut = prim.permute %wu [1, 0] : tensor<8x16xbf16> -> tensor<16x8xbf16> loc("up")
  %wuf = prim.map(%wut) : (tensor<16x8xbf16>) -> tensor<16x8xf32> {
  ^bb0(%a: bf16):
    %e = arith.extf %a : bf16 to f32
    prim.yield %e : f32
  } loc("up")
  %u = prim.contract %xu, %wuf : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("up")
  %u16 = prim.map(%u) : (tensor<4x8xf32>) -> tensor<4x8xbf16> {
  ^bb0(%a: f32):
    %t = arith.truncf %a : f32 to bf16
    prim.yield %t : bf16
  } loc("up")
  %mul = prim.map(%g16, %u16) : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  ^bb0(%a: bf16, %b: bf16):
    %af = arith.extf %a : bf16 to f32
    %one = arith.constant 1.0 : f32
    %n = arith.negf %af : f32
    %ex = math.exp %n : f32
    %den = arith.addf %one, %ex : f32
    %s = arith.divf %af, %den : f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %s, %bf : f32
    %r = arith.truncf %p : f32 to bf16
    prim.yield %r : bf16
  } loc("silu")
  %mf = prim.map(%mul) : (tensor<4x8xbf16>) -> tensor<4x8xf32> {
  ^bb0(%a: bf16):
    %e = arith.extf %a : bf16 to f32
    prim.yield %e : f32
  } loc("down")
  %wdt = prim.permute %wd [1, 0] : tensor<16x8xbf16> -> tensor<8x16xbf16> loc("down")
  %wdf = prim.map(%wdt) : (tensor<8x16xbf16>) -> tensor<8x16xf32> {
  ^bb0(%a: bf16):
    %e = arith.extf %a : bf16 to f32
    prim.yield %e : f32
  } loc("down")
  %d = prim.contract %mf, %wdf : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32> loc("down")
  %d16 = prim.map(%d) : (tensor<4x16xf32>) -> tensor<4x16xbf16> {
  ^bb0(%a: f32):
    %t = arith.truncf %a : f32 to bf16
    prim.yield %t : bf16
  } loc("down")
  func.return %d16 : tensor<4x16xbf16>
}

// -----

// Siblings whose values are each an output of their own (q and v projections of one input):
// one kernel with two results.

// CHECK-LABEL: func.func @separate_outputs(
// CHECK-NEXT:    %q, %v = fused.kernel @k_q_v(%x, %wq, %wv) : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK:           prim.contract
// CHECK:           prim.contract
// CHECK:           fused.yield %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %q, %v :

func.func @separate_outputs(%x: tensor<4x16xf32>, %wq: tensor<16x8xf32>, %wv: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %q = prim.contract %x, %wq : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("q")
  %v = prim.contract %x, %wv : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("v")
  func.return %q, %v : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// No siblings where the rhs layouts differ (one weight read transposed, one as it is): the
// products would read their rhs at different maps.

// CHECK-LABEL: func.func @different_layouts(
// CHECK:         fused.kernel @k_q(
// CHECK:         fused.kernel @k_v(

func.func @different_layouts(%x: tensor<4x16xf32>, %wq: tensor<8x16xf32>, %wv: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %wqt = prim.permute %wq [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32> loc("q")
  %q = prim.contract %x, %wqt : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("q")
  %v = prim.contract %x, %wv : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("v")
  func.return %q, %v : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// No siblings where a reduction reads one of them (a row sum of q): q keeps its own kernel.

// CHECK-LABEL: func.func @read_by_reduction(
// CHECK:         fused.kernel @k_q(
// CHECK:         fused.kernel @k_v(
// CHECK:         fused.kernel @k_sum(

func.func @read_by_reduction(%x: tensor<4x16xf32>, %wq: tensor<16x8xf32>, %wv: tensor<16x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %q = prim.contract %x, %wq : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("q")
  %v = prim.contract %x, %wv : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("v")
  %s = prim.reduce add %q axes [1] init 0.0 : tensor<4x8xf32> -> tensor<4xf32> loc("sum")
  func.return %s, %v : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// No siblings where a view reads one of them (q split into heads).

// CHECK-LABEL: func.func @read_through_a_view(
// CHECK:         fused.kernel @k_q_view(
// CHECK:         fused.kernel @k_v(

func.func @read_through_a_view(%x: tensor<4x16xf32>, %wq: tensor<16x8xf32>, %wv: tensor<16x8xf32>) -> (tensor<4x2x4xf32>, tensor<4x8xf32>) {
  %q = prim.contract %x, %wq : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("q")
  %v = prim.contract %x, %wv : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("v")
  %h = prim.reshape %q : tensor<4x8xf32> -> tensor<4x2x4xf32> loc("view")
  func.return %h, %v : tensor<4x2x4xf32>, tensor<4x8xf32>
}

// -----

// An operand that a loop.contract does not read in place (rows of a table gathered by index)
// is materialized by a kernel of its own, a buffer then: the products are siblings again.

// CHECK-LABEL: func.func @gathered_rhs(
// CHECK:         %wq = fused.kernel @k_embedding(%table, %ids)
// CHECK:         fused.kernel @k_q_v(%x, %wv, %wq)

func.func @gathered_rhs(%x: tensor<4x16xf32>, %table: tensor<32x8xf32>, %ids: tensor<16xi64>, %wv: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %wq = prim.gather %table[%ids] : tensor<32x8xf32>, tensor<16xi64> -> tensor<16x8xf32> loc("embedding")
  %q = prim.contract %x, %wq : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("q")
  %v = prim.contract %x, %wv : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("v")
  func.return %q, %v : tensor<4x8xf32>, tensor<4x8xf32>
}
