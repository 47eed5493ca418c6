"""Dynamic sizes: a program's one symbolic size, and how it travels from Torch IR to the kernels.

    builtin.module attributes {emmy.dynamic_size = {symbol = "s0", min = 1 : i64, max = 2048 : i64}}
    func.func @forward(%x: tensor<?x64xf32>) -> tensor<?x64xf32> { ... }     // torch, prim, fused

    loop.kernel @k(%x: memref<?x64xf32>, %out: memref<?x64xf32>, %s0: index) {  // loop, tile
      loop.for %i0 in 0 to %s0 { ... }
    }
    func.func @forward(%x: memref<?x64xf32>) -> memref<?x64xf32> {
      %s0 = memref.dim %x, %c0 : memref<?x64xf32>
      %out = memref.alloc(%s0) : memref<?x64xf32>
      loop.launch @k(%x, %out, %s0) : memref<?x64xf32>, memref<?x64xf32>, index
    }

A dimension marked dynamic (`torch.export.Dim`, `torch._dynamo.mark_dynamic`, `dynamic=True`)
is compiled once, into kernels that read its size at run time. A program has at most one such
size, a symbol of torch's shape environment (`s0`): every `?` in its types is that size. The
importer records the symbol and the range torch declared for it as the module's
`emmy.dynamic_size` (`DynamicSize`), and refuses a second symbol or a size computed from one
(`2*s0`, a flatten of the dynamic dim with another), so a `?` never needs more than one value
to be known.

- Torch, Tensor and Fused IR: value tensors with `?` dims (`tensor<?x64xf32>`). There is no
  size value at these levels: a result's `?` is its operand's, since every op that reaches
  them keeps the dynamic dim in place (elementwise ops, reductions over other dims, norms,
  softmax, broadcasts of static dims, permutes), or is the size itself: `torch.arange(n)`
  (a `torch.iota` of `?` elements), a tensor of one value of the size (`torch.ones(n, n)`:
  a scalar expanded), a static table sliced to it (`cos[:n]`: `torch.slice` with end
  `DYNAMIC_INDEX`). The program must take a tensor of that size, whose dim the host reads
  (the importer refuses one that does not).
- Loop and Tile IR: buffers with `?` dims (`memref<?x64xf32>`). A kernel that takes such a
  buffer takes the size too, as its last argument, an `index` named after the symbol
  (`emmy.dialects.launch.kernel_size_argument`), and its loops over the dynamic dim run to
  that value (`loop.for %i in 0 to %s0`). A matrix product whose m or batch dim is the size
  stays one `loop.contract` over `[%s0, 96]` and one `tile.gemm` of `?` buffers; attention
  over it (prefill's query rows and keys, a decode's keys) one `loop.attention` and
  `tile.attention`. The host function reads the size once from the first argument that has
  the dynamic dim (`memref.dim`), allocates its `?` buffers with it and passes it to every
  launch that needs it.
- Schedules are chosen for a representative size (`DynamicSize.representative`: the declared
  maximum, or `REPRESENTATIVE_SIZE` when torch declares none): a loop over the dynamic dim
  takes no vector width and no shared-memory staging, since its length is not known to be
  a multiple of either; the grid of a grid-mapped loop over it is a grid-stride loop whose
  grid the launch computes from the size. A product or attention takes the tile, atom and
  pipeline of the static one of the representative size; its blocks stride through the
  tiles the size gives (M tiles of a gemm, query row blocks of attention), as many as a
  sized launch runs, and the tails of its tiles are predicated as static tails are. A
  dynamic n or k of a product stays a loop nest, and neither a product nor attention over
  the size is split (split-K, flash-decoding): splits are for a few rows at known sizes.
- Guards: a call whose static dims differ from the program's, whose `?` dims disagree with
  each other, or whose size is outside the declared range is refused with an error naming
  the input and dim (`check_inputs`), never run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Operation

DYNAMIC_SIZE = "emmy.dynamic_size"
"""The module attribute that names the program's symbolic size and its range."""

REPRESENTATIVE_SIZE = 2048
"""The size a schedule is chosen for when torch declares no maximum (Dynamo's default)."""


@dataclass(frozen=True)
class DynamicSize:
    """The program's symbolic size: its symbol and the range torch declared (`max` None:
    unbounded)."""

    symbol: str
    min: int
    max: int | None

    @property
    def representative(self) -> int:
        """The size schedules are chosen for."""
        return self.max if self.max is not None else max(self.min, REPRESENTATIVE_SIZE)

    def attribute(self) -> DictionaryAttr:
        entries: dict[str, Attribute] = {
            "symbol": StringAttr(self.symbol),
            "min": IntegerAttr(self.min, i64),
        }
        if self.max is not None:
            entries["max"] = IntegerAttr(self.max, i64)
        return DictionaryAttr(entries)

    @staticmethod
    def of(module: ModuleOp) -> DynamicSize | None:
        """The module's dynamic size, or None for a static program."""
        attr = module.attributes.get(DYNAMIC_SIZE)
        if attr is None:
            return None
        assert isinstance(attr, DictionaryAttr)
        entries = attr.data
        symbol, low, high = entries["symbol"], entries["min"], entries.get("max")
        assert isinstance(symbol, StringAttr) and isinstance(low, IntegerAttr)
        assert high is None or isinstance(high, IntegerAttr)
        return DynamicSize(symbol.data, low.value.data, None if high is None else high.value.data)

    def check_inputs(
        self,
        shapes: Sequence[Sequence[int]],
        expected: Sequence[Sequence[int]],
        names: Sequence[str],
    ) -> int:
        """The size the inputs' `?` dims give it; a `ValueError` naming the input and dim if
        a static dim differs from `expected`, two `?` dims disagree, or the size is outside
        the declared range."""
        size: int | None = None
        for name, shape, declared in zip(names, shapes, expected, strict=True):
            if len(shape) != len(declared):
                raise ValueError(
                    f"input {name} has {len(shape)} dims, the program was compiled for "
                    f"{len(declared)}"
                )
            for dim, (actual, wanted) in enumerate(zip(shape, declared, strict=True)):
                if wanted != DYNAMIC_INDEX and actual != wanted:
                    raise ValueError(
                        f"input {name} has size {actual} in dim {dim}, the program was "
                        f"compiled for {wanted}"
                    )
                if wanted == DYNAMIC_INDEX and size is not None and actual != size:
                    raise ValueError(
                        f"input {name} has size {actual} in its dynamic dim {dim}, another "
                        f"input gives {self.symbol} = {size}"
                    )
                if wanted == DYNAMIC_INDEX:
                    size = actual
        assert size is not None, "a program with a dynamic size has an input of that size"
        if size < self.min or (self.max is not None and size > self.max):
            high = "inf" if self.max is None else self.max
            raise ValueError(
                f"{self.symbol} = {size} is outside the range [{self.min}, {high}] the "
                "program was compiled for"
            )
        return size


def representative_size(op: Operation) -> int:
    """The size schedules are chosen for in the module that holds `op`."""
    module = op.get_toplevel_object()
    dynamic = DynamicSize.of(module) if isinstance(module, ModuleOp) else None
    return dynamic.representative if dynamic is not None else REPRESENTATIVE_SIZE


def is_dynamic(shape: Sequence[int]) -> bool:
    return DYNAMIC_INDEX in shape
