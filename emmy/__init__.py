"""emmy: an MLIR-style compiler from PyTorch programs to CUDA, written on xDSL."""
