// RUN: emmy-opt %s --split-input-file --fuse-prims | filecheck %s

// fuse-prims groups the prim ops of a host function into fused.kernels. Ops carry the
// NameLoc locations that decompose-torch gives them (`loc("rms_norm")`), which name the
// kernels; ops without one contribute their kind.

// RMSNorm: the row reduction, the statistic broadcast back and the scaling are one kernel
// named for the torch op; the host function holds only the kernel and the return.

// CHECK-LABEL: func.func @rms_norm(
// CHECK-NEXT:    %[[Y:.*]] = fused.kernel @k_rms_norm(%x, %w) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16xf32>):
// CHECK-NEXT:      %[[SQ:.*]] = prim.map(%[[X]])
// CHECK:           %[[SS:.*]] = prim.reduce add %[[SQ]] axes [1] keepdim
// CHECK-NEXT:      %[[R:.*]] = prim.map(%[[SS]])
// CHECK:           prim.broadcast %[[R]]
// CHECK-NEXT:      prim.broadcast %[[W]]
// CHECK-NEXT:      %[[OUT:.*]] = prim.map(%[[X]],
// CHECK:           fused.yield %[[OUT]] : tensor<4x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<4x16xf32>
// CHECK-NEXT:  }

func.func @rms_norm(%x: tensor<4x16xf32>, %w: tensor<16xf32>) -> tensor<4x16xf32> {
  %sq = prim.map(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%v: f32):
    %p = arith.mulf %v, %v : f32
    prim.yield %p : f32
  } loc("rms_norm")
  %ss = prim.reduce add %sq axes [1] keepdim init 0.0 : tensor<4x16xf32> -> tensor<4x1xf32> loc("rms_norm")
  %rstd = prim.map(%ss) : (tensor<4x1xf32>) -> tensor<4x1xf32> {
  ^bb0(%s: f32):
    %n = arith.constant 16.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %mean = arith.divf %s, %n : f32
    %t = arith.addf %mean, %eps : f32
    %r = math.rsqrt %t : f32
    prim.yield %r : f32
  } loc("rms_norm")
  %rb = prim.broadcast %rstd : tensor<4x1xf32> -> tensor<4x16xf32> loc("rms_norm")
  %wb = prim.broadcast %w : tensor<16xf32> -> tensor<4x16xf32> loc("rms_norm")
  %y = prim.map(%x, %rb, %wb) : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%v: f32, %r: f32, %g: f32):
    %a = arith.mulf %v, %r : f32
    %b = arith.mulf %a, %g : f32
    prim.yield %b : f32
  } loc("rms_norm")
  func.return %y : tensor<4x16xf32>
}

// -----

// LayerNorm: the mean's reduction and the variance's reduction (which reads the mean
// broadcast along the axis it folds) share one kernel.

// CHECK-LABEL: func.func @layer_norm(
// CHECK-NEXT:    %[[Y:.*]] = fused.kernel @k_layer_norm(%x, %w, %b) : (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
// CHECK:           prim.reduce add
// CHECK:           prim.reduce add
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<4x16xf32>
// CHECK-NEXT:  }

