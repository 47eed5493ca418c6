// RUN: emmy-opt %s --split-input-file --verify-diagnostics

func.func @map_input_shape(%x: tensor<4x4xf32>, %y: tensor<4x8xf32>) {
  // expected-error @+1 {{input #1 has shape [4, 8] but the result has shape [4, 4]; broadcast it first}}
  %r = prim.map(%x, %y) : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    prim.yield %a : f32
  }
  func.return
}

// -----

// Shapes are static at every level: loop extents and buffer sizes are read off them.

func.func @map_dynamic_shape(%x: tensor<?xf32>) {
  // expected-error @+1 {{operand #0 has type tensor<?xf32>, but its module declares no dynamic size (emmy.dynamic_size), so shapes must be static}}
  %r = prim.map(%x) : (tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    prim.yield %a : f32
  }
  func.return
}

// -----

func.func @reduce_dynamic_shape(%x: tensor<4x?xf32>) {
  // expected-error @+1 {{operand #0 has type tensor<4x?xf32>, but its module declares no dynamic size (emmy.dynamic_size), so shapes must be static}}
  %r = prim.reduce add %x axes [1] init 0.0 : tensor<4x?xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @broadcast_to_dynamic_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{result #0 has type tensor<?x4xf32>, but its module declares no dynamic size (emmy.dynamic_size), so shapes must be static}}
  %r = prim.broadcast %x : tensor<4xf32> -> tensor<?x4xf32>
  func.return
}

// -----

func.func @map_body_arg_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{a map body takes one scalar per input (1), but it takes 2}}
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    prim.yield %a : f32
  }
  func.return
}

// -----

func.func @map_body_arg_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{body argument #0 has type f16 but input #0 has element type f32}}
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: f16):
    prim.yield %a : f16
  }
  func.return
}

// -----

func.func @map_body_non_scalar_op(%x: tensor<4xf32>) {
  // expected-error @+1 {{a map body holds only arith and math ops, found 'prim.reduce'}}
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    %s = prim.reduce add %x axes [0] init 0.0 : tensor<4xf32> -> tensor<f32>
    prim.yield %a : f32
  }
  func.return
}

// -----

func.func @map_body_tensor_arith(%x: tensor<4xf32>) {
  // expected-error @+1 {{a map body computes on scalars, but 'arith.addf' has a value of type tensor<4xf32>}}
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    %t = arith.addf %x, %x : tensor<4xf32>
    prim.yield %a : f32
  }
  func.return
}

// -----

func.func @map_body_captures(%x: tensor<4xf32>, %s: f32) {
  // expected-error @+1 {{'arith.mulf' in a map body uses a value defined outside the map}}
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %s : f32
    prim.yield %m : f32
  }
  func.return
}

// -----

func.func @map_yields_two(%x: tensor<4xf32>) {
  // expected-error @+1 {{a map body yields one scalar per element, but its prim.yield yields (f32, f32)}}
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    prim.yield %a, %a : f32, f32
  }
  func.return
}

// -----

func.func @map_yields_nothing(%x: tensor<4xf32>) {
  // expected-error @+1 {{a map body yields one scalar per element, but its prim.yield yields ()}}
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    prim.yield
  }
  func.return
}

// -----

func.func @map_yield_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{body yields f32 but the result element type is f16}}
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: f32):
    prim.yield %a : f32
  }
  func.return
}

// -----

func.func @map_generic_result_not_tensor(%x: tensor<4xf32>) {
  // expected-error @+1 {{f32 should be of base attribute tensor}}
  %r = "prim.map"(%x) ({
  ^bb0(%a: f32):
    "prim.yield"(%a) : (f32) -> ()
  }) : (tensor<4xf32>) -> f32
  func.return
}

// -----

func.func @yield_outside_map(%v: f32) {
  // expected-error @+1 {{'prim.yield' expects parent op to be one of 'prim.map', 'prim.multi_reduce'}}
  prim.yield %v : f32
}

// -----

