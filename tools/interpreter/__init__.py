"""The CPU interpreter: runs a program at every level, from Torch IR to Kernel IR, on numpy.

`run.run_module` is the entry point; each level has its module (`torch_ops`, `prim`, `fused`,
`host`, `loop`, `simt`, with `scalar` for arith and math); `index_bounds` finds the inputs
whose values index a table, which random inputs keep below its size.
"""
