"""The `cuda` target: Kernel IR printed as CUDA C++."""
