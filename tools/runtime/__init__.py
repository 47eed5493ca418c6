"""The GPU runtime: `compile` (CUDA C++ to cubins, NVRTC or nvcc), `cubin_cache` (the cubins
on disk, private to their user), `driver` (loading cubins, launching kernels on torch tensors,
bounded waits, the device's `GpuTarget`) and `host` (running a Kernel-IR host function, or
replaying it as a CUDA graph)."""