func.func @layer_norm(%x: tensor<4x16xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %sum = prim.reduce add %x axes [1] keepdim init 0.0 : tensor<4x16xf32> -> tensor<4x1xf32> loc("layer_norm")
  %mean = prim.map(%sum) : (tensor<4x1xf32>) -> tensor<4x1xf32> {
  ^bb0(%s: f32):
    %n = arith.constant 16.0 : f32
    %m = arith.divf %s, %n : f32
    prim.yield %m : f32
  } loc("layer_norm")
  %meanb = prim.broadcast %mean : tensor<4x1xf32> -> tensor<4x16xf32> loc("layer_norm")
  %xc = prim.map(%x, %meanb) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%v: f32, %m: f32):
    %c = arith.subf %v, %m : f32
    prim.yield %c : f32
  } loc("layer_norm")
  %sq = prim.map(%xc) : (tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%c: f32):
    %c2 = arith.mulf %c, %c : f32
    prim.yield %c2 : f32
  } loc("layer_norm")
  %sqs = prim.reduce add %sq axes [1] keepdim init 0.0 : tensor<4x16xf32> -> tensor<4x1xf32> loc("layer_norm")
  %rstd = prim.map(%sqs) : (tensor<4x1xf32>) -> tensor<4x1xf32> {
  ^bb0(%s: f32):
    %n = arith.constant 16.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %var = arith.divf %s, %n : f32
    %t = arith.addf %var, %eps : f32
    %r = math.rsqrt %t : f32
    prim.yield %r : f32
  } loc("layer_norm")
  %rstdb = prim.broadcast %rstd : tensor<4x1xf32> -> tensor<4x16xf32> loc("layer_norm")
  %wb = prim.broadcast %w : tensor<16xf32> -> tensor<4x16xf32> loc("layer_norm")
  %bb = prim.broadcast %b : tensor<16xf32> -> tensor<4x16xf32> loc("layer_norm")
  %out = prim.map(%xc, %rstdb, %wb, %bb) : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%c: f32, %r: f32, %g: f32, %h: f32):
    %n = arith.mulf %c, %r : f32
    %s = arith.mulf %n, %g : f32
    %o = arith.addf %s, %h : f32
    prim.yield %o : f32
  } loc("layer_norm")
  func.return %out : tensor<4x16xf32>
}

// -----

// Softmax over the first dim: the max and the sum of exponentials share one kernel.

// CHECK-LABEL: func.func @softmax_dim0(
// CHECK-NEXT:    %[[Y:.*]] = fused.kernel @k_softmax(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32> {
// CHECK:           prim.reduce max %{{.*}} axes [0]
// CHECK:           prim.reduce add %{{.*}} axes [0]
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<8x4xf32>
// CHECK-NEXT:  }

func.func @softmax_dim0(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %m = prim.reduce max %x axes [0] init -inf : tensor<8x4xf32> -> tensor<4xf32> loc("softmax")
  %mb = prim.broadcast %m : tensor<4xf32> -> tensor<8x4xf32> loc("softmax")
  %e = prim.map(%x, %mb) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%v: f32, %w: f32):
    %d = arith.subf %v, %w : f32
    %ex = math.exp %d : f32
    prim.yield %ex : f32
  } loc("softmax")
  %s = prim.reduce add %e axes [0] init 0.0 : tensor<8x4xf32> -> tensor<4xf32> loc("softmax")
  %sb = prim.broadcast %s : tensor<4xf32> -> tensor<8x4xf32> loc("softmax")
  %r = prim.map(%e, %sb) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
  ^bb0(%v: f32, %w: f32):
    %q = arith.divf %v, %w : f32
    prim.yield %q : f32
  } loc("softmax")
  func.return %r : tensor<8x4xf32>
}

// -----

// Softmax over a middle dim, with keepdim.

// CHECK-LABEL: func.func @softmax_dim1(
// CHECK-NEXT:    %[[Y:.*]] = fused.kernel @k_softmax(%x) : (tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
// CHECK:           prim.reduce max %{{.*}} axes [1] keepdim
// CHECK:           prim.reduce add %{{.*}} axes [1] keepdim
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<2x8x4xf32>
// CHECK-NEXT:  }

func.func @softmax_dim1(%x: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %m = prim.reduce max %x axes [1] keepdim init -inf : tensor<2x8x4xf32> -> tensor<2x1x4xf32> loc("softmax")
  %mb = prim.broadcast %m : tensor<2x1x4xf32> -> tensor<2x8x4xf32> loc("softmax")
  %e = prim.map(%x, %mb) : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  ^bb0(%v: f32, %w: f32):
    %d = arith.subf %v, %w : f32
    %ex = math.exp %d : f32
    prim.yield %ex : f32
  } loc("softmax")
  %s = prim.reduce add %e axes [1] keepdim init 0.0 : tensor<2x8x4xf32> -> tensor<2x1x4xf32> loc("softmax")
  %sb = prim.broadcast %s : tensor<2x1x4xf32> -> tensor<2x8x4xf32> loc("softmax")
  %r = prim.map(%e, %sb) : (tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  ^bb0(%v: f32, %w: f32):
    %q = arith.divf %v, %w : f32
    prim.yield %q : f32
  } loc("softmax")
  func.return %r : tensor<2x8x4xf32>
}

