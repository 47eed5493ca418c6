// A value several kernels read (a norm feeding the Q, K and V projections, each reshaping it
// to [rows, 16]) is one result of the kernel that computes it, written once: the fused stage
// runs cse before fuse-prims, so the three reshapes are one value.

// RUN: emmy-opt --torch-to-fused %s | filecheck %s
// CHECK:      %[[H:.*]] = fused.kernel @k_rms_norm_linear(%p_norm_weight, %x) : (tensor<16xbf16>, tensor<2x4x16xbf16>) -> tensor<8x16xbf16> {
// CHECK:      fused.kernel @k_linear(%p_q_weight, %[[H]])
// CHECK:      fused.kernel @k_linear(%p_k_weight, %[[H]])
// CHECK:      fused.kernel @k_linear_mul_add(%p_v_weight, %[[H]],

builtin.module attributes {torch.float32_matmul_precision = "highest"} {
  func.func @forward(%p_norm_weight: tensor<16xbf16> {emmy.param = "norm.weight"}, %p_q_weight: tensor<8x16xbf16> {emmy.param = "q.weight"}, %p_k_weight: tensor<8x16xbf16> {emmy.param = "k.weight"}, %p_v_weight: tensor<8x16xbf16> {emmy.param = "v.weight"}, %x: tensor<2x4x16xbf16> {emmy.input = "x"}) -> tensor<2x4x8xbf16> {
    %rms_norm = torch.rms_norm %x weight %p_norm_weight normalized_shape [16] eps 1.1920928955078125e-07 : tensor<2x4x16xbf16> weight tensor<16xbf16> -> tensor<2x4x16xbf16>
    %linear = torch.linear %rms_norm, %p_q_weight : tensor<2x4x16xbf16>, tensor<8x16xbf16> -> tensor<2x4x8xbf16>
    %linear_1 = torch.linear %rms_norm, %p_k_weight : tensor<2x4x16xbf16>, tensor<8x16xbf16> -> tensor<2x4x8xbf16>
    %linear_2 = torch.linear %rms_norm, %p_v_weight : tensor<2x4x16xbf16>, tensor<8x16xbf16> -> tensor<2x4x8xbf16>
    %mul = torch.mul %linear_1, %linear_2 : tensor<2x4x8xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x8xbf16>
    %add = torch.add %linear, %mul : tensor<2x4x8xbf16>, tensor<2x4x8xbf16> -> tensor<2x4x8xbf16>
    func.return %add : tensor<2x4x8xbf16>
  }
}