func.func @reduce_unknown_combiner(%x: tensor<4xf32>) {
  // expected-error @+1 {{Expected `add`, `mul`, `max`, or `min`.}}
  %r = "prim.reduce"(%x) <{kind = #prim<combiner sum>, axes = array<i64: 0>, init = 0.0 : f32}> : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @reduce_init_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{init type f16 does not match the element type f32}}
  %r = "prim.reduce"(%x) <{kind = #prim<combiner add>, axes = array<i64: 0>, init = 0.0 : f16}> : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @reduce_init_not_a_number(%x: tensor<4xf32>) {
  // expected-error @+1 {{init must be a float or (non-index) integer constant, got "zero"}}
  %r = "prim.reduce"(%x) <{kind = #prim<combiner add>, axes = array<i64: 0>, init = "zero"}> : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @reduce_index_init(%x: tensor<4xindex>) {
  // expected-error @+1 {{init must be a float or (non-index) integer constant, got 0 : index}}
  %r = "prim.reduce"(%x) <{kind = #prim<combiner add>, axes = array<i64: 0>, init = 0 : index}> : (tensor<4xindex>) -> tensor<index>
  func.return
}

// -----

func.func @reduce_axes_not_i64(%x: tensor<4xf32>) {
  // expected-error @+1 {{reduce axes must be an i64 array, got array<i32: 0>}}
  %r = "prim.reduce"(%x) <{kind = #prim<combiner add>, axes = array<i32: 0>, init = 0.0 : f32}> : (tensor<4xf32>) -> tensor<f32>
  func.return
}

// -----

func.func @reduce_result_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result element type f16 differs from the input element type f32}}
  %r = prim.reduce add %x axes [1] init 0.0 : tensor<4x8xf32> -> tensor<4xf16>
  func.return
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reduce axis 2 is out of range for a rank-2 input}}
  %r = prim.reduce add %x axes [2] init 0.0 : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @reduce_negative_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reduce axis -1 is out of range for a rank-2 input}}
  %r = prim.reduce add %x axes [-1] init 0.0 : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @reduce_repeated_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reduce axes [1, 1] repeat an axis}}
  %r = prim.reduce add %x axes [1, 1] init 0.0 : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @reduce_missing_keepdim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reducing axes [1] of shape [4, 8] gives shape [4], but the result has shape [4, 1]}}
  %r = prim.reduce add %x axes [1] init 0.0 : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return
}

// -----

func.func @reduce_unexpected_keepdim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{reducing axes [0, 1] of shape [4, 8] gives shape [1, 1], but the result has shape []}}
  %r = prim.reduce max %x axes [0, 1] keepdim init -inf : tensor<4x8xf32> -> tensor<f32>
  func.return
}

// -----

func.func @broadcast_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{result element type f16 differs from the input element type f32; a broadcast only copies elements}}
  %r = prim.broadcast %x : tensor<4xf32> -> tensor<2x4xf16>
  func.return
}

// -----

func.func @broadcast_to_smaller_rank(%x: tensor<1x4xf32>) {
  // expected-error @+1 {{cannot broadcast rank 2 to the smaller rank 1}}
  %r = prim.broadcast %x : tensor<1x4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @broadcast_dim_mismatch(%x: tensor<3xf32>) {
  // expected-error @+1 {{cannot broadcast shape [3] to [4, 5]: dim 0 has size 3, expected 1 or 5}}
  %r = prim.broadcast %x : tensor<3xf32> -> tensor<4x5xf32>
  func.return
}

// -----

func.func @broadcast_generic_result_not_tensor(%x: tensor<f32>) {
  // expected-error @+1 {{f32 should be of base attribute tensor}}
  %r = "prim.broadcast"(%x) : (tensor<f32>) -> f32
  func.return
}

// -----

func.func @map_empty_body(%x: tensor<4xf32>) {
  // expected-error @+1 {{a map body must end in a prim.yield of one scalar, but it is empty}}
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
  }
  func.return
}

// -----

// Malformed custom syntax is a parse error at the offending token.

func.func @map_input_not_tensor(%x: f32) {
  // expected-error @+1 {{prim.map input must be a ranked tensor, got f32}}
  %r = prim.map(%x) : (f32) -> tensor<4xf32> {
  ^bb0(%a: f32):
    prim.yield %a : f32
  }
  func.return
}

// -----

func.func @map_result_not_tensor(%x: tensor<4xf32>) {
  // expected-error @+1 {{prim.map result must be a ranked tensor, got f32}}
  %r = prim.map(%x) : (tensor<4xf32>) -> f32 {
  ^bb0(%a: f32):
    prim.yield %a : f32
  }
  func.return
}

// -----

func.func @map_missing_body(%x: tensor<4xf32>) {
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{Expected region}}
  func.return
}

// -----

func.func @reduce_unknown_combiner_name(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown combiner 'sum'; expected one of add, mul, max, min}}
  %r = prim.reduce sum %x axes [0] init 0.0 : tensor<4xf32> -> tensor<f32>
  func.return
}

// -----

