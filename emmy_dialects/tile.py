"""Tile IR (`tile`): how a kernel's iterations map onto the GPU — the schedule, as data.

    tile.kernel @k_rms_norm(%x: memref<32x2048xf32>, %w: memref<2048xf32>,
                            %y: memref<32x2048xf32>) grid [32, 1, 1] block [256, 1, 1] {
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

The kernel carries the launch shape (`grid`, `block`), and the `#tile.schedule` it was lowered
with (see `Schedule`), if any. Each loop carries its mapping, whatever the rest of the nest is:
- `grid`: iterations go to blocks, `blockIdx.x`, `blockIdx.x + gridDim.x`, ...; a chain of
  loops mapped to grid (each the only loop of the one around it) shares the block index,
  outermost first;
- `grid_y`: the same over rows of blocks (`blockIdx.y`, strided by `gridDim.y`): around a
  `global` loop, which spreads each row over the blocks of a row of the grid, a few long rows
  of an elementwise kernel reach many blocks. A grid with more than one row of blocks needs a
  grid_y loop in every nest (any other nest would run once per row);
- `thread`: iterations go to the threads of a block, strided by the block size; a reduction
  mapped to threads is combined across the block (warp shuffles, then shared memory), and
  every thread gets the total;
- `global`: iterations go to every thread of the grid's x dimension (`blockIdx.x *
  blockDim.x + threadIdx.x`, strided by its thread count); a reduction mapped to global, a
  whole nest, is split across blocks: each block combines its threads' partials, and the
  blocks' totals are combined with atomics into the one element the result is stored to
  (which the host sets to the init first);
- `serial`: each thread runs every iteration.
No loop is inside another that reads the same block index (a global loop inside a grid loop
would give each block a part of a part), and no `thread` or `global` loop is inside a `thread`
or `global` loop (the threads already split the outer loop's iterations). The grid's z
dimension is 1; a block may have any shape, its threads numbered linearly (`x + y * bx + z * bx
* by`, as CUDA forms warps).
Element accesses are upstream `memref.load` / `memref.store`.

Two more choices make a schedule fast, and neither changes what a kernel computes (the CPU
interpreter runs Tile IR as if they were absent):
- `vector N` on a `thread` or `global` loop: each thread takes N consecutive iterations at a
  time, so the loop's accesses along the last dimension become N-wide (up to 16-byte) vector
  loads and stores (`tile.for %j in 0 to 4096 map thread vector 8 { ... }`);
- `tile.stage %x[%i] async : memref<...>` at the top of a `grid` or `grid_y` loop: the block
  copies the row of `%x` that the leading indices pick into shared memory once (`sync`
  through registers, `async` with cp.async), and every load of that row after it in the loop
  reads the copy — a norm or softmax reads its row from global memory once, not once per
  pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import ClassVar

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.dialects.utils import AbstractYieldOperation, EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Data,
    Dialect,
    Operation,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsTerminator,
    Pure,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from emmy.dialects.dtypes import element_bytes
from emmy.dialects.effects import ReadsOperand, WritesSharedMemory
from emmy.dialects.for_op import ForOpBase, Reduction
from emmy.dialects.kernel import verify_block_shape, verify_grid_shape
from emmy.dialects.launch import KernelSymbolOp, LaunchOpBase, parse_shape, print_shape
from emmy.dialects.target import GpuTarget, target_of


class Mapping(StrEnum):
    """Which processors a loop's iterations go to (see the module docstring)."""

    GRID = "grid"
    GRID_Y = "grid_y"
    THREAD = "thread"
    GLOBAL = "global"
    SERIAL = "serial"


class StageMode(StrEnum):
    """How a block copies a staged row into shared memory: through registers, or cp.async."""

    SYNC = "sync"
    ASYNC = "async"


@irdl_attr_definition
class MappingAttr(EnumAttribute[Mapping], SpacedOpaqueSyntaxAttribute):
    name = "tile.mapping"


@irdl_attr_definition
class StageModeAttr(EnumAttribute[StageMode], SpacedOpaqueSyntaxAttribute):
    name = "tile.stage_mode"


VECTOR_MAPPINGS = (Mapping.THREAD, Mapping.GLOBAL)
GRID_MAPPINGS = (Mapping.GRID, Mapping.GRID_Y)
VECTOR_WIDTHS = (2, 4, 8, 16)
SPLIT_KINDS = ("add", "max", "min")
SPLIT_TYPES = (f32, f64, i32, i64)


