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
  i64, f16, bf16, f32, f64: the same in every thread) and TMA tensor maps
  (`!kernel.tensor_map<memref<...>, box [..], swizzle 128>`, a `CUtensorMap` by value);
  `kernel.launch` passes a value of each type, a memref of the map's tensor for a map.
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
- Hopper (sm_90a): `kernel.mbarrier_alloc` makes an array of mbarriers (`!kernel.mbarrier<N>`)
  that threads arrive on and wait on by phase parity; `kernel.tma_load` copies a box of a
  tensor map's tensor into swizzled shared memory, completing bytes on an mbarrier, and
  `kernel.tma_store` copies one back, in groups of the thread that `kernel.tma_store_commit`
  closes and `kernel.tma_store_wait N` waits for (as cp_async's);
  `kernel.wgmma` is a warpgroup's asynchronous MMA on shared tiles, whose accumulator
  `kernel.wgmma_wait` returns once its group is done; `kernel.setmaxnreg` moves registers
  between warpgroups (see each op); `kernel.named_barrier` lets warps wait for each other
  (warp groups taking turns at their tensor-core products).
- Clusters (sm_90 on): a `kernel.func ... cluster N` runs its blocks N at a time along x, at
  once; `kernel.cluster_barrier` waits for all their threads, and `kernel.map_shared_rank`
  gives another block's shared buffer, which it reads as its own (distributed shared memory).
  A `kernel.tma_load ... multicast %mask` lands its box in several blocks of the cluster, and
  `kernel.mbarrier_arrive ... rank %r` arrives on another block's mbarrier.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import auto
from math import prod
from typing import ClassVar

from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    I32,
    I64,
    ArrayAttr,
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
    UnitAttr,
    VectorType,
    i8,
    i16,
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
    var_result_def,
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
    constant_index,
    parse_access,
    parse_memref_type,
    print_access,
    resolve_access,
    verify_indices,
)
from emmy.dialects.access_bounds import verify_access_bounds
from emmy.dialects.dtypes import C_TYPES, element_bytes, element_type, type_names
from emmy.dialects.effects import BufferDescriptor, ReadsOperand, WritesOperand
from emmy.dialects.launch import KernelSymbolOp, LaunchOpBase, parse_shape, print_shape
from emmy.dialects.target import GpuTarget, TargetAttr, target_of
from emmy.dialects.threads import (
    Convergent,
    ThreadDependsOn,
    Threads,
    ThreadVarying,
    analyses_kept,
    kept_analysis,
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
    INC = auto()
    """PTX's `atom.inc` on unsigned i32: the element plus 1, or 0 where it was at least the
    value already (a counter that resets itself each value + 1 arrivals)."""


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
    """How a `kernel.atomic` combines: `add`, `max`, `min` or `inc`."""

    name = "kernel.atomic_kind"


# --- kernel parameters and shared layouts ------------------------------------------------------


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
    if not isinstance(memref_type.layout, NoneAttr):
        raise VerifyException(
            f"{what} has type {memref_type}, but kernel buffers are dense row-major, with the "
            f"default layout"
        )
    element_bytes(memref_type.get_element_type())


def _verify_shared(memref_type: MemRefType, what: str) -> None:
    if not memref_type.has_static_shape():
        raise VerifyException(f"{what} has type {memref_type}, but shared memory is static")
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


MBARRIER_BYTES = 8
"""An mbarrier is one 8-byte, 8-aligned word of shared memory."""

TENSOR_MAP_BYTES = 128
TENSOR_MAP_ALIGNMENT = 64
"""A `CUtensorMap` is 128 bytes aligned to 64, as cuda.h declares it."""

TMA_SWIZZLES = (0, 32, 64, 128)
TMA_MAX_RANK = 5
TMA_MAX_BOX = 256
TMA_INNER_BOX_BYTES = 16


@irdl_attr_definition
class MbarrierType(ParametrizedAttribute, TypeAttribute):
    """`!kernel.mbarrier<4>`: an array of `count` mbarriers in the block's shared memory (8
    bytes each, 8-aligned), which only `kernel.mbarrier_alloc` makes."""

    name = "kernel.mbarrier"
    count: IntAttr

    def __init__(self, count: int):
        super().__init__(IntAttr(count))

    @property
    def barriers(self) -> int:
        return self.count.data

    def verify(self) -> None:
        if self.count.data < 1:
            raise VerifyException(f"an mbarrier array holds at least one, got {self.count.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr]:
        with parser.in_angle_brackets():
            count = parser.parse_integer(allow_boolean=False, context_msg=" for the mbarriers")
        return (IntAttr(count),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.count.data}>")


@irdl_attr_definition
class TensorMapType(ParametrizedAttribute, TypeAttribute, BufferDescriptor):
    """`!kernel.tensor_map<memref<4096x4096xbf16>, box [128, 64], swizzle 128>`: a kernel
    parameter describing how TMA (`kernel.tma_load`) reads the global buffer of type `tensor`
    (dense row-major, static shape, rank 1 to 5) in boxes of `box` elements (one per
    dimension, each 1 to 256, the last one contiguous), landing them in shared memory with the
    swizzle of `swizzle` bytes (0: none, 32, 64 or 128; see `SwizzleAttr`).

    The kernel receives a `CUtensorMap` (128 bytes, 64-aligned) by value as a
    `const __grid_constant__` parameter; `kernel.launch` passes a memref of type `tensor` for
    it, from which the host encodes the map (`cuTensorMapEncodeTiled`, out-of-bounds elements
    read as zeros). The last box dimension spans a multiple of 16 bytes and, with a swizzle,
    at most the swizzle's span."""

    name = "kernel.tensor_map"
    tensor: MemRefType
    box: ArrayAttr[IntAttr]
    swizzle: IntAttr

    def __init__(self, tensor: MemRefType, box: Sequence[int], swizzle: int):
        super().__init__(tensor, ArrayAttr(IntAttr(b) for b in box), IntAttr(swizzle))

    @property
    def box_shape(self) -> tuple[int, ...]:
        return tuple(b.data for b in self.box.data)

    @property
    def box_bytes(self) -> int:
        """The bytes one box copies into shared memory."""
        return prod(self.box_shape) * element_bytes(self.tensor.get_element_type())

    @property
    def layout(self) -> SwizzleAttr | None:
        """The swizzle the box lands with, as shared buffers declare it."""
        return SwizzleAttr(self.swizzle.data) if self.swizzle.data else None

    def verify(self) -> None:
        tensor, box, swizzle = self.tensor, self.box_shape, self.swizzle.data
        _verify_global(tensor, "a tensor map's tensor")
        rank = tensor.get_num_dims()
        if not 1 <= rank <= TMA_MAX_RANK:
            raise VerifyException(
                f"a tensor map's tensor has rank 1 to {TMA_MAX_RANK}, got {tensor}"
            )
        if len(box) != rank or not all(1 <= b <= TMA_MAX_BOX for b in box):
            raise VerifyException(
                f"a tensor map's box has one extent from 1 to {TMA_MAX_BOX} per dimension of "
                f"{tensor}, got {list(box)}"
            )
        if swizzle not in TMA_SWIZZLES:
            raise VerifyException(
                f"a tensor map's swizzle is 0 (none), 32, 64 or 128 bytes, got {swizzle}"
            )
        inner = box[-1] * element_bytes(tensor.get_element_type())
        if inner % TMA_INNER_BOX_BYTES or (swizzle and inner > swizzle):
            limit = f" and at most the {swizzle}-byte swizzle span" if swizzle else ""
            raise VerifyException(
                f"a tensor map's last box dimension spans a multiple of {TMA_INNER_BOX_BYTES} "
                f"bytes{limit}, got {box[-1]} x {tensor.get_element_type()} = {inner} bytes"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[MemRefType, ArrayAttr, IntAttr]:
        with parser.in_angle_brackets():
            pos = parser.pos
            tensor = parser.parse_type()
            if not isinstance(tensor, MemRefType):
                parser.raise_error(f"a tensor map's tensor is a memref, got {tensor}", pos)
            parser.parse_punctuation(",")
            parser.parse_keyword("box")
            box = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE,
                lambda: parser.parse_integer(allow_boolean=False, context_msg=" for a box"),
            )
            parser.parse_punctuation(",")
            parser.parse_keyword("swizzle")
            swizzle = parser.parse_integer(allow_boolean=False, context_msg=" for the swizzle")
        return tensor, ArrayAttr(IntAttr(b) for b in box), IntAttr(swizzle)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.tensor)
        box = ", ".join(str(b) for b in self.box_shape)
        printer.print_string(f", box [{box}], swizzle {self.swizzle.data}>")


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


def _verify_if_yields(op: scf.IfOp) -> None:
    """Each branch of an scf.if yields its results (xDSL's scf.if accepts an empty else, read
    as yielding nothing, beside results: they are then undefined when the condition is
    false)."""
    types = list(op.result_types)
    for branch, region in (("then", op.true_region), ("else", op.false_region)):
        yielded = [] if not region.blocks else list(region.block.last_op.operand_types)
        if yielded != types:
            raise VerifyException(
                f"the {branch} branch of an scf.if yields ({', '.join(map(str, yielded))}), "
                f"its results are ({', '.join(map(str, types))})"
            )


@irdl_op_definition
class FuncOp(KernelSymbolOp):
    """A GPU kernel: the code one thread runs, compiled for blocks of shape `block`. It takes
    global buffers (memrefs), scalars (`is_kernel_scalar`) and TMA tensor maps
    (`TensorMapType`); with buffers of a `?` dim, the dynamic size last, an `index`, which
    the cuda target reads their strides from (`emmy.dialects.sizes`). With `cluster N` (sm_90
    on) its blocks run in clusters of N consecutive blocks along x (`__cluster_dims__(N, 1,
    1)`): block x's rank in its cluster is x mod N, and they meet at `kernel.cluster_barrier`
    and read each other's shared memory through `kernel.map_shared_rank`."""

    name = "kernel.func"
    block = prop_def(DenseArrayBase.constr(i64))
    cluster = opt_prop_def(IntAttr)

    def __init__(
        self,
        name: str,
        argument_types: Sequence[Attribute],
        block: Sequence[int],
        body: Region,
        cluster: int = 1,
    ):
        properties = {"block": _shape_property(block)}
        if cluster != 1:
            properties["cluster"] = IntAttr(cluster)
        super().__init__(name, argument_types, body, properties)

    @property
    def block_shape(self) -> tuple[int, ...]:
        return tuple(self.block.get_values())

    @property
    def cluster_blocks(self) -> int:
        """How many consecutive blocks along x a cluster holds (1: no clusters)."""
        return self.cluster.data if self.cluster is not None else 1

    @property
    def threads(self) -> int:
        return prod(self.block_shape)

    def shared_allocs(self) -> list[SharedAllocOp]:
        return [op for op in self.body.walk() if isinstance(op, SharedAllocOp)]

    @property
    def static_shared_bytes(self) -> int:
        """Bytes of static shared memory, each buffer rounded up to its alignment (buffers that
        do not verify count nothing; their own ops report them), and the mbarrier arrays."""
        buffers = sum(
            _round_up(_shared_bytes(op.result.type), op.alignment) for op in self.shared_allocs()
        )
        barriers = sum(
            op.shared_bytes for op in self.body.walk() if isinstance(op, MbarrierAllocOp)
        )
        return buffers + barriers

    @property
    def dynamic_shared_bytes(self) -> int:
        """The dynamic shared memory a launch must provide: the end of the last view."""
        ends = [
            op.byte_offset + _shared_bytes(op.result.type)
            for op in self.body.walk()
            if isinstance(op, DynamicSharedOp)
        ]
        return max(ends, default=0)

    def verify(self, verify_nested_ops: bool = True) -> None:
        with analyses_kept():
            super().verify(verify_nested_ops)

    def verify_(self) -> None:
        self.verify_symbol()
        target = target_of(self)
        verify_block_shape(self.block_shape, target)
        for index, arg_type in enumerate(self.argument_types):
            if isinstance(arg_type, MemRefType):
                _verify_global(arg_type, f"kernel argument #{index}")
            elif not (is_kernel_scalar(arg_type) or isinstance(arg_type, TensorMapType)):
                raise VerifyException(
                    f"kernel argument #{index} is a memref, a scalar "
                    f"({type_names(C_TYPES, 'or')}) or a !kernel.tensor_map, got {arg_type}"
                )
        dynamic = any(
            isinstance(t, MemRefType) and not t.has_static_shape() for t in self.argument_types
        )
        if dynamic and not isinstance(self.argument_types[-1], IndexType):
            raise VerifyException(
                "a kernel.func whose buffers have a dynamic dim (?) takes the dynamic size as "
                "its last argument, an index"
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
            if isinstance(op, scf.IfOp):
                _verify_if_yields(op)
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
        cluster = self.cluster_blocks
        if self.cluster is not None:
            _verify_hopper(self, "thread-block clusters", target.has_clusters)
        if cluster != 1 and not 2 <= cluster <= target.max_cluster_blocks:
            raise VerifyException(
                f"a cluster is 2 to {target.max_cluster_blocks} blocks on {target.arch} "
                f"({target.name}), got {cluster}"
            )
        verify_access_bounds(self)

    def print_launch_shape(self, printer: Printer) -> None:
        print_shape(printer, "block", self.block_shape)
        if self.cluster is not None:
            printer.print_string(f" cluster {self.cluster_blocks}")

    @classmethod
    def parse_launch_shape(cls, parser: Parser) -> tuple[list[int], int]:
        block = parse_shape(parser, "block")
        if parser.parse_optional_keyword("cluster") is None:
            return block, 1
        return block, _parse_int(parser, "a cluster's blocks")

    @classmethod
    def from_parsed(
        cls, name: str, argument_types: list[Attribute], launch_shape: tuple, body: Region
    ) -> FuncOp:
        block, cluster = launch_shape
        return cls(name, argument_types, block, body, cluster)


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


class _ThreadIndex(ThreadVarying):
    """A warp is a warp size of consecutive threads of the block, x fastest, and a warpgroup 4
    consecutive warps: where the block's x extent is a multiple of the group's size, a group
    lies in one row of x, so a thread's index along x divided by, or compared with, a multiple
    of that size is the same in all its threads, and its indices along y and z are; along z,
    it is enough that x times y is a multiple."""

    def group_divisor(self, op: Operation, among: Threads) -> int | None:
        assert isinstance(op, ThreadIdOp)
        kernel = op.parent_op()
        while kernel is not None and not isinstance(kernel, FuncOp):
            kernel = kernel.parent_op()
        if kernel is None:
            return None
        size = WARPGROUP_THREADS if among is Threads.WARPGROUP else target_of(op).warp_size
        x, y, _ = kernel.block_shape
        if op.dim == Dimension.X:
            return size if x % size == 0 else None
        rows = x if op.dim == Dimension.Y else x * y
        return 1 if rows % size == 0 else None


@irdl_op_definition
class ThreadIdOp(_IdOp):
    """This thread's index in its block along a dimension (`threadIdx`)."""

    name = "kernel.thread_id"
    traits = traits_def(_ThreadIndex())


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
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), Convergent(Threads.BLOCK))
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def verify_(self) -> None:
        _verify_in_kernel(self)