func.func @reduce_input_not_tensor(%x: memref<4xf32>) {
  // expected-error @+1 {{prim.reduce input must be a ranked tensor, got memref<4xf32>}}
  %r = prim.reduce add %x axes [0] init 0.0 : memref<4xf32> -> tensor<f32>
  func.return
}

// -----

func.func @reduce_float_init_for_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{init 0.5 is not a valid i32 constant}}
  %r = prim.reduce add %x axes [0] init 0.5 : tensor<4xi32> -> tensor<i32>
  func.return
}

// -----

func.func @reduce_init_out_of_range(%x: tensor<4xi8>) {
  // expected-error @+1 {{init 300 is out of range for i8; expected -128 <= init < 256}}
  %r = prim.reduce max %x axes [0] init 300 : tensor<4xi8> -> tensor<i8>
  func.return
}

// -----

func.func @reduce_infinite_integer_init(%x: tensor<4xi32>) {
  // expected-error @+1 {{init -inf is not a valid i32 constant}}
  %r = prim.reduce max %x axes [0] init -inf : tensor<4xi32> -> tensor<i32>
  func.return
}

// -----

func.func @reduce_axis_too_large(%x: tensor<4xf32>) {
  // expected-error @+1 {{reduce axis 99999999999999999999999 does not fit in i64}}
  %r = prim.reduce add %x axes [99999999999999999999999] init 0.0 : tensor<4xf32> -> tensor<f32>
  func.return
}

// -----

func.func @multi_reduce_combiner_arguments(%x: tensor<4x8xf32>, %p: tensor<4x8xi64>) {
  // expected-error @+1 {{a prim.multi_reduce's combiner takes the accumulators then the values folded into them (f32, i64, f32, i64), one pair per init, but it takes (f32, f32, f32, i64)}}
  %m, %i = prim.multi_reduce (%x, %p) axes [1] init (-inf, 0) : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %ai: f32, %b: f32, %bi: i64):
    prim.yield %b, %bi : f32, i64
  }
  func.return
}

// -----

func.func @multi_reduce_combiner_yield(%x: tensor<4x8xf32>, %p: tensor<4x8xi64>) {
  // expected-error @+1 {{a prim.multi_reduce's combiner yields the new accumulators (f32, i64), but its prim.yield yields (f32)}}
  %m, %i = prim.multi_reduce (%x, %p) axes [1] init (-inf, 0) : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %ai: i64, %b: f32, %bi: i64):
    prim.yield %b : f32
  }
  func.return
}

// -----

func.func @multi_reduce_init_count(%x: tensor<4x8xf32>, %p: tensor<4x8xi64>) {
  // expected-error @+1 {{expected one init per accumulator (2), got 1}}
  %m, %i = prim.multi_reduce (%x, %p) axes [1] init (-inf) : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %ai: i64, %b: f32, %bi: i64):
    prim.yield %b, %bi : f32, i64
  }
  func.return
}

// -----

func.func @multi_reduce_input_shapes(%x: tensor<4x8xf32>, %p: tensor<4x7xi64>) {
  // expected-error @+1 {{input #1 has shape [4, 7] but input #0 has shape [4, 8]; the inputs are folded together}}
  %m, %i = prim.multi_reduce (%x, %p) axes [1] init (-inf, 0) : (tensor<4x8xf32>, tensor<4x7xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%a: f32, %ai: i64, %b: f32, %bi: i64):
    prim.yield %b, %bi : f32, i64
  }
  func.return
}

// -----

func.func @multi_reduce_result_type(%x: tensor<4x8xf32>, %p: tensor<4x8xi64>) {
  // expected-error @+1 {{result #1 has element type i32, but init #1 is i64}}
  %m, %i = prim.multi_reduce (%x, %p) axes [1] init (-inf, 0) : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4xf32>, tensor<4xi32>) {
  ^bb0(%a: f32, %ai: i64, %b: f32, %bi: i64):
    prim.yield %b, %bi : f32, i64
  }
  func.return
}

// -----

func.func @multi_reduce_result_shape(%x: tensor<4x8xf32>, %p: tensor<4x8xi64>) {
  // expected-error @+1 {{reducing axes [1] of shape [4, 8] gives shape [4], but the result has shape [8]}}
  %m, %i = prim.multi_reduce (%x, %p) axes [1] init (-inf, 0) : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<8xf32>, tensor<8xi64>) {
  ^bb0(%a: f32, %ai: i64, %b: f32, %bi: i64):
    prim.yield %b, %bi : f32, i64
  }
  func.return
}

// -----