def grid_dimensions(mapping: Mapping) -> tuple[int, ...]:
    """The grid dimensions (0 for x, 1 for y) whose block index a loop of `mapping` reads."""
    return {Mapping.GRID: (0,), Mapping.GLOBAL: (0,), Mapping.GRID_Y: (1,)}.get(mapping, ())


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


def verify_launch_shape(grid: Sequence[int], block: Sequence[int], target: GpuTarget) -> None:
    verify_grid_shape(grid, target)
    verify_block_shape(block, target)
    if grid[2] != 1:
        raise VerifyException(
            f"grid {list(grid)}: no mapping spreads loops over the grid's z dimension, so it is 1"
        )


SCHEDULE_ATTRIBUTE = "tile.schedule"
"""The attribute of a `loop.kernel` (and of the `tile.kernel` lowered from it) that holds its
schedule."""

LoopPath = tuple[int, ...]
"""A loop of a kernel by its position in the nest: its index among the loops of the kernel's
body, then among the loops of that loop's body, and so on (`[0, 1]` is the second loop inside
the first), so that it names the same loop after the IR is printed and parsed again."""


def loop_paths(body: Block, loop_type: type[Operation]) -> dict[Operation, LoopPath]:
    """Every loop (op of `loop_type`) nested in a kernel's `body`, with its path."""
    paths: dict[Operation, LoopPath] = {}

    def visit(block: Block, prefix: LoopPath) -> None:
        for index, op in enumerate(o for o in block.ops if isinstance(o, loop_type)):
            paths[op] = (*prefix, index)
            visit(op.regions[0].block, paths[op])

    visit(body, ())
    return paths


@dataclass(frozen=True)
class LoopSchedule:
    """Where one loop's iterations go, and how many consecutive ones a thread takes at a time.
    A reduction's strategy is its mapping: `thread` combines it within a block, `global`
    splits it across the blocks, which combine their totals with atomics."""

    mapping: Mapping
    vector: int = 1


@dataclass(frozen=True)
class Staging:
    """The row of kernel argument `argument` that the loops inside the grid loop at `loop`
    read is copied into shared memory at the top of each of its iterations."""

    argument: int
    loop: LoopPath
    mode: StageMode


@dataclass(frozen=True)
class Schedule:
    """How a `loop.kernel` runs on the GPU: what `choose-tile-schedule` decides and
    `lower-loop-to-tile` applies, as the `#tile.schedule<...>` attribute of the kernel.

        #tile.schedule<block [512, 1, 1], loops [[0] grid, [0, 0] thread vector 4,
                       [0, 1] thread vector 4], stage [[0] arg 0 async]>

    A loop the schedule does not name runs serially in each thread. The grid is not part of
    the schedule: it is the blocks the mapped loops need (every loop mapped to a grid
    dimension strides by that dimension's size, so any grid would be correct).
    The last four fields are reserved for tensor-core schedules; no pass honours them yet, so
    a schedule verifies only with their defaults."""

    block: tuple[int, int, int]
    loops: tuple[tuple[LoopPath, LoopSchedule], ...]
    stages: tuple[Staging, ...] = ()
    tile_shape: tuple[int, ...] = ()
    """Reserved: the block's output tile (M, N, K)."""
    mma_atom: str = ""
    """Reserved: the tensor-core instruction a warp group issues (such as wgmma m64n128k16)."""
    pipeline_depth: int = 1
    """Reserved: how many tiles are loaded ahead of the one being multiplied."""
    warp_roles: tuple[str, ...] = ()
    """Reserved: what each warp group of a block does (such as producer, consumer)."""

    def loop(self, path: LoopPath) -> LoopSchedule:
        return dict(self.loops).get(path, LoopSchedule(Mapping.SERIAL))

    def verify(self) -> None:
        # The block's limits are the target's, which the tile.kernel lowered from this checks.
        if len(self.block) != 3 or min(self.block) < 1:
            raise VerifyException(f"block {list(self.block)} must have 3 positive sizes")
        paths = [path for path, _ in self.loops]
        if len(set(paths)) != len(paths) or not all(paths) or min(min(paths, default=[0])) < 0:
            raise VerifyException(
                f"loops {[list(p) for p in paths]} must be distinct, non-empty paths of "
                "non-negative loop indices"
            )
        for path, loop_schedule in self.loops:
            width = loop_schedule.vector
            if width != 1 and (
                width not in VECTOR_WIDTHS or loop_schedule.mapping not in VECTOR_MAPPINGS
            ):
                raise VerifyException(
                    f"loop {list(path)}: vector width {width} must be one of "
                    f"{', '.join(map(str, VECTOR_WIDTHS))}, on a loop mapped to thread or global"
                )
        for stage in self.stages:
            if self.loop(stage.loop).mapping not in GRID_MAPPINGS:
                raise VerifyException(
                    f"a row is staged by a block: staging at loop {list(stage.loop)} needs "
                    "that loop mapped to grid or grid_y"
                )
        reserved = (
            ("tile", self.tile_shape, ()),
            ("atom", self.mma_atom, ""),
            ("pipeline", self.pipeline_depth, 1),
            ("warp_roles", self.warp_roles, ()),
        )
        for keyword, value, default in reserved:
            if value != default:
                raise VerifyException(
                    f"'{keyword}' is reserved for tensor-core schedules, which no pass honours yet"
                )