@irdl_op_definition
class ShuffleOp(IRDLOperation):
    """Reads `value` from another lane of the warp: `%r = kernel.shuffle xor %v, %offset : f32`
    (every lane of the warp takes part, so it may not sit under control flow that depends on
    the lane; `offset` is an i32 lane mask, delta or index)."""

    name = "kernel.shuffle"
    _T: ClassVar = VarConstraint(
        "T",
        MessageConstraint(
            base(Float16Type)
            | base(BFloat16Type)
            | base(Float32Type)
            | base(Float64Type)
            | base(IndexType)
            | EqAttrConstraint(i8)
            | EqAttrConstraint(i16)
            | EqAttrConstraint(i32)
            | EqAttrConstraint(i64),
            "a shuffle moves an f16, bf16, f32, f64, i8, i16, i32, i64 or index",
        ),
    )
    mode = prop_def(ShuffleModeAttr)
    value = operand_def(_T)
    offset = operand_def(i32)
    result = result_def(_T)
    # Every lane of a warp holding one value reads that value back, whichever lane it reads.
    traits = traits_def(Pure(), ThreadDependsOn("value"), Convergent(Threads.WARP))
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
    `%old = kernel.atomic add %v, %buf[%i, %j] : memref<..>`.

    `acq_rel` (on i32 `add` and `inc`) also orders it at the GPU's scope, as PTX's
    `atom.acq_rel.gpu`: what its thread (and, through a barrier before it, its block) did
    before is visible to the threads whose acq_rel atomics on the element come after it, and
    what those before it did is visible to its thread (and, through a barrier after it, its
    block). The last of several blocks to arrive at a counter can thus read what the others
    stored in the same launch:

        kernel.barrier                                   // every thread's part stored
        %old = kernel.atomic inc acq_rel %c3, %count[%i] : memref<8xi32>   // thread 0
        kernel.barrier                                   // %old == 3: the others' parts
    """

    name = "kernel.atomic"
    kind = prop_def(AtomicKindAttr)
    acq_rel = opt_prop_def(UnitAttr)
    value = operand_def()
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def()
    traits = traits_def(ReadsOperand("memref"), WritesOperand("memref"), ThreadVarying())

    def __init__(
        self,
        kind: str,
        value: SSAValue,
        buffer: SSAValue,
        indices: Sequence[SSAValue],
        acq_rel: bool = False,
    ):
        properties: dict[str, Attribute] = {"kind": AtomicKindAttr(AtomicKind(kind))}
        if acq_rel:
            properties["acq_rel"] = UnitAttr()
        super().__init__(
            operands=[value, buffer, indices], result_types=[value.type], properties=properties
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
        elif kind == AtomicKind.INC:
            ok, supported = element == i32, "i32"
        else:
            ok = integer or isinstance(element, (Float32Type, Float64Type))
            supported = "f32, f64, i32 or i64"
        if not ok:
            raise VerifyException(f"an atomic {kind} works on {supported} elements, got {element}")
        if self.acq_rel is not None and (
            kind not in (AtomicKind.ADD, AtomicKind.INC) or element != i32
        ):
            raise VerifyException(
                f"an acq_rel atomic is an i32 add or inc, got {kind} of {element}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} ")
        if self.acq_rel is not None:
            printer.print_string("acq_rel ")
        printer.print_ssa_value(self.value)
        printer.print_string(", ")
        print_access(printer, self.memref, self.indices)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)

    @classmethod
    def parse(cls, parser: Parser) -> AtomicOp:
        kind = parser.parse_str_enum(AtomicKind)
        acq_rel = parser.parse_optional_keyword("acq_rel") is not None
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        access = parse_access(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        memref_type = parse_memref_type(parser, "an atomic's buffer")
        resolved, resolved_indices = resolve_access(parser, access, memref_type, pos)
        (resolved_value,) = parser.resolve_operands([value], [memref_type.get_element_type()], pos)
        op = cls(kind, resolved_value, resolved, resolved_indices, acq_rel)
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


LDMATRIX_ROWS = 8
LDMATRIX_ROW_BYTES = 16
"""An ldmatrix matrix is 8 rows of 16 bytes: 8x8 16-bit elements, or 8x4 32-bit ones."""


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
    `%a = kernel.ldmatrix %s[%row, %col] : memref<64x64xbf16, 3 : i32>, vector<8xbf16>`,
    or, without `trans`, 8x4 matrices of f32 (`vector<4xf32>` for four).

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
    is its B fragment.

    Of f32 elements (the same instruction, which moves 32-bit words: each 16-byte row is 4
    elements), lane `l` receives element `i` of its `vector<Nxf32>` from matrix i at row `g`,
    column `t`: the tf32 m16n8k8 fragments of tiles whose rows run along K, an x4 of A's
    (rows 0-7, k 0-3), (rows 8-15, k 0-3), (rows 0-7, k 4-7), (rows 8-15, k 4-7) and an x2
    of an [N, K] B's (k 0-3), (k 4-7). `trans` would split the words, so f32 has none."""

    name = "kernel.ldmatrix"
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    trans = opt_prop_def(UnitAttr)
    result = result_def(VectorType)
    traits = traits_def(ReadsOperand("memref"), ThreadVarying(), Convergent(Threads.WARP))
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
        element = buffer.type.get_element_type()
        lane_elements = LDMATRIX_ROW_BYTES // element_bytes(element) // 4
        super().__init__(
            operands=[buffer, indices],
            result_types=[VectorType(element, [lane_elements * matrices])],
            properties={"trans": UnitAttr() if transposed else None},
        )

    @property
    def row_elements(self) -> int:
        """The elements of a matrix row: 8 of 16 bits, 4 of 32."""
        return LDMATRIX_ROW_BYTES // element_bytes(self.memref.type.get_element_type())

    @property
    def lane_elements(self) -> int:
        """The elements of each matrix that a lane receives: 2 of 16 bits, 1 of 32."""
        return self.row_elements // 4

    @property
    def matrices(self) -> int:
        """How many matrices the warp loads: 1, 2 or 4 (`.x1`, `.x2`, `.x4`)."""
        return self.result.type.get_shape()[0] // self.lane_elements

    @property
    def transposed(self) -> bool:
        return self.trans is not None

    def verify_(self) -> None:
        _verify_in_kernel(self)
        memref_type = verify_indices(self.memref, self.indices)
        _verify_shared(memref_type, "a kernel.ldmatrix source")
        element = memref_type.get_element_type()
        if not (_is_16_bit(element) or isinstance(element, Float32Type)):
            raise VerifyException(
                f"a kernel.ldmatrix loads matrices of 16-bit elements (f16, bf16, i16) or of "
                f"f32, got {memref_type}"
            )
        if self.transposed and not _is_16_bit(element):
            raise VerifyException(
                f"a kernel.ldmatrix trans transposes 16-bit elements, got {memref_type}"
            )
        lanes = _lane_vector(self.result.type)
        each = self.lane_elements
        counts = tuple(each * matrices for matrices in (1, 2, 4))
        if lanes is None or lanes[1] != element or lanes[0] not in counts:
            vectors = [f"vector<{count}x{element}>" for count in counts]
            raise VerifyException(
                f"a kernel.ldmatrix gives each lane {('one element', 'two elements')[each - 1]} "
                f"of each of 1, 2 or 4 matrices, {', '.join(vectors[:2])} or {vectors[2]}, got "
                f"{self.result.type}"
            )
        shape = memref_type.get_shape()
        row = self.row_elements
        if not shape or shape[-1] % row:
            raise VerifyException(
                f"a kernel.ldmatrix row is {row} consecutive elements along the last "
                f"dimension, which must be a multiple of {row} so that no row crosses "
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
    # Each lane holds its own fragment of D.
    traits = traits_def(Pure(), ThreadVarying(), Convergent(Threads.WARP))
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


# --- Hopper (sm_90a): mbarriers, TMA and warpgroup tensor cores ------------------------------


def _verify_hopper(op: Operation, feature: str, has: bool) -> None:
    target = target_of(op)
    if not has:
        raise VerifyException(
            f"'{op.name}' needs {feature} (sm_90a), which the module's target {target.arch} "
            f"({target.name}) does not have"
        )


def _verify_barrier_index(op: Operation, barriers: SSAValue, index: SSAValue) -> None:
    _verify_in_kernel(op)
    count = barriers.type.barriers
    position = constant_index(index)
    if position is not None and not 0 <= position < count:
        raise VerifyException(
            f"'{op.name}' addresses mbarrier {position} of {barriers.type}, which holds {count}"
        )


def _flat_offset(memref_type: MemRefType, indices: Sequence[SSAValue]) -> int | None:
    """The row-major element offset of constant indices, None when one is not constant."""
    positions = [constant_index(i) for i in indices]
    if None in positions:
        return None
    offset = 0
    for position, extent in zip(positions, memref_type.get_shape()):
        offset = offset * extent + position
    return offset


@irdl_op_definition
class MbarrierAllocOp(IRDLOperation):
    """An array of mbarriers in the block's static shared memory:
    `%full = kernel.mbarrier_alloc : !kernel.mbarrier<4>`.

    Like `kernel.shared_alloc`, one array per op per block, for the whole kernel; its contents
    start undefined until `kernel.mbarrier_init`. An mbarrier counts arrivals and pending
    transaction bytes of its current phase; the phase completes when both reach zero, and
    the next phase (of the other parity) begins with the init count again."""

    name = "kernel.mbarrier_alloc"
    result = result_def(MbarrierType)
    traits = traits_def(MemoryAllocEffect(), ThreadDependsOn())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, count: int):
        super().__init__(result_types=[MbarrierType(count)])

    @property
    def shared_bytes(self) -> int:
        return self.result.type.barriers * MBARRIER_BYTES

    def verify_(self) -> None:
        _verify_in_kernel(self)


