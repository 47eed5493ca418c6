"""Kernel IR (`kernel`): the hardware primitives that realise a schedule on an NVIDIA GPU.

    kernel.func @k_scale(%x: memref<32x2048xf32>, %y: memref<32x2048xf32>) block [256, 1, 1] {
      %row = kernel.block_id x
      %tid = kernel.thread_id x
      %c2048 = arith.constant 2048 : index
      %c256 = arith.constant 256 : index
      scf.for %j = %tid to %c2048 step %c256 {
        %v = memref.load %x[%row, %j] : memref<32x2048xf32>
        %s = arith.mulf %v, %v : f32
        memref.store %s, %y[%row, %j] : memref<32x2048xf32>
      }
    }

    func.func @forward(%x: memref<32x2048xf32>) -> memref<32x2048xf32> {
      %y = memref.alloc() : memref<32x2048xf32>
      kernel.launch @k_scale(%x, %y) grid [32, 1, 1] block [256, 1, 1] smem 0
          : memref<32x2048xf32>, memref<32x2048xf32>
      func.return %y : memref<32x2048xf32>
    }

A `kernel.func` is the code of one thread; every thread of a block of the `block` shape runs
it. Control flow is upstream `scf.for` / `scf.if`, scalars are `arith` / `math`, and element
accesses are upstream `memref.load` / `memref.store` with `index` operands. Buffers are dense
row-major memrefs with static shapes: kernel arguments are global memory (the default memory
space) and shared memory is memory space 3, spelled `memref<256xf32, 3 : i32>` (the form xDSL
round-trips; a bare `3` parses as `3 : i64`, which is accepted too but is a different type).

Semantics of the primitives, for the SIMT emulator and the CUDA printer:
- `kernel.shuffle` exchanges a value within a warp (every lane, full mask, the width of the
  target's warp), like `__shfl_<mode>_sync`: `xor` reads lane `lane ^ offset`, `down` lane
  `lane + offset`, `up` lane `lane - offset` (a lane whose source is outside the warp reads its
  own value), `idx` lane `offset mod warp size`.
- `kernel.atomic` combines a value into one element and returns the element's old value; `max`
  and `min` on floats follow `arith.maximumf` / `arith.minimumf` (NaN wins, -0.0 < +0.0).
- `kernel.vector_load` / `kernel.vector_store` access N consecutive elements along the last
  dimension in one N * element-size byte access (at most 16 bytes) as one `vector<NxT>` value;
  the flat element offset of the first element must be a multiple of N, so the access is
  aligned. Lanes are taken out and put in with upstream `vector.extract`, `vector.insert` and
  `vector.broadcast` (static or index positions), the only vector ops a kernel body holds.
- A kernel takes global buffers (memrefs in the default memory space), scalars (index, i1 to
  i64, f16, bf16, f32, f64: the same in every thread) and opaque structs passed by value
  (`!kernel.opaque<"CUtensorMap", 128, 64>`: name, bytes, alignment), which it hands on
  without looking into them; `kernel.launch` passes a value of each type.
- A `kernel.shared_alloc {layout = #kernel.swizzle<128>}` buffer (or `kernel.dynamic_shared`
  view) is swizzled: every access reaches element `e` of the dense row-major buffer at its
  swizzled place (see `SwizzleAttr`).
- `kernel.cp_async` starts an asynchronous global-to-shared copy (with `src_bytes`, of fewer
  bytes, zero-filling the rest); `kernel.cp_async_commit` closes the current group of copies
  and `kernel.cp_async_wait N` waits until at most N groups of this thread are pending. Only
  then is a copy's data in shared memory: until its group is waited for, nobody may read or
  write the destination (other threads see the data after a `kernel.barrier` that follows the
  wait).
- `kernel.ldmatrix` and `kernel.mma_sync` are warp instructions for tensor cores: every lane of
  a warp executes them together, converged, and each lane holds its fragment of a matrix as a
  `vector<NxT>`, in the layouts of the PTX ISA (see `LdmatrixOp` and `MmaSyncOp`).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import auto
from math import prod
from typing import ClassVar

from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    I64,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    EqAttrConstraint,
    IRDLOperation,
    MessageConstraint,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    MemoryAllocEffect,
    MemoryReadEffect,
    MemoryWriteEffect,
    Pure,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from emmy.dialects.access import (
    parse_access,
    parse_memref_type,
    print_access,
    resolve_access,
    verify_indices,
)
from emmy.dialects.dtypes import C_TYPES, element_bytes, element_type, type_names
from emmy.dialects.effects import ReadsOperand, WritesOperand, written_values
from emmy.dialects.launch import KernelSymbolOp, LaunchOpBase, parse_shape, print_shape
from emmy.dialects.target import GpuTarget, TargetAttr, target_of
from emmy.dialects.threads import (
    ThreadDependsOn,
    ThreadVarying,
    divergent_ancestor,
    thread_dependent_values,
)

SHARED_MEMORY_SPACE = 3
"""The memory space of shared memory, as in NVVM (`memref<8xf32, 3 : i32>`)."""

SHARED_ALIGNMENT = 16
"""Every shared buffer starts on a 16-byte boundary, so that 16-byte vector accesses are aligned."""

DIMENSIONS = ("x", "y", "z")
CP_ASYNC_BYTES = (4, 8, 16)
MAX_VECTOR_BYTES = 16

BODY_OPS = frozenset(
    {
        "scf.for",
        "scf.if",
        "scf.yield",
        "memref.load",
        "memref.store",
        "vector.broadcast",
        "vector.extract",
        "vector.insert",
    }
)
BODY_DIALECTS = ("kernel", "arith", "math")


# --- fixed choices -----------------------------------------------------------------------------


class Dimension(StrEnum):
    X = auto()
    Y = auto()
    Z = auto()


class ShuffleMode(StrEnum):
    XOR = auto()
    DOWN = auto()
    UP = auto()
    IDX = auto()


class AtomicKind(StrEnum):
    ADD = auto()
    MAX = auto()
    MIN = auto()


@irdl_attr_definition
class DimensionAttr(EnumAttribute[Dimension], SpacedOpaqueSyntaxAttribute):
    """`x`, `y` or `z`: a dimension of the block or of the grid."""

    name = "kernel.dim"


@irdl_attr_definition
class ShuffleModeAttr(EnumAttribute[ShuffleMode], SpacedOpaqueSyntaxAttribute):
    """Which lane a `kernel.shuffle` reads: `xor`, `down`, `up` or `idx`."""

    name = "kernel.shuffle_mode"


@irdl_attr_definition
class AtomicKindAttr(EnumAttribute[AtomicKind], SpacedOpaqueSyntaxAttribute):
    """How a `kernel.atomic` combines: `add`, `max` or `min`."""

    name = "kernel.atomic_kind"


# --- kernel parameters and shared layouts ------------------------------------------------------


@irdl_attr_definition
class OpaqueType(ParametrizedAttribute, TypeAttribute):
    """`!kernel.opaque<"CUtensorMap", 128, 64>`: a struct of `size` bytes aligned to `alignment`
    that a kernel takes by value and does not look into (a TMA descriptor, say); the host
    passes its bytes."""

    name = "kernel.opaque"
    struct: StringAttr
    size: IntAttr
    alignment: IntAttr

    def __init__(self, struct: str, size: int, alignment: int):
        super().__init__(StringAttr(struct), IntAttr(size), IntAttr(alignment))

    def verify(self) -> None:
        struct, size, alignment = self.struct.data, self.size.data, self.alignment.data
        if not struct.isidentifier() or not struct.isascii():
            raise VerifyException(f"an opaque struct is named by an identifier, got '{struct}'")
        if alignment < 1 or alignment & (alignment - 1):
            raise VerifyException(
                f"opaque struct {struct}'s alignment is a power of two, got {alignment}"
            )
        if size < 1 or size % alignment:
            raise VerifyException(
                f"opaque struct {struct}'s size is a positive multiple of its alignment "
                f"{alignment}, got {size}"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr, IntAttr, IntAttr]:
        with parser.in_angle_brackets():
            struct = parser.parse_str_literal("the name of the opaque struct")
            parser.parse_punctuation(",")
            size = parser.parse_integer(allow_boolean=False, context_msg=" for its size")
            parser.parse_punctuation(",")
            alignment = parser.parse_integer(allow_boolean=False, context_msg=" for its alignment")
        return StringAttr(struct), IntAttr(size), IntAttr(alignment)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.struct.data)
            printer.print_string(f", {self.size.data}, {self.alignment.data}")


SWIZZLE_SPANS = (32, 64, 128)
SWIZZLE_ROW_SHIFT = 7
SWIZZLE_CHUNK_SHIFT = 4


@irdl_attr_definition
class SwizzleAttr(ParametrizedAttribute):
    """`#kernel.swizzle<128>`: a shared buffer laid out as TMA's and wgmma's swizzle modes of
    `span` bytes (32, 64 or 128) lay it out. Byte `b` of the dense row-major buffer lies at
    `b ^ (((b >> 7) & (span / 16 - 1)) << 4)`: the 16-byte chunks of each 128-byte row are
    permuted by the row's position in a group of `span / 16` rows, so that threads reading
    one column of consecutive rows hit different banks. An access of at most 16 aligned bytes
    stays in one chunk, so vector accesses keep their elements together."""

    name = "kernel.swizzle"
    span: IntAttr

    def __init__(self, span: int):
        super().__init__(IntAttr(span))

    @property
    def alignment(self) -> int:
        """The bytes after which the pattern repeats: a swizzled buffer starts on such a
        boundary, so that hardware that swizzles absolute addresses agrees with it."""
        return self.span.data // 16 << SWIZZLE_ROW_SHIFT

    def element_permutation(self, element_size: int) -> tuple[int, int, int]:
        """`(shift, mask, chunk_shift)`: element `e` of the buffer (of `element_size`-byte
        elements, a power of two) lies at `e ^ (((e >> shift) & mask) << chunk_shift)`."""
        log_size = element_size.bit_length() - 1
        return (
            SWIZZLE_ROW_SHIFT - log_size,
            self.span.data // 16 - 1,
            SWIZZLE_CHUNK_SHIFT - log_size,
        )

    def verify(self) -> None:
        if self.span.data not in SWIZZLE_SPANS:
            raise VerifyException(f"a swizzle spans 32, 64 or 128 bytes, got {self.span.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr]:
        with parser.in_angle_brackets():
            span = parser.parse_integer(allow_boolean=False, context_msg=" for the swizzle span")
        return (IntAttr(span),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.span.data}>")


def swizzle_of(buffer: SSAValue) -> SwizzleAttr | None:
    """The swizzle of a shared buffer, which its `kernel.shared_alloc` or
    `kernel.dynamic_shared` declares."""
    owner = buffer.owner
    return owner.layout if isinstance(owner, SharedAllocOp | DynamicSharedOp) else None


def _verify_swizzled(memref_type: MemRefType, layout: SwizzleAttr) -> None:
    # Every element type's size is a power of two (`dtypes.ELEMENT_TYPES`), as the swizzle's
    # element permutation needs.
    span = layout.span.data
    if buffer_bytes(memref_type) % span:
        raise VerifyException(
            f"a buffer swizzled in {span}-byte spans is a whole number of them, but "
            f"{memref_type} is {buffer_bytes(memref_type)} bytes"
        )


def is_kernel_scalar(t: Attribute) -> bool:
    """A type a kernel takes or computes as one scalar: one the cuda target has a C type for
    (`dtypes.C_TYPES`)."""
    row = element_type(t)
    return row is not None and row.c is not None


# --- types ------------------------------------------------------------------------------------


def shared_memory_space() -> IntegerAttr:
    return IntegerAttr(SHARED_MEMORY_SPACE, i32)


def shared_memref(shape: Sequence[int], element_type: Attribute) -> MemRefType:
    """The type of a shared-memory buffer: `memref<shape x element, 3 : i32>`."""
    return MemRefType(element_type, shape, NoneAttr(), shared_memory_space())


def is_shared(memref_type: Attribute) -> bool:
    """Whether a memref type is in shared memory (memory space 3, of any integer type)."""
    if not isinstance(memref_type, MemRefType):
        return False
    space = memref_type.memory_space
    return isinstance(space, IntegerAttr) and space.value.data == SHARED_MEMORY_SPACE


def buffer_bytes(memref_type: MemRefType) -> int:
    return prod(memref_type.get_shape()) * element_bytes(memref_type.get_element_type())


def _shared_bytes(memref_type: Attribute) -> int:
    if not isinstance(memref_type, MemRefType) or not memref_type.has_static_shape():
        return 0
    try:
        return buffer_bytes(memref_type)
    except VerifyException:
        return 0


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _verify_dense_buffer(memref_type: MemRefType, what: str) -> None:
    if not memref_type.has_static_shape():
        raise VerifyException(f"{what} has type {memref_type}, but shapes must be static")
    if not isinstance(memref_type.layout, NoneAttr):
        raise VerifyException(
            f"{what} has type {memref_type}, but kernel buffers are dense row-major, with the "
            f"default layout"
        )
    element_bytes(memref_type.get_element_type())


def _verify_shared(memref_type: MemRefType, what: str) -> None:
    _verify_dense_buffer(memref_type, what)
    if not is_shared(memref_type):
        raise VerifyException(
            f"{what} is shared memory, which is memory space {SHARED_MEMORY_SPACE} "
            f"(memref<..., 3 : i32>), but its type is {memref_type}"
        )


def _verify_global(memref_type: MemRefType, what: str) -> None:
    _verify_dense_buffer(memref_type, what)
    if is_shared(memref_type):
        raise VerifyException(
            f"{what} is global memory, but its type {memref_type} is in shared memory space "
            f"{SHARED_MEMORY_SPACE}"
        )
    if not isinstance(memref_type.memory_space, NoneAttr):
        raise VerifyException(
            f"{what} is global memory, which has the default memory space, but its type is "
            f"{memref_type}"
        )


def _verify_in_kernel(op: Operation) -> FuncOp:
    """Device primitives run on the GPU, so they live inside a kernel.func."""
    ancestor = op.parent_op()
    while ancestor is not None and not isinstance(ancestor, FuncOp):
        ancestor = ancestor.parent_op()
    if ancestor is None:
        raise VerifyException(f"'{op.name}' must be nested in a kernel.func")
    return ancestor


def _verify_shape3(values: Sequence[int], what: str, limits: Sequence[int]) -> None:
    if len(values) != 3:
        raise VerifyException(f"a {what} has 3 dimensions (x, y, z), got {list(values)}")
    for dim, value, limit in zip(DIMENSIONS, values, limits):
        if not 1 <= value <= limit:
            raise VerifyException(
                f"{what} {list(values)}: dimension {dim} must be between 1 and {limit}"
            )


def verify_block_shape(block: Sequence[int], target: GpuTarget) -> None:
    """A block is at most the target's threads per block, whole warps only."""
    _verify_shape3(block, "block", target.max_block_shape)
    threads = prod(block)
    if threads > target.max_threads_per_block:
        raise VerifyException(
            f"block {list(block)} has {threads} threads, but a block has at most "
            f"{target.max_threads_per_block} on {target.arch}"
        )
    if threads % target.warp_size:
        raise VerifyException(
            f"block {list(block)} has {threads} threads, which is not a multiple of the warp "
            f"size {target.warp_size}"
        )


