// RUN: emmy-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{kernel argument #1 must be a memref (or, last, the dynamic size as an index), got f32}}
loop.kernel @scalar_argument(%x: memref<4xf32>, %s: f32) {
}

// -----

// expected-error @+1 {{a kernel whose buffers have a dynamic dim (?) takes the dynamic size as its last argument, an index}}
loop.kernel @dynamic_buffer(%x: memref<?x4xf32>) {
}

// -----

// expected-error @+1 {{kernel body takes (memref<4xf16>) but the kernel signature says (memref<4xf32>)}}
"loop.kernel"() <{sym_name = "signature_mismatch", function_type = (memref<4xf32>) -> ()}> ({
^bb0(%x: memref<4xf16>):
}) : () -> ()

// -----

// expected-error @+1 {{a loop.kernel returns nothing, it writes its buffer arguments; its type (memref<4xf32>) -> f32 has results}}
"loop.kernel"() <{sym_name = "with_results", function_type = (memref<4xf32>) -> f32}> ({
^bb0(%x: memref<4xf32>):
}) : () -> ()

// -----

func.func @host() {
  // expected-error @+1 {{a loop.kernel is a module-level symbol that loop.launch can find, but its parent is 'func.func'}}
  loop.kernel @nested() {
  }
  func.return
}

// -----

// expected-error @+1 {{a loop.kernel body holds only loop, arith and math ops, found 'memref.alloc'}}
loop.kernel @allocates(%x: memref<4xf32>) {
  %scratch = memref.alloc() : memref<4xf32>
}

// -----

// expected-error @+1 {{a loop.kernel body holds only loop, arith and math ops, found 'prim.broadcast'}}
loop.kernel @tensor_op(%x: memref<4xf32>) {
  loop.for %i in 0 to 4 {
    %t = arith.constant dense<1.0> : tensor<f32>
    %b = prim.broadcast %t : tensor<f32> -> tensor<4xf32>
  }
}

// -----

func.func @for_on_host() {
  // expected-error @+1 {{'loop.for' must be nested in a loop.kernel}}
  loop.for %i in 0 to 4 {
  }
  func.return
}

// -----

func.func @store_on_host(%x: memref<4xf32>, %v: f32, %i: index) {
  // expected-error @+1 {{'loop.store' must be nested in a loop.kernel}}
  loop.store %v, %x[%i] : memref<4xf32>
  func.return
}

// -----

func.func @load_on_host(%x: memref<4xf32>, %i: index) -> f32 {
  // expected-error @+1 {{'loop.load' must be nested in a loop.kernel}}
  %v = loop.load %x[%i] : memref<4xf32>
  func.return %v : f32
}

// -----

loop.kernel @descending_bounds(%x: memref<4xf32>) {
  // expected-error @+1 {{loop bounds 4 to 2 must satisfy 0 <= lower <= upper}}
  loop.for %i in 4 to 2 {
  }
}

// -----

loop.kernel @negative_lower_bound(%x: memref<4xf32>) {
  // expected-error @+1 {{loop bounds -1 to 4 must satisfy 0 <= lower <= upper}}
  loop.for %i in -1 to 4 {
  }
}

// -----

loop.kernel @float_induction_variable(%x: memref<4xf32>) {
  // expected-error @+1 {{a loop body takes one index induction variable, but it takes (f32)}}
  "loop.for"() <{lower = #builtin.int<0>, upper = #builtin.int<4>}> ({
  ^bb0(%i: f32):
    "loop.yield"() : () -> ()
  }) : () -> ()
}

// -----

loop.kernel @two_induction_variables(%x: memref<4xf32>) {
  // expected-error @+1 {{a loop body takes one index induction variable, but it takes (index, index)}}
  "loop.for"() <{lower = #builtin.int<0>, upper = #builtin.int<4>}> ({
  ^bb0(%i: index, %j: index):
    "loop.yield"() : () -> ()
  }) : () -> ()
}

// -----

loop.kernel @combiner_without_init(%x: memref<4xf32>) {
  // expected-error @+1 {{a reduction loop needs both a combiner and an init}}
  %r = "loop.for"() <{lower = #builtin.int<0>, upper = #builtin.int<4>, kind = #prim<combiner add>}> ({
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<4xf32>
    "loop.yield"(%v) : (f32) -> ()
  }) : () -> f32
}

// -----