// -----

// A linear layer (transposed weight, contraction, bias) and its activation: one kernel, the
// transpose a view in its prologue and the bias and silu its epilogue.

// CHECK-LABEL: func.func @linear_silu(
// CHECK-NEXT:    %[[Y:.*]] = fused.kernel @k_linear_silu(%x, %w, %b) : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<8xf32>):
// CHECK-NEXT:      %[[WT:.*]] = prim.permute %[[W]] [1, 0]
// CHECK-NEXT:      %[[C:.*]] = prim.contract %[[X]], %[[WT]]
// CHECK-NEXT:      %[[BB:.*]] = prim.broadcast %[[B]]
// CHECK-NEXT:      %[[A:.*]] = prim.map(%[[C]], %[[BB]])
// CHECK:           %[[S:.*]] = prim.map(%[[A]])
// CHECK:           fused.yield %[[S]] : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<4x8xf32>
// CHECK-NEXT:  }

func.func @linear_silu(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %wt = prim.permute %w [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32> loc("linear")
  %c = prim.contract %x, %wt : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("linear")
  %bb = prim.broadcast %b : tensor<8xf32> -> tensor<4x8xf32> loc("linear")
  %y = prim.map(%c, %bb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    prim.yield %s : f32
  } loc("linear")
  %z = prim.map(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%u: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %u : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %u, %d : f32
    prim.yield %s : f32
  } loc("silu")
  func.return %z : tensor<4x8xf32>
}

// -----

// Two contractions read one value computed by arithmetic (an add): a product reads its
// operands' tiles from memory, many times each, so the value is materialized once, by a kernel
// of its own (no producer but the inputs), and both products read it. (Of different N, they
// are no siblings.)

// CHECK-LABEL: func.func @cheap_shared(
// CHECK-NEXT:    %h = fused.kernel @k_add(%x, %r) :
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C1:.*]] = fused.kernel @k_matmul(%w1, %h) :
// CHECK-NEXT:    ^bb0(%{{.*}}, %[[H1:.*]]: tensor<4x16xf32>):
// CHECK-NEXT:      prim.contract %[[H1]],
// CHECK-NEXT:      fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C2:.*]] = fused.kernel @k_matmul(%w2, %h) :
// CHECK-NEXT:    ^bb0(%{{.*}}, %[[H2:.*]]: tensor<4x16xf32>):
// CHECK-NEXT:      prim.contract %[[H2]],
// CHECK-NEXT:      fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[C1]], %[[C2]] :
// CHECK-NEXT:  }

func.func @cheap_shared(%x: tensor<4x16xf32>, %r: tensor<4x16xf32>, %w1: tensor<16x8xf32>, %w2: tensor<16x12xf32>) -> (tensor<4x8xf32>, tensor<4x12xf32>) {
  %h = prim.map(%x, %r) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    prim.yield %s : f32
  } loc("add")
  %c1 = prim.contract %h, %w1 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("matmul")
  %c2 = prim.contract %h, %w2 : tensor<4x16xf32>, tensor<16x12xf32> -> tensor<4x12xf32> loc("matmul")
  func.return %c1, %c2 : tensor<4x8xf32>, tensor<4x12xf32>
}

// -----

// A row maximum scales the operand two contractions read: the reduction's kernel materializes
// the scaled rows (a product reads its operands' tiles from memory), and both products load
// them. (Of different N, they are no siblings.)

// CHECK-LABEL: func.func @stat_shared(
// CHECK-NEXT:    %y = fused.kernel @k_amax_div(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32> {
// CHECK:           prim.reduce max
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C1:.*]] = fused.kernel @k_matmul(%w1, %y) :
// CHECK-NOT:       prim.reduce
// CHECK:           prim.contract
// CHECK:         }
// CHECK-NEXT:    %[[C2:.*]] = fused.kernel @k_matmul(%w2, %y) :
// CHECK-NOT:       prim.reduce
// CHECK:           prim.contract
// CHECK:         }
// CHECK-NEXT:    func.return %[[C1]], %[[C2]] :
// CHECK-NEXT:  }