def verify_grid_shape(grid: Sequence[int], target: GpuTarget) -> None:
    _verify_shape3(grid, "grid", target.max_grid_shape)


def _shared_limit(limit: int, target: GpuTarget) -> str:
    return f"{limit}-byte ({limit // 1024} KB) limit of one block on {target.arch}"


def _verify_run_along_last_dim(memref_type: MemRefType, count: int, what: str) -> None:
    """`count` consecutive elements along the last dimension, in one access of at most 16 bytes."""
    shape = memref_type.get_shape()
    if not shape:
        raise VerifyException(
            f"{what} needs a buffer with at least one dimension, got {memref_type}"
        )
    size = count * element_bytes(memref_type.get_element_type())
    if size > MAX_VECTOR_BYTES or size & (size - 1):
        raise VerifyException(
            f"{what} of {count} x {memref_type.get_element_type()} is {size} bytes, but one access "
            f"is 1, 2, 4, 8 or 16 bytes"
        )
    if shape[-1] % count:
        raise VerifyException(
            f"{what} of {count} elements must divide the last dimension of {memref_type} "
            f"({shape[-1]}), so that no access crosses a row"
        )


# --- parsing helpers ---------------------------------------------------------------------------


def _parse_int(parser: Parser, what: str) -> int:
    return parser.parse_integer(allow_boolean=False, context_msg=f" for {what}")