loop.kernel @parallel_with_result(%x: memref<4xf32>) {
  // expected-error @+1 {{a parallel loop has no results}}
  %r = "loop.for"() <{lower = #builtin.int<0>, upper = #builtin.int<4>}> ({
  ^bb0(%i: index):
    "loop.yield"() : () -> ()
  }) : () -> f32
}

// -----

loop.kernel @parallel_yields_value(%x: memref<4xf32>) {
  // expected-error @+1 {{a parallel loop body yields nothing, but its loop.yield yields (f32)}}
  loop.for %i in 0 to 4 {
    %v = loop.load %x[%i] : memref<4xf32>
    loop.yield %v : f32
  }
}

// -----

loop.kernel @unknown_combiner(%x: memref<4xf32>) {
  // expected-error @+1 {{Expected `add`, `mul`, `max`, or `min`.}}
  %r = "loop.for"() <{lower = #builtin.int<0>, upper = #builtin.int<4>, kind = #prim<combiner avg>, init = 0.0 : f32}> ({
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<4xf32>
    "loop.yield"(%v) : (f32) -> ()
  }) : () -> f32
}

// -----

loop.kernel @init_not_a_number(%x: memref<4xf32>) {
  // expected-error @+1 {{init must be a float or (non-index) integer constant, got "zero"}}
  %r = "loop.for"() <{lower = #builtin.int<0>, upper = #builtin.int<4>, kind = #prim<combiner add>, init = "zero"}> ({
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<4xf32>
    "loop.yield"(%v) : (f32) -> ()
  }) : () -> f32
}

// -----

loop.kernel @index_accumulator(%x: memref<4xf32>) {
  // expected-error @+1 {{init must be a float or (non-index) integer constant, got 0 : index}}
  %r = "loop.for"() <{lower = #builtin.int<0>, upper = #builtin.int<4>, kind = #prim<combiner add>, init = 0 : index}> ({
  ^bb0(%i: index):
    "loop.yield"(%i) : (index) -> ()
  }) : () -> index
}

// -----

loop.kernel @result_type_differs_from_init(%x: memref<4xf32>) {
  // expected-error @+1 {{a reduction loop has one result of its init type f32}}
  %r = "loop.for"() <{lower = #builtin.int<0>, upper = #builtin.int<4>, kind = #prim<combiner add>, init = 0.0 : f32}> ({
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<4xf32>
    "loop.yield"(%v) : (f32) -> ()
  }) : () -> f16
}

// -----

loop.kernel @reduction_yields_wrong_type(%x: memref<4xf16>) {
  // expected-error @+1 {{a reduction loop body yields one f32 per iteration, but its loop.yield yields (f16)}}
  %r = loop.for %i in 0 to 4 reduce add init 0.0 : f32 {
    %v = loop.load %x[%i] : memref<4xf16>
    loop.yield %v : f16
  }
}

// -----

loop.kernel @reduction_yields_nothing(%x: memref<4xf32>) {
  // expected-error @+1 {{a reduction loop body yields one f32 per iteration, but its loop.yield yields ()}}
  %r = loop.for %i in 0 to 4 reduce max init -inf : f32 {
    %v = loop.load %x[%i] : memref<4xf32>
  }
}

// -----

loop.kernel @nested_reduction_yields_wrong_type(%x: memref<4x4xf32>) {
  // expected-error @+1 {{a reduction loop body yields one f32 per iteration, but its loop.yield yields (index)}}
  %r = loop.for %i in 0 to 4 reduce add init 0.0 : f32 {
    %s = loop.for %j in 0 to 4 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %j] : memref<4x4xf32>
      loop.yield %v : f32
    }
    loop.yield %i : index
  }
}

// -----

loop.kernel @yield_outside_loop(%x: memref<4xf32>) {
  // expected-error @+1 {{'loop.yield' expects parent op to be one of 'loop.for', 'loop.contract'}}
  loop.yield
}

// -----

loop.kernel @load_index_count(%x: memref<4x8xf32>) {
  loop.for %i in 0 to 4 {
    // expected-error @+1 {{a rank-2 memref<4x8xf32> takes 2 indices, but 1 are given}}
    %v = loop.load %x[%i] : memref<4x8xf32>
  }
}

// -----