def _print_path(printer: Printer, path: LoopPath) -> None:
    printer.print_string(f"[{', '.join(map(str, path))}]")


def _parse_path(parser: AttrParser) -> LoopPath:
    return tuple(
        parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
        )
    )


@irdl_attr_definition
class ScheduleAttr(Data[Schedule]):
    """`#tile.schedule<...>`: a `Schedule` in the IR, on the `loop.kernel` it is for."""

    name = "tile.schedule"

    def verify(self) -> None:
        self.data.verify()

    def print_parameter(self, printer: Printer) -> None:
        schedule = self.data
        with printer.in_angle_brackets():
            printer.print_string(f"block [{', '.join(map(str, schedule.block))}], loops [")

            def print_loop(entry: tuple[LoopPath, LoopSchedule]) -> None:
                path, loop_schedule = entry
                _print_path(printer, path)
                printer.print_string(f" {loop_schedule.mapping}")
                if loop_schedule.vector != 1:
                    printer.print_string(f" vector {loop_schedule.vector}")

            printer.print_list(schedule.loops, print_loop)
            printer.print_string("]")
            if schedule.stages:
                printer.print_string(", stage [")

                def print_stage(stage: Staging) -> None:
                    _print_path(printer, stage.loop)
                    printer.print_string(f" arg {stage.argument} {stage.mode}")

                printer.print_list(schedule.stages, print_stage)
                printer.print_string("]")
            if schedule.tile_shape:
                printer.print_string(f", tile [{', '.join(map(str, schedule.tile_shape))}]")
            if schedule.mma_atom:
                printer.print_string(", atom ")
                printer.print_string_literal(schedule.mma_atom)
            if schedule.pipeline_depth != 1:
                printer.print_string(f", pipeline {schedule.pipeline_depth}")
            if schedule.warp_roles:
                printer.print_string(", warp_roles [")
                printer.print_list(schedule.warp_roles, printer.print_string_literal)
                printer.print_string("]")

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Schedule:
        start = parser.pos
        integer = lambda: parser.parse_integer(allow_boolean=False)  # noqa: E731
        square = parser.Delimiter.SQUARE
        with parser.in_angle_brackets():
            parser.parse_keyword("block")
            block_pos = parser.pos
            block = tuple(parser.parse_comma_separated_list(square, integer))
            if len(block) != 3:
                parser.raise_error("a block shape has 3 sizes", block_pos, parser.pos)
            parser.parse_punctuation(",")
            parser.parse_keyword("loops")

            def parse_loop() -> tuple[LoopPath, LoopSchedule]:
                path = _parse_path(parser)
                mapping = MappingAttr.parse_parameter(parser)
                vector = integer() if parser.parse_optional_keyword("vector") else 1
                return path, LoopSchedule(mapping, vector)

            loops = tuple(parser.parse_comma_separated_list(square, parse_loop))
            fields: dict[str, object] = {}
            parsers = {
                "stage": lambda: tuple(parser.parse_comma_separated_list(square, parse_stage)),
                "tile": lambda: tuple(parser.parse_comma_separated_list(square, integer)),
                "atom": lambda: parser.parse_str_literal(),
                "pipeline": integer,
                "warp_roles": lambda: tuple(
                    parser.parse_comma_separated_list(square, parser.parse_str_literal)
                ),
            }
            names = {"stage": "stages", "tile": "tile_shape", "atom": "mma_atom"}
            names.update(pipeline="pipeline_depth", warp_roles="warp_roles")

            def parse_stage() -> Staging:
                path = _parse_path(parser)
                parser.parse_keyword("arg")
                argument = integer()
                return Staging(argument, path, StageModeAttr.parse_parameter(parser))

            while parser.parse_optional_punctuation(",") is not None:
                keyword_pos = parser.pos
                keyword = parser.parse_identifier()
                if keyword not in parsers or names[keyword] in fields:
                    parser.raise_error(
                        f"expected one of {', '.join(parsers)}, each at most once",
                        keyword_pos,
                        parser.pos,
                    )
                fields[names[keyword]] = parsers[keyword]()
        schedule = Schedule(block, loops, **fields)
        try:
            schedule.verify()
        except VerifyException as error:
            parser.raise_error(str(error), start, parser.pos)
        return schedule


