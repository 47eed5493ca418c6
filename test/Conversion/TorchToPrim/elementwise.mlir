// RUN: emmy-opt %s --split-input-file --decompose-torch | filecheck %s

// Elementwise torch ops become one prim.map each, computing the op on scalars.

// CHECK-LABEL: func.func @unary(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT:    %[[NEG:.*]] = prim.map(%[[X]]) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[N:.*]] = arith.negf %[[A]] : f32
// CHECK-NEXT:      prim.yield %[[N]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[EXP:.*]] = prim.map(%[[NEG]]) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f32):
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[B]] : f32
// CHECK-NEXT:      prim.yield %[[E]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[RELU:.*]] = prim.map(%[[X]]) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[C:.*]]: f32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[C]], %[[ZERO]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[RSQRT:.*]] = prim.map(%[[X]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.rsqrt
// CHECK-NEXT:      prim.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[ABS:.*]] = prim.map(%[[X]])
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.absf
// CHECK-NEXT:      prim.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[EXP]], %[[RELU]], %[[RSQRT]], %[[ABS]]
func.func @unary(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = torch.neg %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %1 = torch.exp %0 : tensor<2x8xf32> -> tensor<2x8xf32>
  %2 = torch.relu %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %3 = torch.rsqrt %x : tensor<2x8xf32> -> tensor<2x8xf32>
  %4 = torch.abs %x : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return %1, %2, %3, %4 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// sigmoid is 1 / (1 + exp(-x)), silu x / (1 + exp(-x)); gelu follows torch's kernels, with
// erf (x * 0.5 * (1 + erf(x / sqrt(2)))) or tanh (0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))).

// CHECK-LABEL: func.func @activations(
// CHECK:         prim.map
// CHECK-NEXT:    ^bb0(%[[S:.*]]: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[S]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:      %[[DEN:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT:      %[[SIG:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT:      prim.yield %[[SIG]] : f32
// CHECK:         prim.map
// CHECK-NEXT:    ^bb0(%[[T:.*]]: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[T]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:      %[[DEN:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT:      %[[SILU:.*]] = arith.divf %[[T]], %[[DEN]] : f32
// CHECK-NEXT:      prim.yield %[[SILU]] : f32
// CHECK:         prim.map
// CHECK-NEXT:    ^bb0(%[[G:.*]]: f32):
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[HX:.*]] = arith.mulf %[[G]], %[[HALF]] : f32
// CHECK-NEXT:      %[[RSQRT2:.*]] = arith.constant 0.707106769 : f32
// CHECK-NEXT:      %[[ARG:.*]] = arith.mulf %[[G]], %[[RSQRT2]] : f32
// CHECK-NEXT:      %[[ERF:.*]] = math.erf %[[ARG]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ONE]], %[[ERF]] : f32
// CHECK-NEXT:      %[[GELU:.*]] = arith.mulf %[[HX]], %[[SUM]] : f32
// CHECK-NEXT:      prim.yield %[[GELU]] : f32
// CHECK:         prim.map
// CHECK-NEXT:    ^bb0(%[[H:.*]]: f32):
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[HX:.*]] = arith.mulf %[[H]], %[[HALF]] : f32
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[H]], %[[H]] : f32
// CHECK-NEXT:      %[[CUBE:.*]] = arith.mulf %[[SQ]], %[[H]] : f32
// CHECK-NEXT:      %[[BETA:.*]] = arith.constant 0.797884583 : f32
// CHECK-NEXT:      %[[KAPPA:.*]] = arith.constant 4.471500e-02 : f32
// CHECK-NEXT:      %[[KC:.*]] = arith.mulf %[[KAPPA]], %[[CUBE]] : f32
// CHECK-NEXT:      %[[IN:.*]] = arith.addf %[[H]], %[[KC]] : f32
// CHECK-NEXT:      %[[INNER:.*]] = arith.mulf %[[BETA]], %[[IN]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[TANH:.*]] = math.tanh %[[INNER]] : f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ONE]], %[[TANH]] : f32
// CHECK-NEXT:      %[[GELU:.*]] = arith.mulf %[[HX]], %[[SUM]] : f32
// CHECK-NEXT:      prim.yield %[[GELU]] : f32
func.func @activations(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = torch.sigmoid %x : tensor<4xf32> -> tensor<4xf32>
  %1 = torch.silu %x : tensor<4xf32> -> tensor<4xf32>
  %2 = torch.gelu %x : tensor<4xf32> -> tensor<4xf32>
  %3 = torch.gelu %x approximate "tanh" : tensor<4xf32> -> tensor<4xf32>
  func.return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Operands whose shape differs from the result's are broadcast first, each once per op.

// CHECK-LABEL: func.func @binary_broadcast(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xf32>, %[[Y:.*]]: tensor<8xf32>, %[[Z:.*]]: tensor<2x1xf32>)
// CHECK-NEXT:    %[[YB:.*]] = prim.broadcast %[[Y]] : tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[ADD:.*]] = prim.map(%[[X]], %[[YB]]) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:      prim.yield %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[ZB:.*]] = prim.broadcast %[[Z]] : tensor<2x1xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[YB2:.*]] = prim.broadcast %[[Y]] : tensor<8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    %[[DIV:.*]] = prim.map(%[[ZB]], %[[YB2]])
// CHECK-NEXT:    ^bb0(%[[C:.*]]: f32, %[[D:.*]]: f32):
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[C]], %[[D]] : f32
// CHECK-NEXT:      prim.yield %[[Q]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUB:.*]] = prim.map(%[[X]]) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[E:.*]]: f32):
// CHECK-NEXT:      %[[F:.*]] = arith.subf %[[E]], %[[E]] : f32
// CHECK-NEXT:      prim.yield %[[F]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[ADD]], %[[DIV]], %[[SUB]]
func.func @binary_broadcast(%x: tensor<2x8xf32>, %y: tensor<8xf32>, %z: tensor<2x1xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = torch.add %x, %y : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %1 = torch.div %z, %y : tensor<2x1xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %2 = torch.sub %x, %x : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  func.return %0, %1, %2 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// A scalar (a splat constant) is an arith.constant in the body, not a broadcast tensor; the
// constant itself disappears once every use has folded it.

// CHECK-LABEL: func.func @scalar_operands(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT:    %[[MUL:.*]] = prim.map(%[[X]]) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[C:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[A]], %[[C]] : f32
// CHECK-NEXT:      prim.yield %[[M]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUB:.*]] = prim.map(%[[MUL]]) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f32):
// CHECK-NEXT:      %[[C:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[S:.*]] = arith.subf %[[C]], %[[B]] : f32
// CHECK-NEXT:      prim.yield %[[S]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[SUB]]
func.func @scalar_operands(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c = torch.constant dense<5.000000e-01> : tensor<f32>
  %0 = torch.mul %x, %c : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %1 = torch.sub %c, %0 : tensor<f32>, tensor<2x8xf32> -> tensor<2x8xf32>
  func.return %1 : tensor<2x8xf32>
}

// -----

// 16-bit floats compute in f32 and round once; ops that are exact in any type (maximum,
// comparisons) stay in bf16.

// CHECK-LABEL: func.func @bf16(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xbf16>, %[[Y:.*]]: tensor<8xbf16>)
// CHECK-NEXT:    %[[YB:.*]] = prim.broadcast %[[Y]] : tensor<8xbf16> -> tensor<2x8xbf16>
// CHECK-NEXT:    %[[MUL:.*]] = prim.map(%[[X]], %[[YB]]) : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[BW:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[AW]], %[[BW]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[R]] : bf16
// CHECK-NEXT:    }
// CHECK:         prim.map
// CHECK-NEXT:    ^bb0(%[[C:.*]]: bf16, %[[D:.*]]: bf16):
// CHECK-NEXT:      %[[MAX:.*]] = arith.maximumf %[[C]], %[[D]] : bf16
// CHECK-NEXT:      prim.yield %[[MAX]] : bf16
// CHECK:         prim.map
// CHECK-SAME:      -> tensor<2x8xi1>
// CHECK-NEXT:    ^bb0(%[[E:.*]]: bf16, %[[F:.*]]: bf16):
// CHECK-NEXT:      %[[GT:.*]] = arith.cmpf ogt, %[[E]], %[[F]] : bf16
// CHECK-NEXT:      prim.yield %[[GT]] : i1
func.func @bf16(%x: tensor<2x8xbf16>, %y: tensor<8xbf16>) -> (tensor<2x8xbf16>, tensor<2x8xbf16>, tensor<2x8xi1>) {
  %0 = torch.mul %x, %y : tensor<2x8xbf16>, tensor<8xbf16> -> tensor<2x8xbf16>
  %1 = torch.maximum %x, %y : tensor<2x8xbf16>, tensor<8xbf16> -> tensor<2x8xbf16>
  %2 = torch.gt %x, %y : tensor<2x8xbf16>, tensor<8xbf16> -> tensor<2x8xi1>
  func.return %0, %1, %2 : tensor<2x8xbf16>, tensor<2x8xbf16>, tensor<2x8xi1>
}

// -----

// pow by a constant 2 / 0.5 is a multiplication / sqrt, as in torch's kernel; other
// exponents are math.powf. In f16, the computation is in f32.

// CHECK-LABEL: func.func @pow(
// CHECK:         prim.map
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f16):
// CHECK-NEXT:      %[[AW:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[AW]], %[[AW]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[SQ]] : f32 to f16
// CHECK-NEXT:      prim.yield %[[R]] : f16
// CHECK:         prim.map
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f32):
// CHECK-NEXT:      %[[ROOT:.*]] = math.sqrt %[[B]] : f32
// CHECK-NEXT:      prim.yield %[[ROOT]] : f32
// CHECK:         prim.map
// CHECK-NEXT:    ^bb0(%[[C:.*]]: f32):
// CHECK-NEXT:      %[[E:.*]] = arith.constant 1.700000e+00 : f32
// CHECK-NEXT:      %[[P:.*]] = math.powf %[[C]], %[[E]] : f32
// CHECK-NEXT:      prim.yield %[[P]] : f32
// CHECK:         prim.map
// CHECK-NEXT:    ^bb0(%[[D:.*]]: f32, %[[F:.*]]: f32):
// CHECK-NEXT:      %[[Q:.*]] = math.powf %[[D]], %[[F]] : f32
// CHECK-NEXT:      prim.yield %[[Q]] : f32
func.func @pow(%h: tensor<4xf16>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %two = torch.constant dense<2.000000e+00> : tensor<f16>
  %half = torch.constant dense<5.000000e-01> : tensor<f32>
  %other = torch.constant dense<1.700000e+00> : tensor<f32>
  %0 = torch.pow %h, %two : tensor<4xf16>, tensor<f16> -> tensor<4xf16>
  %1 = torch.pow %x, %half : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %2 = torch.pow %x, %other : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %3 = torch.pow %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %0, %1, %2, %3 : tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Float comparisons are ordered (false on NaN) except `ne` (true on NaN); i1 compares
// unsigned (true > false), other integers signed.

// CHECK-LABEL: func.func @comparisons(
// CHECK:         arith.cmpf ole, %{{.*}}, %{{.*}} : f32
// CHECK:         arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK:         arith.cmpi ugt, %{{.*}}, %{{.*}} : i1
// CHECK:         arith.cmpi sgt, %{{.*}}, %{{.*}} : i64
// CHECK:         arith.cmpi eq, %{{.*}}, %{{.*}} : i1
func.func @comparisons(%x: tensor<4xf32>, %y: tensor<4xf32>, %m: tensor<4xi1>, %n: tensor<4xi1>, %i: tensor<4xi64>, %j: tensor<4xi64>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = torch.le %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %1 = torch.ne %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %2 = torch.gt %m, %n : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  %3 = torch.gt %i, %j : tensor<4xi64>, tensor<4xi64> -> tensor<4xi1>
  %4 = torch.eq %m, %n : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
  func.return %0, %1, %2, %3, %4 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// clamp is max then min with NaN-propagating ops and the bounds in the element type;
// where is a select, its mask broadcast and its scalar branch a body constant.

// CHECK-LABEL: func.func @clamp_where(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8xbf16>, %[[M:.*]]: tensor<2x1xi1>)
// CHECK-NEXT:    %[[CLAMP:.*]] = prim.map(%[[X]]) : (tensor<2x8xbf16>) -> tensor<2x8xbf16> {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16):
// CHECK-NEXT:      %[[LO:.*]] = arith.constant -1.000000e+00 : bf16
// CHECK-NEXT:      %[[LOW:.*]] = arith.maximumf %[[A]], %[[LO]] : bf16
// CHECK-NEXT:      %[[HI:.*]] = arith.constant 1.000000e+00 : bf16
// CHECK-NEXT:      %[[BOTH:.*]] = arith.minimumf %[[LOW]], %[[HI]] : bf16
// CHECK-NEXT:      prim.yield %[[BOTH]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[MB:.*]] = prim.broadcast %[[M]] : tensor<2x1xi1> -> tensor<2x8xi1>
// CHECK-NEXT:    %[[WHERE:.*]] = prim.map(%[[MB]], %[[CLAMP]]) : (tensor<2x8xi1>, tensor<2x8xbf16>) -> tensor<2x8xbf16> {
// CHECK-NEXT:    ^bb0(%[[C:.*]]: i1, %[[V:.*]]: bf16):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK-NEXT:      %[[SEL:.*]] = arith.select %[[C]], %[[V]], %[[ZERO]] : bf16
// CHECK-NEXT:      prim.yield %[[SEL]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[MIN_ONLY:.*]] = prim.map(%[[X]])
// CHECK-NEXT:    ^bb0(%[[D:.*]]: bf16):
// CHECK-NEXT:      %[[LO:.*]] = arith.constant 1.000980e-01 : bf16
// CHECK-NEXT:      %[[LOW:.*]] = arith.maximumf %[[D]], %[[LO]] : bf16
// CHECK-NEXT:      prim.yield %[[LOW]] : bf16
func.func @clamp_where(%x: tensor<2x8xbf16>, %m: tensor<2x1xi1>) -> (tensor<2x8xbf16>, tensor<2x8xbf16>, tensor<2x8xbf16>) {
  %c = torch.constant dense<0.000000e+00> : tensor<bf16>
  %0 = torch.clamp %x min -1.0 max 1.0 : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %1 = torch.where %m, %0, %c : tensor<2x1xi1>, tensor<2x8xbf16>, tensor<bf16> -> tensor<2x8xbf16>
  %2 = torch.clamp %x min 0.1 : tensor<2x8xbf16> -> tensor<2x8xbf16>
  func.return %0, %1, %2 : tensor<2x8xbf16>, tensor<2x8xbf16>, tensor<2x8xbf16>
}

// -----

// torch.to: floats round (a 16-bit result from an integer goes through f32, as in torch),
// floats truncate to integers, anything becomes i1 by `!= 0`, and i1 is 0 or 1.

// CHECK-LABEL: func.func @to(
// CHECK:         ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[A]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[R]] : bf16
// CHECK:         ^bb0(%[[B:.*]]: bf16):
// CHECK-NEXT:      %[[R:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[C:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.fptosi %[[C]] : f32 to i32
// CHECK-NEXT:      prim.yield %[[R]] : i32
// CHECK:         ^bb0(%[[D:.*]]: f32):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.cmpf une, %[[D]], %[[ZERO]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : i1
// CHECK:         ^bb0(%[[E:.*]]: i1):
// CHECK-NEXT:      %[[R:.*]] = arith.uitofp %[[E]] : i1 to f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[F:.*]]: i64):
// CHECK-NEXT:      %[[W:.*]] = arith.sitofp %[[F]] : i64 to f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[W]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[R]] : bf16
// CHECK:         ^bb0(%[[G:.*]]: i64):
// CHECK-NEXT:      %[[R:.*]] = arith.trunci %[[G]] : i64 to i32
// CHECK-NEXT:      prim.yield %[[R]] : i32
// CHECK:         ^bb0(%[[H:.*]]: i1):
// CHECK-NEXT:      %[[R:.*]] = arith.extui %[[H]] : i1 to i64
// CHECK-NEXT:      prim.yield %[[R]] : i64
func.func @to(%x: tensor<4xf32>, %h: tensor<4xbf16>, %m: tensor<4xi1>, %i: tensor<4xi64>) -> (tensor<4xbf16>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xbf16>, tensor<4xi32>, tensor<4xi64>) {
  %0 = torch.to %x : tensor<4xf32> -> tensor<4xbf16>
  %1 = torch.to %h : tensor<4xbf16> -> tensor<4xf32>
  %2 = torch.to %x : tensor<4xf32> -> tensor<4xi32>
  %3 = torch.to %x : tensor<4xf32> -> tensor<4xi1>
  %4 = torch.to %m : tensor<4xi1> -> tensor<4xf32>
  %5 = torch.to %i : tensor<4xi64> -> tensor<4xbf16>
  %6 = torch.to %i : tensor<4xi64> -> tensor<4xi32>
  %7 = torch.to %m : tensor<4xi1> -> tensor<4xi64>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xbf16>, tensor<4xf32>, tensor<4xi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xbf16>, tensor<4xi32>, tensor<4xi64>
}

// -----

// Integer arithmetic: neg is 0 - x, pow by a constant is repeated multiplication.

// CHECK-LABEL: func.func @integers(
// CHECK:         arith.addi %{{.*}}, %{{.*}} : i64
// CHECK:         ^bb0(%[[A:.*]]: i64):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[N:.*]] = arith.subi %[[ZERO]], %[[A]] : i64
// CHECK:         ^bb0(%[[B:.*]]: i64):
// CHECK-NEXT:      %[[SQ:.*]] = arith.muli %[[B]], %[[B]] : i64
// CHECK-NEXT:      %[[CUBE:.*]] = arith.muli %[[B]], %[[SQ]] : i64
// CHECK-NEXT:      prim.yield %[[CUBE]] : i64
// CHECK:         ^bb0(%[[C:.*]]: i64, %[[D:.*]]: i64):
// CHECK-NEXT:      %[[MAX:.*]] = arith.maxsi %[[C]], %[[D]] : i64
func.func @integers(%i: tensor<4xi64>, %j: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %three = torch.constant dense<3> : tensor<i64>
  %0 = torch.add %i, %j : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %1 = torch.neg %i : tensor<4xi64> -> tensor<4xi64>
  %2 = torch.pow %i, %three : tensor<4xi64>, tensor<i64> -> tensor<4xi64>
  %3 = torch.maximum %i, %j : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  func.return %0, %1, %2, %3 : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

// -----

// Python's `%` and `//`: an integer remainder is the truncated one, moved by the divisor where
// their signs differ; floats floor the quotient less the exact remainder (fmod's fused
// multiply-add), as torch does. Division rounded toward zero (`rounding_mode="trunc"`) is C's
// for integers and truncates the float quotient.

// CHECK-LABEL: func.func @rounding(
// CHECK:         prim.map
// CHECK:           %[[T:.*]] = arith.remsi %{{.*}}, %[[D:.*]] : i64
// CHECK:           %[[MOVED:.*]] = arith.addi %[[T]], %[[D]] : i64
// CHECK:           arith.select %{{.*}}, %[[MOVED]], %[[T]] : i64
// CHECK:         prim.map
// CHECK:           arith.floordivsi
// CHECK:         prim.map
// CHECK:           math.fma
// CHECK:           %[[Q:.*]] = arith.divf
// CHECK:           math.floor %{{.*}} : f32
// CHECK:         prim.map
// CHECK:           arith.divsi %{{.*}}, %{{.*}} : i64
// CHECK:         prim.map
// CHECK:           %[[TQ:.*]] = arith.divf
// CHECK-NEXT:      math.trunc %[[TQ]] : f32
func.func @rounding(%n: tensor<4xi64>, %d: tensor<4xi64>, %x: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>) {
  %r = torch.remainder %n, %d : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %q = torch.floor_divide %n, %d : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %f = torch.floor_divide %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %tq = torch.trunc_divide %n, %d : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %tf = torch.trunc_divide %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r, %q, %f, %tq, %tf : tensor<4xi64>, tensor<4xi64>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>
}

// -----

// C's fmod: for integers the truncated remainder; for floats one fused multiply-add of the
// truncated quotient, moved by the divisor's magnitude where the rounded quotient was one off,
// with the sign of the dividend, and the dividend itself where the divisor is infinite.

// CHECK-LABEL: func.func @fmod(
// CHECK:         prim.map
// CHECK:           arith.remsi %{{.*}}, %{{.*}} : i64
// CHECK:         prim.map
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32):
// CHECK:           %[[Q:.*]] = math.trunc
// CHECK:           %[[NQ:.*]] = arith.negf %[[Q]] : f32
// CHECK:           %[[REST:.*]] = math.fma %[[NQ]], %[[Y]], %[[X]] : f32
// CHECK:           math.copysign %{{.*}}, %[[X]] : f32
// CHECK:           arith.select %{{.*}}, %[[X]], %{{.*}} : f32
func.func @fmod(%n: tensor<4xi64>, %d: tensor<4xi64>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi64>, tensor<4xf32>) {
  %r = torch.fmod %n, %d : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %f = torch.fmod %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %r, %f : tensor<4xi64>, tensor<4xf32>
}

// -----

// The trigonometric and hyperbolic ops are their math ops (atan2's operands in order: y, x);
// 16-bit floats compute in f32, as sin does.

// CHECK-LABEL: func.func @trigonometric(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>, %[[H:.*]]: tensor<4xbf16>)
// CHECK:         ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = math.tan %[[A]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = math.atan %[[A]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = math.asin %[[A]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = math.acos %[[A]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = math.sinh %[[A]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = math.cosh %[[A]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = math.asinh %[[A]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = math.acosh %[[A]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[B:.*]]: bf16):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT:      %[[R:.*]] = math.atanh %[[W]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[N]] : bf16
// CHECK:         prim.map(%[[Y]], %[[X]])
// CHECK-NEXT:    ^bb0(%[[C:.*]]: f32, %[[D:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = math.atan2 %[[C]], %[[D]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
func.func @trigonometric(%x: tensor<4xf32>, %y: tensor<4xf32>, %h: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>) {
  %0 = torch.tan %x : tensor<4xf32> -> tensor<4xf32>
  %1 = torch.atan %x : tensor<4xf32> -> tensor<4xf32>
  %2 = torch.asin %x : tensor<4xf32> -> tensor<4xf32>
  %3 = torch.acos %x : tensor<4xf32> -> tensor<4xf32>
  %4 = torch.sinh %x : tensor<4xf32> -> tensor<4xf32>
  %5 = torch.cosh %x : tensor<4xf32> -> tensor<4xf32>
  %6 = torch.asinh %x : tensor<4xf32> -> tensor<4xf32>
  %7 = torch.acosh %x : tensor<4xf32> -> tensor<4xf32>
  %8 = torch.atanh %h : tensor<4xbf16> -> tensor<4xbf16>
  %9 = torch.atan2 %y, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>, tensor<4xf32>
}

// -----

// copysign takes the sign bit of its second operand (of a zero or a NaN too): math.copysign.

// CHECK-LABEL: func.func @copysign(
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = math.copysign %[[X]], %[[Y]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
func.func @copysign(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = torch.copysign %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// hypot is `big * sqrt(1 + (small / big)^2)` of the magnitudes, whose squares cannot overflow
// or underflow; where either magnitude is infinite the result is (even beside a NaN), and
// where both are zero (small / big is NaN) it is zero. bf16 computes in f32 and rounds once.

// CHECK-LABEL: func.func @hypot(
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32):
// CHECK-NEXT:      %[[AX:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT:      %[[AY:.*]] = math.absf %[[Y]] : f32
// CHECK-NEXT:      %[[BIG:.*]] = arith.maximumf %[[AX]], %[[AY]] : f32
// CHECK-NEXT:      %[[SMALL:.*]] = arith.minimumf %[[AX]], %[[AY]] : f32
// CHECK-NEXT:      %[[RATIO:.*]] = arith.divf %[[SMALL]], %[[BIG]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[RATIO]], %[[RATIO]] : f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ONE]], %[[SQ]] : f32
// CHECK-NEXT:      %[[ROOT:.*]] = math.sqrt %[[SUM]] : f32
// CHECK-NEXT:      %[[SCALED:.*]] = arith.mulf %[[BIG]], %[[ROOT]] : f32
// CHECK-NEXT:      %[[INF:.*]] = arith.constant 0x7f800000 : f32
// CHECK-NEXT:      %[[XINF:.*]] = arith.cmpf oeq, %[[AX]], %[[INF]] : f32
// CHECK-NEXT:      %[[YINF:.*]] = arith.cmpf oeq, %[[AY]], %[[INF]] : f32
// CHECK-NEXT:      %[[EITHER:.*]] = arith.ori %[[XINF]], %[[YINF]] : i1
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[BOTH_ZERO:.*]] = arith.cmpf oeq, %[[BIG]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[FINITE:.*]] = arith.select %[[BOTH_ZERO]], %[[BIG]], %[[SCALED]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[EITHER]], %[[INF]], %[[FINITE]] : f32
// CHECK-NEXT:      prim.yield %[[R]] : f32
// CHECK:         ^bb0(%[[H:.*]]: bf16, %[[G:.*]]: bf16):
// CHECK-NEXT:      arith.extf %[[H]] : bf16 to f32
// CHECK-NEXT:      arith.extf %[[G]] : bf16 to f32
// CHECK:           math.sqrt %{{.*}} : f32
// CHECK:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      %[[R:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      %[[N:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT:      prim.yield %[[N]] : bf16
func.func @hypot(%x: tensor<4xf32>, %y: tensor<4xf32>, %h: tensor<4xbf16>, %g: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %0 = torch.hypot %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = torch.hypot %h, %g : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  func.return %0, %1 : tensor<4xf32>, tensor<4xbf16>
}

// -----

// Shifts as torch's: by an amount that is negative or not below the width, `<<` gives 0 and
// `>>` the sign alone; such an amount never reaches arith's shift (undefined there).

// CHECK-LABEL: func.func @shifts(
// CHECK:         prim.map
// CHECK:           %[[LOW:.*]] = arith.cmpi slt, %[[BY:.*]], %{{.*}} : i32
// CHECK:           %[[HIGH:.*]] = arith.cmpi sge, %[[BY]], %{{.*}} : i32
// CHECK:           %[[OUTSIDE:.*]] = arith.ori %[[LOW]], %[[HIGH]] : i1
// CHECK:           %[[SAFE:.*]] = arith.select %[[OUTSIDE]], %{{.*}}, %[[BY]] : i32
// CHECK:           %[[SHIFTED:.*]] = arith.shli %{{.*}}, %[[SAFE]] : i32
// CHECK:           arith.select %[[OUTSIDE]], %{{.*}}, %[[SHIFTED]] : i32
// CHECK:         prim.map
// CHECK:           %[[SIGN:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK:           arith.shrsi %{{.*}}, %[[SIGN]] : i32
func.func @shifts(%n: tensor<4xi32>, %by: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %l = torch.shift_left %n, %by : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  %r = torch.shift_right %n, %by : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  func.return %l, %r : tensor<4xi32>, tensor<4xi32>
}