func.func @stat_shared(%x: tensor<4x16xf32>, %w1: tensor<16x8xf32>, %w2: tensor<16x12xf32>) -> (tensor<4x8xf32>, tensor<4x12xf32>) {
  %m = prim.reduce max %x axes [1] keepdim init -inf : tensor<4x16xf32> -> tensor<4x1xf32> loc("amax")
  %mb = prim.broadcast %m : tensor<4x1xf32> -> tensor<4x16xf32> loc("div")
  %y = prim.map(%x, %mb) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.divf %a, %b : f32
    prim.yield %s : f32
  } loc("div")
  %c1 = prim.contract %y, %w1 : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("matmul")
  %c2 = prim.contract %y, %w2 : tensor<4x16xf32>, tensor<16x12xf32> -> tensor<4x12xf32> loc("matmul")
  func.return %c1, %c2 : tensor<4x8xf32>, tensor<4x12xf32>
}

// -----

// A reduction feeding a broadcast: one kernel.

// CHECK-LABEL: func.func @reduce_broadcast(
// CHECK-NEXT:    %[[B:.*]] = fused.kernel @k_sum_expand(%x) : (tensor<4x16xf32>) -> tensor<3x4xf32> {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: tensor<4x16xf32>):
// CHECK-NEXT:      %[[S:.*]] = prim.reduce add %[[X]] axes [1] init 0.0 : tensor<4x16xf32> -> tensor<4xf32>
// CHECK-NEXT:      %[[E:.*]] = prim.broadcast %[[S]] : tensor<4xf32> -> tensor<3x4xf32>
// CHECK-NEXT:      fused.yield %[[E]] : tensor<3x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[B]] : tensor<3x4xf32>

func.func @reduce_broadcast(%x: tensor<4x16xf32>) -> tensor<3x4xf32> {
  %s = prim.reduce add %x axes [1] init 0.0 : tensor<4x16xf32> -> tensor<4xf32> loc("sum")
  %b = prim.broadcast %s : tensor<4xf32> -> tensor<3x4xf32> loc("expand")
  func.return %b : tensor<3x4xf32>
}

// -----

// A norm, views and a contraction: the rows the contraction reads are the norm's scaling of
// its input, so the norm's kernel materializes them (reshaped as the product reads them); the
// contraction's kernel reshapes and transposes its result in its epilogue (a returned value).

// CHECK-LABEL: func.func @norm_views_linear(
// CHECK-NEXT:    %[[Y:.*]] = fused.kernel @k_rms_norm_linear(%x) : (tensor<2x4x16xf32>) -> tensor<8x16xf32> {
// CHECK:           prim.reduce add
// CHECK:           math.rsqrt
// CHECK:           %[[R:.*]] = prim.reshape {{.*}} : tensor<2x4x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT:      fused.yield %[[R]] : tensor<8x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[P:.*]] = fused.kernel @k_linear_transpose(%w, %[[Y]]) : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<4x2x8xf32> {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<16x8xf32>, %[[YA:.*]]: tensor<8x16xf32>):
// CHECK-NEXT:      prim.contract %[[YA]],
// CHECK-NEXT:      prim.reshape {{.*}} : tensor<8x8xf32> -> tensor<2x4x8xf32>
// CHECK-NEXT:      %[[T:.*]] = prim.permute
// CHECK-NEXT:      fused.yield %[[T]] : tensor<4x2x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[P]] : tensor<4x2x8xf32>

