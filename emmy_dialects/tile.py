"""Tile IR (`tile`): how a kernel's iterations map onto the GPU — the schedule, as data.

    tile.kernel @k_rms_norm(%x: memref<32x2048xf32>, %w: memref<2048xf32>, %y: memref<32x2048xf32>) grid [32, 1, 1] block [256, 1, 1] {
      tile.for %i in 0 to 32 map grid {
        %ss = tile.for %j in 0 to 2048 map thread reduce add init 0.0 : f32 {
          %v = memref.load %x[%i, %j] : memref<32x2048xf32>
          ...
          tile.yield %sq : f32
        }
        ...
        tile.for %j in 0 to 2048 map thread {
          ...
          memref.store %r, %y[%i, %j] : memref<32x2048xf32>
        }
      }
    }

The kernel carries the launch shape (`grid`, `block`). Each loop carries its mapping:
- `grid`: iterations go to blocks, `blockIdx.x`, `blockIdx.x + gridDim.x`, ...; the loops of
  one nest mapped to the grid share the block index, outermost first; the grid loops of a
  nest whose innermost grid loop holds a `global` loop (a two-dimensional nest) go to rows of
  blocks instead (`blockIdx.y`, strided by `gridDim.y`), and the global loop to the blocks of
  a row (`blockIdx.x`): a few long rows of an elementwise kernel spread over many blocks. A
  grid with more than one row of blocks is for two-dimensional nests only (any other nest
  would run once per row);
- `thread`: iterations go to the threads of a block, strided by the block size; a reduction
  mapped to threads is combined across the block (warp shuffles, then shared memory), and
  every thread gets the total;
- `global`: iterations go to every thread of the grid, strided by the grid's thread count
  (a one-dimensional nest, which has no outer loop to give the blocks), or of a row of blocks
  (in a two-dimensional nest); a reduction mapped to global, a whole nest, is split across
  blocks: each block combines its threads' partials, and the blocks' totals are combined
  with atomics into the one element the result is stored to (which the host sets to the init
  first);
- `serial`: each thread runs every iteration.
A nest splits its iterations over each processor index once: no `thread` or `global` loop
inside a `thread` or `global` loop, no `grid` loop inside a `global` one, a `grid` loop inside
another is the only loop directly in it, and a `global` loop inside others is directly in a
`grid` loop (a two-dimensional nest). The grid's z dimension is 1; a block may have any shape,
its threads numbered linearly (`x + y * bx + z * bx * by`, as CUDA forms warps).
Element accesses are upstream `memref.load` / `memref.store`.

Two more choices make a schedule fast, and neither changes what a kernel computes (the CPU
interpreter runs Tile IR as if they were absent):
- `vector N` on a `thread` or `global` loop: each thread takes N consecutive iterations at a
  time, so the loop's accesses along the last dimension become N-wide (up to 16-byte) vector
  loads and stores (`tile.for %j in 0 to 4096 map thread vector 8 { ... }`);
- `tile.stage %x[%i] async : memref<...>` at the top of a `grid` loop: the block copies the
  row of `%x` that the leading indices pick into shared memory once (`sync` through registers,
  `async` with cp.async), and every load of that row after it in the loop reads the copy — a
  norm or softmax reads its row from global memory once, not once per pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    FloatAttr,
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    NoTerminator,
    Pure,
    RecursiveMemoryEffect,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from emmy.dialects.combiner import parse_reduction, print_reduction, verify_reduction
from emmy.dialects.kernel import element_bytes, verify_block_shape, verify_grid_shape
from emmy.dialects.launch import (
    parse_launch,
    parse_signature,
    print_launch,
    print_signature,
    verify_launch,
)
from emmy.dialects.target import GpuTarget, target_of

MAPPINGS = ("grid", "thread", "global", "serial")
VECTOR_MAPPINGS = ("thread", "global")
VECTOR_WIDTHS = (2, 4, 8, 16)
STAGE_MODES = ("sync", "async")
SPLIT_KINDS = ("add", "max", "min")
SPLIT_TYPES = (f32, f64, i32, i64)
SPREAD_MAPPINGS = ("thread", "global")
"""The mappings that split iterations over the threads of a block."""


def two_dimensional_global(root: ForOp) -> ForOp | None:
    """The global loop of a two-dimensional nest rooted at `root` (grid loops, the innermost
    of which holds a global loop), or None for any other nest."""
    innermost = root
    while innermost.mapping.data == "grid":
        inner = [o for o in innermost.body.block.ops if isinstance(o, ForOp)]
        if len(inner) == 1 and inner[0].mapping.data == "grid":
            innermost = inner[0]
            continue
        return next((o for o in inner if o.mapping.data == "global"), None)
    return None


def contiguous_offset(index: SSAValue, induction_var: SSAValue) -> int | None:
    """c when `index` is `induction_var + c` (c a constant, 0 for the variable itself): the
    accesses that a vectorised loop makes N-wide."""
    if index is induction_var:
        return 0
    owner = index.owner
    if not isinstance(owner, arith.AddiOp):
        return None
    for variable, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
        constant = other.owner
        if (
            variable is induction_var
            and isinstance(constant, arith.ConstantOp)
            and isinstance(constant.value, IntegerAttr)
        ):
            return constant.value.value.data
    return None


def _parse_choice(parser: Parser, choices: Sequence[str], what: str) -> str:
    pos = parser.pos
    word = parser.parse_identifier()
    if word not in choices:
        parser.raise_error(
            f"unknown {what} '{word}'; expected one of {', '.join(choices)}", pos, parser.pos
        )
    return word


def _print_shape(printer: Printer, keyword: str, shape: Sequence[int]) -> None:
    printer.print_string(f" {keyword} [{', '.join(map(str, shape))}]")


def _parse_shape(parser: Parser, keyword: str) -> list[int]:
    parser.parse_keyword(keyword)
    return parser.parse_comma_separated_list(
        Parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
    )


def verify_launch_shape(grid: Sequence[int], block: Sequence[int], target: GpuTarget) -> None:
    verify_grid_shape(grid, target)
    verify_block_shape(block, target)
    if grid[2] != 1:
        raise VerifyException(
            f"grid {list(grid)}: no mapping spreads loops over the grid's z dimension, so it is 1"
        )


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A scheduled kernel: the loop nest of a `loop.kernel` with its launch shape."""

    name = "tile.kernel"
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    grid = prop_def(DenseArrayBase[I64])
    block = prop_def(DenseArrayBase[I64])
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        buffer_types: Sequence[Attribute],
        grid: Sequence[int],
        block: Sequence[int],
        body: Region,
    ):
        super().__init__(
            regions=[body],
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(buffer_types, []),
                "grid": DenseArrayBase.from_list(i64, list(grid)),
                "block": DenseArrayBase.from_list(i64, list(block)),
            },
        )

    @property
    def buffer_types(self) -> tuple[Attribute, ...]:
        return tuple(self.function_type.inputs.data)

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return tuple(self.grid.get_values())

    @property
    def block_shape(self) -> tuple[int, ...]:
        return tuple(self.block.get_values())

    def verify_(self) -> None:
        verify_launch_shape(self.grid_shape, self.block_shape, target_of(self))
        if self.grid_shape[1] > 1:
            for nest in self.body.block.ops:
                if isinstance(nest, ForOp) and two_dimensional_global(nest) is None:
                    raise VerifyException(
                        f"grid {list(self.grid_shape)} has {self.grid_shape[1]} rows of blocks, "
                        f"which only a nest of grid loops around a global loop spreads over: "
                        f"the kernel's other nests would run once per row"
                    )
        args = self.body.block.args
        if tuple(a.type for a in args) != self.buffer_types:
            raise VerifyException("kernel body arguments must match the kernel signature")
        for index, arg in enumerate(args):
            if not isinstance(arg.type, MemRefType):
                raise VerifyException(f"kernel argument #{index} must be a memref, got {arg.type}")

    def print(self, printer: Printer) -> None:
        print_signature(printer, self.sym_name, self.body.block.args)
        _print_shape(printer, "grid", self.grid_shape)
        _print_shape(printer, "block", self.block_shape)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name, args = parse_signature(parser)
        grid = _parse_shape(parser, "grid")
        block = _parse_shape(parser, "block")
        body = parser.parse_region(args)
        return cls(name.data, [a.type for a in args], grid, block, body)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a `tile.for` body; a reduction yields this iteration's contribution."""

    name = "tile.yield"
    arguments = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), Pure(), HasParent(ForOp)))

    assembly_format = "attr-dict ($arguments^ `:` type($arguments))?"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