def _shape_property(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


# --- ops -------------------------------------------------------------------------------------


@irdl_op_definition
class FuncOp(KernelSymbolOp):
    """A GPU kernel: the code one thread runs, compiled for blocks of shape `block`. It takes
    global buffers (memrefs), scalars (`is_kernel_scalar`) and opaque structs (`OpaqueType`)."""

    name = "kernel.func"
    block = prop_def(DenseArrayBase.constr(i64))

    def __init__(
        self,
        name: str,
        argument_types: Sequence[Attribute],
        block: Sequence[int],
        body: Region,
    ):
        super().__init__(name, argument_types, body, {"block": _shape_property(block)})

    @property
    def block_shape(self) -> tuple[int, ...]:
        return tuple(self.block.get_values())

    @property
    def threads(self) -> int:
        return prod(self.block_shape)

    def shared_allocs(self) -> list[SharedAllocOp]:
        return [op for op in self.body.walk() if isinstance(op, SharedAllocOp)]

    @property
    def static_shared_bytes(self) -> int:
        """Bytes of static shared memory, each buffer rounded up to its alignment (buffers that
        do not verify count nothing; their own ops report them)."""
        return sum(
            _round_up(_shared_bytes(op.result.type), op.alignment) for op in self.shared_allocs()
        )

    @property
    def dynamic_shared_bytes(self) -> int:
        """The dynamic shared memory a launch must provide: the end of the last view."""
        ends = [
            op.byte_offset + _shared_bytes(op.result.type)
            for op in self.body.walk()
            if isinstance(op, DynamicSharedOp)
        ]
        return max(ends, default=0)

    def verify_(self) -> None:
        self.verify_symbol()
        target = target_of(self)
        verify_block_shape(self.block_shape, target)
        for index, arg_type in enumerate(self.argument_types):
            if isinstance(arg_type, MemRefType):
                _verify_global(arg_type, f"kernel argument #{index}")
            elif not (is_kernel_scalar(arg_type) or isinstance(arg_type, OpaqueType)):
                raise VerifyException(
                    f"kernel argument #{index} is a memref, a scalar "
                    f"({type_names(C_TYPES, 'or')}) or a !kernel.opaque struct, got {arg_type}"
                )
        for op in self.body.walk():
            if op.dialect_name() not in BODY_DIALECTS and op.name not in BODY_OPS:
                raise VerifyException(
                    f"a kernel.func body holds only kernel, arith and math ops, scf.for, scf.if, "
                    f"scf.yield, memref.load and memref.store, vector.broadcast, vector.extract "
                    f"and vector.insert, found '{op.name}'"
                )
            if isinstance(op, LaunchOp):
                raise VerifyException("a kernel.launch runs on the host, not inside a kernel.func")
        # The cuda target declares shared_allocs as static __shared__ arrays, which the
        # compiler allows up to the static limit; beyond it a block opts in to dynamic memory.
        static = self.static_shared_bytes
        limit = target.static_shared_bytes_per_block
        if static > limit:
            raise VerifyException(
                f"kernel @{self.sym_name.data} allocates {static} bytes of static shared memory, "
                f"over the {_shared_limit(limit, target)} (larger buffers are dynamic shared "
                f"memory)"
            )

    def print_launch_shape(self, printer: Printer) -> None:
        print_shape(printer, "block", self.block_shape)

    @classmethod
    def parse_launch_shape(cls, parser: Parser) -> tuple[list[int]]:
        return (parse_shape(parser, "block"),)


class _IdOp(IRDLOperation):
    """A special register: `%t = kernel.thread_id x`."""

    dimension = prop_def(DimensionAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$dimension attr-dict"

    def __init__(self, dimension: str):
        super().__init__(
            properties={"dimension": DimensionAttr(Dimension(dimension))},
            result_types=[IndexType()],
        )

    @property
    def dim(self) -> Dimension:
        return self.dimension.data

    def verify_(self) -> None:
        _verify_in_kernel(self)


@irdl_op_definition
class ThreadIdOp(_IdOp):
    """This thread's index in its block along a dimension (`threadIdx`)."""

    name = "kernel.thread_id"
    traits = traits_def(ThreadVarying())


@irdl_op_definition
class BlockIdOp(_IdOp):
    """This block's index in the grid along a dimension (`blockIdx`); uniform in a block."""

    name = "kernel.block_id"
    traits = traits_def(ThreadDependsOn())


@irdl_op_definition
class BlockDimOp(_IdOp):
    """The block's extent along a dimension (`blockDim`)."""

    name = "kernel.block_dim"
    traits = traits_def(ThreadDependsOn())


@irdl_op_definition
class GridDimOp(_IdOp):
    """The grid's extent along a dimension (`gridDim`)."""

    name = "kernel.grid_dim"
    traits = traits_def(ThreadDependsOn())


@irdl_op_definition
class SharedAllocOp(IRDLOperation):
    """A static shared buffer of the block: `%s = kernel.shared_alloc : memref<8xf32, 3 : i32>`
    (swizzled: `kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<...>`).

    Like a `__shared__` variable, there is one buffer per op per block, for the whole kernel,
    however often the op runs (in a loop, say); its contents start undefined. Every access to a
    swizzled buffer goes through its swizzle (see `SwizzleAttr`)."""

    name = "kernel.shared_alloc"
    layout = opt_prop_def(SwizzleAttr)
    result = result_def(MemRefType)
    # Two allocations of one type are two buffers: the effect keeps CSE from merging them.
    traits = traits_def(MemoryAllocEffect(), ThreadDependsOn())
    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, result_type: MemRefType, layout: SwizzleAttr | None = None):
        super().__init__(result_types=[result_type], properties={"layout": layout})

    @property
    def alignment(self) -> int:
        """The byte boundary the buffer starts on."""
        return self.layout.alignment if self.layout is not None else SHARED_ALIGNMENT

    def verify_(self) -> None:
        _verify_in_kernel(self)
        memref_type = self.result.type
        _verify_shared(memref_type, "a kernel.shared_alloc buffer")
        if self.layout is not None:
            _verify_swizzled(memref_type, self.layout)


@irdl_op_definition
class DynamicSharedOp(IRDLOperation):
    """A view of the dynamic shared memory (sized by the launch) at a byte offset:
    `%d = kernel.dynamic_shared offset 0 : memref<1024xf32, 3 : i32>` (swizzled, like a
    `kernel.shared_alloc`: `kernel.dynamic_shared offset 0 {layout = #kernel.swizzle<128>}`,
    at an offset on the boundary of the swizzle's pattern)."""

    name = "kernel.dynamic_shared"
    offset = prop_def(IntegerAttr[I64])
    layout = opt_prop_def(SwizzleAttr)
    result = result_def(MemRefType)
    traits = traits_def(Pure(), ThreadDependsOn())

    def __init__(self, offset: int, result_type: MemRefType, layout: SwizzleAttr | None = None):
        super().__init__(
            properties={"offset": IntegerAttr(offset, i64), "layout": layout},
            result_types=[result_type],
        )

    @property
    def byte_offset(self) -> int:
        return self.offset.value.data

    def verify_(self) -> None:
        _verify_in_kernel(self)
        _verify_shared(self.result.type, "a kernel.dynamic_shared view")
        offset = self.byte_offset
        if offset < 0 or offset % SHARED_ALIGNMENT:
            raise VerifyException(
                f"a dynamic shared view starts at a byte offset that is a non-negative multiple "
                f"of {SHARED_ALIGNMENT}, got {offset}"
            )
        if self.layout is not None:
            _verify_swizzled(self.result.type, self.layout)
            if offset % self.layout.alignment:
                raise VerifyException(
                    f"a view swizzled in {self.layout.span.data}-byte spans starts where its "
                    f"pattern does, at a multiple of {self.layout.alignment} bytes, got {offset}"
                )
        end = offset + buffer_bytes(self.result.type)
        target = target_of(self)
        if end > target.shared_bytes_per_block:
            raise VerifyException(
                f"a dynamic shared view ending at byte {end} is over the "
                f"{_shared_limit(target.shared_bytes_per_block, target)}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" offset {self.byte_offset}")
        layout = {"layout": self.layout} if self.layout is not None else {}
        printer.print_op_attributes({**layout, **self.attributes})
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> DynamicSharedOp:
        parser.parse_keyword("offset")
        offset = _parse_int(parser, "a byte offset")
        pos = parser.pos
        attributes = parser.parse_optional_attr_dict()
        layout = attributes.pop("layout", None)
        if layout is not None and not isinstance(layout, SwizzleAttr):
            parser.raise_error(
                f"a dynamic shared view's layout is a #kernel.swizzle, got {layout}", pos
            )
        parser.parse_punctuation(":")
        result_type = parse_memref_type(parser, "a kernel.dynamic_shared result")
        op = cls(offset, result_type, layout)
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """`kernel.barrier`: waits for every thread of the block (`__syncthreads()`), which is why
    every thread must reach it: it may not sit under control flow that depends on the thread."""

    name = "kernel.barrier"
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def verify_(self) -> None:
        kernel = _verify_in_kernel(self)
        divergent = divergent_ancestor(self, thread_dependent_values(kernel.body))
        if divergent is None:
            return
        ancestor, source = divergent
        what = "condition depends" if isinstance(ancestor, scf.IfOp) else "bounds depend"
        raise VerifyException(
            "a kernel.barrier must be reached by every thread of the block, but it is inside "
            f"an {ancestor.name} whose {what} on {source}"
        )


@irdl_op_definition
class ShuffleOp(IRDLOperation):
    """Reads `value` from another lane of the warp: `%r = kernel.shuffle xor %v, %offset : f32`
    (every lane of the warp takes part; `offset` is an i32 lane mask, delta or index)."""

    name = "kernel.shuffle"
    _T: ClassVar = VarConstraint(
        "T",
        MessageConstraint(
            base(Float16Type)
            | base(BFloat16Type)
            | base(Float32Type)
            | base(Float64Type)
            | base(IndexType)
            | EqAttrConstraint(i32)
            | EqAttrConstraint(i64),
            "a shuffle moves an f16, bf16, f32, f64, i32, i64 or index",
        ),
    )
    mode = prop_def(ShuffleModeAttr)
    value = operand_def(_T)
    offset = operand_def(i32)
    result = result_def(_T)
    # Every lane of a warp holding one value reads that value back, whichever lane it reads.
    traits = traits_def(Pure(), ThreadDependsOn("value"))
    assembly_format = "$mode $value `,` $offset attr-dict `:` type($value)"

    def __init__(self, mode: str, value: SSAValue, offset: SSAValue):
        super().__init__(
            operands=[value, offset],
            result_types=[value.type],
            properties={"mode": ShuffleModeAttr(ShuffleMode(mode))},
        )

    def verify_(self) -> None:
        _verify_in_kernel(self)


@irdl_op_definition
class AtomicOp(IRDLOperation):
    """Combines `value` into one buffer element atomically and returns the old element:
    `%old = kernel.atomic add %v, %buf[%i, %j] : memref<..>`."""

    name = "kernel.atomic"
    kind = prop_def(AtomicKindAttr)
    value = operand_def()
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def()
    traits = traits_def(ReadsOperand("memref"), WritesOperand("memref"), ThreadVarying())

    def __init__(self, kind: str, value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]):
        super().__init__(
            operands=[value, buffer, indices],
            result_types=[value.type],
            properties={"kind": AtomicKindAttr(AtomicKind(kind))},
        )

    def verify_(self) -> None:
        _verify_in_kernel(self)
        kind = self.kind.data
        memref_type = verify_indices(self.memref, self.indices)
        element = memref_type.get_element_type()
        if self.value.type != element or self.result.type != element:
            raise VerifyException(
                f"an atomic combines and returns the element type {element}, got value "
                f"{self.value.type} and result {self.result.type}"
            )
        integer = isinstance(element, IntegerType) and element.width.data in (32, 64)
        if kind == AtomicKind.ADD:
            ok = integer or isinstance(
                element, (Float16Type, BFloat16Type, Float32Type, Float64Type)
            )
            supported = "f16, bf16, f32, f64, i32 or i64"
        else:
            ok = integer or isinstance(element, (Float32Type, Float64Type))
            supported = "f32, f64, i32 or i64"
        if not ok:
            raise VerifyException(f"an atomic {kind} works on {supported} elements, got {element}")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} ")
        printer.print_ssa_value(self.value)
        printer.print_string(", ")
        print_access(printer, self.memref, self.indices)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)

    @classmethod
    def parse(cls, parser: Parser) -> AtomicOp:
        kind = parser.parse_str_enum(AtomicKind)
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        access = parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        memref_type = parse_memref_type(parser, "an atomic's buffer")
        resolved, resolved_indices = resolve_access(parser, access, memref_type, pos)
        (resolved_value,) = parser.resolve_operands([value], [memref_type.get_element_type()], pos)
        op = cls(kind, resolved_value, resolved, resolved_indices)
        op.attributes.update(attributes)
        return op