func.func @multi_reduce_counts(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{a prim.multi_reduce has one input and one result per init (2), but it has 1 inputs and 2 results}}
  %m, %i = "prim.multi_reduce"(%x) <{axes = array<i64: 1>, inits = [-0x7F800000 : f32, 0 : i64]}> ({
  ^bb0(%a: f32, %ai: i64, %b: f32, %bi: i64):
    prim.yield %b, %bi : f32, i64
  }) : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xi64>)
  func.return
}

// -----

func.func @multi_reduce_combiner_holds_tensor_ops(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{a prim.multi_reduce's combiner holds only arith and math ops, found 'prim.iota'}}
  %m = prim.multi_reduce (%x) axes [1] init (0.0) : (tensor<4x8xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %p = prim.iota dim 0 : tensor<4xi64>
    prim.yield %b : f32
  }
  func.return
}

// -----

func.func @multi_reduce_combiner_reads_outside(%x: tensor<4x8xf32>, %s: f32) {
  // expected-error @+1 {{'arith.addf' in a prim.multi_reduce's combiner uses a value defined outside it; a combiner sees only its block arguments, constants and what it computes from them}}
  %m = prim.multi_reduce (%x) axes [1] init (0.0) : (tensor<4x8xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %s : f32
    prim.yield %c : f32
  }
  func.return
}

// -----

func.func @broadcast_result_not_tensor_syntax(%x: tensor<f32>) {
  // expected-error @+1 {{prim.broadcast result must be a ranked tensor, got f32}}
  %r = prim.broadcast %x : tensor<f32> -> f32
  func.return
}

// -----

func.func @map_yields_an_outside_value(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  // expected-error @+1 {{a map body yields a value defined outside the map}}
  %y = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: f32):
    prim.yield %s : f32
  }
  func.return %y : tensor<4xf32>
}

// -----

// A value is used after its definition (issue 12 §1), here from inside a prim.map's body.
func.func @use_before_definition(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    // expected-error @+1 {{operand #1 (%two) is used before its definition}}
    %m = arith.mulf %a, %two : f32
    prim.yield %m : f32
  }
  %two = arith.constant 2.0 : f32
  func.return %r : tensor<4xf32>
}

// -----

// Constant indices past the table's rows would reach the kernel as data no verifier sees, and
// read outside the table (issue 12 §1).
func.func @gather_constant_index_outside(%w: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %ids = prim.constant dense<[-1, 3]> : tensor<2xi64>
  // expected-error @+1 {{constant index -1 is outside the 4 rows of the table it picks from}}
  %e = prim.gather %w[%ids] : tensor<4x8xf32>, tensor<2xi64> -> tensor<2x8xf32>
  func.return %e : tensor<2x8xf32>
}

// -----

func.func @scan_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %s = prim.scan add %x dim 2 : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @attention_heads(%q: tensor<1x3x5x8xf32>, %k: tensor<1x2x7x8xf32>) {
  // expected-error @+1 {{query and key share batch dims, except that the query's heads (3) may be a multiple of the key's (2), got [1, 3, 5, 8] and [1, 2, 7, 8]}}
  %o = prim.attention %q, %k, %k scale 0.125 : tensor<1x3x5x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32> -> tensor<1x3x5x8xf32>
  func.return
}

// -----

func.func @scan_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{a scan keeps its input type tensor<4x8xf32>, but the result is tensor<4x8xf16>}}
  %s = prim.scan add %x dim 1 : tensor<4x8xf32> -> tensor<4x8xf16>
  func.return
}

// -----

func.func @attention_mask(%q: tensor<2x5x8xf32>, %k: tensor<2x7x8xf32>, %m: tensor<5x6xi1>) {
  // expected-error @+1 {{the mask [5, 6] does not broadcast to the scores' shape [2, 5, 7]}}
  %o = prim.attention %q, %k, %k mask %m scale 0.125 : tensor<2x5x8xf32>, tensor<2x7x8xf32>, tensor<2x7x8xf32> mask tensor<5x6xi1> -> tensor<2x5x8xf32>
  func.return
}

// -----

func.func @scan_combiner(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{unknown combiner 'sum'; expected one of add, mul, max, min}}
  %s = prim.scan sum %x dim 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @attention_types(%q: tensor<2x5x8xbf16>, %k: tensor<2x7x8xf32>) {
  // expected-error @+1 {{query, key and value have one float element type, got bf16, f32, f32}}
  %o = prim.attention %q, %k, %k scale 0.125 : tensor<2x5x8xbf16>, tensor<2x7x8xf32>, tensor<2x7x8xf32> -> tensor<2x5x8xf32>
  func.return
}
