"""Measuring and checking: the timing harness, benchmark suites, differential checks."""