loop.kernel @store_index_count(%x: memref<4xf32>, %y: memref<f32>) {
  loop.for %i in 0 to 4 {
    %v = loop.load %x[%i] : memref<4xf32>
    // expected-error @+1 {{a rank-0 memref<f32> takes 0 indices, but 1 are given}}
    loop.store %v, %y[%i] : memref<f32>
  }
}

// -----

loop.kernel @float_index(%x: memref<4xf32>) {
  %f = arith.constant 0.0 : f32
  // expected-error @+1 {{f32 should be of base attribute index}}
  %v = "loop.load"(%x, %f) : (memref<4xf32>, f32) -> f32
}

// -----

loop.kernel @loaded_type(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{loaded type f16 differs from the element type f32}}
  %v = "loop.load"(%x, %c0) : (memref<4xf32>, index) -> f16
}

// -----

loop.kernel @stored_type(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %h = arith.constant 1.0 : f16
  // expected-error @+1 {{stored type f16 differs from the element type f32}}
  "loop.store"(%h, %x, %c0) : (f16, memref<4xf32>, index) -> ()
}

// -----

func.func @launch_unknown_kernel(%x: memref<4xf32>) {
  // expected-error @+1 {{no loop.kernel named @missing in the enclosing module}}
  loop.launch @missing(%x) : memref<4xf32>
  func.return
}

// -----

func.func private @not_a_kernel(memref<4xf32>)

func.func @launch_a_function(%x: memref<4xf32>) {
  // expected-error @+1 {{'@not_a_kernel' names a 'func.func', not a loop.kernel}}
  loop.launch @not_a_kernel(%x) : memref<4xf32>
  func.return
}

// -----

loop.kernel @k(%x: memref<4xf32>, %y: memref<4xf32>) {
}

func.func @launch_buffer_types(%x: memref<4xf32>, %y: memref<4xf16>) {
  // expected-error @+1 {{launch passes (memref<4xf32>, memref<4xf16>) but @k takes (memref<4xf32>, memref<4xf32>)}}
  loop.launch @k(%x, %y) : memref<4xf32>, memref<4xf16>
  func.return
}

// -----

loop.kernel @k(%x: memref<4xf32>, %y: memref<4xf32>) {
}

func.func @launch_buffer_count(%x: memref<4xf32>) {
  // expected-error @+1 {{launch passes (memref<4xf32>) but @k takes (memref<4xf32>, memref<4xf32>)}}
  loop.launch @k(%x) : memref<4xf32>
  func.return
}

// -----

loop.kernel @k() {
}

loop.kernel @launches_from_kernel() {
  // expected-error @+1 {{a loop.launch runs on the host, in a func.func, but its parent is 'loop.kernel'}}
  loop.launch @k()
}

// -----

loop.kernel @k() {
}

func.func @nested_reference() {
  // expected-error @+1 {{a loop.launch names a module-level loop.kernel, got the nested reference @k::@inner}}
  "loop.launch"() <{kernel = @k::@inner}> : () -> ()
  func.return
}

// -----

func.func @launch_scalar(%s: f32) {
  // expected-error @+1 {{Unexpected attribute f32}}
  "loop.launch"(%s) <{kernel = @k}> : (f32) -> ()
  func.return
}

// -----

// Malformed custom syntax is a parse error at the offending token.

loop.kernel @fractional_bound(%x: memref<4xf32>) {
  // expected-error @+1 {{Expected integer literal}}
  loop.for %i in 0 to 1.5 {
  }
}

// -----

loop.kernel @unknown_combiner_name(%x: memref<4xf32>) {
  // expected-error @+1 {{unknown combiner 'avg'; expected one of add, mul, max, min}}
  %r = loop.for %i in 0 to 4 reduce avg init 0.0 : f32 {
    %v = loop.load %x[%i] : memref<4xf32>
    loop.yield %v : f32
  }
}

// -----

loop.kernel @state_reduction_results(%x: memref<4xf32>) {
  // expected-error @+1 {{a reduction loop has one result per init, of its type (f32, f32), but it has (f32)}}
  %r = "loop.for"() <{lower = #builtin.int<0>, upper = #builtin.int<4>, inits = [0.0 : f32, 0.0 : f32]}> ({
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<4xf32>
    loop.yield %v, %v : f32, f32
  }, {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32):
    loop.yield %c, %d : f32, f32
  }) : () -> f32
}

// -----

