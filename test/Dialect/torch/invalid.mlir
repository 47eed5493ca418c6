// RUN: emmy-opt %s --split-input-file --verify-diagnostics

func.func @dynamic_dim_changes_type(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{an elementwise op keeps its operand type tensor<?x4xf32>, but the result is tensor<4x4xf32>}}
  %0 = torch.neg %x : tensor<?x4xf32> -> tensor<4x4xf32>
  func.return
}

// -----

func.func @unary_changes_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{an elementwise op keeps its operand type tensor<4xf32>, but the result is tensor<4xf16>}}
  %0 = torch.neg %x : tensor<4xf32> -> tensor<4xf16>
  func.return
}

// -----

func.func @float_op_on_integers(%x: tensor<4xi64>) {
  // expected-error @+1 {{expected a floating-point tensor (f16, bf16, f32 or f64), got tensor<4xi64>}}
  %0 = torch.exp %x : tensor<4xi64> -> tensor<4xi64>
  func.return
}

// -----

func.func @unsupported_element_type(%x: tensor<4xui8>) {
  // expected-error @+1 {{expected a tensor of f16, bf16, f32, f64, i1, i8, i16, i32 or i64, got tensor<4xui8>}}
  %0 = torch.relu %x : tensor<4xui8> -> tensor<4xui8>
  func.return
}

// -----

func.func @gelu_approximation(%x: tensor<4xf32>) {
  // expected-error @+1 {{gelu approximation must be one of none, tanh, got 'erf'}}
  %0 = torch.gelu %x approximate "erf" : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @clamp_without_bounds(%x: tensor<4xf32>) {
  // expected-error @+1 {{clamp needs at least one of min and max}}
  %0 = torch.clamp %x : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @to_changes_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{torch.to keeps the shape [4], but the result has shape [2, 2]}}
  %0 = torch.to %x : tensor<4xf32> -> tensor<2x2xf16>
  func.return
}

// -----

func.func @bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{shapes [2, 3], [4] do not broadcast: dim -1 has sizes [3, 4]}}
  %0 = torch.add %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @binary_dtype_mismatch(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{operands must share one element type, got f32, f16; convert with torch.to first}}
  %0 = torch.mul %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  func.return
}

// -----

func.func @binary_result_shape(%a: tensor<2x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{broadcasting the operands gives shape [2, 3], but the result has shape [2, 1]}}
  %0 = torch.sub %a, %b : tensor<2x1xf32>, tensor<3xf32> -> tensor<2x1xf32>
  func.return
}

// -----

func.func @integer_division(%a: tensor<4xi64>) {
  // expected-error @+1 {{expected a floating-point tensor (f16, bf16, f32 or f64), got tensor<4xi64>}}
  %0 = torch.div %a, %a : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  func.return
}

// -----

func.func @integer_hypot(%a: tensor<4xi64>) {
  // expected-error @+1 {{expected a floating-point tensor (f16, bf16, f32 or f64), got tensor<4xi64>}}
  %0 = torch.hypot %a, %a : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  func.return
}

// -----

func.func @bitwise_on_floats(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected a tensor of i1, i8, i16, i32 or i64 (bool or integer), got tensor<4xf32>}}
  %0 = torch.bitwise_and %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @gcd_of_floats(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected a tensor of i8, i16, i32 or i64}}
  %0 = torch.gcd %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @comparison_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected a tensor of i1, got tensor<4xf32>}}
  %0 = torch.gt %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @where_branch_types(%m: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xbf16>) {
  // expected-error @+1 {{operands must share one element type, got f32, bf16, f32}}
  %0 = torch.where %m, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xbf16> -> tensor<4xf32>
  func.return
}

// -----

func.func @where_condition_type(%m: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{expected a tensor of i1, got tensor<4xf32>}}
  %0 = torch.where %m, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @reduce_dim_out_of_range(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{dim 2 is out of range for a rank-2 tensor}}
  %0 = torch.sum %x dims [2] : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @reduce_dims_not_normalized(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{dims [1, 0] must be sorted and unique}}
  %0 = torch.amax %x dims [1, 0] : tensor<2x8xf32> -> tensor<f32>
  func.return
}

// -----

func.func @reduce_result_shape(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{reducing dims [1] gives shape [2, 1], but the result has shape [2]}}
  %0 = torch.mean %x dims [1] keepdim : tensor<2x8xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @argmax_two_dims(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'torch.argmax' finds a position along one dim, but dims is [0, 1]}}
  %0 = torch.argmax %x dims [0, 1] : tensor<2x8xf32> -> tensor<i64>
  func.return
}

