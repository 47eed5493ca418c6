// RUN: emmy-opt %s --split-input-file --lower-fused-to-loop | filecheck %s

// nn.Linear in bf16: the extf prologues and the permuted [N, K] weight become the operands'
// indexing maps, read in place; the bias add and truncf are the epilogue, on the
// accumulated value.

// CHECK-LABEL: loop.kernel @k_linear(
// CHECK-SAME:    %[[W:[a-z0-9_]+]]: memref<4x8xbf16>, %[[B:[a-z0-9_]+]]: memref<4xbf16>, %[[X:[a-z0-9_]+]]: memref<3x8xbf16>, %[[OUT:[a-z0-9_]+]]: memref<3x4xbf16>) {
// CHECK-NEXT:    loop.contract (%[[I:.*]], %[[J:.*]]) in [3, 4], k in 8, %[[ACC:.*]] = sum %[[X]][d0, k] * %[[W]][d1, k] : memref<3x8xbf16>, memref<4x8xbf16> -> f32 {
// CHECK-NEXT:      %[[BV:.*]] = loop.load %[[B]][%[[J]]] : memref<4xbf16>
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[BV]] : bf16 to f32
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[ACC]], %[[BF]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT:      loop.store %[[T]], %[[OUT]][%[[I]], %[[J]]] : memref<3x4xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @forward(
// CHECK:         memref.alloc() : memref<3x4xbf16>
// CHECK-NEXT:    loop.launch @k_linear

func.func @forward(%p_weight: tensor<4x8xbf16>, %p_bias: tensor<4xbf16>, %input: tensor<3x8xbf16>) -> tensor<3x4xbf16> {
  %linear = fused.kernel @k_linear(%p_weight, %p_bias, %input) : (tensor<4x8xbf16>, tensor<4xbf16>, tensor<3x8xbf16>) -> tensor<3x4xbf16> {
  ^bb0(%w: tensor<4x8xbf16>, %b: tensor<4xbf16>, %x: tensor<3x8xbf16>):
    %xf = prim.map(%x) : (tensor<3x8xbf16>) -> tensor<3x8xf32> {
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
    %c = prim.contract %xf, %wf : tensor<3x8xf32>, tensor<8x4xf32> -> tensor<3x4xf32>
    %bb = prim.broadcast %b : tensor<4xbf16> -> tensor<3x4xbf16>
    %y = prim.map(%c, %bb) : (tensor<3x4xf32>, tensor<3x4xbf16>) -> tensor<3x4xbf16> {
    ^bb0(%s: f32, %bv: bf16):
      %be = arith.extf %bv : bf16 to f32
      %r = arith.addf %s, %be : f32
      %t = arith.truncf %r : f32 to bf16
      prim.yield %t : bf16
    }
    fused.yield %y : tensor<3x4xbf16>
  }
  func.return %linear : tensor<3x4xbf16>
}

// -----

// torch.matmul of [2, 3, 5, 6] and [3, 6, 4] in f16: the rhs is broadcast along the first
// batch dim, so its indexing map omits d0.

// CHECK-LABEL: loop.kernel @k_matmul(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<2x3x5x6xf16>, %[[Y:[a-z0-9_]+]]: memref<3x6x4xf16>, %[[OUT:[a-z0-9_]+]]: memref<2x3x5x4xf16>) {
// CHECK-NEXT:    loop.contract (%[[I0:.*]], %[[I1:.*]], %[[I2:.*]], %[[I3:.*]]) in [2, 3, 5, 4], k in 6, %[[ACC:.*]] = sum %[[X]][d0, d1, d2, k] * %[[Y]][d1, k, d3] : memref<2x3x5x6xf16>, memref<3x6x4xf16> -> f32 {
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[ACC]] : f32 to f16
// CHECK-NEXT:      loop.store %[[T]], %[[OUT]][%[[I0]], %[[I1]], %[[I2]], %[[I3]]] : memref<2x3x5x4xf16>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

func.func @forward(%a: tensor<2x3x5x6xf16>, %b: tensor<3x6x4xf16>) -> tensor<2x3x5x4xf16> {
  %matmul = fused.kernel @k_matmul(%a, %b) : (tensor<2x3x5x6xf16>, tensor<3x6x4xf16>) -> tensor<2x3x5x4xf16> {
  ^bb0(%x: tensor<2x3x5x6xf16>, %y: tensor<3x6x4xf16>):
    %xf = prim.map(%x) : (tensor<2x3x5x6xf16>) -> tensor<2x3x5x6xf32> {
    ^bb0(%v: f16):
      %e = arith.extf %v : f16 to f32
      prim.yield %e : f32
    }
    %yb = prim.broadcast %y : tensor<3x6x4xf16> -> tensor<2x3x6x4xf16>
    %yf = prim.map(%yb) : (tensor<2x3x6x4xf16>) -> tensor<2x3x6x4xf32> {
    ^bb0(%v: f16):
      %e = arith.extf %v : f16 to f32
      prim.yield %e : f32
    }
    %c = prim.contract %xf, %yf : tensor<2x3x5x6xf32>, tensor<2x3x6x4xf32> -> tensor<2x3x5x4xf32>
    %r = prim.map(%c) : (tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf16> {
    ^bb0(%s: f32):
      %t = arith.truncf %s : f32 to f16
      prim.yield %t : f16
    }
    fused.yield %r : tensor<2x3x5x4xf16>
  }
  func.return %matmul : tensor<2x3x5x4xf16>
}

// -----

// nn.Linear on a 3-d input: the input is reshaped to [6, 8] for the product, which is
// reshaped back to [2, 3, 4]. Over the output's dims the input is read in place, at
// [d0, d1, k], with no index arithmetic.

// CHECK-LABEL: loop.kernel @k_linear(
// CHECK-SAME:    %[[W:[a-z0-9_]+]]: memref<4x8xf32>, %[[B:[a-z0-9_]+]]: memref<4xf32>, %[[X:[a-z0-9_]+]]: memref<2x3x8xf32>, %[[OUT:[a-z0-9_]+]]: memref<2x3x4xf32>) {
// CHECK-NEXT:    loop.contract (%[[I0:.*]], %[[I1:.*]], %[[I2:.*]]) in [2, 3, 4], k in 8, %[[ACC:.*]] = sum %[[X]][d0, d1, k] * %[[W]][d2, k] : memref<2x3x8xf32>, memref<4x8xf32> -> f32 {
// CHECK-NEXT:      %[[BV:.*]] = loop.load %[[B]][%[[I2]]] : memref<4xf32>
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[ACC]], %[[BV]] : f32
// CHECK-NEXT:      loop.store %[[R]], %[[OUT]][%[[I0]], %[[I1]], %[[I2]]] : memref<2x3x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

func.func @forward(%p_weight: tensor<4x8xf32>, %p_bias: tensor<4xf32>, %input: tensor<2x3x8xf32>) -> tensor<2x3x4xf32> {
  %linear = fused.kernel @k_linear(%p_weight, %p_bias, %input) : (tensor<4x8xf32>, tensor<4xf32>, tensor<2x3x8xf32>) -> tensor<2x3x4xf32> {
  ^bb0(%w: tensor<4x8xf32>, %b: tensor<4xf32>, %x: tensor<2x3x8xf32>):
    %x2 = prim.reshape %x : tensor<2x3x8xf32> -> tensor<6x8xf32>
    %wt = prim.permute %w [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    %c = prim.contract %x2, %wt : tensor<6x8xf32>, tensor<8x4xf32> -> tensor<6x4xf32>
    %bb = prim.broadcast %b : tensor<4xf32> -> tensor<6x4xf32>
    %s = prim.map(%c, %bb) : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32> {
    ^bb0(%u: f32, %v: f32):
      %r = arith.addf %u, %v : f32
      prim.yield %r : f32
    }
    %y = prim.reshape %s : tensor<6x4xf32> -> tensor<2x3x4xf32>
    fused.yield %y : tensor<2x3x4xf32>
  }
  func.return %linear : tensor<2x3x4xf32>
}

// -----

// An attention output projection with its residual: the input is already [6, 8], so the
// iteration space is the product's [6, 4] and the epilogue stores at the row-major
// position in the [2, 3, 4] output (and reads the residual there).

// CHECK-LABEL: loop.kernel @k_linear_add(
// CHECK-SAME:    %[[W:[a-z0-9_]+]]: memref<4x8xf32>, %[[RES:[a-z0-9_]+]]: memref<2x3x4xf32>, %[[A:[a-z0-9_]+]]: memref<6x8xf32>, %[[OUT:[a-z0-9_]+]]: memref<2x3x4xf32>) {
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    loop.contract (%[[I:.*]], %[[J:.*]]) in [6, 4], k in 8, %[[ACC:.*]] = sum %[[A]][d0, k] * %[[W]][d1, k] : memref<6x8xf32>, memref<4x8xf32> -> f32 {
// CHECK-NEXT:      %[[B:.*]] = arith.divui %[[I]], %[[C3]] : index
// CHECK-NEXT:      %[[S:.*]] = arith.remui %[[I]], %[[C3]] : index
// CHECK-NEXT:      %[[RV:.*]] = loop.load %[[RES]][%[[B]], %[[S]], %[[J]]] : memref<2x3x4xf32>
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[RV]], %[[ACC]] : f32
// CHECK-NEXT:      loop.store %[[R]], %[[OUT]][%[[B]], %[[S]], %[[J]]] : memref<2x3x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

func.func @forward(%p_weight: tensor<4x8xf32>, %x: tensor<2x3x4xf32>, %h: tensor<6x8xf32>) -> tensor<2x3x4xf32> {
  %add = fused.kernel @k_linear_add(%p_weight, %x, %h) : (tensor<4x8xf32>, tensor<2x3x4xf32>, tensor<6x8xf32>) -> tensor<2x3x4xf32> {
  ^bb0(%w: tensor<4x8xf32>, %res: tensor<2x3x4xf32>, %a: tensor<6x8xf32>):
    %wt = prim.permute %w [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    %c = prim.contract %a, %wt : tensor<6x8xf32>, tensor<8x4xf32> -> tensor<6x4xf32>
    %c3 = prim.reshape %c : tensor<6x4xf32> -> tensor<2x3x4xf32>
    %y = prim.map(%res, %c3) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    ^bb0(%u: f32, %v: f32):
      %r = arith.addf %u, %v : f32
      prim.yield %r : f32
    }
    fused.yield %y : tensor<2x3x4xf32>
  }
  func.return %add : tensor<2x3x4xf32>
}

// -----

// A SwiGLU gate whose result is stored reshaped for the next product: the lhs is a [2, 3, 8]
// input reshaped to [6, 8], so the iteration space is the input's dims with n for k, and
// the epilogue stores at the row-major position in the [6, 4] output.

// CHECK-LABEL: loop.kernel @k_linear_silu_mul(
// CHECK-SAME:    %[[W:[a-z0-9_]+]]: memref<4x8xf32>, %[[X:[a-z0-9_]+]]: memref<2x3x8xf32>, %[[UP:[a-z0-9_]+]]: memref<2x3x4xf32>, %[[OUT:[a-z0-9_]+]]: memref<6x4xf32>) {
// CHECK:         loop.contract (%[[I0:.*]], %[[I1:.*]], %[[I2:.*]]) in [2, 3, 4], k in 8, %[[ACC:.*]] = sum %[[X]][d0, d1, k] * %[[W]][d2, k] : memref<2x3x8xf32>, memref<4x8xf32> -> f32 {
// CHECK:           %[[ROW:.*]] = arith.addi %{{.*}}, %[[I1]] : index
// CHECK:           math.exp
// CHECK:           loop.load %[[UP]]
// CHECK:           loop.store %{{.*}}, %[[OUT]][%[[ROW]], %[[I2]]] : memref<6x4xf32>
// CHECK-NEXT:    }

func.func @forward(%p_weight: tensor<4x8xf32>, %x: tensor<2x3x8xf32>, %up: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %y = fused.kernel @k_linear_silu_mul(%p_weight, %x, %up) : (tensor<4x8xf32>, tensor<2x3x8xf32>, tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  ^bb0(%w: tensor<4x8xf32>, %xa: tensor<2x3x8xf32>, %u: tensor<2x3x4xf32>):
    %x2 = prim.reshape %xa : tensor<2x3x8xf32> -> tensor<6x8xf32>
    %wt = prim.permute %w [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    %c = prim.contract %x2, %wt : tensor<6x8xf32>, tensor<8x4xf32> -> tensor<6x4xf32>
    %c3 = prim.reshape %c : tensor<6x4xf32> -> tensor<2x3x4xf32>
    %silu = prim.map(%c3) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    ^bb0(%v: f32):
      %one = arith.constant 1.0 : f32
      %n = arith.negf %v : f32
      %e = math.exp %n : f32
      %d = arith.addf %one, %e : f32
      %r = arith.divf %v, %d : f32
      prim.yield %r : f32
    }
    %mul = prim.map(%silu, %u) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
    ^bb0(%a: f32, %b: f32):
      %r = arith.mulf %a, %b : f32
      prim.yield %r : f32
    }
    %y = prim.reshape %mul : tensor<2x3x4xf32> -> tensor<6x4xf32>
    fused.yield %y : tensor<6x4xf32>
  }
  func.return %y : tensor<6x4xf32>
}

// -----

// A matrix-vector product: the vector is reshaped to [7, 1] for the product, which is
// reshaped to [5]. The space is the product's [5, 1]; the vector omits n.

// CHECK-LABEL: loop.kernel @k_matvec(
// CHECK-SAME:    %[[A:[a-z0-9_]+]]: memref<5x7xf32>, %[[V:[a-z0-9_]+]]: memref<7xf32>, %[[OUT:[a-z0-9_]+]]: memref<5xf32>) {
// CHECK-NEXT:    loop.contract (%[[I:.*]], %[[J:.*]]) in [5, 1], k in 7, %[[ACC:.*]] = sum %[[A]][d0, k] * %[[V]][k] : memref<5x7xf32>, memref<7xf32> -> f32 {
// CHECK-NEXT:      loop.store %[[ACC]], %[[OUT]][%[[I]]] : memref<5xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

func.func @forward(%a: tensor<5x7xf32>, %v: tensor<7xf32>) -> tensor<5xf32> {
  %y = fused.kernel @k_matvec(%a, %v) : (tensor<5x7xf32>, tensor<7xf32>) -> tensor<5xf32> {
  ^bb0(%x: tensor<5x7xf32>, %u: tensor<7xf32>):
    %u2 = prim.reshape %u : tensor<7xf32> -> tensor<7x1xf32>
    %c = prim.contract %x, %u2 : tensor<5x7xf32>, tensor<7x1xf32> -> tensor<5x1xf32>
    %y = prim.reshape %c : tensor<5x1xf32> -> tensor<5xf32>
    fused.yield %y : tensor<5xf32>
  }
  func.return %y : tensor<5xf32>
}

// -----

// Two outputs of the product's shape: a GELU (tanh) of the biased product, and the
// biased product itself; both are stored by one epilogue.

// Constants go before the loop.contract, as they would before a loop nest.

// CHECK-LABEL: loop.kernel @k_matmul_gelu(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<3x8xf32>, %[[W:[a-z0-9_]+]]: memref<8x4xf32>, %[[B:[a-z0-9_]+]]: memref<4xf32>, %[[OUT0:[a-z0-9_]+]]: memref<3x4xf32>, %[[OUT1:[a-z0-9_]+]]: memref<3x4xf32>) {
// CHECK-NEXT:    %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[K0:.*]] = arith.constant 0.797884583 : f32
// CHECK-NEXT:    %[[K1:.*]] = arith.constant 4.471500e-02 : f32
// CHECK-NEXT:    loop.contract (%[[I:.*]], %[[J:.*]]) in [3, 4], k in 8, %[[ACC:.*]] = sum %[[X]][d0, k] * %[[W]][k, d1] : memref<3x8xf32>, memref<8x4xf32> -> f32 {
// CHECK-NEXT:      %[[BV:.*]] = loop.load %[[B]][%[[J]]] : memref<4xf32>
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[BV]] : f32
// CHECK:           %[[T:.*]] = math.tanh %{{.*}} : f32
// CHECK:           %[[G:.*]] = arith.mulf %{{.*}}, %[[HALF]] : f32
// CHECK-NEXT:      loop.store %[[G]], %[[OUT0]][%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:      loop.store %[[S]], %[[OUT1]][%[[I]], %[[J]]] : memref<3x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

func.func @forward(%x: tensor<3x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  %g, %s = fused.kernel @k_matmul_gelu(%x, %w, %b) : (tensor<3x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
  ^bb0(%xa: tensor<3x8xf32>, %wa: tensor<8x4xf32>, %ba: tensor<4xf32>):
    %c = prim.contract %xa, %wa : tensor<3x8xf32>, tensor<8x4xf32> -> tensor<3x4xf32>
    %bb = prim.broadcast %ba : tensor<4xf32> -> tensor<3x4xf32>
    %s = prim.map(%c, %bb) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32> {
    ^bb0(%u: f32, %v: f32):
      %r = arith.addf %u, %v : f32
      prim.yield %r : f32
    }
    %g = prim.map(%s) : (tensor<3x4xf32>) -> tensor<3x4xf32> {
    ^bb0(%u: f32):
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %k0 = arith.constant 0.7978845608 : f32
      %k1 = arith.constant 0.044715 : f32
      %u2 = arith.mulf %u, %u : f32
      %u3 = arith.mulf %u2, %u : f32
      %t0 = arith.mulf %u3, %k1 : f32
      %t1 = arith.addf %u, %t0 : f32
      %t2 = arith.mulf %t1, %k0 : f32
      %t3 = math.tanh %t2 : f32
      %t4 = arith.addf %t3, %one : f32
      %t5 = arith.mulf %u, %t4 : f32
      %r = arith.mulf %t5, %half : f32
      prim.yield %r : f32
    }
    fused.yield %g, %s : tensor<3x4xf32>, tensor<3x4xf32>
  }
  func.return %g, %s : tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// Falls back to a scalar reduction: an operand computed in the kernel (a scaled input)
// is not a kernel input read in place.

// CHECK-LABEL: loop.kernel @k_scaled_matmul(
// CHECK-NOT:     loop.contract
// CHECK:         loop.for %[[I:.*]] in 0 to 3 {
// CHECK-NEXT:      loop.for %[[J:.*]] in 0 to 4 {
// CHECK-NEXT:        %[[SUM:.*]] = loop.for %[[K:.*]] in 0 to 8 reduce add init 0.0 : f32 {
// CHECK:               arith.mulf
// CHECK:               arith.mulf
// CHECK-NEXT:          loop.yield
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.store %[[SUM]], %{{.*}}[%[[I]], %[[J]]] : memref<3x4xf32>

func.func @forward(%x: tensor<3x8xf32>, %w: tensor<8x4xf32>) -> tensor<3x4xf32> {
  %y = fused.kernel @k_scaled_matmul(%x, %w) : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32> {
  ^bb0(%xa: tensor<3x8xf32>, %wa: tensor<8x4xf32>):
    %xs = prim.map(%xa) : (tensor<3x8xf32>) -> tensor<3x8xf32> {
    ^bb0(%u: f32):
      %two = arith.constant 2.0 : f32
      %r = arith.mulf %u, %two : f32
      prim.yield %r : f32
    }
    %c = prim.contract %xs, %wa : tensor<3x8xf32>, tensor<8x4xf32> -> tensor<3x4xf32>
    fused.yield %c : tensor<3x4xf32>
  }
  func.return %y : tensor<3x4xf32>
}

// -----

// A transposed product stays structured: the epilogue stores each element at its image
// under the permute.

// CHECK-LABEL: loop.kernel @k_matmul_transpose(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<5x6xf32>, %[[W:[a-z0-9_]+]]: memref<6x4xf32>, %[[OUT:[a-z0-9_]+]]: memref<4x5xf32>) {
// CHECK-NEXT:    loop.contract (%[[I:.*]], %[[J:.*]]) in [5, 4], k in 6, %[[ACC:.*]] = sum %[[X]][d0, k] * %[[W]][k, d1] : memref<5x6xf32>, memref<6x4xf32> -> f32 {
// CHECK-NEXT:      loop.store %[[ACC]], %[[OUT]][%[[J]], %[[I]]] : memref<4x5xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

func.func @forward(%a: tensor<5x6xf32>, %b: tensor<6x4xf32>) -> tensor<4x5xf32> {
  %y = fused.kernel @k_matmul_transpose(%a, %b) : (tensor<5x6xf32>, tensor<6x4xf32>) -> tensor<4x5xf32> {
  ^bb0(%x: tensor<5x6xf32>, %w: tensor<6x4xf32>):
    %c = prim.contract %x, %w : tensor<5x6xf32>, tensor<6x4xf32> -> tensor<5x4xf32>
    %t = prim.permute %c [1, 0] : tensor<5x4xf32> -> tensor<4x5xf32>
    fused.yield %t : tensor<4x5xf32>
  }
  func.return %y : tensor<4x5xf32>
}

// -----

// Attention's probabilities times the value, [B, H, S, D], transposed back to [B, S, H, D]
// and merged to [B*S, H*D] for the output projection: the space is the product's, the
// value is read through its own transpose in place, and the epilogue stores at the merged
// row and column.

// CHECK-LABEL: loop.kernel @k_sdpa_transpose_reshape(
// CHECK-SAME:    %[[P:[a-z0-9_]+]]: memref<2x3x4x4xbf16>, %[[V:[a-z0-9_]+]]: memref<2x4x3x8xbf16>, %[[OUT:[a-z0-9_]+]]: memref<8x24xbf16>) {
// CHECK:         loop.contract (%[[B:.*]], %[[H:.*]], %[[S:.*]], %[[D:.*]]) in [2, 3, 4, 8], k in 4, %[[ACC:.*]] = sum %[[P]][d0, d1, d2, k] * %[[V]][d0, k, d1, d3] : memref<2x3x4x4xbf16>, memref<2x4x3x8xbf16> -> f32 {
// CHECK-DAG:       %[[ROW0:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK-DAG:       %[[ROW:.*]] = arith.addi %[[ROW0]], %[[S]] : index
// CHECK-DAG:       %[[COL0:.*]] = arith.muli %[[H]], %{{.*}} : index
// CHECK-DAG:       %[[COL:.*]] = arith.addi %[[COL0]], %[[D]] : index
// CHECK:           %[[T:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK-NEXT:      loop.store %[[T]], %[[OUT]][%[[ROW]], %[[COL]]] : memref<8x24xbf16>

func.func @forward(%p: tensor<2x3x4x4xbf16>, %v: tensor<2x4x3x8xbf16>) -> tensor<8x24xbf16> {
  %y = fused.kernel @k_sdpa_transpose_reshape(%p, %v) : (tensor<2x3x4x4xbf16>, tensor<2x4x3x8xbf16>) -> tensor<8x24xbf16> {
  ^bb0(%pa: tensor<2x3x4x4xbf16>, %va: tensor<2x4x3x8xbf16>):
    %pf = prim.map(%pa) : (tensor<2x3x4x4xbf16>) -> tensor<2x3x4x4xf32> {
    ^bb0(%u: bf16):
      %e = arith.extf %u : bf16 to f32
      prim.yield %e : f32
    }
    %vt = prim.permute %va [0, 2, 1, 3] : tensor<2x4x3x8xbf16> -> tensor<2x3x4x8xbf16>
    %vf = prim.map(%vt) : (tensor<2x3x4x8xbf16>) -> tensor<2x3x4x8xf32> {
    ^bb0(%u: bf16):
      %e = arith.extf %u : bf16 to f32
      prim.yield %e : f32
    }
    %c = prim.contract %pf, %vf : tensor<2x3x4x4xf32>, tensor<2x3x4x8xf32> -> tensor<2x3x4x8xf32>
    %r = prim.map(%c) : (tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xbf16> {
    ^bb0(%u: f32):
      %t = arith.truncf %u : f32 to bf16
      prim.yield %t : bf16
    }
    %back = prim.permute %r [0, 2, 1, 3] : tensor<2x3x4x8xbf16> -> tensor<2x4x3x8xbf16>
    %merged = prim.reshape %back : tensor<2x4x3x8xbf16> -> tensor<8x24xbf16>
    fused.yield %merged : tensor<8x24xbf16>
  }
  func.return %y : tensor<8x24xbf16>
}

// -----

// Falls back to a scalar reduction: the output is a slice of the transposed product, so the
// product's own shape is no space that stores it.

// CHECK-LABEL: loop.kernel @k_matmul_transpose_slice(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: memref<5x6xf32>, %[[W:[a-z0-9_]+]]: memref<6x4xf32>, %[[OUT:[a-z0-9_]+]]: memref<2x5xf32>) {
// CHECK-NOT:     loop.contract
// CHECK:         loop.for %{{.*}} in 0 to 2 {
// CHECK:           loop.for %{{.*}} in 0 to 5 {
// CHECK:             loop.for %{{.*}} in 0 to 6 reduce add init 0.0 : f32 {

func.func @forward(%a: tensor<5x6xf32>, %b: tensor<6x4xf32>) -> tensor<2x5xf32> {
  %y = fused.kernel @k_matmul_transpose_slice(%a, %b) : (tensor<5x6xf32>, tensor<6x4xf32>) -> tensor<2x5xf32> {
  ^bb0(%x: tensor<5x6xf32>, %w: tensor<6x4xf32>):
    %c = prim.contract %x, %w : tensor<5x6xf32>, tensor<6x4xf32> -> tensor<5x4xf32>
    %t = prim.permute %c [1, 0] : tensor<5x4xf32> -> tensor<4x5xf32>
    %s = prim.slice %t dim 0 start 1 step 2 : tensor<4x5xf32> -> tensor<2x5xf32>
    fused.yield %s : tensor<2x5xf32>
  }
  func.return %y : tensor<2x5xf32>
}
