// RUN: emmy-opt %s --split-input-file --lower-fused-to-loop | filecheck %s

// Sibling products (SwiGLU's gate and up: one lhs, weights of one shape and layout) become one
// loop.contract with two rhs, whose epilogue takes an accumulated value of each: silu(gate) *
// up is computed in registers and only the product is stored.

// CHECK-LABEL: loop.kernel @k_gate_up_silu(%x: memref<4x16xbf16>, %wg: memref<8x16xbf16>, %wu: memref<8x16xbf16>, %out: memref<4x8xbf16>) {
// CHECK:         loop.contract (%i0, %i1) in [4, 8], k in 16, (%acc0, %acc1) = sum %x[d0, k] * (%wg, %wu)[d1, k] : memref<4x16xbf16>, memref<8x16xbf16>, memref<8x16xbf16> -> f32 {
// CHECK-NEXT:      %[[G:.*]] = arith.truncf %acc0 : f32 to bf16
// CHECK-NEXT:      %[[U:.*]] = arith.truncf %acc1 : f32 to bf16
// CHECK:           %[[P:.*]] = arith.mulf
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT:      loop.store %[[R]], %out[%i0, %i1] : memref<4x8xbf16>
// CHECK-NEXT:    }
// CHECK:       loop.kernel @k_down(
// CHECK:         loop.contract (%i0, %i1) in [4, 16], k in 8, %acc = sum %mul[d0, k] * %wd[d1, k]
builtin.module {
  func.func @swiglu(%x: tensor<4x16xbf16>, %wg: tensor<8x16xbf16>, %wu: tensor<8x16xbf16>, %wd: tensor<16x8xbf16>) -> tensor<4x16xbf16> {
    %mul = fused.kernel @k_gate_up_silu(%x, %wg, %wu) : (tensor<4x16xbf16>, tensor<8x16xbf16>, tensor<8x16xbf16>) -> tensor<4x8xbf16> {
    ^bb0(%x_1: tensor<4x16xbf16>, %wg_1: tensor<8x16xbf16>, %wu_1: tensor<8x16xbf16>):
      %xg = prim.map(%x_1) : (tensor<4x16xbf16>) -> tensor<4x16xf32> {
      ^bb0(%a: bf16):
        %e = arith.extf %a : bf16 to f32
        prim.yield %e : f32
      }
      %wgt = prim.permute %wg_1 [1, 0] : tensor<8x16xbf16> -> tensor<16x8xbf16>
      %wgf = prim.map(%wgt) : (tensor<16x8xbf16>) -> tensor<16x8xf32> {
      ^bb0(%a_1: bf16):
        %e_1 = arith.extf %a_1 : bf16 to f32
        prim.yield %e_1 : f32
      }
      %g = prim.contract %xg, %wgf : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
      %g16 = prim.map(%g) : (tensor<4x8xf32>) -> tensor<4x8xbf16> {
      ^bb0(%a_2: f32):
        %t = arith.truncf %a_2 : f32 to bf16
        prim.yield %t : bf16
      }
      %xu = prim.map(%x_1) : (tensor<4x16xbf16>) -> tensor<4x16xf32> {
      ^bb0(%a_3: bf16):
        %e_2 = arith.extf %a_3 : bf16 to f32
        prim.yield %e_2 : f32
      }
      %wut = prim.permute %wu_1 [1, 0] : tensor<8x16xbf16> -> tensor<16x8xbf16>
      %wuf = prim.map(%wut) : (tensor<16x8xbf16>) -> tensor<16x8xf32> {
      ^bb0(%a_4: bf16):
        %e_3 = arith.extf %a_4 : bf16 to f32
        prim.yield %e_3 : f32
      }
      %u = prim.contract %xu, %wuf : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
      %u16 = prim.map(%u) : (tensor<4x8xf32>) -> tensor<4x8xbf16> {
      ^bb0(%a_5: f32):
        %t_1 = arith.truncf %a_5 : f32 to bf16
        prim.yield %t_1 : bf16
      }
      %mul_1 = prim.map(%g16, %u16) : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16> {
      ^bb0(%a_6: bf16, %b: bf16):
        %af = arith.extf %a_6 : bf16 to f32
        %one = arith.constant 1.000000e+00 : f32
        %n = arith.negf %af : f32
        %ex = math.exp %n : f32
        %den = arith.addf %one, %ex : f32
        %s = arith.divf %af, %den : f32
        %bf = arith.extf %b : bf16 to f32
        %p = arith.mulf %s, %bf : f32
        %r = arith.truncf %p : f32 to bf16
        prim.yield %r : bf16
      }
      fused.yield %mul_1 : tensor<4x8xbf16>
    }
    %d16 = fused.kernel @k_down(%wd, %mul) : (tensor<16x8xbf16>, tensor<4x8xbf16>) -> tensor<4x16xbf16> {
    ^bb0(%wd_1: tensor<16x8xbf16>, %mul_1: tensor<4x8xbf16>):
      %mf = prim.map(%mul_1) : (tensor<4x8xbf16>) -> tensor<4x8xf32> {
      ^bb0(%a: bf16):
        %e = arith.extf %a : bf16 to f32
        prim.yield %e : f32
      }
      %wdt = prim.permute %wd_1 [1, 0] : tensor<16x8xbf16> -> tensor<8x16xbf16>
      %wdf = prim.map(%wdt) : (tensor<8x16xbf16>) -> tensor<8x16xf32> {
      ^bb0(%a_1: bf16):
        %e_1 = arith.extf %a_1 : bf16 to f32
        prim.yield %e_1 : f32
      }
      %d = prim.contract %mf, %wdf : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
      %d16_1 = prim.map(%d) : (tensor<4x16xf32>) -> tensor<4x16xbf16> {
      ^bb0(%a_2: f32):
        %t = arith.truncf %a_2 : f32 to bf16
        prim.yield %t : bf16
      }
      fused.yield %d16_1 : tensor<4x16xbf16>
    }
    func.return %d16 : tensor<4x16xbf16>
  }
}


// -----

// Siblings stored to outputs of their own: each accumulated value to its buffer.

// CHECK-LABEL: loop.kernel @k_q_v(%x: memref<4x16xf32>, %wq: memref<16x8xf32>, %wv: memref<16x8xf32>, %out0: memref<4x8xf32>, %out1: memref<4x8xf32>) {
// CHECK-NEXT:    loop.contract (%i0, %i1) in [4, 8], k in 16, (%acc0, %acc1) = sum %x[d0, k] * (%wq, %wv)[k, d1] : memref<4x16xf32>, memref<16x8xf32>, memref<16x8xf32> -> f32 {
// CHECK-NEXT:      loop.store %acc0, %out0[%i0, %i1] : memref<4x8xf32>
// CHECK-NEXT:      loop.store %acc1, %out1[%i0, %i1] : memref<4x8xf32>
// CHECK-NEXT:    }

builtin.module {
  func.func @separate_outputs(%x: tensor<4x16xf32>, %wq: tensor<16x8xf32>, %wv: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %q, %v = fused.kernel @k_q_v(%x, %wq, %wv) : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    ^bb0(%x_1: tensor<4x16xf32>, %wq_1: tensor<16x8xf32>, %wv_1: tensor<16x8xf32>):
      %q_1 = prim.contract %x_1, %wq_1 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
      %v_1 = prim.contract %x_1, %wv_1 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
      fused.yield %q_1, %v_1 : tensor<4x8xf32>, tensor<4x8xf32>
    }
    func.return %q, %v : tensor<4x8xf32>, tensor<4x8xf32>
  }
}