@irdl_op_definition
class ForOp(IRDLOperation):
    """`tile.for %i in lower to upper map MAPPING`, parallel or, with a combiner, a reduction
    (the same semantics as `loop.for`, see `emmy.dialects.loop`)."""

    name = "tile.for"
    lower = prop_def(IntAttr)
    upper = prop_def(IntAttr)
    mapping = prop_def(StringAttr)
    kind = opt_prop_def(StringAttr)
    init = opt_prop_def(Attribute)
    vector = opt_prop_def(IntAttr)
    accumulator = var_result_def()
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(
        self,
        lower: int,
        upper: int,
        mapping: str,
        body: Region,
        reduction: tuple[str, FloatAttr | IntegerAttr] | None = None,
        vector: int = 1,
    ):
        properties: dict[str, Attribute] = {
            "lower": IntAttr(lower),
            "upper": IntAttr(upper),
            "mapping": StringAttr(mapping),
        }
        if vector != 1:
            properties["vector"] = IntAttr(vector)
        result_types: list[Attribute] = []
        if reduction is not None:
            kind, init = reduction
            properties.update(kind=StringAttr(kind), init=init)
            result_types.append(init.type)
        block = body.block
        if block.last_op is None or not block.last_op.has_trait(IsTerminator):
            block.add_op(YieldOp())
        super().__init__(result_types=[result_types], regions=[body], properties=properties)

    @property
    def induction_var(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def is_reduction(self) -> bool:
        return self.kind is not None

    @property
    def vector_width(self) -> int:
        """How many consecutive iterations a thread takes at a time."""
        return self.vector.data if self.vector is not None else 1

    def _verify_vector(self) -> None:
        width = self.vector_width
        if width == 1:
            return
        if width not in VECTOR_WIDTHS:
            raise VerifyException(
                f"vector width {width} must be one of {', '.join(map(str, VECTOR_WIDTHS))}"
            )
        if self.mapping.data not in VECTOR_MAPPINGS:
            raise VerifyException(
                f"only a loop mapped to thread or global is vectorised, not {self.mapping.data}"
            )
        if self.lower.data % width or (self.upper.data - self.lower.data) % width:
            raise VerifyException(
                f"vector width {width} must divide the loop's start {self.lower.data} and its "
                f"trip count {self.upper.data - self.lower.data}"
            )
        if any(isinstance(op, ForOp) for op in self.body.walk()):
            raise VerifyException("a vectorised tile.for holds no loops")

    def _verify_split_reduction(self) -> None:
        if self.kind.data not in SPLIT_KINDS:
            raise VerifyException(
                f"a reduction mapped to global combines the blocks' totals with atomics, which "
                f"take {', '.join(SPLIT_KINDS)}, not {self.kind.data}"
            )
        if self.init.type not in SPLIT_TYPES:
            raise VerifyException(
                f"a reduction mapped to global combines the blocks' totals with atomics, on "
                f"f32, f64, i32 or i64, not {self.init.type}"
            )
        uses = [use.operation for use in self.accumulator[0].uses]
        store = uses[0] if len(uses) == 1 else None
        if not (
            isinstance(store, memref.StoreOp)
            and store.value is self.accumulator[0]
            and store.parent_block() is self.parent_block()
            and all(isinstance(i.owner, arith.ConstantOp) for i in store.indices)
        ):
            raise VerifyException(
                "a reduction mapped to global combines the blocks' totals with atomics into "
                "the element it is stored to: its result has one use, a memref.store beside "
                "the loop at constant indices"
            )

    def _enclosing_loops(self) -> list[ForOp]:
        """The tile.for ops around this one in its kernel, innermost first."""
        loops, op = [], self.parent_op()
        while op is not None and not isinstance(op, KernelOp):
            if isinstance(op, ForOp):
                loops.append(op)
            op = op.parent_op()
        return loops

    def _verify_nesting(self) -> None:
        """Each processor index splits the iterations of one loop of a nest (see the module
        docstring): the lowering reads it once per nest, not once per loop."""
        mapping = self.mapping.data
        enclosing = self._enclosing_loops()
        parent = self.parent_op()
        # A grid loop inside a thread loop is fine: every block runs all the thread loop.
        outer_mappings = {"thread": SPREAD_MAPPINGS, "global": SPREAD_MAPPINGS, "grid": ("global",)}
        spread = next(
            (o for o in enclosing if o.mapping.data in outer_mappings.get(mapping, ())), None
        )
        if spread is not None:
            raise VerifyException(
                f"a loop mapped to {mapping} cannot be inside a loop mapped to "
                f"{spread.mapping.data}: the threads already split the outer loop's iterations"
            )
        if mapping == "global" and enclosing and not _is_grid_loop(parent):
            raise VerifyException(
                "a loop mapped to global inside other loops is the global loop of a "
                "two-dimensional nest: directly inside a nest of grid loops"
            )
        if mapping == "grid" and any(o.mapping.data == "grid" for o in enclosing):
            if not _is_grid_loop(parent) or [
                o for o in parent.body.block.ops if isinstance(o, ForOp)
            ] != [self]:
                raise VerifyException(
                    "a loop mapped to grid inside another one is the only loop directly "
                    "inside it: the grid loops of a nest are one loop over the blocks"
                )

    def verify_(self) -> None:
        if self.mapping.data not in MAPPINGS:
            raise VerifyException(
                f"unknown mapping '{self.mapping.data}'; expected one of {', '.join(MAPPINGS)}"
            )
        if self.lower.data < 0 or self.upper.data < self.lower.data:
            raise VerifyException(
                f"loop bounds {self.lower.data} to {self.upper.data} must satisfy "
                "0 <= lower <= upper"
            )
        self._verify_vector()
        self._verify_nesting()
        block = self.body.block
        if len(block.args) != 1 or not isinstance(block.args[0].type, IndexType):
            raise VerifyException("a tile.for body takes one index induction variable")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException("a tile.for body must end in a tile.yield")
        if (self.kind is None) != (self.init is None):
            raise VerifyException("a reduction loop needs both a combiner and an init")
        yielded = [v.type for v in terminator.arguments]
        if self.kind is None:
            if self.accumulator or yielded:
                raise VerifyException("a parallel tile.for has no results and yields nothing")
            return
        if self.mapping.data == "grid":
            raise VerifyException(
                "a reduction cannot be mapped to grid: blocks do not combine their results"
            )
        accumulator_type = verify_reduction(self.kind.data, self.init)
        if self.mapping.data == "global":
            if not isinstance(self.parent_op(), KernelOp):
                raise VerifyException(
                    "a reduction mapped to global is split across the blocks of the grid: it "
                    "is a whole nest, not inside another loop"
                )
            self._verify_split_reduction()
        if [r.type for r in self.accumulator] != [accumulator_type] or yielded != [
            accumulator_type
        ]:
            raise VerifyException(
                f"a reduction tile.for has one result and yields one value of its init type "
                f"{accumulator_type}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_var)
        printer.print_string(f" in {self.lower.data} to {self.upper.data} map {self.mapping.data}")
        if self.vector_width != 1:
            printer.print_string(f" vector {self.vector_width}")
        print_reduction(printer, self.kind, self.init)
        printer.print_string(" ")
        printer.print_region(
            self.body,
            print_entry_block_args=False,
            print_block_terminators=self.kind is not None,
        )

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        induction_var = parser.parse_argument(expect_type=False)
        parser.parse_keyword("in")
        lower = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        upper = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("map")
        mapping = _parse_choice(parser, MAPPINGS, "mapping")
        vector = 1
        if parser.parse_optional_keyword("vector") is not None:
            vector = parser.parse_integer(allow_boolean=False, allow_negative=False)
        reduction = parse_reduction(parser)
        body_pos = parser.pos
        body = parser.parse_region([induction_var.resolve(IndexType())])
        if len(body.blocks) != 1:
            parser.raise_error("a tile.for body is a single block", body_pos, parser.pos)
        return cls(lower, upper, mapping, body, reduction, vector)


def _is_grid_loop(op: Operation | None) -> bool:
    return isinstance(op, ForOp) and op.mapping.data == "grid"


@irdl_op_definition
class StageOp(IRDLOperation):
    """`tile.stage %x[%i] async : memref<32x2048xf32>`: the block copies the row of `%x` at
    the leading indices into shared memory, and the loads of that row after it in the
    enclosing grid loop read the copy (see the module docstring)."""

    name = "tile.stage"
    buffer = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    mode = prop_def(StringAttr)
    traits = lazy_traits_def(lambda: (HasParent(ForOp),))

    def __init__(self, buffer: SSAValue, indices: Sequence[SSAValue], mode: str):
        super().__init__(operands=[buffer, indices], properties={"mode": StringAttr(mode)})

    @property
    def row_type(self) -> MemRefType:
        """The shape and element type of the staged row."""
        memref_type = self.buffer.type
        assert isinstance(memref_type, MemRefType)
        return MemRefType(memref_type.element_type, memref_type.get_shape()[len(self.indices) :])

    def verify_(self) -> None:
        if self.mode.data not in STAGE_MODES:
            raise VerifyException(
                f"unknown staging mode '{self.mode.data}'; expected one of {', '.join(STAGE_MODES)}"
            )
        parent = self.parent_op()
        if not isinstance(parent, ForOp) or parent.mapping.data != "grid":
            raise VerifyException("a row is staged by a block: tile.stage belongs in a grid loop")
        if any(o.mapping.data == "thread" for o in parent._enclosing_loops()):
            raise VerifyException(
                "a row is staged by the whole block: tile.stage is not inside a loop mapped to "
                "thread, whose iterations differ between the threads"
            )
        rank = self.buffer.type.get_num_dims()
        if len(self.indices) != rank - 1:
            raise VerifyException(
                f"a staged row is the last dimension: a rank-{rank} buffer takes {rank - 1} "
                f"leading indices, got {len(self.indices)}"
            )
        row = self.row_type
        size = prod(row.get_shape()) * element_bytes(row.element_type)
        limit = target_of(self).static_shared_bytes_per_block
        if size > limit:
            raise VerifyException(
                f"a staged row of {size} bytes is over the {limit} bytes of a block's "
                "static shared memory"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.buffer)
        printer.print_string("[")
        printer.print_list(self.indices, printer.print_ssa_value)
        printer.print_string(f"] {self.mode.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.buffer.type)

    @classmethod
    def parse(cls, parser: Parser) -> StageOp:
        buffer = parser.parse_unresolved_operand()
        indices = parser.parse_comma_separated_list(
            Parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        mode = _parse_choice(parser, STAGE_MODES, "staging mode")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_pos = parser.pos
        memref_type = parser.parse_type()
        if not isinstance(memref_type, MemRefType):
            parser.raise_error(f"a staged buffer is a memref, got {memref_type}", type_pos)
        resolved = parser.resolve_operand(buffer, memref_type)
        resolved_indices = [parser.resolve_operand(i, IndexType()) for i in indices]
        op = cls(resolved, resolved_indices, mode)
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Host side: runs a `tile.kernel` on buffers with its launch shape."""

    name = "tile.launch"
    kernel = prop_def(SymbolRefAttr)
    buffers = var_operand_def(MemRefType)

    def __init__(self, kernel: str, buffers: Sequence[SSAValue]):
        super().__init__(operands=[buffers], properties={"kernel": SymbolRefAttr(kernel)})

    def verify_(self) -> None:
        verify_launch(self, self.kernel, self.buffers, KernelOp)

    def print(self, printer: Printer) -> None:
        print_launch(printer, self, self.kernel, self.buffers)

    @classmethod
    def parse(cls, parser: Parser) -> LaunchOp:
        kernel, buffers, attributes = parse_launch(parser, "tile.launch")
        op = cls(kernel, buffers)
        op.attributes.update(attributes)
        return op


Tile = Dialect("tile", [KernelOp, ForOp, YieldOp, StageOp, LaunchOp], [])