loop.kernel @state_reduction_body_yield(%x: memref<4xf32>) {
  // expected-error @+1 {{a reduction loop body yields one value per accumulator (f32, f32) each iteration, but its loop.yield yields (f32)}}
  %s, %t = loop.for %i in 0 to 4 reduce (%a: f32, %b: f32, %c: f32, %d: f32) init (0.0, 0.0) {
    loop.yield %c, %d : f32, f32
  } {
    %v = loop.load %x[%i] : memref<4xf32>
    loop.yield %v : f32
  }
}

// -----

loop.kernel @state_reduction_combiner_yield(%x: memref<4xf32>) {
  // expected-error @+1 {{a loop's combiner yields the new accumulators (f32, i64), but its loop.yield yields (f32, f32)}}
  %s, %t = loop.for %i in 0 to 4 reduce (%a: f32, %ai: i64, %b: f32, %bi: i64) init (0.0, 0) {
    loop.yield %a, %b : f32, f32
  } {
    %v = loop.load %x[%i] : memref<4xf32>
    %p = arith.index_cast %i : index to i64
    loop.yield %v, %p : f32, i64
  }
}

// -----

loop.kernel @state_reduction_odd_arguments(%x: memref<4xf32>) {
  // expected-error @+1 {{a combiner takes the accumulators then the values folded into them, an even number of arguments, not 3}}
  %s = loop.for %i in 0 to 4 reduce (%a: f32, %b: f32, %c: f32) init (0.0) {
    loop.yield %a : f32
  } {
    %v = loop.load %x[%i] : memref<4xf32>
    loop.yield %v : f32
  }
}

// -----

loop.kernel @state_reduction_combiner_loads(%x: memref<4xf32>) {
  // expected-error @+1 {{a loop's combiner holds only arith and math ops, found 'loop.load'}}
  %s = loop.for %i in 0 to 4 reduce (%a: f32, %b: f32) init (0.0) {
    %c0 = arith.constant 0 : index
    %w = loop.load %x[%c0] : memref<4xf32>
    loop.yield %w : f32
  } {
    %v = loop.load %x[%i] : memref<4xf32>
    loop.yield %v : f32
  }
}

// -----

loop.kernel @both_combiners(%x: memref<4xf32>) {
  // expected-error @+1 {{a reduction loop has a named combiner or a combiner region, not both}}
  %r = "loop.for"() <{lower = #builtin.int<0>, upper = #builtin.int<4>, kind = #prim<combiner add>, init = 0.0 : f32, inits = [0.0 : f32]}> ({
  ^bb0(%i: index):
    %v = loop.load %x[%i] : memref<4xf32>
    loop.yield %v : f32
  }, {
  ^bb0(%a: f32, %b: f32):
    loop.yield %b : f32
  }) : () -> f32
}

// -----

loop.kernel @memref_accumulator(%x: memref<4xf32>) {
  // expected-error @+1 {{init 0.0 is not a valid memref<4xf32> constant}}
  %r = loop.for %i in 0 to 4 reduce add init 0.0 : memref<4xf32> {
    loop.yield %x : memref<4xf32>
  }
}

// -----

loop.kernel @extra_block(%x: memref<4xf32>) {
  // expected-error @+1 {{a loop.for body is a single block}}
  loop.for %i in 0 to 4 {
    loop.yield
  ^bb1:
    loop.yield
  }
}

// -----

loop.kernel @load_from_scalar(%x: memref<4xf32>) {
  %f = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{an accessed buffer must be a memref, got f32}}
  %v = loop.load %f[%c0] : f32
}

// -----

loop.kernel @float_index_syntax(%x: memref<4xf32>) {
  %f = arith.constant 0.0 : f32
  // expected-error @+1 {{operand is used with type index, but has been previously used or defined with type f32}}
  %v = loop.load %x[%f] : memref<4xf32>
}

// -----

func.func @launch_scalar_syntax(%s: f32) {
  // expected-error @+1 {{loop.launch argument must be a memref or index, got f32}}
  loop.launch @k(%s) : f32
  func.return
}

// -----

func.func @launch_type_count(%x: memref<4xf32>) {
  // expected-error @+1 {{expected 2 operand types but had 1}}
  loop.launch @k(%x) : memref<4xf32>, memref<4xf32>
  func.return
}

// -----