class _MbarrierOp(IRDLOperation):
    """An op on mbarrier `index` of an array, `%full[%i]`."""

    barriers = operand_def(MbarrierType)
    index = operand_def(IndexType)

    def verify_(self) -> None:
        _verify_barrier_index(self, self.barriers, self.index)


@irdl_op_definition
class MbarrierInitOp(_MbarrierOp):
    """Sets the arrivals that complete each phase of an mbarrier and starts its phase 0
    (`mbarrier.init.shared::cta.b64`): `kernel.mbarrier_init %full[%i], arrivals 1 :
    !kernel.mbarrier<4>`. One thread initialises a barrier, before the others use it (after
    a `kernel.barrier`)."""

    name = "kernel.mbarrier_init"
    arrivals = prop_def(IntegerAttr[I32])
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$barriers `[` $index `]` `,` `arrivals` $arrivals attr-dict `:` type($barriers)"
    )

    def __init__(self, barriers: SSAValue, index: SSAValue, arrivals: int):
        super().__init__(
            operands=[barriers, index], properties={"arrivals": IntegerAttr(arrivals, i32)}
        )

    @property
    def arrival_count(self) -> int:
        return self.arrivals.value.data

    def verify_(self) -> None:
        super().verify_()
        if self.arrival_count < 1:
            raise VerifyException(
                f"an mbarrier's phase completes after at least one arrival, got "
                f"{self.arrival_count}"
            )