func.func @norm_views_linear(%x: tensor<2x4x16xf32>, %w: tensor<16x8xf32>) -> tensor<4x2x8xf32> {
  %sq = prim.map(%x) : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  ^bb0(%v: f32):
    %p = arith.mulf %v, %v : f32
    prim.yield %p : f32
  } loc("rms_norm")
  %ss = prim.reduce add %sq axes [2] keepdim init 0.0 : tensor<2x4x16xf32> -> tensor<2x4x1xf32> loc("rms_norm")
  %rstd = prim.map(%ss) : (tensor<2x4x1xf32>) -> tensor<2x4x1xf32> {
  ^bb0(%s: f32):
    %n = arith.constant 16.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %mean = arith.divf %s, %n : f32
    %t = arith.addf %mean, %eps : f32
    %r = math.rsqrt %t : f32
    prim.yield %r : f32
  } loc("rms_norm")
  %rb = prim.broadcast %rstd : tensor<2x4x1xf32> -> tensor<2x4x16xf32> loc("rms_norm")
  %y = prim.map(%x, %rb) : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  ^bb0(%v: f32, %r: f32):
    %a = arith.mulf %v, %r : f32
    prim.yield %a : f32
  } loc("rms_norm")
  %y2 = prim.reshape %y : tensor<2x4x16xf32> -> tensor<8x16xf32> loc("linear")
  %c = prim.contract %y2, %w : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32> loc("linear")
  %c3 = prim.reshape %c : tensor<8x8xf32> -> tensor<2x4x8xf32> loc("linear")
  %p = prim.permute %c3 [1, 0, 2] : tensor<2x4x8xf32> -> tensor<4x2x8xf32> loc("transpose")
  func.return %p : tensor<4x2x8xf32>
}

// -----

// A reduction of a contraction's result starts a new kernel, which loads the result.

// CHECK-LABEL: func.func @reduce_of_contract(
// CHECK-NEXT:    %[[C:.*]] = fused.kernel @k_matmul(%x, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32> {
// CHECK:           prim.contract
// CHECK-NEXT:      fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[S:.*]] = fused.kernel @k_sum(%[[C]]) : (tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[CA:.*]]: tensor<4x8xf32>):
// CHECK-NEXT:      %[[R:.*]] = prim.reduce add %[[CA]] axes [1]
// CHECK-NEXT:      fused.yield %[[R]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[S]] : tensor<4xf32>

func.func @reduce_of_contract(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> tensor<4xf32> {
  %c = prim.contract %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32> loc("matmul")
  %s = prim.reduce add %c axes [1] init 0.0 : tensor<4x8xf32> -> tensor<4xf32> loc("sum")
  func.return %s : tensor<4xf32>
}

// -----

// Attention: the scores' contraction; the softmax (max, then the sum that reads it, then the
// probabilities) in one kernel, which materializes the probabilities that the second
// contraction reads as its operand (a product reads its operands' tiles from memory).

// CHECK-LABEL: func.func @attention(
// CHECK-NEXT:    %[[S:.*]] = fused.kernel @k_sdpa(%q, %k) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32> {
// CHECK:           prim.permute
// CHECK-NEXT:      prim.contract
// CHECK-NEXT:      fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[P:.*]] = fused.kernel @k_softmax(%[[S]]) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
// CHECK:           prim.reduce max
// CHECK:           math.exp
// CHECK:           prim.reduce add
// CHECK:           arith.divf
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[O:.*]] = fused.kernel @k_sdpa(%v, %[[P]]) :
// CHECK-NOT:       prim.reduce
// CHECK:           prim.contract
// CHECK-NEXT:      fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[O]] : tensor<2x4x8xf32>

func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %kt = prim.permute %k [0, 2, 1] : tensor<2x4x8xf32> -> tensor<2x8x4xf32> loc("sdpa")
  %s = prim.contract %q, %kt : tensor<2x4x8xf32>, tensor<2x8x4xf32> -> tensor<2x4x4xf32> loc("sdpa")
  %m = prim.reduce max %s axes [2] keepdim init -inf : tensor<2x4x4xf32> -> tensor<2x4x1xf32> loc("softmax")
  %mb = prim.broadcast %m : tensor<2x4x1xf32> -> tensor<2x4x4xf32> loc("softmax")
  %e = prim.map(%s, %mb) : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %x = math.exp %d : f32
    prim.yield %x : f32
  } loc("softmax")
  %sum = prim.reduce add %e axes [2] keepdim init 0.0 : tensor<2x4x4xf32> -> tensor<2x4x1xf32> loc("softmax")
  %sb = prim.broadcast %sum : tensor<2x4x1xf32> -> tensor<2x4x4xf32> loc("softmax")
  %p = prim.map(%e, %sb) : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    prim.yield %d : f32
  } loc("softmax")
  %o = prim.contract %p, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32> loc("sdpa")
  func.return %o : tensor<2x4x8xf32>
}