loop.kernel @contract_rank_one(%x: memref<4x8xf32>, %w: memref<8xf32>) {
  // expected-error @+1 {{the parallel iteration space [batch.., m, n] has at least the dims m and n, got [4]}}
  loop.contract (%i) in [4], k in 8, %acc = sum %x[d0, k] * %w[k] : memref<4x8xf32>, memref<8xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_empty_extent(%x: memref<4x8xf32>, %w: memref<8x1xf32>) {
  // expected-error @+1 {{extents must be positive, got [4, 0] and k in 8}}
  loop.contract (%i, %j) in [4, 0], k in 8, %acc = sum %x[d0, k] * %w[k, 0] : memref<4x8xf32>, memref<8x1xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_epilogue_arguments(%x: memref<4x8xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{the epilogue takes 2 indices and the accumulated value, but it takes (index, f32)}}
  "loop.contract"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>, parallel = array<i64: 4, 2>, reduction = #builtin.int<8>, lhs_map = affine_map<(d0, d1, d2) -> (d0, d2)>, rhs_map = affine_map<(d0, d1, d2) -> (d2, d1)>}> ({
  ^bb0(%i: index, %acc: f32):
    "loop.yield"() : () -> ()
  }) : (memref<4x8xf32>, memref<8x2xf32>) -> ()
}

// -----

loop.kernel @contract_index_accumulator(%x: memref<4x8xindex>, %w: memref<8x2xindex>) {
  // expected-error @+1 {{the accumulator is a float or an integer, got index}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, k] * %w[k, d1] : memref<4x8xindex>, memref<8x2xindex> -> index {
  }
}

// -----

loop.kernel @contract_map_dims(%x: memref<4x8xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{the lhs indexing map (d0, d1) -> (d0, d1) must map the 3 iteration dims (the parallel dims, then k) without symbols}}
  "loop.contract"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>, parallel = array<i64: 4, 2>, reduction = #builtin.int<8>, lhs_map = affine_map<(d0, d1) -> (d0, d1)>, rhs_map = affine_map<(d0, d1, d2) -> (d2, d1)>}> ({
  ^bb0(%i: index, %j: index, %acc: f32):
    "loop.yield"() : () -> ()
  }) : (memref<4x8xf32>, memref<8x2xf32>) -> ()
}

// -----

loop.kernel @contract_map_rank(%x: memref<4x8xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{the rhs indexing map gives 3 indices, but the rhs memref<8x2xf32> has rank 2}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, k] * %w[k, d1, 0] : memref<4x8xf32>, memref<8x2xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_zero_of_wide_dim(%x: memref<4x8xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{lhs dim 0 of size 4 is read at 0; only a size-1 dim can be}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[0, k] * %w[k, d1] : memref<4x8xf32>, memref<8x2xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_extent_mismatch(%x: memref<4x8xf32>, %w: memref<6x2xf32>) {
  // expected-error @+1 {{rhs dim 0 has size 6, but it is read at k, of extent 8}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, k] * %w[k, d1] : memref<4x8xf32>, memref<6x2xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_affine_index(%x: memref<4x8xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{each index of the lhs indexing map is an iteration dim or 0, got (d0 + d1)}}
  "loop.contract"(%x, %w) <{operandSegmentSizes = array<i32: 1, 1, 0>, parallel = array<i64: 4, 2>, reduction = #builtin.int<8>, lhs_map = affine_map<(d0, d1, d2) -> (d0 + d1, d2)>, rhs_map = affine_map<(d0, d1, d2) -> (d2, d1)>}> ({
  ^bb0(%i: index, %j: index, %acc: f32):
    "loop.yield"() : () -> ()
  }) : (memref<4x8xf32>, memref<8x2xf32>) -> ()
}

// -----

loop.kernel @contract_diagonal(%x: memref<4x8x8xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{the lhs reads an iteration dim at two of its dims}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, k, k] * %w[k, d1] : memref<4x8x8xf32>, memref<8x2xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_without_k(%x: memref<4x1xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{the lhs is read along k}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, 0] * %w[k, d1] : memref<4x1xf32>, memref<8x2xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_lhs_along_n(%x: memref<2x8xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{the lhs cannot be read along n (d1): an element of the lhs is used across columns}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d1, k] * %w[k, d1] : memref<2x8xf32>, memref<8x2xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_rhs_along_m(%x: memref<4x8xf32>, %w: memref<8x4xf32>) {
  // expected-error @+1 {{the rhs cannot be read along m (d0): an element of the rhs is used across rows}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, k] * %w[k, d0] : memref<4x8xf32>, memref<8x4xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_narrowing(%x: memref<4x8xf32>, %w: memref<8x2xbf16>) {
  // expected-error @+1 {{lhs elements of type f32 do not widen to the accumulator type bf16: it is the same type or a wider float}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, k] * %w[k, d1] : memref<4x8xf32>, memref<8x2xbf16> -> bf16 {
  }
}