@irdl_op_definition
class MbarrierArriveOp(_MbarrierOp):
    """One arrival of the executing thread on an mbarrier's current phase
    (`mbarrier.arrive.shared::cta.b64`): `kernel.mbarrier_arrive %empty[%i] :
    !kernel.mbarrier<4>`.

    With `rank` (an index, in a kernel.func with a cluster), the arrival is on the mbarrier at
    the same place in the block of that rank of this block's cluster, which may be the block
    itself (`mapa.shared::cluster.u32` of the barrier's address, then
    `mbarrier.arrive.shared::cluster.b64`): `kernel.mbarrier_arrive %empty[%i] rank %r :
    !kernel.mbarrier<4>`. Its release is the CTA's scope, as CUTLASS's cluster barriers
    arrive: it tells the other block that the thread's wgmmas (done by their wait) no longer
    read a stage; a cluster-scope release would fence every arrival, and the data a thread
    writes for another block's threads needs a cluster fence of its own before it."""

    name = "kernel.mbarrier_arrive"
    rank = opt_operand_def(IndexType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$barriers `[` $index `]` (`rank` $rank^)? attr-dict `:` type($barriers)"

    def __init__(self, barriers: SSAValue, index: SSAValue, *, rank: SSAValue | None = None):
        # IRDL orders a subclass's operand definitions before those it inherits.
        super().__init__(operands=[rank, barriers, index])

    def verify_(self) -> None:
        super().verify_()
        if self.rank is None:
            return
        cluster = _verify_in_cluster(self, " with a rank")
        rank = constant_index(self.rank)
        if rank is not None and not 0 <= rank < cluster:
            raise VerifyException(
                f"a kernel.mbarrier_arrive's rank is that of a block of its cluster of "
                f"{cluster}, 0 to {cluster - 1}, got {rank}"
            )


@irdl_op_definition
class MbarrierArriveExpectTxOp(_MbarrierOp):
    """One arrival that also adds `bytes` to the transaction bytes the current phase waits for
    (`mbarrier.arrive.expect_tx.shared::cta.b64`), those of the `kernel.tma_load`s that
    complete on it: `kernel.mbarrier_arrive_expect_tx %full[%i], bytes 49152 :
    !kernel.mbarrier<4>`."""

    name = "kernel.mbarrier_arrive_expect_tx"
    bytes = prop_def(IntegerAttr[I64])
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$barriers `[` $index `]` `,` `bytes` $bytes attr-dict `:` type($barriers)"

    def __init__(self, barriers: SSAValue, index: SSAValue, size: int):
        super().__init__(operands=[barriers, index], properties={"bytes": IntegerAttr(size, i64)})

    @property
    def tx_bytes(self) -> int:
        return self.bytes.value.data

    def verify_(self) -> None:
        super().verify_()
        if self.tx_bytes < 0:
            raise VerifyException(
                f"an mbarrier expects a non-negative number of bytes, got {self.tx_bytes}"
            )


@irdl_op_definition
class MbarrierWaitOp(_MbarrierOp):
    """Blocks the thread until the phase of parity `parity` (an index, 0 or 1) of an mbarrier
    has completed (`mbarrier.try_wait.parity` in a loop): `kernel.mbarrier_wait %full[%i],
    %parity : !kernel.mbarrier<4>`. It succeeds at once when the barrier's current phase has
    the other parity; the writes that completed the phase (TMA copies, the arriving threads'
    earlier stores) are visible to the thread after it."""

    name = "kernel.mbarrier_wait"
    parity = operand_def(IndexType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$barriers `[` $index `]` `,` $parity attr-dict `:` type($barriers)"

    def __init__(self, barriers: SSAValue, index: SSAValue, parity: SSAValue):
        # IRDL orders a subclass's operand definitions before those it inherits.
        super().__init__(operands=[parity, barriers, index])

    def verify_(self) -> None:
        super().verify_()
        parity = constant_index(self.parity)
        if parity is not None and parity not in (0, 1):
            raise VerifyException(f"an mbarrier phase's parity is 0 or 1, got {parity}")


@irdl_op_definition
class TmaLoadOp(IRDLOperation):
    """One thread starts a TMA copy of one box of a tensor into shared memory
    (`cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`):
    `kernel.tma_load %map[%c0, %c1], %dst[%s, %z, %z], %full[%i] :
    !kernel.tensor_map<...>, memref<4x128x64xbf16, 3 : i32>, !kernel.mbarrier<4>`.

    The box of the map's tensor whose first element is at `coordinates` (row-major, in
    elements; elements outside the tensor, negative coordinates included, read as zeros)
    lands as `prod(box)` consecutive row-major elements of `destination` from the addressed
    element on, through the destination's swizzle, which is the map's. The addressed element
    starts on the swizzle's pattern (1024 bytes for 128), or on 128 bytes without one. The
    copy's bytes complete transaction bytes of the mbarrier's current phase
    (`kernel.mbarrier_arrive_expect_tx`); the data is there for a thread once it has waited
    for that phase.

    With `multicast %mask` (an index, in a kernel.func with a cluster; `.multicast::cluster`
    with the mask as its 16-bit ctaMask), the box lands at the same place in the shared memory
    of each block of the cluster whose rank's bit is set in the mask (rank r: bit 1 << r), and
    its bytes complete transaction bytes on the mbarrier at the same place in each of them:
    `kernel.tma_load %map[%c0, %c1], %dst[%s, %z, %z], %full[%i] multicast %mask : ...`."""

    name = "kernel.tma_load"
    map = operand_def(TensorMapType)
    coordinates = var_operand_def(IndexType)
    destination = operand_def(MemRefType)
    destination_indices = var_operand_def(IndexType)
    barriers = operand_def(MbarrierType)
    index = operand_def(IndexType)
    multicast = opt_operand_def(IndexType)
    traits = traits_def(WritesOperand("destination"))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$map `[` $coordinates `]` `,` $destination `[` $destination_indices `]` `,` "
        "$barriers `[` $index `]` (`multicast` $multicast^)? attr-dict `:` type($map) `,` "
        "type($destination) `,` type($barriers)"
    )

    def __init__(
        self,
        tensor_map: SSAValue,
        coordinates: Sequence[SSAValue],
        dst: SSAValue,
        dst_indices: Sequence[SSAValue],
        barriers: SSAValue,
        index: SSAValue,
        *,
        multicast: SSAValue | None = None,
    ):
        super().__init__(
            operands=[tensor_map, coordinates, dst, dst_indices, barriers, index, multicast]
        )

    @property
    def tensor_map(self) -> TensorMapType:
        return self.map.type

    def verify_(self) -> None:
        _verify_barrier_index(self, self.barriers, self.index)
        _verify_tma_box(
            self,
            self.coordinates,
            self.destination,
            self.destination_indices,
            role="destination",
            verb="lands",
            at="at",
            direction="into",
        )
        if self.multicast is not None:
            cluster = _verify_in_cluster(self, " with multicast")
            mask = constant_index(self.multicast)
            if mask is not None and not 0 < mask < 2**cluster:
                raise VerifyException(
                    f"a kernel.tma_load's multicast mask sets the bits of blocks of its "
                    f"cluster of {cluster}, so it is 1 to {2**cluster - 1}, got {mask}"
                )


TMA_DESTINATION_ALIGNMENT = 128
"""An unswizzled TMA destination starts on 128 bytes."""


def _starts_on(buffer: SSAValue, alignment: int) -> bool:
    """Whether a shared buffer starts on a multiple of `alignment` bytes."""
    owner = buffer.owner
    if isinstance(owner, DynamicSharedOp):
        return owner.byte_offset % alignment == 0
    return isinstance(owner, SharedAllocOp) and owner.alignment % alignment == 0


def _verify_tma_box(
    op: TmaLoadOp | TmaStoreOp,
    coordinates: Sequence[SSAValue],
    buffer: SSAValue,
    indices: Sequence[SSAValue],
    *,
    role: str,
    verb: str,
    at: str,
    direction: str,
) -> None:
    """What a TMA copy between the box of its map's tensor at `coordinates` and the shared
    `buffer` from `indices` on needs: a kernel on a Hopper target, a coordinate per dimension
    of the tensor, the tensor's element type, the map's swizzle, the box starting on the
    swizzle's pattern (on 128 bytes without one) and inside the buffer. The errors call the
    buffer the copy's `role` ("destination"), which it `verb`s its box `direction` ("lands",
    "into"), its first element `at` a byte ("at")."""
    _verify_in_kernel(op)
    _verify_hopper(op, "TMA", target_of(op).has_tma)
    what = f"a {op.name}"
    tensor_map = op.tensor_map
    tensor = tensor_map.tensor
    buffer_type = verify_indices(buffer, indices)
    _verify_shared(buffer_type, f"{what} {role}")
    if len(coordinates) != tensor.get_num_dims():
        raise VerifyException(
            f"{what} addresses its rank-{tensor.get_num_dims()} tensor {tensor} with "
            f"{tensor.get_num_dims()} coordinates, got {len(coordinates)}"
        )
    if buffer_type.get_element_type() != tensor.get_element_type():
        raise VerifyException(
            f"{what} copies {tensor.get_element_type()} elements of {tensor} {direction} a "
            f"buffer of the same, got {buffer_type}"
        )
    layout = swizzle_of(buffer)
    if layout != tensor_map.layout:
        have = f"#kernel.swizzle<{layout.span.data}>" if layout else "no swizzle"
        raise VerifyException(
            f"{what} {verb} its box with the map's swizzle {tensor_map.swizzle.data}, but its "
            f"{role} has {have}"
        )
    alignment = layout.alignment if layout is not None else TMA_DESTINATION_ALIGNMENT
    if layout is None and not _starts_on(buffer, alignment):
        raise VerifyException(
            f"{what} {role} starts on a {alignment}-byte boundary: a swizzled buffer, or a "
            f"kernel.dynamic_shared view at a multiple of {alignment}"
        )
    width = element_bytes(tensor.get_element_type())
    box = prod(tensor_map.box_shape)
    offset = _flat_offset(buffer_type, indices)
    if offset is None:
        return
    if offset * width % alignment:
        raise VerifyException(
            f"{what} {verb} {at} byte {offset * width} of its {role}, which must be a multiple "
            f"of {alignment}"
        )
    if offset + box > prod(buffer_type.get_shape()):
        raise VerifyException(
            f"{what}'s box of {box} elements from element {offset} overruns its {role} "
            f"{buffer_type}"
        )


@irdl_op_definition
class TmaStoreOp(IRDLOperation):
    """One thread starts a TMA copy of one box of shared memory into a tensor
    (`cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group`): `kernel.tma_store %map[%c0,
    %c1], %src[%s, %z, %z] : !kernel.tensor_map<memref<4096x4096xbf16>, box [64, 64],
    swizzle 128>, memref<2x64x64xbf16, 3 : i32>`.

    The inverse of `kernel.tma_load`: `prod(box)` consecutive row-major elements of `source`
    from the addressed element on, read through the source's swizzle, which is the map's (the
    addressed element on the swizzle's pattern, 1024 bytes for 128, or on 128 bytes without
    one), are the box of the map's tensor whose first element is at `coordinates` (row-major,
    in elements); the elements of the box outside the tensor are not written. The copy joins
    the issuing thread's open bulk-async group, which `kernel.tma_store_commit` closes and
    `kernel.tma_store_wait` waits for: until then the source must not be written, and the
    tensor holds the box only once the wait without `read` is over. The source is read by the
    async proxy: the threads that wrote it order their writes before the copy with
    `kernel.fence_proxy_async` and a barrier."""

    name = "kernel.tma_store"
    map = operand_def(TensorMapType)
    coordinates = var_operand_def(IndexType)
    source = operand_def(MemRefType)
    source_indices = var_operand_def(IndexType)
    traits = traits_def(ReadsOperand("source"), WritesOperand("map"))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$map `[` $coordinates `]` `,` $source `[` $source_indices `]` attr-dict `:` "
        "type($map) `,` type($source)"
    )

    def __init__(
        self,
        tensor_map: SSAValue,
        coordinates: Sequence[SSAValue],
        source: SSAValue,
        source_indices: Sequence[SSAValue],
    ):
        super().__init__(operands=[tensor_map, coordinates, source, source_indices])

    @property
    def tensor_map(self) -> TensorMapType:
        return self.map.type

    def verify_(self) -> None:
        _verify_tma_box(
            self,
            self.coordinates,
            self.source,
            self.source_indices,
            role="source",
            verb="reads",
            at="from",
            direction="from",
        )


