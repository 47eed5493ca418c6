"""CPU execution of every level on numpy: host and prim/fused/loop/tile functions, scalar ops,
PyTorch's own CPU ops for Torch IR, and the SIMT emulator for Kernel IR."""
