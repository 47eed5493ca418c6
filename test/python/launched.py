"""The kernels a printed program launches, once per launch: identical kernels are one after
`merge-identical-kernels`, which each of their launches calls, so a test that counts what
the program computes (products, tiles) counts launches, not kernel definitions."""

import re


def launched_kernels(ir: str, level: str) -> list[tuple[str, str]]:
    """(name, body text) of the kernel of each `<level>.launch` in `ir`, in launch order."""
    end = rf"(?=\n  {level}\.kernel @|\n  func\.func @|\Z)"
    bodies = dict(re.findall(rf"{level}\.kernel @(\w+)(.*?){end}", ir, re.S))
    return [(name, bodies[name]) for name in re.findall(rf"{level}\.launch @(\w+)\(", ir)]
