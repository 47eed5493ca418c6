// CUDA C++ printed by emmy's cuda target (emmy-opt -t cuda) from Kernel IR.
// Only the kernels are printed: the host function, with its buffer allocations and its
// kernel.launch ops (grid, block, dynamic shared memory bytes), stays in the IR.
// Options: fast-math=false.

// kernel.func @k_heuristic: block [128, 1, 1], 0 bytes of static shared memory
extern "C" __global__ void __launch_bounds__(128) k_heuristic(const float* __restrict__ x, float* __restrict__ y) {
  long v0 = threadIdx.x;
  long v1 = blockIdx.x;
  long v2 = blockDim.x;
  long v3 = gridDim.x;
  long v4 = blockIdx.y;
  long v5 = gridDim.y;
  for (long i = v4; i < 32; i += v5) {
    long v6 = v1 * v2;
    long v7 = v6 + v0;
    long v8 = v7 * 4;
    long v9 = v3 * 512;
    for (long i_1 = v8; i_1 < 2048; i_1 += v9) {
      alignas(16) float vec[4];
      *reinterpret_cast<float4*>(vec) = *reinterpret_cast<const float4*>(&x[i * 2048 + i_1]);
      float v10 = vec[0];
      float v11 = vec[1];
      float v12 = vec[2];
      float v13 = vec[3];
      float w = v10 * v10;
      float w_1 = v11 * v11;
      float w_2 = v12 * v12;
      float w_3 = v13 * v13;
      alignas(16) float vec_1[4] = {w, w_1, w_2, w_3};
      *reinterpret_cast<float4*>(&y[i * 2048 + i_1]) = *reinterpret_cast<const float4*>(vec_1);
    }
  }
}

// kernel.func @k_by_hand: block [256, 1, 1], 0 bytes of static shared memory
extern "C" __global__ void __launch_bounds__(256) k_by_hand(const float* __restrict__ x, float* __restrict__ y) {
  long v0 = threadIdx.x;
  long v1 = blockIdx.x;
  long v2 = gridDim.x;
  for (long i = v1; i < 32; i += v2) {
    long v3 = v0 * 2;
    alignas(16) float vec[2];
    *reinterpret_cast<float2*>(vec) = *reinterpret_cast<const float2*>(&x[i * 2048 + v3]);
    float v4 = vec[0];
    float v5 = vec[1];
    float w = v4 * v4;
    float w_1 = v5 * v5;
    alignas(16) float vec_1[2] = {w, w_1};
    *reinterpret_cast<float2*>(&y[i * 2048 + v3]) = *reinterpret_cast<const float2*>(vec_1);
    long v6 = v3 + 512;
    alignas(16) float vec_2[2];
    *reinterpret_cast<float2*>(vec_2) = *reinterpret_cast<const float2*>(&x[i * 2048 + v6]);
    float v7 = vec_2[0];
    float v8 = vec_2[1];
    float w_2 = v7 * v7;
    float w_3 = v8 * v8;
    alignas(16) float vec_3[2] = {w_2, w_3};
    *reinterpret_cast<float2*>(&y[i * 2048 + v6]) = *reinterpret_cast<const float2*>(vec_3);
    long v9 = v3 + 1024;
    alignas(16) float vec_4[2];
    *reinterpret_cast<float2*>(vec_4) = *reinterpret_cast<const float2*>(&x[i * 2048 + v9]);
    float v10 = vec_4[0];
    float v11 = vec_4[1];
    float w_4 = v10 * v10;
    float w_5 = v11 * v11;
    alignas(16) float vec_5[2] = {w_4, w_5};
    *reinterpret_cast<float2*>(&y[i * 2048 + v9]) = *reinterpret_cast<const float2*>(vec_5);
    long v12 = v3 + 1536;
    alignas(16) float vec_6[2];
    *reinterpret_cast<float2*>(vec_6) = *reinterpret_cast<const float2*>(&x[i * 2048 + v12]);
    float v13 = vec_6[0];
    float v14 = vec_6[1];
    float w_6 = v13 * v13;
    float w_7 = v14 * v14;
    alignas(16) float vec_7[2] = {w_6, w_7};
    *reinterpret_cast<float2*>(&y[i * 2048 + v12]) = *reinterpret_cast<const float2*>(vec_7);
  }
}