// -----

func.func @argmin_result_type(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'torch.argmin' gives i64 positions, but its result has element type f32}}
  %0 = torch.argmin %x dims [1] : tensor<2x8xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @linear_k_mismatch(%x: tensor<2x16xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{contraction sizes differ: [2, 16] has 16 at dim -1 but [4, 8] has 8 at dim 1}}
  %0 = torch.linear %x, %w : tensor<2x16xf32>, tensor<4x8xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @linear_bias_shape(%x: tensor<2x16xf32>, %w: tensor<4x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{linear bias must have shape [4] (the weight's N), got [16]}}
  %0 = torch.linear %x, %w bias %b : tensor<2x16xf32>, tensor<4x16xf32> bias tensor<16xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x16xf32>, %w: tensor<16xf32>) {
  // expected-error @+1 {{linear takes an input of rank >= 1 and a rank-2 weight [N, K], got [2, 16] and [16]}}
  %0 = torch.linear %x, %w : tensor<2x16xf32>, tensor<16xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @matmul_vector(%a: tensor<8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{torch.matmul takes operands of rank >= 2 (unsqueeze vectors first), got [8] and [8, 4]}}
  %0 = torch.matmul %a, %b : tensor<8xf32>, tensor<8x4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @matmul_batch_broadcast(%a: tensor<3x2x8xf32>, %b: tensor<4x8x5xf32>) {
  // expected-error @+1 {{shapes [3], [4] do not broadcast: dim -1 has sizes [3, 4]}}
  %0 = torch.matmul %a, %b : tensor<3x2x8xf32>, tensor<4x8x5xf32> -> tensor<3x2x5xf32>
  func.return
}

// -----

func.func @matmul_result_shape(%a: tensor<2x8xf32>, %b: tensor<8x5xf32>) {
  // expected-error @+1 {{[..., M, K] @ [..., K, N] gives shape [2, 5], but the result has shape [5, 2]}}
  %0 = torch.matmul %a, %b : tensor<2x8xf32>, tensor<8x5xf32> -> tensor<5x2xf32>
  func.return
}

// -----

func.func @bmm_broadcast(%a: tensor<1x2x8xf32>, %b: tensor<4x8x5xf32>) {
  // expected-error @+1 {{bmm takes rank-3 operands with one batch size, got batch dims [1] and [4]}}
  %0 = torch.bmm %a, %b : tensor<1x2x8xf32>, tensor<4x8x5xf32> -> tensor<4x2x5xf32>
  func.return
}

// -----

func.func @norm_shape_not_suffix(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{normalized_shape [2] must be a non-empty suffix of the input shape [2, 8]}}
  %0 = torch.rms_norm %x normalized_shape [2] eps 1.0e-05 : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @norm_weight_shape(%x: tensor<2x8xf32>, %w: tensor<2x8xf32>) {
  // expected-error @+1 {{weight and bias must have the normalized shape [8], got [2, 8]}}
  %0 = torch.layer_norm %x bias %w normalized_shape [8] eps 1.0e-05 : tensor<2x8xf32> bias tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @softmax_dim(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{dim -1 is out of range for a rank-2 tensor}}
  %0 = torch.softmax %x dim -1 : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @cumsum_dim(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{dim 2 is out of range for a rank-2 tensor}}
  %0 = torch.cumsum %x dim 2 : tensor<2x8xf32> -> tensor<2x8xf32>
  func.return
}

// -----

func.func @cumsum_type(%x: tensor<2x8xi32>) {
  // expected-error @+1 {{torch.cumsum keeps its operand type tensor<2x8xi32>, but the result is tensor<2x8xi64>}}
  %0 = torch.cumsum %x dim 1 : tensor<2x8xi32> -> tensor<2x8xi64>
  func.return
}

// -----

func.func @sdpa_head_dim(%q: tensor<2x8x16xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>) {
  // expected-error @+1 {{attention needs query [..., L, E], key [..., S, E], value [..., S, Ev], got [2, 8, 16], [2, 6, 8], [2, 6, 8]}}
  %0 = torch.sdpa %q, %k, %v scale 0.25 : tensor<2x8x16xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x8x8xf32>
  func.return
}

// -----

func.func @sdpa_batch(%q: tensor<2x8x16xf32>, %k: tensor<1x6x16xf32>) {
  // expected-error @+1 {{query, key and value must share batch dims, got [2], [1], [1]}}
  %0 = torch.sdpa %q, %k, %k scale 0.25 : tensor<2x8x16xf32>, tensor<1x6x16xf32>, tensor<1x6x16xf32> -> tensor<2x8x16xf32>
  func.return
}

// -----

func.func @sdpa_mask_shape(%q: tensor<2x8x16xf32>, %k: tensor<2x6x16xf32>, %m: tensor<8x8xi1>) {
  // expected-error @+1 {{attn_mask of shape [8, 8] must broadcast to the scores' shape [2, 8, 6]}}
  %0 = torch.sdpa %q, %k, %k mask %m scale 0.25 : tensor<2x8x16xf32>, tensor<2x6x16xf32>, tensor<2x6x16xf32> mask tensor<8x8xi1> -> tensor<2x8x16xf32>
  func.return
}

// -----

func.func @sdpa_mask_type(%q: tensor<8x16xf16>, %m: tensor<8x8xf32>) {
  // expected-error @+1 {{attn_mask must be i1 or the query's f16, got f32}}
  %0 = torch.sdpa %q, %q, %q mask %m scale 0.25 : tensor<8x16xf16>, tensor<8x16xf16>, tensor<8x16xf16> mask tensor<8x8xf32> -> tensor<8x16xf16>
  func.return
}

// -----

func.func @embedding_float_indices(%w: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{expected a tensor of i32 or i64 indices, got tensor<3xf32>}}
  %0 = torch.embedding %w, %i : tensor<10x4xf32>, tensor<3xf32> -> tensor<3x4xf32>
  func.return
}

// -----

func.func @embedding_result(%w: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{looking up rows gives shape [3, 4], but the result has shape [3, 10]}}
  %0 = torch.embedding %w, %i : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x10xf32>
  func.return
}

// -----

func.func @reshape_numel(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{reshape keeps the number of elements: [2, 8] has 16, the result [4, 5] has 20}}
  %0 = torch.reshape %x : tensor<2x8xf32> -> tensor<4x5xf32>
  func.return
}