class _AsyncProxyOp(IRDLOperation):
    """An op of no operands on Hopper's async proxy, in a kernel (FEATURE names it in the
    error of a target without one): the fence, and the commits and waits of TMA stores."""

    FEATURE: ClassVar[str] = "TMA"
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "attr-dict"

    def verify_(self) -> None:
        _verify_in_kernel(self)
        _verify_hopper(self, self.FEATURE, target_of(self).has_tma)


@irdl_op_definition
class TmaStoreCommitOp(_AsyncProxyOp):
    """`kernel.tma_store_commit`: closes this thread's open group of `kernel.tma_store`s
    (`cp.async.bulk.commit_group`), which `kernel.tma_store_wait` counts."""

    name = "kernel.tma_store_commit"


TMA_STORE_MAX_PENDING = 63
"""The most groups a `kernel.tma_store_wait` leaves pending: PTX takes any integer constant;
a kernel keeps a few stages of stores in flight."""


@irdl_op_definition
class TmaStoreWaitOp(_AsyncProxyOp):
    """`kernel.tma_store_wait 0`: waits until at most `pending` committed groups of this
    thread's `kernel.tma_store`s are still in progress (`cp.async.bulk.wait_group N`): their
    boxes are in the tensors. With `read`, `kernel.tma_store_wait 1 read` waits only until
    they have read their sources (`cp.async.bulk.wait_group.read N`), which may then be
    written again. `pending` is 0 to 63."""

    name = "kernel.tma_store_wait"
    pending = prop_def(IntegerAttr[I32])
    read = opt_prop_def(UnitAttr)
    assembly_format = "$pending (`read` $read^)? attr-dict"

    def __init__(self, pending: int, read: bool = False):
        super().__init__(
            properties={
                "pending": IntegerAttr(pending, i32),
                "read": UnitAttr() if read else None,
            }
        )

    @property
    def pending_groups(self) -> int:
        return self.pending.value.data

    @property
    def reads_only(self) -> bool:
        return self.read is not None

    def verify_(self) -> None:
        super().verify_()
        if not 0 <= self.pending_groups <= TMA_STORE_MAX_PENDING:
            raise VerifyException(
                f"a kernel.tma_store_wait leaves 0 to {TMA_STORE_MAX_PENDING} groups pending, "
                f"got {self.pending_groups}"
            )


@irdl_op_definition
class FenceProxyAsyncOp(_AsyncProxyOp):
    """`kernel.fence_proxy_async`: orders this thread's generic-proxy accesses of shared memory
    before the async proxy's (TMA, wgmma) that follow (`fence.proxy.async.shared::cta`)."""

    name = "kernel.fence_proxy_async"
    FEATURE: ClassVar[str] = "the async proxy"


def _verify_in_cluster(op: Operation, form: str = "") -> int:
    """The blocks of a cluster of the kernel.func of `op` (in its `form`, for the error),
    which must have clusters."""
    function = _verify_in_kernel(op)
    if function.cluster is None:
        raise VerifyException(
            f"'{op.name}'{form} is for a kernel.func whose blocks run in clusters (`cluster N`)"
        )
    return function.cluster_blocks


@irdl_op_definition
class ClusterBarrierOp(IRDLOperation):
    """`kernel.cluster_barrier`: waits for every thread of every block of the cluster
    (`barrier.cluster.arrive.release` + `barrier.cluster.wait.acquire`): what they wrote to
    their shared memory before it, each reads after it through `kernel.map_shared_rank`.
    Every thread must reach it, as a `kernel.barrier`, and every block of the cluster."""

    name = "kernel.cluster_barrier"
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), Convergent(Threads.BLOCK))
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def verify_(self) -> None:
        _verify_in_cluster(self)


@irdl_op_definition
class MapSharedRankOp(IRDLOperation):
    """The shared buffer `buffer` of the block of rank `rank` in this block's cluster
    (distributed shared memory, `mapa`): `%r = kernel.map_shared_rank %s, %rank : memref<16x32
    xf32, 3 : i32>`, read like the block's own. The rank is below the cluster's size, and the
    other block must not have ended: a `kernel.cluster_barrier` after the last access keeps
    every block of the cluster running until the others are done with its memory."""

    name = "kernel.map_shared_rank"
    _T: ClassVar = VarConstraint("T", base(MemRefType))
    buffer = operand_def(_T)
    rank = operand_def(IndexType)
    result = result_def(_T)
    traits = traits_def(Pure(), ThreadDependsOn("rank"))
    assembly_format = "$buffer `,` $rank attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, rank: SSAValue):
        super().__init__(operands=[buffer, rank], result_types=[buffer.type])

    def verify_(self) -> None:
        _verify_in_cluster(self)
        _verify_shared(self.buffer.type, "a kernel.map_shared_rank buffer")


class _WarpgroupOp(IRDLOperation):
    """A warpgroup instruction without operands: all 128 threads of the warpgroup (4
    consecutive warps, the first a multiple of 4) execute it, converged."""

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), Convergent(Threads.WARPGROUP))
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()

    def verify_(self) -> None:
        _verify_in_kernel(self)
        _verify_hopper(self, "warpgroup tensor cores", target_of(self).has_wgmma)


@irdl_op_definition
class WgmmaFenceOp(_WarpgroupOp):
    """`kernel.wgmma_fence`: orders the warpgroup's register and shared-memory accesses before
    the `kernel.wgmma`s that follow (`wgmma.fence.sync.aligned`); needed before the first
    wgmma and whenever registers of an accumulator were touched by others."""

    name = "kernel.wgmma_fence"


@irdl_op_definition
class WgmmaCommitOp(_WarpgroupOp):
    """`kernel.wgmma_commit`: closes the warpgroup's current group of `kernel.wgmma`s
    (`wgmma.commit_group.sync.aligned`), which `kernel.wgmma_wait` counts."""

    name = "kernel.wgmma_commit"


WGMMA_M = 64
WGMMA_K = 16
"""The K of a wgmma on f16 and bf16 (32 bytes of each row of A and B)."""
WGMMA_K_BYTES = 32
"""The bytes of each row of A and B a wgmma multiplies: K = 16 of f16 and bf16, 8 of tf32."""


def wgmma_k(element: Attribute) -> int:
    """The K of a wgmma on tiles of `element` (f32 is multiplied as tf32)."""
    return WGMMA_K_BYTES // element_bytes(element)


WGMMA_N_STEP = 8
WGMMA_MAX_N = 256
WGMMA_ROW_BYTES = 128
"""wgmma reads its tiles from 128-byte rows swizzled in 128-byte spans."""
WGMMA_MAX_PANEL_BYTES = 16383 * 16
"""The farthest apart an MN-major operand's panels may be: the descriptor's 14-bit leading
byte offset counts 16 bytes."""
WGMMA_ROW_GROUP = 8
WARPGROUP_THREADS = 128


def _verify_wgmma_buffer(buffer: SSAValue, indices: Sequence[SSAValue], what: str) -> MemRefType:
    """What both majors of wgmma tile need: a shared f16, bf16 or f32 (tf32) buffer of
    128-byte rows (its last dimension) swizzled in 128-byte spans."""
    memref_type = verify_indices(buffer, indices)
    _verify_shared(memref_type, f"a kernel.wgmma {what}")
    element = memref_type.get_element_type()
    if not isinstance(element, Float16Type | BFloat16Type | Float32Type):
        raise VerifyException(
            f"a kernel.wgmma multiplies f16, bf16 or f32 (as tf32) tiles, got {what} {memref_type}"
        )
    shape = memref_type.get_shape()
    if len(shape) < 2 or shape[-1] * element_bytes(element) != WGMMA_ROW_BYTES:
        raise VerifyException(
            f"a kernel.wgmma {what} has rows of {WGMMA_ROW_BYTES} bytes (the last dimension, "
            f"{WGMMA_ROW_BYTES // element_bytes(element)} x {element}), got {memref_type}"
        )
    layout = swizzle_of(buffer)
    if layout is None or layout.span.data != WGMMA_ROW_BYTES:
        raise VerifyException(
            f"a kernel.wgmma {what} is swizzled in {WGMMA_ROW_BYTES}-byte spans "
            f"(#kernel.swizzle<{WGMMA_ROW_BYTES}>)"
        )
    return memref_type


