"""The frontend: PyTorch programs in, Torch IR out (program loading, the torch.export importer,
and the disk cache of programs' Torch IR)."""