// -----

loop.kernel @contract_integer_widening(%x: memref<4x8xi8>, %w: memref<8x2xi32>) {
  // expected-error @+1 {{lhs elements of type i8 do not widen to the accumulator type i32: it is the same type or a wider float}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, k] * %w[k, d1] : memref<4x8xi8>, memref<8x2xi32> -> i32 {
  }
}

// -----

loop.kernel @contract_yields_value(%x: memref<4x8xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{the epilogue ends in a loop.yield of nothing, but it ends in 'loop.yield'}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, k] * %w[k, d1] : memref<4x8xf32>, memref<8x2xf32> -> f32 {
    loop.yield %acc : f32
  }
}

// -----

loop.kernel @contract_in_loop(%x: memref<4x8xf32>, %w: memref<8x2xf32>) {
  loop.for %t in 0 to 2 {
    // expected-error @+1 {{'loop.contract' expects parent op 'loop.kernel'}}
    loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, k] * %w[k, d1] : memref<4x8xf32>, memref<8x2xf32> -> f32 {
    }
  }
}

// -----

loop.kernel @contract_map_entry_syntax(%x: memref<4x8xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{an index of a loop.contract operand is d0 to d1, k or 0}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d2, k] * %w[k, d1] : memref<4x8xf32>, memref<8x2xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_index_count_syntax(%x: memref<4x8xf32>, %w: memref<8x2xf32>) {
  // expected-error @+1 {{1 indices name 2 parallel dims}}
  loop.contract (%i) in [4, 2], k in 8, %acc = sum %x[d0, k] * %w[k, d1] : memref<4x8xf32>, memref<8x2xf32> -> f32 {
  }
}

// -----

loop.kernel @contract_operand_syntax(%x: memref<4x8xf32>, %w: f32) {
  // expected-error @+1 {{the rhs of a loop.contract must be a memref, got f32}}
  loop.contract (%i, %j) in [4, 2], k in 8, %acc = sum %x[d0, k] * %w[k, d1] : memref<4x8xf32>, f32 -> f32 {
  }
}

// -----

// A buffer passed twice where the kernel writes one of the two: rejected here, at the level
// that wrote it, not two passes later at kernel.launch.
loop.kernel @k_scale(%x: memref<4xf32>, %out: memref<4xf32>) {
  loop.for %i in 0 to 4 {
    %v = loop.load %x[%i] : memref<4xf32>
    %d = arith.addf %v, %v : f32
    loop.store %d, %out[%i] : memref<4xf32>
  }
}
func.func @forward(%x: memref<4xf32>) -> memref<4xf32> {
  // expected-error @+1 {{launch passes one buffer as arguments #0 and #1 of @k_scale, which writes one of them; kernel arguments must not alias (they are __restrict__)}}
  loop.launch @k_scale(%x, %x) : memref<4xf32>, memref<4xf32>
  func.return %x : memref<4xf32>
}

// -----

// Passing one buffer twice to a kernel that only reads it is fine.
loop.kernel @k_add(%a: memref<4xf32>, %b: memref<4xf32>, %out: memref<4xf32>) {
  loop.for %i in 0 to 4 {
    %u = loop.load %a[%i] : memref<4xf32>
    %v = loop.load %b[%i] : memref<4xf32>
    %d = arith.addf %u, %v : f32
    loop.store %d, %out[%i] : memref<4xf32>
  }
}
func.func @forward(%x: memref<4xf32>) -> memref<4xf32> {
  %y = memref.alloc() : memref<4xf32>
  loop.launch @k_add(%x, %x, %y) : memref<4xf32>, memref<4xf32>, memref<4xf32>
  func.return %y : memref<4xf32>
}

// --- index ranges: bounds that fit, accesses in range (issue 12 §1) ----------------------------

// 2**64 would wrap to 0 in the kernel's 64-bit index: a loop that runs zero times.
loop.kernel @bound_over_index_width(%x: memref<4xf32>) {
  // expected-error @+1 {{loop bound 18446744073709551616 does not fit the 64-bit index a kernel counts iterations in (at most 9223372036854775807)}}
  loop.for %i in 0 to 18446744073709551616 {
  }
}