// -----

func.func @expand_non_unit(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{cannot expand shape [2, 8] to [4, 8]}}
  %0 = torch.expand %x : tensor<2x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @bad_permute(%x: tensor<2x8x4xf32>) {
  // expected-error @+1 {{dims [0, 2, 2] must be a permutation of 0..2}}
  %0 = torch.permute %x dims [0, 2, 2] : tensor<2x8x4xf32> -> tensor<2x4x4xf32>
  func.return
}

// -----

func.func @permute_result(%x: tensor<2x8x4xf32>) {
  // expected-error @+1 {{permuting by [2, 0, 1] gives shape [4, 2, 8], but the result has shape [8, 4, 2]}}
  %0 = torch.permute %x dims [2, 0, 1] : tensor<2x8x4xf32> -> tensor<8x4x2xf32>
  func.return
}

// -----

func.func @transpose_dim(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{dim 2 is out of range for a rank-2 tensor}}
  %0 = torch.transpose %x dims 0, 2 : tensor<2x8xf32> -> tensor<8x2xf32>
  func.return
}

// -----

func.func @unsqueeze_dim(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{dim 3 is out of range for a rank-3 tensor}}
  %0 = torch.unsqueeze %x dim 3 : tensor<2x8xf32> -> tensor<2x8x1xf32>
  func.return
}

// -----

func.func @squeeze_non_unit(%x: tensor<2x1xf32>) {
  // expected-error @+1 {{squeezed dim 0 must have size 1, got 2}}
  %0 = torch.squeeze %x dims [0] : tensor<2x1xf32> -> tensor<1xf32>
  func.return
}

// -----

func.func @slice_bounds(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{slice bounds must satisfy 0 <= start <= end <= 8 (the size of dim 1) and step >= 1, got start -2, end 8, step 1}}
  %0 = torch.slice %x dim 1 start -2 end 8 step 1 : tensor<2x8xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @slice_result(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{slicing dim 1 gives shape [2, 3], but the result has shape [2, 4]}}
  %0 = torch.slice %x dim 1 start 0 end 8 step 3 : tensor<2x8xf32> -> tensor<2x4xf32>
  func.return
}

// -----

