"""Canonicalization patterns of the `loop` dialect."""
