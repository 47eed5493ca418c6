// A second `emmy compile` of a program reads its Torch IR from the cache (one entry, in
// $EMMY_CACHE_DIR/torch-ir) and prints what the first printed, byte for byte. (That an
// uncached compile prints the same, and EMMY_NO_CACHE=1: test/python/test_program_cache.py.)

// RUN: rm -rf %t.cache
// RUN: env EMMY_CACHE_DIR=%t.cache emmy compile -c "nn.Embedding(10, 8)(torch.full((64,), 3))" --ir loop > %t.first
// RUN: env EMMY_CACHE_DIR=%t.cache emmy compile -c "nn.Embedding(10, 8)(torch.full((64,), 3))" --ir loop > %t.second
// RUN: diff %t.first %t.second
// RUN: %python -c "import os, sys; print(len(os.listdir(sys.argv[1])), 'entries')" %t.cache/torch-ir | filecheck %s --check-prefix=ENTRIES
// ENTRIES: 1 entries
// RUN: filecheck %s < %t.second
// CHECK: loop.kernel @k_embedding(