def _verify_wgmma_tile(
    op: WgmmaOp, buffer: SSAValue, indices: Sequence[SSAValue], what: str, rows: int
) -> MemRefType:
    """A K-major tile: `rows` rows of 128 bytes from a row that is a multiple of 8, at a k
    that is a multiple of the op's K."""
    memref_type = _verify_wgmma_buffer(buffer, indices, what)
    shape = memref_type.get_shape()
    row, k = constant_index(indices[-2]), constant_index(indices[-1])
    step = op.mnk[2]
    if row is not None and row % WGMMA_ROW_GROUP:
        raise VerifyException(
            f"a kernel.wgmma {what} starts at a row that is a multiple of {WGMMA_ROW_GROUP}, "
            f"got {row}"
        )
    if k is not None and (k % step or k >= shape[-1]):
        raise VerifyException(
            f"a kernel.wgmma {what} starts at a k that is a multiple of {step} within the "
            f"row of {shape[-1]}, got {k}"
        )
    if row is not None and row + rows > shape[-2]:
        raise VerifyException(
            f"a kernel.wgmma {op.shape_name} reads {rows} rows of {what} from row {row}, past "
            f"the end of {memref_type}"
        )
    return memref_type


def _verify_wgmma_panels(
    op: WgmmaOp, buffer: SSAValue, indices: Sequence[SSAValue], n: int
) -> MemRefType:
    """An MN-major B: N / 64 panels from panel p, each 16 K rows of 64 elements from a k that
    is a multiple of 16, addressed at the first element of its row; panels of a multiple of 8
    rows, so that each starts on the swizzle's 1024-byte pattern."""
    memref_type = _verify_wgmma_buffer(buffer, indices, "B")
    shape = memref_type.get_shape()
    panel_elements = shape[-1]
    if len(shape) < 3:
        raise VerifyException(
            f"a kernel.wgmma's MN-major B is panels of K rows of {panel_elements} N-elements, "
            f"[..., panels, K, {panel_elements}], got {memref_type}"
        )
    if n % panel_elements:
        raise VerifyException(
            f"a kernel.wgmma with an MN-major B reads whole panels of {panel_elements} "
            f"columns: N is a multiple of {panel_elements}, got {op.shape_name}"
        )
    panel_rows = shape[-2]
    if panel_rows % WGMMA_ROW_GROUP or panel_rows * WGMMA_ROW_BYTES > WGMMA_MAX_PANEL_BYTES:
        raise VerifyException(
            f"a kernel.wgmma's MN-major B panels have a multiple of {WGMMA_ROW_GROUP} K rows, "
            f"at most {WGMMA_MAX_PANEL_BYTES // WGMMA_ROW_BYTES}, got {memref_type}"
        )
    panel, k, column = (constant_index(i) for i in indices[-3:])
    if column is not None and column != 0:
        raise VerifyException(
            f"a kernel.wgmma's MN-major B starts at the first element of a panel's row, got "
            f"{column}"
        )
    if k is not None and (k % WGMMA_K or k + WGMMA_K > panel_rows):
        raise VerifyException(
            f"a kernel.wgmma's MN-major B starts at a k that is a multiple of {WGMMA_K} within "
            f"the panel's {panel_rows} rows, got {k}"
        )
    if panel is not None and panel + n // panel_elements > shape[-3]:
        raise VerifyException(
            f"a kernel.wgmma {op.shape_name} reads {n // panel_elements} panels of B from panel "
            f"{panel}, past the end of {memref_type}"
        )
    return memref_type


