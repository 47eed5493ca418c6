"""Running on a GPU: compiling CUDA to cached cubins, launching kernels, host programs."""