// -----

loop.kernel @constant_index_outside(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c9 = arith.constant 9 : index
  loop.for %i in 0 to 4 {
    // expected-error @+1 {{index %c9 of memref<4xf32> is 9, outside dimension 0 of size 4}}
    %v = loop.load %x[%c9] : memref<4xf32>
    loop.store %v, %y[%i] : memref<4xf32>
  }
}

// -----

loop.kernel @loop_over_the_dimension(%x: memref<64xf32>, %y: memref<128xf32>) {
  loop.for %j in 0 to 128 {
    // expected-error @+1 {{index %j of memref<64xf32> ranges over [0, 127], outside dimension 0 of size 64}}
    %v = loop.load %x[%j] : memref<64xf32>
    loop.store %v, %y[%j] : memref<128xf32>
  }
}

// -----

// Through index arithmetic, in the second dimension, at a store.
loop.kernel @shifted_index(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %c1 = arith.constant 1 : index
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 8 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      %next = arith.addi %j, %c1 : index
      // expected-error @+1 {{index %next of memref<4x8xf32> ranges over [1, 8], outside dimension 1 of size 8}}
      loop.store %v, %y[%i, %next] : memref<4x8xf32>
    }
  }
}

// -----

loop.kernel @index_constant_over_index_width(%x: memref<4xf32>) {
  // expected-error @+1 {{index constant 18446744073709551616 does not fit the 64-bit index a kernel computes in (-9223372036854775808 to 9223372036854775807)}}
  %big = arith.constant 18446744073709551616 : index
}

// -----

// A loaded index is unknown, and so is what it bounds: the access is accepted.
loop.kernel @gather_rows(%table: memref<8x4xf32>, %ids: memref<2xi64>, %y: memref<2x4xf32>) {
  loop.for %i in 0 to 2 {
    loop.for %j in 0 to 4 {
      %id = loop.load %ids[%i] : memref<2xi64>
      %row = arith.index_cast %id : i64 to index
      %v = loop.load %table[%row, %j] : memref<8x4xf32>
      loop.store %v, %y[%i, %j] : memref<2x4xf32>
    }
  }
}

// -----

// A loop that never runs accesses nothing.
loop.kernel @empty_loop(%x: memref<4xf32>) {
  loop.for %i in 9 to 9 {
    %v = loop.load %x[%i] : memref<4xf32>
  }
}

// -----

// The epilogue runs at each point of the 16 x 32 output.
loop.kernel @contract_epilogue_outside(%x: memref<16x4xf32>, %w: memref<32x4xf32>, %y: memref<16x16xf32>) {
  loop.contract (%i, %j) in [16, 32], k in 4, %acc = sum %x[d0, k] * %w[d1, k] : memref<16x4xf32>, memref<32x4xf32> -> f32 {
    // expected-error @+1 {{index %j of memref<16x16xf32> ranges over [0, 31], outside dimension 1 of size 16}}
    loop.store %acc, %y[%i, %j] : memref<16x16xf32>
  }
}

// -----

// --- use before definition ---------------------------------------------------------------------

loop.kernel @use_before_definition(%x: memref<4xf32>, %y: memref<4xf32>) {
  loop.for %i in 0 to 4 {
    %v = loop.load %x[%i] : memref<4xf32>
    // expected-error @+1 {{operand #1 (%u) is used before its definition}}
    %w = arith.addf %v, %u : f32
    %u = arith.addf %v, %v : f32
    loop.store %w, %y[%i] : memref<4xf32>
  }
}

// -----

// Defined after the loop whose body uses it.
loop.kernel @defined_after_the_region(%x: memref<4xf32>, %y: memref<4xf32>) {
  loop.for %i in 0 to 4 {
    %v = loop.load %x[%i] : memref<4xf32>
    // expected-error @+1 {{operand #1 (%one) is used before its definition}}
    %w = arith.addf %v, %one : f32
    loop.store %w, %y[%i] : memref<4xf32>
  }
  %one = arith.constant 1.0 : f32
}

// -----

// A reduction loop's own result inside its body.
loop.kernel @own_result(%x: memref<4xf32>, %y: memref<1xf32>) {
  %s = loop.for %i in 0 to 4 reduce add init 0.0 : f32 {
    %v = loop.load %x[%i] : memref<4xf32>
    // expected-error @+1 {{operand #1 (%s) is a result of the 'loop.for' op around this use}}
    %w = arith.addf %v, %s : f32
    loop.yield %w : f32
  }
}