// -----

// Dense constants stay on the host, as buffers the kernel takes as inputs.

// CHECK-LABEL: func.func @constants(
// CHECK-NEXT:    %[[W:.*]] = prim.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[U:.*]] = prim.constant dense<{{.*}}> : tensor<3x3xf32>
// CHECK-NEXT:    %[[C:.*]] = fused.kernel @k_contract_broadcast_map(%x, %[[W]], %[[U]]) : (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32> {
// CHECK-NOT:       prim.constant
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[C]] : tensor<4x3xf32>

func.func @constants(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %w = prim.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %u = prim.constant dense<[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]> : tensor<3x3xf32>
  %c = prim.contract %x, %u : tensor<4x3xf32>, tensor<3x3xf32> -> tensor<4x3xf32>
  %wb = prim.broadcast %w : tensor<3xf32> -> tensor<4x3xf32>
  %y = prim.map(%c, %wb) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b : f32
    prim.yield %s : f32
  }
  func.return %y : tensor<4x3xf32>
}

// -----

// The last reduction reads the first (which it could share a kernel with) and the
// contraction (which it cannot), and the contraction reads the first reduction: joining the
// first reduction's kernel would make two kernels read each other, so it has its own. The
// first reduction's kernel also materializes the contraction's operand (x minus its row max);
// the contraction's kernel materializes its epilogue, which reads the first kernel's result.

// CHECK-LABEL: func.func @no_cycle(
// CHECK-NEXT:    %[[M:.*]], %[[Y:.*]] = fused.kernel @k_reduce_broadcast_map(%x) : (tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
// CHECK:           prim.reduce max
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Z:.*]] = fused.kernel @k_contract_broadcast_map(%w, %[[M]], %[[Y]]) :
// CHECK-NOT:       prim.reduce
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = fused.kernel @k_reduce(%[[Z]]) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    ^bb0(%[[ZA:.*]]: tensor<4x8xf32>):
// CHECK-NEXT:      %[[S:.*]] = prim.reduce add %[[ZA]]
// CHECK-NEXT:      fused.yield %[[S]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<4x1xf32>

func.func @no_cycle(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x1xf32> {
  %m = prim.reduce max %x axes [1] keepdim init -inf : tensor<4x8xf32> -> tensor<4x1xf32>
  %mb = prim.broadcast %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %y = prim.map(%x, %mb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    prim.yield %d : f32
  }
  %c = prim.contract %y, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %z = prim.map(%c, %mb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.addf %a, %b : f32
    prim.yield %d : f32
  }
  %r = prim.reduce add %z axes [1] keepdim init 0.0 : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}

// -----

// Two independent row reductions of one input, combined (variance as E[x^2] - E[x]^2):
// sibling kernels merge into one.

// CHECK-LABEL: func.func @siblings(
// CHECK-NEXT:    %[[Y:.*]] = fused.kernel @k_var_mean_sub(%x) :
// CHECK:           prim.reduce add
// CHECK:           prim.reduce add
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]] : tensor<4x16xf32>