@irdl_op_definition
class WgmmaOp(IRDLOperation):
    """The warpgroup starts D = A * B + C on tensor cores, asynchronously
    (`wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16`, or f16; m64nNk8 .tf32 of f32
    tiles, below): `%d = kernel.wgmma
    m64n256k16 %a[%s, %r, %k], %b[%s, %n, %k], %c : memref<4x128x64xbf16, 3 : i32>,
    memref<4x256x64xbf16, 3 : i32>, vector<128xf32> -> vector<128xf32>`.

    All 128 threads of a warpgroup (4 consecutive warps, the first a multiple of 4) execute
    it, converged. N is 8 to 256 in steps of 8. A is 64 x 16, `A[i, kk] = a[..., r + i,
    k + kk]`, and B is 16 x N, `B[kk, j] = b[..., n + j, k + kk]`: both K-major shared tiles
    (the last dimension is K, as nn.Linear's x [M, K] and weight [N, K]), with rows of 128
    bytes swizzled in 128-byte spans, addressed at a row that is a multiple of 8 and a k
    that is a multiple of 16.

    With `mn_major` after it (`%b[%s, %p, %k, %z] mn_major`), B is MN-major (N contiguous, as
    a [K, N] matrix): panels of 64 N-elements (128 bytes) by K rows, `memref<stages x panels
    x BK x 64 x bf16>` swizzled in 128-byte spans, `B[kk, j] = b[..., p + j / 64, k + kk,
    j % 64]` for the addressed element [..., p, k, 0]. N is then a multiple of 64 (whole
    panels, p + N / 64 of them at most), k a multiple of 16 with k + 16 at most BK, and BK a
    multiple of 8 (each panel starts on the swizzle's 1024-byte pattern) of at most 2047
    (the descriptor's leading byte offset, the panel stride BK * 128, has 14 bits of 16
    bytes). These are the canonical layouts of CUTLASS's `make_gmma_desc<Major::MN>`
    (cute/atom/mma_traits_sm90_gmma.hpp), for B128 `Swizzle<3,4,3> o ((T,8,m),(8,k)) :
    ((1,T,LBO),(8T,SBO))`: 8 16-byte chunks of N, m panels LBO apart, 8 K rows of 128 bytes,
    then groups of 8 rows SBO (1024) apart; the wgmma reads it with imm-trans-b 1.

    With A in registers (`%d = kernel.wgmma m64n64k16 %p, %b[..], %c : vector<8xbf16>,
    memref<..>, vector<32xf32> -> vector<32xf32>`, PTX's `{a0, a1, a2, a3}` form), each
    thread holds 8 elements of the 64 x 16 A, as four .b32 registers of two: warp w of the
    warpgroup holds rows 16w to 16w + 15 in mma.sync m16n8k16's A fragment, element i of
    thread t at row 16w + g + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2q + i % 2 (the PTX
    ISA's "Register Fragments for wgmma .m64nNk16": the layout of an m64n16 accumulator).
    The wgmma reads the registers when it is issued; a `kernel.wgmma_fence` orders the
    writes of them before it.

    On f32 tiles it is m64nNk8 (`wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32`): A is
    64 x 8 and B 8 x N, each row's 8 elements 32 bytes as the 16 of f16 are, so k is a
    multiple of 8; the tensor cores read each element as tf32: at least its upper 19 bits
    (sign, 8 exponent and 10 fraction bits; PTX leaves any further precision to the
    hardware), which the SIMT emulator takes, the lower 13 dropped (toward zero). Only
    K-major tiles from shared memory: PTX has no transpose for tf32, and no mn_major or A in
    registers here.

    C and D are f32, thread t of the warpgroup (warp w = t / 32,
    lane l, g = l / 4, q = l % 4) holding element i of its `vector<N/2xf32>` at row
    16w + g + 8 * ((i / 2) % 2), column 8 * (i / 4) + 2q + i % 2. D is in flight until a
    `kernel.wgmma_wait` returns it after the group it was committed in: its only uses are as
    another wgmma's accumulator and as a wgmma_wait operand."""

    name = "kernel.wgmma"
    n = prop_def(IntegerAttr[I64])
    a = operand_def(MemRefType | VectorType)
    a_indices = var_operand_def(IndexType)
    b = operand_def(MemRefType)
    b_indices = var_operand_def(IndexType)
    c = operand_def(VectorType)
    result = result_def(VectorType)
    b_mn_major = opt_prop_def(UnitAttr)
    traits = traits_def(
        ReadsOperand("a"), ReadsOperand("b"), ThreadVarying(), Convergent(Threads.WARPGROUP)
    )
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        n: int,
        a: SSAValue,
        a_indices: Sequence[SSAValue],
        b: SSAValue,
        b_indices: Sequence[SSAValue],
        c: SSAValue,
        result_type: Attribute | None = None,
        b_mn_major: bool = False,
    ):
        super().__init__(
            operands=[a, a_indices, b, b_indices, c],
            result_types=[result_type or c.type],
            properties={
                "n": IntegerAttr(n, i64),
                "b_mn_major": UnitAttr() if b_mn_major else None,
            },
        )

    @property
    def mnk(self) -> tuple[int, int, int]:
        return WGMMA_M, self.n.value.data, wgmma_k(self.element_type)

    @property
    def shape_name(self) -> str:
        m, n, k = self.mnk
        return f"m{m}n{n}k{k}"

    @property
    def element_type(self) -> Attribute:
        return self.a.type.get_element_type()

    @property
    def is_tf32(self) -> bool:
        """Whether the op multiplies f32 tiles as tf32 (m64nNk8)."""
        return isinstance(self.element_type, Float32Type)

    @property
    def a_in_registers(self) -> bool:
        """Whether A is each thread's register fragment rather than a shared tile."""
        return isinstance(self.a.type, VectorType)

    def verify_(self) -> None:
        _verify_in_kernel(self)
        _verify_hopper(self, "warpgroup tensor cores", target_of(self).has_wgmma)
        m, n, k = self.mnk
        if not (WGMMA_N_STEP <= n <= WGMMA_MAX_N and n % WGMMA_N_STEP == 0):
            raise VerifyException(
                f"a kernel.wgmma is m64nNk{k} with N from {WGMMA_N_STEP} to {WGMMA_MAX_N} in "
                f"steps of {WGMMA_N_STEP}, got {self.shape_name}"
            )
        if self.is_tf32 and (self.a_in_registers or self.b_mn_major is not None):
            raise VerifyException(
                "a kernel.wgmma on f32 (tf32) reads both tiles K-major from shared memory: PTX "
                "has no transposed tf32 wgmma, and no A in registers here"
            )
        if self.a_in_registers:
            fragment = _lane_vector(self.a.type)
            if self.a_indices or fragment is None or fragment[0] != m * k // WARPGROUP_THREADS:
                raise VerifyException(
                    f"a kernel.wgmma's A in registers is each thread's "
                    f"vector<{m * k // WARPGROUP_THREADS}x..> of the {m}x{k} A, without "
                    f"indices, got {self.a.type}"
                )
            a_type = self.a.type
        else:
            a_type = _verify_wgmma_tile(self, self.a, self.a_indices, "A", m)
        if self.b_mn_major is None:
            b_type = _verify_wgmma_tile(self, self.b, self.b_indices, "B", n)
        else:
            b_type = _verify_wgmma_panels(self, self.b, self.b_indices, n)
        if a_type.get_element_type() != b_type.get_element_type():
            raise VerifyException(
                f"a kernel.wgmma multiplies tiles of one element type, got A {a_type} and B "
                f"{b_type}"
            )
        accumulator = (n // 2, Float32Type())
        if _lane_vector(self.c.type) != accumulator or self.result.type != self.c.type:
            raise VerifyException(
                f"a kernel.wgmma {self.shape_name} accumulates in f32, each thread holding "
                f"vector<{n // 2}xf32> of the {m}x{n} C and D, got C {self.c.type} and D "
                f"{self.result.type}"
            )
        if (user := _use_in_flight(self.result, set())) is not None:
            raise VerifyException(
                f"a kernel.wgmma's result is in flight until a kernel.wgmma_wait returns it: it "
                f"may only be a wgmma's accumulator or a wgmma_wait operand (or carried by a "
                f"loop to one), but '{user.name}' uses it"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.shape_name} ")
        if self.a_in_registers:
            printer.print_ssa_value(self.a)
        else:
            print_access(printer, self.a, self.a_indices)
        printer.print_string(", ")
        print_access(printer, self.b, self.b_indices)
        if self.b_mn_major is not None:
            printer.print_string(" mn_major")
        printer.print_string(", ")
        printer.print_ssa_value(self.c)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list((self.a.type, self.b.type, self.c.type), printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> WgmmaOp:
        pos = parser.pos
        shape = parser.parse_identifier()
        shape_at = (pos, parser.pos)
        match = re.fullmatch(rf"m{WGMMA_M}n(\d+)k(\d+)", shape)
        if match is None:
            parser.raise_error(
                f"a kernel.wgmma shape is m64nNk16 (f16, bf16) or m64nNk8 (tf32), got {shape}",
                *shape_at,
            )
        a = parser.parse_unresolved_operand()
        a_indices = parser.parse_optional_comma_separated_list(
            parser.Delimiter.SQUARE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(",")
        b = parse_access(parser)
        b_mn_major = parser.parse_optional_keyword("mn_major") is not None
        parser.parse_punctuation(",")
        c = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        if a_indices is None:
            a_type = parser.parse_type()
            (a_value,) = parser.resolve_operands([a], [a_type], pos)
            a_indices = []
        else:
            a_type = parse_memref_type(parser, "a kernel.wgmma A")
            a_value, a_indices = resolve_access(parser, (a, a_indices), a_type, pos)
        parser.parse_punctuation(",")
        b_type = parse_memref_type(parser, "a kernel.wgmma B")
        parser.parse_punctuation(",")
        c_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        b_value, b_indices = resolve_access(parser, b, b_type, pos)
        (c_value,) = parser.resolve_operands([c], [c_type], pos)
        op = cls(
            int(match.group(1)),
            a_value,
            a_indices,
            b_value,
            b_indices,
            c_value,
            result_type,
            b_mn_major,
        )
        if op.mnk[2] != int(match.group(2)):
            parser.raise_error(
                f"a kernel.wgmma on {op.element_type} is {op.shape_name}, got {shape}", *shape_at
            )
        op.attributes.update(attributes)
        return op


def _use_in_flight(value: SSAValue, seen: set[SSAValue]) -> Operation | None:
    """The first op that reads a wgmma's in-flight `value` other than as a wgmma's accumulator
    or a wgmma_wait's operand, following it through the `scf.for` loops that carry it (a K
    loop that leaves one slice's products in flight into the next), or None."""
    if value in seen:
        return None
    seen.add(value)
    for use in value.uses:
        user = use.operation
        if isinstance(user, WgmmaWaitOp) or (
            isinstance(user, WgmmaOp) and user.operands[use.index] is user.c
        ):
            continue
        loop = user.parent_op()
        if not (isinstance(user, scf.YieldOp) and isinstance(loop, scf.ForOp)):
            return user
        carried = (loop.body.block.args[use.index + 1], loop.results[use.index])
        for next_value in carried:
            if (found := _use_in_flight(next_value, seen)) is not None:
                return found
    return None


@irdl_op_definition
class WgmmaWaitOp(IRDLOperation):
    """Waits until at most `pending` committed groups of the warpgroup's `kernel.wgmma`s are in
    flight (`wgmma.wait_group.sync.aligned`) and returns its operands, the accumulators that
    are now valid: `%d2, %e2 = kernel.wgmma_wait 0, %d, %e : vector<128xf32>,
    vector<128xf32>`. The warpgroup executes it converged."""

    name = "kernel.wgmma_wait"
    pending = prop_def(IntegerAttr[I64])
    accumulators = var_operand_def(VectorType)
    waited = var_result_def(VectorType)
    traits = traits_def(
        MemoryReadEffect(),
        MemoryWriteEffect(),
        ThreadDependsOn("accumulators"),
        Convergent(Threads.WARPGROUP),
    )

    def __init__(self, pending: int, accumulators: Sequence[SSAValue]):
        super().__init__(
            operands=[accumulators],
            result_types=[[a.type for a in accumulators]],
            properties={"pending": IntegerAttr(pending, i64)},
        )

    @property
    def pending_groups(self) -> int:
        return self.pending.value.data

    def verify_(self) -> None:
        _verify_in_kernel(self)
        _verify_hopper(self, "warpgroup tensor cores", target_of(self).has_wgmma)
        if self.pending_groups < 0:
            raise VerifyException(
                f"a kernel.wgmma_wait leaves a non-negative number of groups pending, got "
                f"{self.pending_groups}"
            )
        if [r.type for r in self.waited] != [a.type for a in self.accumulators]:
            raise VerifyException("a kernel.wgmma_wait returns its operands, of their types")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.pending_groups}")
        for value in self.accumulators:
            printer.print_string(", ")
            printer.print_ssa_value(value)
        printer.print_op_attributes(self.attributes)
        if self.accumulators:
            printer.print_string(" : ")
            printer.print_list((a.type for a in self.accumulators), printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> WgmmaWaitOp:
        pending = _parse_int(parser, "the number of pending groups")
        operands = []
        while parser.parse_optional_punctuation(",") is not None:
            operands.append(parser.parse_unresolved_operand())
        attributes = parser.parse_optional_attr_dict()
        pos = parser.pos
        types = []
        if operands:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        op = cls(pending, parser.resolve_operands(operands, types, pos))
        op.attributes.update(attributes)
        return op


class SetmaxnregAction(StrEnum):
    INC = auto()
    DEC = auto()


@irdl_attr_definition
class SetmaxnregActionAttr(EnumAttribute[SetmaxnregAction], SpacedOpaqueSyntaxAttribute):
    """`inc` or `dec`: whether a `kernel.setmaxnreg` raises or lowers the register limit."""

    name = "kernel.setmaxnreg_action"


SETMAXNREG_RANGE = (24, 256)
SETMAXNREG_STEP = 8


@irdl_op_definition
class SetmaxnregOp(IRDLOperation):
    """The warpgroup raises (`inc`, waiting until registers are free) or lowers (`dec`,
    releasing them) its threads' register limit to `count` (`setmaxnreg.inc.sync.aligned.u32
    240`): `kernel.setmaxnreg inc 240`, `kernel.setmaxnreg dec 24`. The count is 24 to 256,
    a multiple of 8; the warpgroup executes it converged. A producer warpgroup that only
    issues TMA gives its registers to the consumers that hold the accumulators."""

    name = "kernel.setmaxnreg"
    action = prop_def(SetmaxnregActionAttr)
    count = prop_def(IntegerAttr[I32])
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), Convergent(Threads.WARPGROUP))
    assembly_format = "$action $count attr-dict"

    def __init__(self, action: str, count: int):
        super().__init__(
            properties={
                "action": SetmaxnregActionAttr(SetmaxnregAction(action)),
                "count": IntegerAttr(count, i32),
            }
        )

    @property
    def registers(self) -> int:
        return self.count.value.data

    def verify_(self) -> None:
        _verify_in_kernel(self)
        _verify_hopper(self, "setmaxnreg", target_of(self).has_wgmma)
        low, high = SETMAXNREG_RANGE
        if not (low <= self.registers <= high and self.registers % SETMAXNREG_STEP == 0):
            raise VerifyException(
                f"a kernel.setmaxnreg sets {low} to {high} registers, a multiple of "
                f"{SETMAXNREG_STEP}, got {self.registers}"
            )


class NamedBarrierAction(StrEnum):
    SYNC = auto()
    ARRIVE = auto()


@irdl_attr_definition
class NamedBarrierActionAttr(EnumAttribute[NamedBarrierAction], SpacedOpaqueSyntaxAttribute):
    """`sync` or `arrive`: whether a `kernel.named_barrier` waits for the barrier or only
    counts towards it."""

    name = "kernel.named_barrier_action"


NAMED_BARRIERS = 16
"""The hardware barriers of a block; barrier 0 is `kernel.barrier`'s."""


@irdl_op_definition
class NamedBarrierOp(IRDLOperation):
    """Hardware barrier `id` (1 to 15) of `threads` threads of the block: `sync` waits until
    that many have reached it, counting its own warps, `arrive` counts its warps and goes on
    (`bar.sync` / `bar.arrive id, threads`): `kernel.named_barrier sync %id, threads 256`.
    Warps take part whole and converged; `id` may differ between warps. It orders when
    warps run, not what they see of memory: two consumer warp groups take turns at issuing
    their tensor-core products, one's softmax running while the other's products do
    (FlashAttention-3's ping-pong). The SIMT emulator, which runs the warps in lockstep,
    checks its operands only."""

    name = "kernel.named_barrier"
    action = prop_def(NamedBarrierActionAttr)
    barrier = operand_def(IndexType)
    threads = prop_def(IntegerAttr[I32])
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect(), Convergent(Threads.WARP))
    assembly_format = "$action $barrier `,` `threads` $threads attr-dict"

    def __init__(self, action: str, barrier: SSAValue, threads: int):
        super().__init__(
            operands=[barrier],
            properties={
                "action": NamedBarrierActionAttr(NamedBarrierAction(action)),
                "threads": IntegerAttr(threads, i32),
            },
        )

    @property
    def thread_count(self) -> int:
        return self.threads.value.data

    def verify_(self) -> None:
        _verify_in_kernel(self)
        warp = target_of(self).warp_size
        if self.thread_count <= 0 or self.thread_count % warp:
            raise VerifyException(
                f"a kernel.named_barrier counts whole warps: {self.thread_count} threads is "
                f"not a positive multiple of {warp}"
            )
        barrier = constant_index(self.barrier)
        if barrier is not None and not 1 <= barrier < NAMED_BARRIERS:
            raise VerifyException(
                f"a kernel.named_barrier is barrier 1 to {NAMED_BARRIERS - 1} (0 is "
                f"kernel.barrier's), got {barrier}"
            )