@irdl_op_definition
class KernelOp(KernelSymbolOp):
    """A scheduled kernel: the loop nest of a `loop.kernel` with its launch shape."""

    name = "tile.kernel"
    grid = prop_def(DenseArrayBase[I64])
    block = prop_def(DenseArrayBase[I64])

    def __init__(
        self,
        name: str,
        argument_types: Sequence[Attribute],
        grid: Sequence[int],
        block: Sequence[int],
        body: Region,
    ):
        super().__init__(
            name,
            argument_types,
            body,
            {
                "grid": DenseArrayBase.from_list(i64, list(grid)),
                "block": DenseArrayBase.from_list(i64, list(block)),
            },
        )

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return tuple(self.grid.get_values())

    @property
    def block_shape(self) -> tuple[int, ...]:
        return tuple(self.block.get_values())

    def verify_(self) -> None:
        self.verify_symbol()
        verify_launch_shape(self.grid_shape, self.block_shape, target_of(self))
        if self.grid_shape[1] > 1:
            for nest in self.body.block.ops:
                if isinstance(nest, ForOp) and not any(
                    isinstance(f, ForOp) and f.mapping.data == Mapping.GRID_Y for f in nest.walk()
                ):
                    raise VerifyException(
                        f"grid {list(self.grid_shape)} has {self.grid_shape[1]} rows of blocks, "
                        f"but a nest maps no loop to grid_y: it would run once per row"
                    )
        self._verify_schedule()
        for index, arg_type in enumerate(self.argument_types):
            if not isinstance(arg_type, MemRefType):
                raise VerifyException(f"kernel argument #{index} must be a memref, got {arg_type}")

    def _verify_schedule(self) -> None:
        """The schedule a kernel was lowered with, if it keeps one, is the one it follows."""
        attribute = self.attributes.get(SCHEDULE_ATTRIBUTE)
        if attribute is None:
            return
        if not isinstance(attribute, ScheduleAttr):
            raise VerifyException(f"'{SCHEDULE_ATTRIBUTE}' must be a #tile.schedule")
        schedule = attribute.data
        if schedule.block != self.block_shape:
            raise VerifyException(
                f"block {list(self.block_shape)} is not the schedule's {list(schedule.block)}"
            )
        paths = loop_paths(self.body.block, ForOp)
        for path, _ in schedule.loops:
            if path not in paths.values():
                raise VerifyException(f"the schedule maps loop {list(path)}, which is not here")
        for for_op, path in paths.items():
            expected = schedule.loop(path)
            if (for_op.mapping.data, for_op.vector_width) != (expected.mapping, expected.vector):
                raise VerifyException(
                    f"loop {list(path)} is mapped {for_op.mapping.data} vector "
                    f"{for_op.vector_width}, but the schedule says {expected.mapping} vector "
                    f"{expected.vector}"
                )

    def print_launch_shape(self, printer: Printer) -> None:
        print_shape(printer, "grid", self.grid_shape)
        print_shape(printer, "block", self.block_shape)

    @classmethod
    def parse_launch_shape(cls, parser: Parser) -> tuple[list[int], list[int]]:
        return parse_shape(parser, "grid"), parse_shape(parser, "block")


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    """Ends a `tile.for` body; a reduction yields this iteration's contribution."""

    name = "tile.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), Pure(), HasParent(ForOp)))


