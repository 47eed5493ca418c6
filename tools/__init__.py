"""emmy command-line drivers and runtimes."""