def sized_grid(
    grid: tuple[int, ...], sized: tuple[int, int, int] | None, arguments: Sequence[object]
) -> tuple[int, ...]:
    """The grid a `kernel.launch` of `grid` and `sized` runs when it passes `arguments` (see
    `LaunchOp`): for the host runtime, which keeps launches as plain data, and the op."""
    if sized is None:
        return grid
    factor, divisor, power = sized
    size = int(arguments[-1])
    return (min(grid[0], max(1, -(-(size**power) // divisor) * factor)), *grid[1:])


@irdl_op_definition
class LaunchOp(LaunchOpBase):
    """Host side: runs a kernel.func on a grid of blocks:
    `kernel.launch @k(%x, %n) grid [32, 1, 1] block [256, 1, 1] smem 0 : memref<..>, index`
    (`smem` is the bytes of dynamic shared memory); it passes the kernel's buffers, scalars
    and tensor maps (for which it passes a memref of the map's tensor, which the host encodes
    as the `CUtensorMap`).

    A kernel whose grid-strided loops run to the dynamic size (`emmy.dialects.sizes`) is
    launched on as many blocks as that size needs, at most `grid`'s:
    `grid [2048, 1, 1] sized [4, 128, 1]` runs ceil(size^1 / 128) * 4 blocks along x (at
    least 1, at most 2048), the size being the last argument it passes (`grid_for`): a
    block per 128 rows of the size, for each of 4 static tiles (a gemm's); a power of 2 is
    for a chain of grid loops that runs to the size twice (attention's scores).

    A `persistent` launch's blocks stride through their work by the grid's size (a wgmma
    gemm's tiles), so any grid of whole clusters computes all of it: the runtime launches no
    more clusters than can run at once on the GPU (`cuOccupancyMaxActiveClusters`), since a
    cluster that waits for SMs would start its share only once others have done theirs."""

    name = "kernel.launch"
    KERNEL_TYPE: ClassVar[type[KernelSymbolOp]] = FuncOp
    grid = prop_def(DenseArrayBase.constr(i64))
    block = prop_def(DenseArrayBase.constr(i64))
    smem = prop_def(IntegerAttr[I64])
    sized = opt_prop_def(DenseArrayBase.constr(i64))
    persistent = opt_prop_def(UnitAttr)
    arguments = var_operand_def()

    def __init__(
        self,
        kernel: str,
        arguments: Sequence[SSAValue],
        grid: Sequence[int],
        block: Sequence[int],
        smem: int = 0,
        sized: tuple[int, int, int] | None = None,
        persistent: bool = False,
    ):
        properties = {
            "grid": _shape_property(grid),
            "block": _shape_property(block),
            "smem": IntegerAttr(smem, i64),
        }
        if sized is not None:
            properties["sized"] = DenseArrayBase.from_list(i64, list(sized))
        if persistent:
            properties["persistent"] = UnitAttr()
        super().__init__(kernel, arguments, properties)

    def grid_for(self, arguments: Sequence[object]) -> tuple[int, ...]:
        """The grid this launch runs, given the values it passes."""
        return sized_grid(self.grid_shape, self.sized_values, arguments)

    @property
    def sized_values(self) -> tuple[int, int, int] | None:
        """`sized`'s (factor, divisor, power), or None for a launch of its whole grid."""
        if self.sized is None:
            return None
        factor, divisor, power = self.sized.get_values()
        return factor, divisor, power

    @classmethod
    def passes(cls, given: Attribute, parameter: Attribute) -> bool:
        if isinstance(parameter, TensorMapType):
            return given == parameter.tensor
        return given == parameter

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
        if self.sized is not None:
            sized = self.sized.get_values()
            if len(sized) != 3 or min(sized) < 1:
                raise VerifyException(
                    f"sized [factor, divisor, power] are three positive counts, got {list(sized)}"
                )
            if not self.arguments or not isinstance(self.arguments[-1].type, IndexType):
                raise VerifyException(
                    "a launch sized by the dynamic size passes it last, as an index"
                )
        kernel = self.verify_launch()
        if kernel is None or not isinstance(kernel.properties.get("block"), DenseArrayBase):
            # The kernel may be verified after this launch; its own verifier reports this.
            return
        if self.block_shape != kernel.block_shape:
            raise VerifyException(
                f"launch block {list(self.block_shape)} differs from the block "
                f"{list(kernel.block_shape)} that {self.kernel} is compiled for"
            )
        if self.grid_shape[0] % kernel.cluster_blocks:
            raise VerifyException(
                f"{self.kernel} runs in clusters of {kernel.cluster_blocks} blocks along x, "
                f"which launch grid {list(self.grid_shape)} does not divide into"
            )
        sized = self.sized_values
        if sized is not None and sized[0] % kernel.cluster_blocks:
            raise VerifyException(
                f"{self.kernel} runs in clusters of {kernel.cluster_blocks} blocks along x, "
                f"but the blocks of launch sized {list(sized)} are {sized[0]} times a count"
            )
        static, needed = kept_analysis(
            kernel,
            "shared bytes",
            lambda: (kernel.static_shared_bytes, kernel.dynamic_shared_bytes),
        )
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
        self.verify_no_written_alias(kernel)

    def print(self, printer: Printer) -> None:
        self.print_arguments(printer)
        print_shape(printer, "grid", self.grid_shape)
        if self.sized is not None:
            print_shape(printer, "sized", self.sized.get_values())
        print_shape(printer, "block", self.block_shape)
        printer.print_string(f" smem {self.smem_bytes}")
        if self.persistent is not None:
            printer.print_string(" persistent")
        self.print_types(printer)

    @classmethod
    def parse(cls, parser: Parser) -> LaunchOp:
        kernel, operands = cls.parse_arguments(parser)
        grid = parse_shape(parser, "grid")
        sized = None
        if parser.parse_optional_keyword("sized") is not None:
            sized = parser.parse_comma_separated_list(
                Parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
            )
        block = parse_shape(parser, "block")
        parser.parse_keyword("smem")
        smem = _parse_int(parser, "the dynamic shared memory bytes")
        persistent = parser.parse_optional_keyword("persistent") is not None
        arguments, attributes = cls.parse_types(parser, operands, parser.parse_type)
        op = cls(kernel, arguments, grid, block, smem, persistent=persistent)
        if sized is not None:
            op.properties["sized"] = DenseArrayBase.from_list(i64, sized)
        op.attributes.update(attributes)
        return op


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
        MbarrierAllocOp,
        MbarrierInitOp,
        MbarrierArriveOp,
        MbarrierArriveExpectTxOp,
        MbarrierWaitOp,
        TmaLoadOp,
        TmaStoreOp,
        TmaStoreCommitOp,
        TmaStoreWaitOp,
        FenceProxyAsyncOp,
        ClusterBarrierOp,
        MapSharedRankOp,
        WgmmaFenceOp,
        WgmmaCommitOp,
        WgmmaOp,
        WgmmaWaitOp,
        SetmaxnregOp,
        NamedBarrierOp,
        LaunchOp,
    ],
    [
        TargetAttr,
        DimensionAttr,
        ShuffleModeAttr,
        AtomicKindAttr,
        MbarrierType,
        TensorMapType,
        SwizzleAttr,
        MmaShapeAttr,
        SetmaxnregActionAttr,
        NamedBarrierActionAttr,
    ],
)
