"""emmy dialects, one module per IR level, and the context that knows all of them."""

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.dialects.vector import Vector


def emmy_dialects():
    """Every emmy dialect, lowest dependency first."""
    from emmy.dialects.fused import Fused
    from emmy.dialects.kernel import Kernel
    from emmy.dialects.loop import Loop
    from emmy.dialects.prim import Prim
    from emmy.dialects.tile import Tile
    from emmy.dialects.torch import Torch

    return (Torch, Prim, Fused, Loop, Tile, Kernel)


def make_context() -> Context:
    """A context with the emmy dialects and the upstream ones they are used with."""
    ctx = Context()
    for dialect in (Builtin, Func, Arith, Math, Scf, MemRef, Vector, *emmy_dialects()):
        ctx.load_dialect(dialect)
    return ctx
