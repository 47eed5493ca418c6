// `emmy compile` prints a program the same, byte for byte, whether it exports it or reads its
// Torch IR back from the cache (lit.cfg.py gives the run one cache, so compile-levels.mlir may
// have exported this program already). That an uncached compile prints the same, the cache's
// entries, damaged ones and EMMY_NO_CACHE=1: test/python/test_program_cache.py.

// RUN: emmy compile -c "nn.RMSNorm(2048)(torch.randn(1,32,2048))" --ir loop > %t.first
// RUN: emmy compile -c "nn.RMSNorm(2048)(torch.randn(1,32,2048))" --ir loop > %t.second
// RUN: diff %t.first %t.second
// RUN: filecheck %s < %t.second
// CHECK: loop.kernel @k_rms_norm(
