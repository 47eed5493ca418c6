"""emmy passes, one module per pass, and the pass registry."""