func.func @siblings(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = prim.reduce add %x axes [1] keepdim init 0.0 : tensor<4x16xf32> -> tensor<4x1xf32> loc("var_mean")
  %sq = prim.map(%x) : (tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%v: f32):
    %p = arith.mulf %v, %v : f32
    prim.yield %p : f32
  } loc("var_mean")
  %s2 = prim.reduce add %sq axes [1] keepdim init 0.0 : tensor<4x16xf32> -> tensor<4x1xf32> loc("var_mean")
  %var = prim.map(%s, %s2) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: f32, %b: f32):
    %n = arith.constant 16.0 : f32
    %m = arith.divf %a, %n : f32
    %m2 = arith.divf %b, %n : f32
    %mm = arith.mulf %m, %m : f32
    %v = arith.subf %m2, %mm : f32
    prim.yield %v : f32
  } loc("var_mean")
  %vb = prim.broadcast %var : tensor<4x1xf32> -> tensor<4x16xf32> loc("sub")
  %y = prim.map(%x, %vb) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    prim.yield %d : f32
  } loc("sub")
  func.return %y : tensor<4x16xf32>
}

// -----

// Column sums read back along the rows that a row reduction folds: that reduction would
// recompute them for every element it folds, so they are materialized by a kernel of their
// own.

// CHECK-LABEL: func.func @column_then_row(
// CHECK-NEXT:    %[[C:.*]] = fused.kernel @k_reduce(%x) : (tensor<4x16xf32>) -> tensor<1x16xf32> {
// CHECK:         %[[R:.*]] = fused.kernel @k_reduce_broadcast_map(%x, %[[C]]) : (tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x1xf32> {
// CHECK-NOT:       prim.reduce add
// CHECK:           prim.reduce max
// CHECK-NEXT:      fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]] : tensor<4x1xf32>

func.func @column_then_row(%x: tensor<4x16xf32>) -> tensor<4x1xf32> {
  %c = prim.reduce add %x axes [0] keepdim init 0.0 : tensor<4x16xf32> -> tensor<1x16xf32>
  %cb = prim.broadcast %c : tensor<1x16xf32> -> tensor<4x16xf32>
  %y = prim.map(%x, %cb) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    prim.yield %d : f32
  }
  %r = prim.reduce max %y axes [1] keepdim init -inf : tensor<4x16xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}

// -----

// A residual add returned beside the norm that reads it: the norm's kernel yields both.

// CHECK-LABEL: func.func @residual_norm(
// CHECK-NEXT:    %[[H:.*]], %[[Y:.*]] = fused.kernel @k_rms_norm_add(%x, %r) : (tensor<4x16xf32>, tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[H]], %[[Y]] :

func.func @residual_norm(%x: tensor<4x16xf32>, %r: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %h = prim.map(%x, %r) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    prim.yield %s : f32
  } loc("add")
  %sq = prim.map(%h) : (tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%v: f32):
    %p = arith.mulf %v, %v : f32
    prim.yield %p : f32
  } loc("rms_norm")
  %ss = prim.reduce add %sq axes [1] keepdim init 0.0 : tensor<4x16xf32> -> tensor<4x1xf32> loc("rms_norm")
  %rb = prim.broadcast %ss : tensor<4x1xf32> -> tensor<4x16xf32> loc("rms_norm")
  %y = prim.map(%h, %rb) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%v: f32, %s: f32):
    %n = arith.constant 16.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %mean = arith.divf %s, %n : f32
    %t = arith.addf %mean, %eps : f32
    %q = math.rsqrt %t : f32
    %o = arith.mulf %v, %q : f32
    prim.yield %o : f32
  } loc("rms_norm")
  func.return %h, %y : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Without reductions or contractions: a gather, an iota and maps form one kernel; an
// unrelated elementwise result gets its own; a dead op is dropped; an argument is returned
// as it is.

// CHECK-LABEL: func.func @embedding(
// CHECK-NEXT:    %[[Y:.*]] = fused.kernel @k_embedding_arange_add(%table, %ids) :
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      prim.gather
// CHECK-NEXT:      prim.iota dim 1
// CHECK-NEXT:      prim.map
// CHECK:           prim.map
// CHECK:           fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[N:.*]] = fused.kernel @k_neg(%x) :
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      prim.map
// CHECK-NEXT:      ^bb0(
// CHECK-NEXT:        arith.negf
// CHECK-NEXT:        prim.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[Y]], %ids, %[[N]] :