@irdl_op_definition
class ForOp(ForOpBase):
    """`tile.for %i in lower to upper map MAPPING`, parallel or, with a combiner, a reduction
    (the same semantics as `loop.for`, see `emmy.dialects.for_op`)."""

    name = "tile.for"
    mapping = prop_def(MappingAttr)
    vector = opt_prop_def(IntAttr)
    YIELD: ClassVar[type[IRDLOperation]] = YieldOp

    def __init__(
        self,
        lower: int,
        upper: int,
        mapping: Mapping,
        body: Region,
        reduction: Reduction | None = None,
        vector: int = 1,
    ):
        properties: dict[str, Attribute] = {"mapping": MappingAttr(Mapping(mapping))}
        if vector != 1:
            properties["vector"] = IntAttr(vector)
        super().__init__(lower, upper, body, reduction, properties)

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
        """The threads split the iterations of one loop of a nest (see the module docstring):
        a thread or global loop inside another would give each thread a part of a part."""
        mapping = self.mapping.data
        if mapping not in VECTOR_MAPPINGS:
            return
        enclosing = self._enclosing_loops()
        spread = next((o for o in enclosing if o.mapping.data in VECTOR_MAPPINGS), None)
        if spread is not None:
            raise VerifyException(
                f"a loop mapped to {mapping} cannot be inside a loop mapped to "
                f"{spread.mapping.data}: the threads already split the outer loop's iterations"
            )

    def _verify_block_index_read_once(self) -> None:
        """A loop over a grid dimension strides by the block index: a loop around it that reads
        the same index would give each block a part of a part. Only a chain of grid loops of one
        mapping, each the only loop of the one around it, is linearised over the index once."""
        dimensions = set(grid_dimensions(self.mapping.data))
        if not dimensions:
            return
        inner, outer = self, self.parent_op()
        while (
            isinstance(outer, ForOp)
            and outer.mapping.data == self.mapping.data
            and self.mapping.data in GRID_MAPPINGS
            and [o for o in outer.body.block.ops if isinstance(o, ForOp)] == [inner]
        ):
            inner, outer = outer, outer.parent_op()
        while isinstance(outer, ForOp):
            if dimensions & set(grid_dimensions(outer.mapping.data)):
                raise VerifyException(
                    f"a loop mapped to {self.mapping.data} inside a loop mapped to "
                    f"{outer.mapping.data} would read the same block index twice (map the outer "
                    "loop to grid_y, or make the loops one chain)"
                )
            outer = outer.parent_op()

    def verify_(self) -> None:
        self._verify_block_index_read_once()
        self.verify_loop()
        self._verify_vector()
        self._verify_nesting()
        if self.kind is None:
            return
        if self.mapping.data in GRID_MAPPINGS:
            raise VerifyException(
                f"a reduction cannot be mapped to {self.mapping.data}: blocks do not combine "
                "their results"
            )
        if self.mapping.data == "global":
            if not isinstance(self.parent_op(), KernelOp):
                raise VerifyException(
                    "a reduction mapped to global is split across the blocks of the grid: it "
                    "is a whole nest, not inside another loop"
                )
            self._verify_split_reduction()

    def print_schedule(self, printer: Printer) -> None:
        printer.print_string(f" map {self.mapping.data}")
        if self.vector_width != 1:
            printer.print_string(f" vector {self.vector_width}")

    @classmethod
    def parse_schedule(cls, parser: Parser) -> dict[str, object]:
        parser.parse_keyword("map")
        mapping = MappingAttr.parse_parameter(parser)
        vector = 1
        if parser.parse_optional_keyword("vector") is not None:
            vector = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return {"mapping": mapping, "vector": vector}


@irdl_op_definition
class StageOp(IRDLOperation):
    """`tile.stage %x[%i] async : memref<32x2048xf32>`: the block copies the row of `%x` at
    the leading indices into shared memory, and the loads of that row after it in the
    enclosing grid loop read the copy (see the module docstring)."""

    name = "tile.stage"
    buffer = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    mode = prop_def(StageModeAttr)
    traits = lazy_traits_def(
        lambda: (HasParent(ForOp), ReadsOperand("buffer"), WritesSharedMemory())
    )

    assembly_format = "$buffer `[` $indices `]` $mode attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, indices: Sequence[SSAValue], mode: StageMode):
        super().__init__(
            operands=[buffer, indices], properties={"mode": StageModeAttr(StageMode(mode))}
        )

    @property
    def row_type(self) -> MemRefType:
        """The shape and element type of the staged row."""
        memref_type = self.buffer.type
        assert isinstance(memref_type, MemRefType)
        return MemRefType(memref_type.element_type, memref_type.get_shape()[len(self.indices) :])

    def verify_(self) -> None:
        parent = self.parent_op()
        if not isinstance(parent, ForOp) or parent.mapping.data not in GRID_MAPPINGS:
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


@irdl_op_definition
class LaunchOp(LaunchOpBase):
    """Host side: runs a `tile.kernel` on buffers with its launch shape."""

    name = "tile.launch"
    KERNEL_TYPE: ClassVar[type[KernelSymbolOp]] = KernelOp


Tile = Dialect(
    "tile",
    [KernelOp, ForOp, YieldOp, StageOp, LaunchOp],
    [MappingAttr, StageModeAttr, ScheduleAttr],
)