// -----

func.func @forward(%x: memref<4xf32>) -> memref<4xf32> {
  // expected-error @+1 {{operand #1 (%y) is used before its definition}}
  loop.launch @k(%x, %y) : memref<4xf32>, memref<4xf32>
  %y = memref.alloc() : memref<4xf32>
  func.return %y : memref<4xf32>
}
loop.kernel @k(%x: memref<4xf32>, %y: memref<4xf32>) {
}

// -----

loop.kernel @attention_output(%q: memref<2x5x8xf32>, %k: memref<2x7x8xf32>, %v: memref<2x7x4xf32>, %o: memref<2x5x8xf32>) {
  // expected-error @+1 {{the output has shape [2, 5, 4], got [2, 5, 8]}}
  loop.attention %q, %k, %v scale 0.125 into %o : memref<2x5x8xf32>, memref<2x7x8xf32>, memref<2x7x4xf32> into memref<2x5x8xf32>
}

// -----

// expected-error @+1 {{a kernel takes the dynamic size (its last argument, an index) only when a buffer has a dynamic dim (?)}}
loop.kernel @size_without_dynamic_buffers(%x: memref<4xf32>, %s: index) {
}

// -----

loop.kernel @bound_not_the_size(%x: memref<?xf32>, %s: index) {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{a loop with an upper bound operand runs to the dynamic size: its kernel's last argument, an index}}
  loop.for %i in 0 to %c4 {
  }
}

// -----

loop.kernel @dynamic_loop_from_one(%x: memref<?xf32>, %s: index) {
  // expected-error @+1 {{a loop to the dynamic size starts at 0, not 1}}
  loop.for %i in 1 to %s {
  }
}

// -----

loop.kernel @contract_sibling_types(%x: memref<4x8xf32>, %w: memref<8x2xf32>, %v: memref<8x2xf16>) {
  // expected-error @+1 {{sibling rhs have one type, read at one indexing map, got memref<8x2xf32>, memref<8x2xf16>}}
  loop.contract (%i, %j) in [4, 2], k in 8, (%a, %b) = sum %x[d0, k] * (%w, %v)[k, d1] : memref<4x8xf32>, memref<8x2xf32>, memref<8x2xf16> -> f32 {
  }
}

// -----

loop.kernel @contract_sibling_accumulators(%x: memref<4x8xf32>, %w: memref<8x2xf32>, %v: memref<8x2xf32>) {
  // expected-error @+1 {{the epilogue takes 2 indices and the 2 accumulated values (one per rhs, of one type), but it takes (index, index, f32)}}
  "loop.contract"(%x, %w, %v) <{operandSegmentSizes = array<i32: 1, 2, 0>, parallel = array<i64: 4, 2>, reduction = #builtin.int<8>, lhs_map = affine_map<(d0, d1, d2) -> (d0, d2)>, rhs_map = affine_map<(d0, d1, d2) -> (d2, d1)>}> ({
  ^bb0(%i: index, %j: index, %a: f32):
    loop.yield
  }) : (memref<4x8xf32>, memref<8x2xf32>, memref<8x2xf32>) -> ()
}

// -----

loop.kernel @contract_no_rhs(%x: memref<4x8xf32>) {
  // expected-error @+1 {{a loop.contract multiplies its lhs by at least one rhs}}
  "loop.contract"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0>, parallel = array<i64: 4, 2>, reduction = #builtin.int<8>, lhs_map = affine_map<(d0, d1, d2) -> (d0, d2)>, rhs_map = affine_map<(d0, d1, d2) -> (d2, d1)>}> ({
  ^bb0(%i: index, %j: index):
    loop.yield
  }) : (memref<4x8xf32>) -> ()
}

// -----

loop.kernel @contract_sibling_count(%x: memref<4x8xf32>, %w: memref<8x2xf32>, %v: memref<8x2xf32>) {
  // expected-error @+1 {{1 accumulated values name the sums of 2 rhs}}
  loop.contract (%i, %j) in [4, 2], k in 8, %a = sum %x[d0, k] * (%w, %v)[k, d1] : memref<4x8xf32>, memref<8x2xf32>, memref<8x2xf32> -> f32 {
  }
}