def _verify_vector_access(memref_type: MemRefType, vector_type: Attribute, what: str) -> None:
    element = memref_type.get_element_type()
    if (
        not isinstance(vector_type, VectorType)
        or vector_type.get_num_dims() != 1
        or vector_type.get_scalable_dims()[0]
        or vector_type.get_element_type() != element
    ):
        raise VerifyException(
            f"{what} of {memref_type} moves a vector<Nx{element}>, got {vector_type}"
        )
    _verify_run_along_last_dim(memref_type, vector_type.get_shape()[0], what)


@irdl_op_definition
class VectorLoadOp(IRDLOperation):
    """Loads N consecutive elements along the last dimension in one access:
    `%v = kernel.vector_load %buf[%i, %j] : memref<4x64xf32>, vector<4xf32>`."""

    name = "kernel.vector_load"
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def(VectorType)
    traits = traits_def(ReadsOperand("memref"), ThreadDependsOn("indices"))
    assembly_format = "$memref `[` $indices `]` attr-dict `:` type($memref) `,` type($result)"

    def __init__(self, buffer: SSAValue, indices: Sequence[SSAValue], width: int):
        assert isinstance(buffer.type, MemRefType)
        super().__init__(
            operands=[buffer, indices],
            result_types=[VectorType(buffer.type.get_element_type(), [width])],
        )

    @property
    def width(self) -> int:
        return self.result.type.get_shape()[0]

    def verify_(self) -> None:
        _verify_in_kernel(self)
        memref_type = verify_indices(self.memref, self.indices)
        _verify_vector_access(memref_type, self.result.type, "a vector load")


