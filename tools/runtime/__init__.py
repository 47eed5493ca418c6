"""The GPU runtime: `compile` (CUDA C++ to cached cubins, NVRTC or nvcc), `driver` (loading
cubins, launching kernels on torch tensors, bounded waits, the device's `GpuTarget`) and
`host` (running a Kernel-IR host function, or replaying it as a CUDA graph)."""