func.func @embedding(%table: tensor<16x8xf32>, %ids: tensor<2x4xi64>, %x: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4xi64>, tensor<2x4x8xf32>) {
  %g = prim.gather %table[%ids] : tensor<16x8xf32>, tensor<2x4xi64> -> tensor<2x4x8xf32> loc("embedding")
  %pos = prim.iota dim 1 : tensor<2x4x8xi64> loc("arange")
  %pf = prim.map(%pos) : (tensor<2x4x8xi64>) -> tensor<2x4x8xf32> {
  ^bb0(%p: i64):
    %f = arith.sitofp %p : i64 to f32
    prim.yield %f : f32
  } loc("arange")
  %y = prim.map(%g, %pf) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    prim.yield %s : f32
  } loc("add")
  %unused = prim.map(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  ^bb0(%a: f32):
    prim.yield %a : f32
  }
  %neg = prim.map(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  ^bb0(%a: f32):
    %n = arith.negf %a : f32
    prim.yield %n : f32
  } loc("neg")
  func.return %y, %ids, %neg : tensor<2x4x8xf32>, tensor<2x4xi64>, tensor<2x4x8xf32>
}

// -----

// linear -> relu -> linear -> residual add: the relu is the first kernel's epilogue, so
// the second loads finished activations.

// CHECK-LABEL: func.func @mlp(
// CHECK-NEXT:    %[[G:.*]] = fused.kernel @k_linear_relu(%x, %w1) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32> {
// CHECK:           prim.contract
// CHECK-NEXT:      %[[R:.*]] = prim.map
// CHECK:           arith.maximumf
// CHECK:           fused.yield %[[R]] : tensor<4x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[O:.*]] = fused.kernel @k_linear_add(%x, %w2, %[[G]]) : (tensor<4x16xf32>, tensor<32x16xf32>, tensor<4x32xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT:    ^bb0(%[[XA:.*]]: tensor<4x16xf32>, %[[WA:.*]]: tensor<32x16xf32>, %[[GA:.*]]: tensor<4x32xf32>):
// CHECK-NEXT:      %[[C:.*]] = prim.contract %[[GA]], %[[WA]]
// CHECK-NEXT:      %[[S:.*]] = prim.map(%[[C]], %[[XA]])
// CHECK:           fused.yield %[[S]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[O]] : tensor<4x16xf32>

func.func @mlp(%x: tensor<4x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %a = prim.contract %x, %w1 : tensor<4x16xf32>, tensor<16x32xf32> -> tensor<4x32xf32> loc("linear")
  %g = prim.map(%a) : (tensor<4x32xf32>) -> tensor<4x32xf32> {
  ^bb0(%u: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %u, %z : f32
    prim.yield %m : f32
  } loc("relu")
  %b = prim.contract %g, %w2 : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32> loc("linear")
  %o = prim.map(%b, %x) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    prim.yield %s : f32
  } loc("add")
  func.return %o : tensor<4x16xf32>
}

// -----

// A contraction's epilogue that reads a reduction of another input: the reduction's kernel
// comes first, and the contraction's kernel reads its result and computes the epilogue.

// CHECK-LABEL: func.func @epilogue_returned(
// CHECK-NEXT:    %[[R:.*]] = fused.kernel @k_reduce(%y) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      prim.reduce max
// CHECK-NEXT:      fused.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[U:.*]] = fused.kernel @k_contract_broadcast_map(%x, %w, %[[R]]) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32> {
// CHECK:           prim.contract
// CHECK-NEXT:      prim.broadcast
// CHECK-NEXT:      %[[S:.*]] = prim.map
// CHECK:           fused.yield %[[S]] : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[U]] : tensor<4x8xf32>

func.func @epilogue_returned(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = prim.contract %x, %w : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %r = prim.reduce max %y axes [1] keepdim init -inf : tensor<4x8xf32> -> tensor<4x1xf32>
  %rb = prim.broadcast %r : tensor<4x1xf32> -> tensor<4x8xf32>
  %u = prim.map(%c, %rb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    prim.yield %d : f32
  }
  func.return %u : tensor<4x8xf32>
}