func.func @cat_mismatch(%a: tensor<2x8xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+1 {{cat inputs must agree on every dim but 1, got [2, 8] and [3, 4]}}
  %0 = torch.cat %a, %b dim 1 : tensor<2x8xf32>, tensor<3x4xf32> -> tensor<2x12xf32>
  func.return
}

// -----

func.func @cat_element_types(%a: tensor<2x8xf32>, %b: tensor<2x8xf16>) {
  // expected-error @+1 {{operands must share one element type, got f32, f16, f32; convert with torch.to first}}
  %0 = torch.cat %a, %b dim 0 : tensor<2x8xf32>, tensor<2x8xf16> -> tensor<4x8xf32>
  func.return
}

// -----

func.func @constant_literal() {
  // expected-error @+1 {{torch.constant takes a dense<...> literal, got 1.000000e+00 : f32}}
  %0 = torch.constant 1.0 : f32
  func.return
}

// -----

// A value is used after its definition (issue 12 §1): the error is at the use, before any pass.
func.func @use_before_definition(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 (%n) is used before its definition}}
  %r = torch.relu %n : tensor<4xf32> -> tensor<4xf32>
  %n = torch.neg %x : tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

func.func @constant_out_of_range() {
  // expected-error @+1 {{Integer value 99999999999 is out of range for type i32}}
  %0 = torch.constant dense<99999999999> : tensor<4xi32>
  func.return
}

// -----

// Constant indices past the table's rows would reach the kernel as data no verifier sees, and
// read outside the table (issue 12 §1).
func.func @embedding_constant_index_outside(%w: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %ids = torch.constant dense<[0, 9]> : tensor<2xi64>
  // expected-error @+1 {{constant index 9 is outside the 4 rows of the table it picks from}}
  %e = torch.embedding %w, %ids : tensor<4x8xf32>, tensor<2xi64> -> tensor<2x8xf32>
  func.return %e : tensor<2x8xf32>
}

// -----

func.func @constant_hex_width() {
  // expected-error @+1 {{a hexadecimal float literal is the 16 bits of an bf16, without a sign, got 0xFF800000}}
  %0 = torch.constant dense<0xFF800000> : tensor<4xbf16>
  func.return
}

// -----

func.func @constant_hex_width_in_a_list() {
  // expected-error @+1 {{a hexadecimal float literal is the 32 bits of an f32, without a sign, got 0x7F80000000}}
  %0 = torch.constant dense<[1.0, 0x7F80000000]> : tensor<2xf32>
  func.return
}

// -----

func.func @constant_float_for_integers() {
  // expected-error @+1 {{a i64 literal is an integer, got 1.5}}
  %0 = torch.constant dense<1.5> : tensor<4xi64>
  func.return
}

// -----

func.func @constant_vector() {
  // expected-error @+1 {{torch.constant takes a statically shaped tensor of integers, index or floats, got vector<4xf32>}}
  %0 = torch.constant dense<1.5> : vector<4xf32>
  func.return
}

// -----

// A splat holds one element of the result's element type.
func.func @constant_splat_element_type() {
  // expected-error @+1 {{a constant of type tensor<4xf32> holds a value of that type, or a splat of one f32 (a rank-0 tensor), not tensor<f64>}}
  %0 = "torch.constant"() <{value = dense<1.0> : tensor<f64>}> : () -> tensor<4xf32>
  func.return
}

// -----

func.func @constant_shape() {
  // expected-error @+1 {{a constant of type tensor<4xf32> holds a value of that type, or a splat of one f32 (a rank-0 tensor), not tensor<2xf32>}}
  %0 = "torch.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<4xf32>
  func.return
}

// -----

func.func @iota_of_floats() {
  // expected-error @+1 {{expected a tensor of i32 or i64 indices, got tensor<4xf32>}}
  %0 = torch.iota dim 0 : tensor<4xf32>
  func.return
}

// -----

func.func @iota_past_the_rank() {
  // expected-error @+1 {{dim 2 is out of range for a rank-2 tensor}}
  %0 = torch.iota dim 2 : tensor<4x3xi64>
  func.return
}

// -----

// erfc, lgamma and digamma are fits to f32's precision, refused in f64 (PyTorch runs them).
func.func @fitted_in_f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{torch.lgamma is computed to f32's precision (a fit): f16, bf16 or f32, not f64}}
  %0 = torch.lgamma %x : tensor<4xf64> -> tensor<4xf64>
  func.return %0 : tensor<4xf64>
}
