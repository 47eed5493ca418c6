"""Measuring and checking: the timing harness, benchmark suites, differential checks and the
tolerances they check by."""
