"""The element types emmy compiles, with what each is called outside the IR: one table.

    type    torch       numpy     C                bytes
    f32     float32     float32   float            4
    bf16    bfloat16    (none)    __nv_bfloat16    2
    i1      bool        bool      bool             1
    index   int64       int64     long             8

The frontend imports PyTorch dtypes with it, the CPU interpreters hold values in its numpy
dtypes, the cuda target prints its C types, the runtime allocates its torch dtypes and kernels
lay out buffers with its sizes; a type the table does not have is an error wherever it is
looked up. Unsigned integer types have no C type: the cuda target prints signless integers,
reading their bits as unsigned (`c_unsigned`) where an op says so. numpy has no bf16: a bf16
value is a float32 rounded by `round_to_bfloat16`, in the interpreters and in constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import (
    IndexType,
    IntegerType,
    Signedness,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

if TYPE_CHECKING:
    import numpy as np
    import torch


@dataclass(frozen=True)
class ElementType:
    """One element type and its names: `torch` and `numpy` name dtypes of those libraries
    (numpy has no bf16), `c` is the C type the cuda target prints (None: it prints none) and
    `c_unsigned` the one it reads an integer's bits as unsigned with."""

    type: Attribute
    torch: str
    numpy: str | None
    c: str | None
    c_unsigned: str | None
    bytes: int


def _unsigned(width: int) -> IntegerType:
    return IntegerType(width, Signedness.UNSIGNED)


ELEMENT_TYPES: tuple[ElementType, ...] = (
    ElementType(f16, "float16", "float16", "__half", None, 2),
    ElementType(bf16, "bfloat16", None, "__nv_bfloat16", None, 2),
    ElementType(f32, "float32", "float32", "float", None, 4),
    ElementType(f64, "float64", "float64", "double", None, 8),
    ElementType(i1, "bool", "bool", "bool", "bool", 1),
    ElementType(i8, "int8", "int8", "signed char", "unsigned char", 1),
    ElementType(i16, "int16", "int16", "short", "unsigned short", 2),
    ElementType(i32, "int32", "int32", "int", "unsigned int", 4),
    ElementType(i64, "int64", "int64", "long long", "unsigned long long", 8),
    # After i64: a torch int64 is imported as i64, not as index.
    ElementType(IndexType(), "int64", "int64", "long", "unsigned long", 8),
    ElementType(_unsigned(8), "uint8", "uint8", None, None, 1),
    ElementType(_unsigned(16), "uint16", "uint16", None, None, 2),
    ElementType(_unsigned(32), "uint32", "uint32", None, None, 4),
    ElementType(_unsigned(64), "uint64", "uint64", None, None, 8),
)

_BY_TYPE = {row.type: row for row in ELEMENT_TYPES}
_BY_TORCH: dict[str, ElementType] = {}
for _row in ELEMENT_TYPES:
    _BY_TORCH.setdefault(_row.torch, _row)


def element_type(t: Attribute) -> ElementType | None:
    """The table's row of `t`, if it has one."""
    return _BY_TYPE.get(t)


def integer_range(t: IndexType | IntegerType) -> range:
    """The values of an integer type as kernels compute with it: an index is a C `long`, so a
    loop bound or an index constant outside `integer_range(IndexType())` would wrap."""
    bits = 64 if isinstance(t, IndexType) else t.width.data
    if isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED:
        return range(1 << bits)
    return range(-(1 << (bits - 1)), 1 << (bits - 1))


def type_names(rows: tuple[ElementType, ...], conjunction: str) -> str:
    """`f16, bf16 and f32`: the types of `rows`, for messages."""
    names = [str(row.type) for row in rows]
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


C_TYPES = tuple(row for row in ELEMENT_TYPES if row.c is not None)
"""The rows the cuda target prints: the scalars a kernel takes and computes with."""


def element_bytes(t: Attribute) -> int:
    """The size in bytes of one element of a kernel buffer (an i1 takes a byte, an index 8)."""
    row = element_type(t)
    if row is None:
        raise VerifyException(
            f"kernel buffers hold {type_names(ELEMENT_TYPES, 'or')} elements, got {t}"
        )
    return row.bytes


def torch_dtype(t: Attribute) -> torch.dtype | None:
    """The PyTorch dtype of `t` (index is int64), if it has one."""
    import torch

    row = element_type(t)
    return getattr(torch, row.torch) if row is not None else None


def from_torch_dtype(dtype: torch.dtype) -> Attribute | None:
    """The element type of a PyTorch dtype (int64 is i64), if the table has one."""
    row = _BY_TORCH.get(str(dtype).removeprefix("torch."))
    return row.type if row is not None else None


def round_to_bfloat16(values: np.ndarray) -> np.ndarray:
    """Rounds float32 values to the nearest bf16 (ties to even), kept as float32: how the CPU
    interpreters hold bf16 values and how a bf16 constant holds a float."""
    # numpy is imported here, not with the table: a tool that never rounds (emmy-opt, mostly)
    # starts without it.
    import numpy as np

    bits = np.asarray(values, np.float32).view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).view(np.float32)
    # NaN payloads could carry into the sign bit; NaN stays NaN.
    return np.where(np.isnan(values), values, rounded)