@irdl_op_definition
class VectorStoreOp(IRDLOperation):
    """Stores N consecutive elements along the last dimension in one access:
    `kernel.vector_store %v, %buf[%i, %j] : memref<4x64xf32>, vector<4xf32>`."""

    name = "kernel.vector_store"
    value = operand_def(VectorType)
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    traits = traits_def(WritesOperand("memref"))
    assembly_format = (
        "$value `,` $memref `[` $indices `]` attr-dict `:` type($memref) `,` type($value)"
    )

    def __init__(self, value: SSAValue, buffer: SSAValue, indices: Sequence[SSAValue]):
        super().__init__(operands=[value, buffer, indices])

    @property
    def width(self) -> int:
        return self.value.type.get_shape()[0]

    def verify_(self) -> None:
        _verify_in_kernel(self)
        memref_type = verify_indices(self.memref, self.indices)
        _verify_vector_access(memref_type, self.value.type, "a vector store")


@irdl_op_definition
class CpAsyncOp(IRDLOperation):
    """Starts an asynchronous copy of `bytes` bytes from global to shared memory:
    `kernel.cp_async %dst[%i], %src[%j] bytes 16 : memref<..., 3 : i32>, memref<...>`.

    With `src_bytes %n` (an i32 from 0 to `bytes`, whole elements) only the first `n` bytes
    are read from the source and the rest of the destination is filled with zeros (PTX's
    src-size operand): a tile's copy past the end of a matrix reads nothing and leaves zeros,
    `kernel.cp_async %dst[%i], %src[%j] bytes 16 src_bytes %n : ...`."""

    name = "kernel.cp_async"
    destination = operand_def(MemRefType)
    destination_indices = var_operand_def(IndexType)
    source = operand_def(MemRefType)
    source_indices = var_operand_def(IndexType)
    source_bytes = opt_operand_def(i32)
    bytes = prop_def(IntegerAttr[I64])
    traits = traits_def(ReadsOperand("source"), WritesOperand("destination"))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        dst: SSAValue,
        dst_indices: Sequence[SSAValue],
        src: SSAValue,
        src_indices: Sequence[SSAValue],
        size: int,
        source_bytes: SSAValue | None = None,
    ):
        super().__init__(
            operands=[dst, dst_indices, src, src_indices, source_bytes],
            properties={"bytes": IntegerAttr(size, i64)},
        )

    @property
    def size(self) -> int:
        """The bytes copied."""
        return self.bytes.value.data

    @property
    def elements(self) -> int:
        return self.size // element_bytes(self.source.type.get_element_type())

    def verify_(self) -> None:
        _verify_in_kernel(self)
        dst_type = verify_indices(self.destination, self.destination_indices)
        src_type = verify_indices(self.source, self.source_indices)
        _verify_shared(dst_type, "a cp_async destination")
        _verify_global(src_type, "a cp_async source")
        size = self.size
        if size not in CP_ASYNC_BYTES:
            raise VerifyException(f"a cp_async copies 4, 8 or 16 bytes, got {size}")
        element = src_type.get_element_type()
        if dst_type.get_element_type() != element:
            raise VerifyException(
                f"a cp_async copies between buffers of one element type, got {element} to "
                f"{dst_type.get_element_type()}"
            )
        width = element_bytes(element)
        if size % width:
            raise VerifyException(
                f"a cp_async of {size} bytes does not copy whole {element} elements"
            )
        _verify_run_along_last_dim(src_type, size // width, "a cp_async")
        _verify_run_along_last_dim(dst_type, size // width, "a cp_async")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_access(printer, self.destination, self.destination_indices)
        printer.print_string(", ")
        print_access(printer, self.source, self.source_indices)
        printer.print_string(f" bytes {self.size}")
        if self.source_bytes is not None:
            printer.print_string(" src_bytes ")
            printer.print_ssa_value(self.source_bytes)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.destination.type)
        printer.print_string(", ")
        printer.print_attribute(self.source.type)

    @classmethod
    def parse(cls, parser: Parser) -> CpAsyncOp:
        destination = parse_access(parser)
        parser.parse_punctuation(",")
        source = parse_access(parser)
        parser.parse_keyword("bytes")
        size = _parse_int(parser, "a copy size")
        source_bytes = None
        if parser.parse_optional_keyword("src_bytes") is not None:
            source_bytes = parser.resolve_operand(parser.parse_unresolved_operand(), i32)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        dst_type = parse_memref_type(parser, "a cp_async destination")
        parser.parse_punctuation(",")
        src_type = parse_memref_type(parser, "a cp_async source")
        dst_value, dst_resolved = resolve_access(parser, destination, dst_type, pos)
        src_value, src_resolved = resolve_access(parser, source, src_type, pos)
        op = cls(dst_value, dst_resolved, src_value, src_resolved, size, source_bytes)
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class CpAsyncCommitOp(IRDLOperation):
    """`kernel.cp_async_commit`: closes this thread's current group of cp_async copies."""

    name = "kernel.cp_async_commit"
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def verify_(self) -> None:
        _verify_in_kernel(self)


@irdl_op_definition
class CpAsyncWaitOp(IRDLOperation):
    """`kernel.cp_async_wait 0`: waits until at most `pending` committed groups of this thread's
    copies are still in flight."""

    name = "kernel.cp_async_wait"
    pending = prop_def(IntegerAttr[I64])
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntegerAttr(pending, i64)})

    @property
    def pending_groups(self) -> int:
        return self.pending.value.data

    def verify_(self) -> None:
        _verify_in_kernel(self)
        if self.pending_groups < 0:
            raise VerifyException(
                f"a cp_async_wait leaves a non-negative number of groups pending, got "
                f"{self.pending_groups}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.pending_groups}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> CpAsyncWaitOp:
        pending = _parse_int(parser, "the number of pending groups")
        attributes = parser.parse_optional_attr_dict()
        op = cls(pending)
        op.attributes.update(attributes)
        return op


# --- warp-level tensor cores: ldmatrix and mma.sync (sm_80 on) --------------------------------


LDMATRIX_ROW = 8
"""An ldmatrix matrix is 8x8 16-bit elements: 8 rows of 8 elements, 16 bytes each."""


class MmaShape(StrEnum):
    M16N8K16 = auto()
    M16N8K8 = auto()


MMA_SHAPES: dict[MmaShape, tuple[int, int, int]] = {
    MmaShape.M16N8K16: (16, 8, 16),
    MmaShape.M16N8K8: (16, 8, 8),
}
"""M, N and K of each `kernel.mma_sync` shape."""


@irdl_attr_definition
class MmaShapeAttr(EnumAttribute[MmaShape], SpacedOpaqueSyntaxAttribute):
    """`m16n8k16` or `m16n8k8`: the M x N x K of one `kernel.mma_sync`."""

    name = "kernel.mma_shape"


def _is_16_bit(element: Attribute) -> bool:
    return isinstance(element, Float16Type | BFloat16Type) or (
        isinstance(element, IntegerType) and element.width.data == 16
    )


def _lane_vector(vector_type: Attribute) -> tuple[int, Attribute] | None:
    """(lanes, element) of a one-dimensional fixed-size vector type, None for another type."""
    if (
        not isinstance(vector_type, VectorType)
        or vector_type.get_num_dims() != 1
        or vector_type.get_scalable_dims()[0]
    ):
        return None
    return vector_type.get_shape()[0], vector_type.get_element_type()


@irdl_op_definition
class LdmatrixOp(IRDLOperation):
    """The warp loads one, two or four 8x8 matrices of 16-bit elements from shared memory
    (PTX `ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16`):
    `%a = kernel.ldmatrix %s[%row, %col] : memref<64x64xbf16, 3 : i32>, vector<8xbf16>`.

    Every lane of the warp executes it, converged (`.sync.aligned`). Each lane gives the
    address of one matrix row, 8 consecutive elements along the last dimension starting at
    its indices, which must be 16-byte aligned: lanes 8i to 8i + 7 give rows 0 to 7 of matrix
    i, for the 1, 2 or 4 matrices; the other lanes' indices are not read. With lane `l`,
    `g = l / 4` and `t = l % 4`, lane `l` receives elements `2i` and `2i + 1` of its
    `vector<2Nxelement>` from matrix i: row `g`, columns `2t` and `2t + 1` (with `trans`: row
    `2t` and `2t + 1`, column `g`, i.e. of the transposed matrix). These are the fragments
    `kernel.mma_sync` takes: an x4 of the A tile's four 8x8 quarters, (rows 0-7, k 0-7),
    (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15), is an m16n8k16 A fragment,
    and an x2 `trans` of two 8x8 blocks of a [K, N] B (or without `trans`, of an [N, K] B)
    is its B fragment."""

    name = "kernel.ldmatrix"
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    trans = opt_prop_def(UnitAttr)
    result = result_def(VectorType)
    traits = traits_def(ReadsOperand("memref"), ThreadVarying())
    assembly_format = (
        "$memref `[` $indices `]` (`trans` $trans^)? attr-dict `:` type($memref) `,` type($result)"
    )

    def __init__(
        self,
        buffer: SSAValue,
        indices: Sequence[SSAValue],
        matrices: int,
        transposed: bool = False,
    ):
        assert isinstance(buffer.type, MemRefType)
        super().__init__(
            operands=[buffer, indices],
            result_types=[VectorType(buffer.type.get_element_type(), [2 * matrices])],
            properties={"trans": UnitAttr() if transposed else None},
        )

    @property
    def matrices(self) -> int:
        """How many 8x8 matrices the warp loads: 1, 2 or 4 (`.x1`, `.x2`, `.x4`)."""
        return self.result.type.get_shape()[0] // 2

    @property
    def transposed(self) -> bool:
        return self.trans is not None

    def verify_(self) -> None:
        _verify_in_kernel(self)
        memref_type = verify_indices(self.memref, self.indices)
        _verify_shared(memref_type, "a kernel.ldmatrix source")
        element = memref_type.get_element_type()
        if not _is_16_bit(element):
            raise VerifyException(
                f"a kernel.ldmatrix loads matrices of 16-bit elements (f16, bf16, i16), got "
                f"{memref_type}"
            )
        lanes = _lane_vector(self.result.type)
        if lanes is None or lanes[1] != element or lanes[0] not in (2, 4, 8):
            raise VerifyException(
                f"a kernel.ldmatrix gives each lane two elements of each of 1, 2 or 4 matrices, "
                f"vector<2x{element}>, vector<4x{element}> or vector<8x{element}>, got "
                f"{self.result.type}"
            )
        shape = memref_type.get_shape()
        if not shape or shape[-1] % LDMATRIX_ROW:
            raise VerifyException(
                f"a kernel.ldmatrix row is {LDMATRIX_ROW} consecutive elements along the last "
                f"dimension, which must be a multiple of {LDMATRIX_ROW} so that no row crosses "
                f"into the next, got {memref_type}"
            )


@irdl_op_definition
class MmaSyncOp(IRDLOperation):
    """The warp multiplies and accumulates one M x N x K tile on tensor cores, D = A * B + C
    (PTX `mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`, and the f16, m16n8k8 and
    tf32 forms): `%d = kernel.mma_sync m16n8k16 %a, %b, %c : vector<8xbf16>,
    vector<4xbf16>, vector<4xf32> -> vector<4xf32>`.

    Every lane of the warp executes it, converged (`.sync.aligned`). A is M x K, B is K x N,
    C and D are M x N in f32; each lane holds the fragment elements of the PTX ISA's layouts
    ("Matrix Fragments for mma.m16n8k16 with floating point type", "... mma.m16n8k8"), with
    lane `l`, `g = l / 4`, `t = l % 4`, element `i` of its vector at (row, column):
    - m16n8k16, f16 / bf16: A `vector<8>` at (g + 8 * (i / 2 % 2), 2t + i % 2 + 8 * (i / 4)),
      B `vector<4>` at (2t + i % 2 + 8 * (i / 2), g);
    - m16n8k8, f16 / bf16: A `vector<4>` at (g + 8 * (i / 2), 2t + i % 2), B `vector<2>` at
      (2t + i, g);
    - m16n8k8 `tf32` (f32 matrices): A `vector<4xf32>` at (g + 8 * (i % 2), t + 4 * (i / 2)),
      B `vector<2xf32>` at (t + 4i, g); each element of A and B is first rounded to tf32, to
      nearest with ties away from zero (`cvt.rna.tf32.f32`), which the `tf32` keyword says;
    - C and D, every shape: `vector<4xf32>` at (g + 8 * (i / 2), 2t + i % 2).
    Products are exact and accumulate in at least f32; the PTX ISA leaves the order and the
    rounding of the accumulation unspecified."""

    name = "kernel.mma_sync"
    shape = prop_def(MmaShapeAttr)
    tf32 = opt_prop_def(UnitAttr)
    a = operand_def(VectorType)
    b = operand_def(VectorType)
    c = operand_def(VectorType)
    result = result_def(VectorType)
    traits = traits_def(Pure(), ThreadDependsOn())
    assembly_format = (
        "$shape (`tf32` $tf32^)? $a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` "
        "type($c) `->` type($result)"
    )

    def __init__(self, shape: str, a: SSAValue, b: SSAValue, c: SSAValue, tf32: bool = False):
        super().__init__(
            operands=[a, b, c],
            result_types=[c.type],
            properties={
                "shape": MmaShapeAttr(MmaShape(shape)),
                "tf32": UnitAttr() if tf32 else None,
            },
        )

    @property
    def mnk(self) -> tuple[int, int, int]:
        return MMA_SHAPES[self.shape.data]

    @property
    def element_type(self) -> Attribute:
        """The element type of A and B (f32 for tf32)."""
        return self.a.type.get_element_type()

    def verify_(self) -> None:
        _verify_in_kernel(self)
        target = target_of(self)
        if not target.has_mma_sync:
            raise VerifyException(
                f"kernel.mma_sync needs warp-level tensor cores (sm_80 and later), which the "
                f"module's target {target.arch} ({target.name}) does not have"
            )
        shape = self.shape.data
        m, n, k = self.mnk
        a, b = _lane_vector(self.a.type), _lane_vector(self.b.type)
        element = a[1] if a is not None else None
        if self.tf32 is not None:
            if shape != MmaShape.M16N8K8:
                raise VerifyException(f"a tf32 kernel.mma_sync is m16n8k8, got {shape}")
            if not isinstance(element, Float32Type):
                raise VerifyException(
                    f"a tf32 kernel.mma_sync multiplies f32 matrices (rounded to tf32), got A "
                    f"of {self.a.type}"
                )
        elif isinstance(element, Float32Type):
            raise VerifyException(
                "a kernel.mma_sync of f32 matrices rounds them to tf32, which the IR says with "
                "the `tf32` keyword (kernel.mma_sync m16n8k8 tf32 ...)"
            )
        elif not isinstance(element, Float16Type | BFloat16Type):
            raise VerifyException(
                f"a kernel.mma_sync multiplies f16 or bf16 matrices (or f32 as tf32), got A of "
                f"{self.a.type}"
            )
        warp = target.warp_size
        if a != (m * k // warp, element):
            raise VerifyException(
                f"a kernel.mma_sync {shape} gives each lane {m * k // warp} elements of the "
                f"{m}x{k} A, vector<{m * k // warp}x{element}>, got {self.a.type}"
            )
        if b != (k * n // warp, element):
            raise VerifyException(
                f"a kernel.mma_sync {shape} gives each lane {k * n // warp} elements of the "
                f"{k}x{n} B, of A's element type: vector<{k * n // warp}x{element}>, got "
                f"{self.b.type}"
            )
        accumulator = (m * n // warp, Float32Type())
        if _lane_vector(self.c.type) != accumulator or self.result.type != self.c.type:
            raise VerifyException(
                f"a kernel.mma_sync {shape} accumulates in f32, each lane holding "
                f"vector<{m * n // warp}xf32> of the {m}x{n} C and D, got C {self.c.type} and "
                f"D {self.result.type}"
            )


@irdl_op_definition
class LaunchOp(LaunchOpBase):
    """Host side: runs a kernel.func on a grid of blocks:
    `kernel.launch @k(%x, %n) grid [32, 1, 1] block [256, 1, 1] smem 0 : memref<..>, index`
    (`smem` is the bytes of dynamic shared memory); it passes the kernel's buffers, scalars
    and opaque structs."""

    name = "kernel.launch"
    KERNEL_TYPE: ClassVar[type[KernelSymbolOp]] = FuncOp
    grid = prop_def(DenseArrayBase.constr(i64))
    block = prop_def(DenseArrayBase.constr(i64))
    smem = prop_def(IntegerAttr[I64])
    arguments = var_operand_def()

    def __init__(
        self,
        kernel: str,
        arguments: Sequence[SSAValue],
        grid: Sequence[int],
        block: Sequence[int],
        smem: int = 0,
    ):
        super().__init__(
            kernel,
            arguments,
            {
                "grid": _shape_property(grid),
                "block": _shape_property(block),
                "smem": IntegerAttr(smem, i64),
            },
        )

    @property
    def smem_bytes(self) -> int:
        """Bytes of dynamic shared memory."""
        return self.smem.value.data

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return tuple(self.grid.get_values())

    @property
    def block_shape(self) -> tuple[int, ...]:
        return tuple(self.block.get_values())

    def verify_(self) -> None:
        target = target_of(self)
        verify_grid_shape(self.grid_shape, target)
        verify_block_shape(self.block_shape, target)
        smem = self.smem_bytes
        if smem < 0:
            raise VerifyException(f"dynamic shared memory is a number of bytes, got {smem}")
        kernel = self.verify_launch()
        if kernel is None or not isinstance(kernel.properties.get("block"), DenseArrayBase):
            # The kernel may be verified after this launch; its own verifier reports this.
            return
        if self.block_shape != kernel.block_shape:
            raise VerifyException(
                f"launch block {list(self.block_shape)} differs from the block "
                f"{list(kernel.block_shape)} that {self.kernel} is compiled for"
            )
        static = kernel.static_shared_bytes
        needed = kernel.dynamic_shared_bytes
        if smem + static > target.shared_bytes_per_block:
            raise VerifyException(
                f"launch gives {self.kernel} {smem} bytes of dynamic shared memory on top of its "
                f"{static} static bytes, {smem + static} in all, over the "
                f"{_shared_limit(target.shared_bytes_per_block, target)}"
            )
        if smem < needed:
            raise VerifyException(
                f"launch gives {self.kernel} {smem} bytes of dynamic shared memory, but its "
                f"kernel.dynamic_shared views need {needed}"
            )
        written = written_arguments(kernel)
        seen: dict[SSAValue, int] = {}
        for index, buffer in enumerate(self.arguments):
            if buffer in seen and (index in written or seen[buffer] in written):
                raise VerifyException(
                    f"launch passes one buffer as arguments #{seen[buffer]} and #{index} of "
                    f"{self.kernel}, which writes one of them; kernel arguments must not alias "
                    f"(they are __restrict__)"
                )
            seen.setdefault(buffer, index)

    def print(self, printer: Printer) -> None:
        self.print_arguments(printer)
        print_shape(printer, "grid", self.grid_shape)
        print_shape(printer, "block", self.block_shape)
        printer.print_string(f" smem {self.smem_bytes}")
        self.print_types(printer)

    @classmethod
    def parse(cls, parser: Parser) -> LaunchOp:
        kernel, operands = cls.parse_arguments(parser)
        grid = parse_shape(parser, "grid")
        block = parse_shape(parser, "block")
        parser.parse_keyword("smem")
        smem = _parse_int(parser, "the dynamic shared memory bytes")
        arguments, attributes = cls.parse_types(parser, operands, parser.parse_type)
        op = cls(kernel, arguments, grid, block, smem)
        op.attributes.update(attributes)
        return op


def written_arguments(kernel: FuncOp) -> set[int]:
    """The positions of the arguments that the kernel writes (by its ops' declared effects)."""
    written = written_values(kernel.body)
    return {index for index, arg in enumerate(kernel.body.block.args) if arg in written}


Kernel = Dialect(
    "kernel",
    [
        FuncOp,
        ThreadIdOp,
        BlockIdOp,
        BlockDimOp,
        GridDimOp,
        SharedAllocOp,
        DynamicSharedOp,
        BarrierOp,
        ShuffleOp,
        AtomicOp,
        VectorLoadOp,
        VectorStoreOp,
        CpAsyncOp,
        CpAsyncCommitOp,
        CpAsyncWaitOp,
        LdmatrixOp,
        MmaSyncOp,
        LaunchOp,
    ],
    [
        TargetAttr,
        DimensionAttr,
        ShuffleModeAttr,
        AtomicKindAttr,
        OpaqueType,
        SwizzleAttr,
        MmaShapeAttr,
    ],
)
