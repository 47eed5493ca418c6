"""The `cuda` target: CUDA C++ for every `kernel.func` of a module.

    emmy-opt -t cuda kernels.mlir
    emmy-opt -t 'cuda{fast-math=true}' kernels.mlir

Each kernel.func becomes `extern "C" __global__ void __launch_bounds__(THREADS) NAME(...)`
taking one `__restrict__` pointer per buffer argument (`const` when the kernel never writes
the buffer), a scalar argument by value (`long n`, `float alpha`) and a tensor map
`!kernel.tensor_map<...>` as `const __grid_constant__ emmy_CUtensorMap m`, a struct of the
`CUtensorMap`'s 128 bytes aligned to 64 (`__grid_constant__`: the kernel takes its address, as
TMA instructions do, without a copy). The host function is not printed: the runtime reads the
launches (grid, block, dynamic shared memory) from the IR. The code is for the module's target
(its `kernel.target`, see `emmy.dialects.target`), which the header names; a shuffle's lane
mask is that target's whole warp.

How Kernel IR reads as CUDA:
- every SSA value is one C variable, declared where its op is, named after the value's name
  hint when it has one (`float sq = v * v;`); constants are written inline; values that
  nothing uses are not printed;
- `index` is `long`; f16 and bf16 values are `__half` and `__nv_bfloat16`, computed with their
  intrinsics (`__hadd`, `__hmul`, ...); math functions on them go through float and round once;
- `scf.for` is `for (long i = lb; i < ub; i += step)` and its loop-carried values are variables
  declared before the loop and assigned at the end of each iteration; `scf.if` results are
  variables assigned in each branch;
- buffers are dense row-major: `memref.load %x[%i, %j] : memref<32x2048xf32>` is
  `x[i * 2048 + j]`; shared buffers are `__shared__` arrays declared at the top of the kernel
  (one per `kernel.shared_alloc`, as the op means), dynamic shared views are typed pointers into
  `extern __shared__ unsigned char emmy_smem[]`; a swizzled shared buffer is indexed through
  `emmy_swizzle(i * 32 + j, shift, mask, chunk_shift)` and aligned to its swizzle pattern;
- a `vector<4xf32>` value is a struct `emmy_f32x4 { float lane[4]; }` aligned to its size:
  `kernel.vector_load` fills it with one access of a 16-byte type (`float4`, `uint4`, ...), as
  `kernel.vector_store` writes it, and `vector.extract` / `insert` / `broadcast` work on its
  lanes, which nvcc keeps in registers;
- `arith.maximumf` / `minimumf` keep their NaN-propagating semantics (`fmaxf` does not: on f32,
  f16 and bf16 they are PTX's `max.NaN` / `min.NaN`, the sign of a zero result taken from the
  operands), as do
  `kernel.atomic max` / `min` on floats (a compare-and-swap loop);
- integer add/sub/mul on iN wrap (computed unsigned), as in arith; `index` arithmetic is plain
  `long` arithmetic (it addresses memory, and does not overflow).

`math.exp` on f32 (and on f16/bf16, computed in f32) is `exp2f(x * 1.44269504f)`: the
hardware's exp2 after one multiply, as Triton computes it, within about 1e-5 relative of the
exact value (expf would be a longer range reduction for the last ulp or two).

The `fast-math` option uses CUDA's fast intrinsics: `__expf`, `__logf`, `__fdividef`,
`__sinf`, ..., and `fmaxf` / `fminf` for maximumf / minimumf (ignoring NaN and the sign of
zero). An op the target cannot print is an error naming the op and its location, never
invalid C++. The output is deterministic: the same module prints byte-identical CUDA.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from io import StringIO
from typing import IO

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    VectorType,
)
from xdsl.dialects.math import AbsIOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from emmy.dialects import kernel
from emmy.dialects.access_bounds import proven_index_bounds
from emmy.dialects.dtypes import C_TYPES, element_bytes, element_type, type_names
from emmy.dialects.effects import written_values
from emmy.dialects.target import target_of
from emmy.passes.pipelines import LEVEL_TITLES, TorchToKernelPipeline, level_of, passes_to

__all__ = ["CudaTarget", "CudaTargetError", "print_cuda"]


class CudaTargetError(DiagnosticException):
    """An op the cuda target cannot print; `emmy-opt` reports it at the op's location."""

    def __init__(self, message: str, op: Operation):
        super().__init__(message, op)
        self.op = op


@dataclass(frozen=True)
class CudaTarget(Target):
    """CUDA C++ for the module's kernel.funcs (`-t cuda`, `-t 'cuda{fast-math=true}'`)."""

    name = "cuda"

    fast_math: bool = False
    """Use CUDA's fast approximate intrinsics (__expf, __logf, __fdividef, ...) and fmaxf/fminf."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(print_cuda(module, fast_math=self.fast_math))


def print_cuda(module: ModuleOp, fast_math: bool = False) -> str:
    """The CUDA C++ of every kernel.func in `module`, in module order, for the module's target.
    IR at a level above Kernel IR is an error that names its level and the passes to lower it."""
    _check_kernel_ir(module)
    features = _Features()
    target = target_of(module)
    tables = _constant_tables(module)
    kernels = [
        _KernelPrinter(
            op, features, fast_math, target.warp_size, tables.get(op.sym_name.data)
        ).print()
        for op in module.body.block.ops
        if isinstance(op, kernel.FuncOp)
    ]
    out = StringIO()
    out.write(
        "// CUDA C++ printed by emmy's cuda target (emmy-opt -t cuda) from Kernel IR.\n"
        "// Only the kernels are printed: the host function, with its buffer allocations and its\n"
        "// kernel.launch ops (grid, block, dynamic shared memory bytes), stays in the IR.\n"
        f"// Options: fast-math={'true' if fast_math else 'false'}.\n"
        f"// Target: {target.arch} ({target.name}).\n"
    )
    if "fp16" in features.includes:
        out.write("#include <cuda_fp16.h>\n")
    if "bf16" in features.includes:
        out.write("#include <cuda_bf16.h>\n")
    for definition in features.structs.values():
        out.write("\n" + definition)
    for name in _HELPER_ORDER:
        if name in features.helpers:
            out.write("\n" + _HELPERS[name](features))
    for text in kernels:
        out.write("\n" + text)
    return out.getvalue()


def _constant_tables(module: ModuleOp) -> dict[str, set[int]]:
    """For each kernel, the positions of its arguments that every launch of it passes a
    constant global (a table the compiler made, such as attention's items): what the kernel
    loads from them is no gathered index (`is_gathered`)."""
    constant = {
        op.sym_name.data
        for op in module.body.block.ops
        if isinstance(op, memref.GlobalOp) and op.constant is not None
    }
    tables: dict[str, set[int]] = {}
    for launch in module.walk():
        if not isinstance(launch, kernel.LaunchOp):
            continue
        positions = {
            number
            for number, argument in enumerate(launch.arguments)
            if isinstance(argument.owner, memref.GetGlobalOp)
            and argument.owner.name_.root_reference.data in constant
        }
        name = launch.kernel.root_reference.data
        tables[name] = tables[name] & positions if name in tables else positions
    return tables


def _check_kernel_ir(module: ModuleOp) -> None:
    reached = level_of(module)
    if reached is None or reached[0] == "kernel":
        return
    level, op = reached
    if level == "torch":
        lowering = f"--{TorchToKernelPipeline.name}"
    else:
        lowering = f"-p '{','.join(str(p) for p in passes_to('kernel', start=level))}'"
    raise CudaTargetError(
        f"expects Kernel IR, and this is {LEVEL_TITLES[level]} ('{op.name}' here): "
        f"{lowering} takes it to Kernel IR",
        op,
    )


# --- types ----------------------------------------------------------------------------------

TENSOR_MAP_STRUCT = "emmy_CUtensorMap"


@dataclass
class _Features:
    includes: set[str] = field(default_factory=set)
    helpers: set[str] = field(default_factory=set)
    # The element types each float helper is needed for, as C types.
    helper_types: dict[str, set[str]] = field(default_factory=dict)
    # The definitions of the vector and tensor-map structs used, by name, in order of first use.
    structs: dict[str, str] = field(default_factory=dict)

    def helper(self, name: str, c_type: str) -> None:
        self.helpers.add(name)
        self.helper_types.setdefault(name, set()).add(c_type)


def _is_int(t: Attribute, width: int | None = None) -> bool:
    return (
        isinstance(t, IntegerType)
        and t.signedness.data == Signedness.SIGNLESS
        and (width is None or t.width.data == width)
    )


def _is_half(t: Attribute) -> bool:
    return isinstance(t, Float16Type | BFloat16Type)


def _is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | BFloat16Type | Float32Type | Float64Type)


def _c_type(t: Attribute, op: Operation, unsigned: bool = False) -> str:
    """The C type of a scalar type (`dtypes.ELEMENT_TYPES`), its bits read as unsigned where
    `unsigned` says so; an error at `op` for a type CUDA printing does not know."""
    row = element_type(t)
    if row is None or row.c is None:
        raise CudaTargetError(
            f"the cuda target has no C type for {t} (it prints {type_names(C_TYPES, 'and')})",
            op,
        )
    return row.c_unsigned if unsigned and row.c_unsigned is not None else row.c


def _bits(t: Attribute) -> int:
    """The bit width of a scalar type (an index is 64 bits wide)."""
    return 64 if isinstance(t, IndexType) else t.bitwidth


# --- literals -------------------------------------------------------------------------------


def _round_to_format(
    value: float, mantissa_bits: int, min_exponent: int, max_exponent: int
) -> float:
    """`value` rounded to nearest-even in a binary format (f16: 10, -14, 15; bf16: 7, -126, 127)."""
    if value == 0 or not math.isfinite(value):
        return value
    magnitude = Fraction(abs(value))
    exponent = max(math.frexp(abs(value))[1] - 1, min_exponent)
    quantum = Fraction(2) ** (exponent - mantissa_bits)
    rounded = round(magnitude / quantum) * quantum
    if rounded >= Fraction(2) ** (max_exponent + 1):
        return math.copysign(math.inf, value)
    return math.copysign(float(rounded), value)


def _shortest(value: np.floating) -> str:
    """The shortest decimal that reads back as `value`: positional for everyday magnitudes
    (`2048.0`, `0.001`), scientific for the others (`1e-06`, `3.4028235e+38`)."""
    if value == 0 or 1e-4 <= abs(value) < 1e16:
        return np.format_float_positional(value, unique=True, trim="0")
    return np.format_float_scientific(value, unique=True, trim="-")


def _f32_literal(value: float, parenthesize: bool = True) -> str:
    """An exact float literal, `1.0f`, the shortest that reads back as the same f32;
    infinities and NaN as bit patterns. A negative one is parenthesized unless it is a
    function argument."""
    if math.isnan(value):
        return "__int_as_float(0x7fc00000)"
    if math.isinf(value):
        text = "-__int_as_float(0x7f800000)" if value < 0 else "__int_as_float(0x7f800000)"
    else:
        text = _shortest(np.float32(value)) + "f"
    return f"({text})" if parenthesize and text.startswith("-") else text


def _f64_literal(value: float) -> str:
    if math.isnan(value):
        return "__longlong_as_double(0x7ff8000000000000LL)"
    if math.isinf(value):
        text = "__longlong_as_double(0x7ff0000000000000LL)"
        return text if value > 0 else f"(-{text})"
    text = _shortest(np.float64(value))
    return f"({text})" if text.startswith("-") else text


def _float_literal(value: float, t: Attribute) -> str:
    if isinstance(t, Float64Type):
        return _f64_literal(value)
    if isinstance(t, Float32Type):
        return _f32_literal(float(np.float32(value)))
    if isinstance(t, Float16Type):
        return f"__float2half_rn({_f32_literal(_round_to_format(value, 10, -14, 15), False)})"
    return f"__float2bfloat16_rn({_f32_literal(_round_to_format(value, 7, -126, 127), False)})"


def _int_literal(value: int, t: Attribute) -> str:
    if _is_int(t, 1):
        return "true" if value & 1 else "false"
    bits = _bits(t)
    value &= (1 << bits) - 1
    if value >= 1 << (bits - 1):
        value -= 1 << bits
    if bits == 64 and value == -(1 << 63):
        text = "(-9223372036854775807LL - 1)"
    elif bits == 32 and value == -(1 << 31):
        text = "(-2147483647 - 1)"
    elif isinstance(t, IndexType):
        text = str(value) if -(1 << 31) < value < 1 << 31 else f"{value}L"
    elif bits == 64:
        text = f"{value}LL"
    elif bits in (8, 16):
        text = f"({element_type(t).c}){value}"
    else:
        text = str(value)
    return f"({text})" if text.startswith("-") else text


# --- names ----------------------------------------------------------------------------------

_RESERVED = frozenset(
    """
    alignas alignof and asm auto bool break case catch char char16_t char32_t class const
    constexpr const_cast continue decltype default delete do double dynamic_cast else enum
    explicit export extern false float for friend goto if inline int long mutable namespace new
    noexcept not nullptr operator or private protected public register reinterpret_cast return
    short signed sizeof static static_assert static_cast struct switch template this
    thread_local throw true try typedef typeid typename union unsigned using virtual void
    volatile wchar_t while xor main std
    threadIdx blockIdx blockDim gridDim warpSize dim3 float2 float4 double2 uint2 uint4
    __half __nv_bfloat16 signbit isnan isinf max min abs fabs fabsf
    expf exp2f expm1f logf log2f log10f log1pf sqrtf rsqrtf tanhf erff sinf cosf tanf asinf
    acosf atanf atan2f sinhf coshf asinhf acoshf atanhf powf cbrtf ceilf floorf roundf rintf
    truncf copysignf fmaf fmaxf fminf exp exp2 expm1 log log2 log10 log1p sqrt rsqrt tanh erf
    sin cos tan asin acos atan atan2 sinh cosh asinh acosh atanh pow cbrt ceil floor round rint
    trunc copysign fma fmax fmin llabs
    """.split()
)


def _sanitize(hint: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_]", "_", hint)
    if not name or name[0].isdigit() or name.startswith("_") or name.startswith("emmy"):
        name = f"v_{name}".replace("__", "_")
    if name in _RESERVED:
        name = f"{name}_"
    return name


class _Names:
    """Unique C names: a value's name hint where it has one, else `vN`."""

    def __init__(self):
        self.taken: set[str] = set()
        self.counter = 0

    def fresh(self, hint: str | None = None) -> str:
        if hint:
            base = _sanitize(hint)
            if base not in self.taken:
                self.taken.add(base)
                return base
            suffix = 1
            while f"{base}_{suffix}" in self.taken:
                suffix += 1
            self.taken.add(f"{base}_{suffix}")
            return f"{base}_{suffix}"
        while f"v{self.counter}" in self.taken:
            self.counter += 1
        name = f"v{self.counter}"
        self.taken.add(name)
        return name


def _valid_identifier(name: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None and name not in _RESERVED


# --- liveness -------------------------------------------------------------------------------

_PURE_OP_TYPES: tuple[type[Operation], ...] = (
    memref.LoadOp,
    kernel.VectorLoadOp,
    kernel.ThreadIdOp,
    kernel.BlockIdOp,
    kernel.BlockDimOp,
    kernel.GridDimOp,
    kernel.SharedAllocOp,
    kernel.MbarrierAllocOp,
    kernel.DynamicSharedOp,
    kernel.ShuffleOp,
    kernel.LdmatrixOp,
    kernel.MmaSyncOp,
)


def _is_pure(op: Operation) -> bool:
    return op.dialect_name() in ("arith", "math", "vector") or isinstance(op, _PURE_OP_TYPES)


def _needed_values(body: Block) -> set[SSAValue]:
    """The values that some printed effect depends on (stores, atomics, copies, barriers,
    the bounds of loops and the conditions of ifs); the others are not printed, so that the
    CUDA has no unused variables."""
    needed: set[SSAValue] = set()
    changed = True

    def need(values: Iterable[SSAValue]) -> None:
        nonlocal changed
        for value in values:
            if value not in needed:
                needed.add(value)
                changed = True

    while changed:
        changed = False
        # Uses before definitions: one walk carries a need up a chain of any length, and
        # only loop-carried values take another.
        for op in body.walk(reverse=True):
            if isinstance(op, scf.ForOp):
                need([op.lb, op.ub, op.step])
                terminator = op.body.block.last_op
                for index, result in enumerate(op.results):
                    carried = op.body.block.args[index + 1]
                    if result in needed or carried in needed:
                        need([result, carried, op.iter_args[index]])
                        if isinstance(terminator, scf.YieldOp):
                            need([terminator.operands[index]])
            elif isinstance(op, scf.IfOp):
                need([op.cond])
                for index, result in enumerate(op.results):
                    if result in needed:
                        for region in op.regions:
                            terminator = region.block.last_op if region.blocks else None
                            if isinstance(terminator, scf.YieldOp):
                                need([terminator.operands[index]])
            elif isinstance(op, scf.YieldOp):
                continue
            elif not _is_pure(op) or any(r in needed for r in op.results):
                need(op.operands)
    return needed


# --- the kernel printer ---------------------------------------------------------------------

_MATH_F32 = {
    "math.absf": "fabsf",
    "math.ceil": "ceilf",
    "math.floor": "floorf",
    "math.round": "roundf",
    "math.roundeven": "rintf",
    "math.trunc": "truncf",
    "math.sqrt": "sqrtf",
    "math.rsqrt": "rsqrtf",
    "math.cbrt": "cbrtf",
    "math.exp": "expf",
    "math.exp2": "exp2f",
    "math.expm1": "expm1f",
    "math.log": "logf",
    "math.log2": "log2f",
    "math.log10": "log10f",
    "math.log1p": "log1pf",
    "math.sin": "sinf",
    "math.cos": "cosf",
    "math.tan": "tanf",
    "math.asin": "asinf",
    "math.acos": "acosf",
    "math.atan": "atanf",
    "math.sinh": "sinhf",
    "math.cosh": "coshf",
    "math.tanh": "tanhf",
    "math.asinh": "asinhf",
    "math.acosh": "acoshf",
    "math.atanh": "atanhf",
    "math.erf": "erff",
    "math.atan2": "atan2f",
    "math.powf": "powf",
    "math.copysign": "copysignf",
    "math.fma": "fmaf",
}
_FAST_F32 = {
    "math.exp": "__expf",
    "math.log": "__logf",
    "math.log2": "__log2f",
    "math.log10": "__log10f",
    "math.sin": "__sinf",
    "math.cos": "__cosf",
    "math.tan": "__tanf",
    "math.powf": "__powf",
}
_HALF_INTRINSICS = {
    "arith.addf": "__hadd",
    "arith.subf": "__hsub",
    "arith.mulf": "__hmul",
    "arith.divf": "__hdiv",
}
_FLOAT_OPERATORS = {"arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/"}
_INT_OPERATORS = {
    "arith.addi": "+",
    "arith.subi": "-",
    "arith.muli": "*",
    "arith.andi": "&",
    "arith.ori": "|",
    "arith.xori": "^",
    "arith.divsi": "/",
    "arith.remsi": "%",
    "arith.shli": "<<",
    "arith.shrsi": ">>",
}
_CMPI = {
    "eq": "==",
    "ne": "!=",
    "slt": "<",
    "sle": "<=",
    "sgt": ">",
    "sge": ">=",
    "ult": "<",
    "ule": "<=",
    "ugt": ">",
    "uge": ">=",
}
_ATOMIC_FUNCTIONS = {"add": "atomicAdd", "max": "atomicMax", "min": "atomicMin"}
_SHUFFLE_FUNCTIONS = {
    "xor": "__shfl_xor_sync",
    "down": "__shfl_down_sync",
    "up": "__shfl_up_sync",
    "idx": "__shfl_sync",
}


def _is_zero_constant(value: SSAValue) -> bool:
    owner = value.owner
    return (
        isinstance(owner, arith.ConstantOp)
        and isinstance(owner.value, FloatAttr)
        and owner.value.value.data == 0.0
    )


def _unsigned(expr: str, u: str) -> str:
    """`expr` as the unsigned C type `u`; a non-negative literal converts by itself."""
    return expr if re.fullmatch(r"\d+(L|LL)?", expr) else f"({u}){expr}"


def _to_float(expr: str, t: Attribute) -> str:
    if isinstance(t, Float16Type):
        return f"__half2float({expr})"
    if isinstance(t, BFloat16Type):
        return f"__bfloat162float({expr})"
    return expr


def _from_float(expr: str, t: Attribute) -> str:
    if isinstance(t, Float16Type):
        return f"__float2half_rn({expr})"
    if isinstance(t, BFloat16Type):
        return f"__float2bfloat16_rn({expr})"
    return expr


class _KernelPrinter:
    def __init__(
        self,
        func: kernel.FuncOp,
        features: _Features,
        fast_math: bool,
        warp_size: int,
        tables: set[int] | None = None,
    ):
        self.func = func
        self.features = features
        self.fast_math = fast_math
        self.full_mask = f"{(1 << warp_size) - 1:#x}u"
        """The lane mask of a whole warp, with which every lane takes part in a shuffle."""
        self.names = _Names()
        self.exprs: dict[SSAValue, str] = {}
        self.lines: list[str] = []
        self.depth = 1
        self.needed = _needed_values(func.body.block)
        self.current: Operation = func
        self.tf32_words: dict[tuple[SSAValue, Block | None], str] = {}
        """The tf32 words of each f32 fragment that a tf32 mma_sync of a block reads, rounded
        once there for all the block's products that read it."""
        self.gathered: dict[SSAValue, bool] = {}
        """Whether a value is computed from loaded values (`is_gathered`)."""
        self.tables = {func.body.block.args[i] for i in tables or ()}
        """The arguments that are the compiler's constant tables (`_constant_tables`)."""
        self.proven_within: Callable[[SSAValue, int], bool] | None = None
        """Whether an index is proven inside a dim of a given size (`access_bounds`), made
        for the first gathered index."""
        self.traps_on_indices = any(isinstance(op, kernel.WgmmaOp) for op in func.walk())
        """Whether a gathered index outside its dim traps in line (`emmy_trap_index`) instead
        of calling the device assert: ptxas serialises a kernel's wgmmas across any call
        (C7510), which made the masked attention 16% slower for its mask lists' checks."""

    # -- output helpers --

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def expr(self, value: SSAValue) -> str:
        if value not in self.exprs:
            # xDSL does not check dominance, so a use may come before its definition.
            name = f"%{value.name_hint}" if value.name_hint else "a value"
            raise CudaTargetError(
                f"'{self.current.name}' uses {name}, whose definition does not come before it in "
                f"this block or an enclosing one",
                self.current,
            )
        return self.exprs[value]

    def c_type(self, t: Attribute, op: Operation, unsigned: bool = False) -> str:
        if isinstance(t, VectorType):
            return self.vector_struct(t, op)
        c = _c_type(t, op, unsigned)
        if c == "__half":
            self.features.includes.add("fp16")
        elif c == "__nv_bfloat16":
            self.features.includes.add("bf16")
        return c

    def declare(self, value: SSAValue, op: Operation, expression: str) -> None:
        """`T name = expression;` for a value something needs."""
        name = self.names.fresh(value.name_hint)
        self.line(f"{self.c_type(value.type, op)} {name} = {expression};")
        self.exprs[value] = name

    # -- kernel --

    def print(self) -> str:
        func = self.func
        name = func.sym_name.data
        if not _valid_identifier(name):
            raise CudaTargetError(f'kernel name "{name}" is not a C identifier', func)
        written = written_values(func.body)
        params = []
        for index, arg in enumerate(func.body.block.args):
            arg_type = arg.type
            arg_name = self.names.fresh(arg.name_hint or f"arg{index}")
            if isinstance(arg_type, MemRefType):
                element = self.c_type(arg_type.get_element_type(), func)
                const = "" if arg in written else "const "
                params.append(f"{const}{element}* __restrict__ {arg_name}")
            elif isinstance(arg_type, kernel.TensorMapType):
                params.append(f"const __grid_constant__ {self.tensor_map_struct()} {arg_name}")
            else:
                params.append(f"{self.c_type(arg_type, func)} {arg_name}")
            self.exprs[arg] = arg_name
        block = func.block_shape
        header = (
            f"// kernel.func @{name}: block [{', '.join(map(str, block))}], "
            f"{func.static_shared_bytes} bytes of static shared memory"
        )
        if func.dynamic_shared_bytes:
            header += f", at least {func.dynamic_shared_bytes} bytes of dynamic shared memory"
        # A kernel that moves registers between warpgroups (setmaxnreg) runs one block per SM,
        # whose register file the limits divide.
        bounds = str(func.threads)
        if any(isinstance(op, kernel.SetmaxnregOp) for op in func.body.walk()):
            bounds += ", 1"
        cluster = ""
        if func.cluster is not None:
            cluster = f"__cluster_dims__({func.cluster_blocks}, 1, 1) "
        signature = (
            f'extern "C" __global__ void {cluster}__launch_bounds__({bounds}) '
            f"{name}({', '.join(params)}) {{"
        )
        # Shared buffers are block-wide and live for the whole kernel: declared up front.
        for op in func.body.walk():
            if isinstance(op, kernel.SharedAllocOp) and op.result in self.needed:
                self.shared_alloc(op)
            elif isinstance(op, kernel.MbarrierAllocOp) and op.result in self.needed:
                self.mbarrier_alloc(op)
        views = [op for op in func.body.walk() if isinstance(op, kernel.DynamicSharedOp)]
        if any(op.result in self.needed for op in views):
            # A swizzled view starts where its pattern does, from the start of this array.
            alignment = max(
                op.layout.alignment if op.layout is not None else kernel.SHARED_ALIGNMENT
                for op in views
            )
            self.line(f"extern __shared__ __align__({alignment}) unsigned char emmy_smem[];")
        self.block(func.body.block)
        return "\n".join([header, signature, *self.lines, "}"]) + "\n"

    def vector_struct(self, vector_type: VectorType, op: Operation) -> str:
        """`emmy_f32x4`: the struct that holds a vector's lanes, defined on first use."""
        element = vector_type.get_element_type()
        if vector_type.get_num_dims() != 1 or isinstance(element, VectorType):
            self.unsupported(op, f"it prints vectors of one dimension, not {vector_type}")
        c = self.c_type(element, op)
        lanes = vector_type.get_shape()[0]
        name = f"emmy_{element}x{lanes}"
        size = lanes * element_bytes(element)
        alignment = size & -size if size <= 16 else 16
        self.features.structs.setdefault(
            name, f"struct __align__({alignment}) {name} {{ {c} lane[{lanes}]; }};\n"
        )
        return name

    def tensor_map_struct(self) -> str:
        """`emmy_CUtensorMap`: the bytes of a `CUtensorMap`, which the host encodes."""
        self.features.structs.setdefault(
            TENSOR_MAP_STRUCT,
            "// A CUtensorMap, encoded on the host (cuTensorMapEncodeTiled), read by TMA.\n"
            f"struct __align__({kernel.TENSOR_MAP_ALIGNMENT}) {TENSOR_MAP_STRUCT} {{ "
            f"unsigned char bytes[{kernel.TENSOR_MAP_BYTES}]; }};\n",
        )
        return TENSOR_MAP_STRUCT

    def forget(self, block: Block) -> None:
        """Values of a block whose C scope has closed (xDSL does not check dominance, so the
        IR may use them after it)."""
        for value in block.args:
            self.exprs.pop(value, None)
        for op in block.walk():
            for value in op.results:
                if not isinstance(op, kernel.SharedAllocOp):
                    self.exprs.pop(value, None)
            for region in op.regions:
                for inner in region.blocks:
                    for value in inner.args:
                        self.exprs.pop(value, None)

    def block(self, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, scf.YieldOp | kernel.SharedAllocOp | kernel.MbarrierAllocOp):
                continue
            if _is_pure(op) and not any(r in self.needed for r in op.results):
                continue
            self.op(op)

    def op(self, op: Operation) -> None:
        self.current = op
        method = _OP_PRINTERS.get(type(op))
        if method is not None:
            method(self, op)
            return
        if op.name in _MATH_F32:
            self.math(op)
            return
        raise CudaTargetError(f"the cuda target cannot print '{op.name}'", op)

    def unsupported(self, op: Operation, why: str) -> None:
        raise CudaTargetError(f"the cuda target cannot print '{op.name}': {why}", op)

    def scalar_operands(self, op: Operation) -> None:
        for value in (*op.operands, *op.results):
            if isinstance(value.type, MemRefType) or not (
                _is_float(value.type) or isinstance(value.type, IndexType) or _is_int(value.type)
            ):
                self.unsupported(op, f"{value.type} is not a scalar type it prints")
            self.c_type(value.type, op)

    # -- memory --

    def dynamic_size(self) -> str:
        """The dynamic size, which a kernel that has one takes as its last argument."""
        return self.expr(self.func.body.block.args[-1])

    def address(self, buffer: SSAValue, indices: Sequence[SSAValue], swizzled: bool = True) -> str:
        """`x[i * 2048 + j]`: the element of a dense row-major buffer, through its swizzle
        (unless `swizzled` is False: the element where the buffer's pattern starts, as TMA
        and wgmma address a swizzled tile)."""
        memref_type = buffer.type
        assert isinstance(memref_type, MemRefType)
        shape = memref_type.get_shape()
        swizzle = kernel.swizzle_of(buffer) if swizzled else None
        permutation = None
        # The swizzle permutes elements within periods of `period`: a part of the index that
        # is a multiple of it moves the element by itself, so it is added outside the swizzle
        # (a stage or a panel of a tile), and what the swizzle takes stays the same from one
        # stage to the next, for the compiler to compute once.
        period = 0
        if swizzle is not None:
            permutation = swizzle.element_permutation(element_bytes(memref_type.get_element_type()))
            shift, mask, _ = permutation
            period = 1 << (shift + mask.bit_length())
        terms: list[str] = []
        whole_periods: list[str] = []
        offset = 0
        for dim, index in enumerate(indices):
            inner = shape[dim + 1 :]
            stride = math.prod(d for d in inner if d != DYNAMIC_INDEX)
            if DYNAMIC_INDEX in inner:
                size = self.dynamic_size()
                factors = [size] * inner.count(DYNAMIC_INDEX) + (
                    [str(stride)] if stride > 1 else []
                )
                terms.append(" * ".join([self.expr(index), *factors]))
                continue
            owner = index.owner
            if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
                offset += owner.value.value.data * stride
                continue
            term = self.expr(index) if stride == 1 else f"{self.expr(index)} * {stride}"
            (whole_periods if period and stride % period == 0 else terms).append(term)
        if period:
            whole_periods += [str(offset - offset % period)] if offset >= period else []
            offset %= period
        if offset or not terms:
            terms.append(str(offset))
        flat = " + ".join(terms)
        if permutation is not None:
            self.features.helpers.add("emmy_swizzle")
            flat = " + ".join(
                [*whole_periods, "emmy_swizzle({}, {}, {}, {})".format(flat, *permutation)]
            )
        return f"{self.expr(buffer)}[{flat}]"

    def shared_alloc(self, op: kernel.SharedAllocOp) -> None:
        memref_type = op.result.type
        assert isinstance(memref_type, MemRefType)
        element = self.c_type(memref_type.get_element_type(), op)
        name = self.names.fresh(op.result.name_hint or "smem")
        size = math.prod(memref_type.get_shape())
        self.line(f"__shared__ alignas({op.alignment}) {element} {name}[{size}];")
        self.exprs[op.result] = name

    def dynamic_shared(self, op: kernel.DynamicSharedOp) -> None:
        memref_type = op.result.type
        assert isinstance(memref_type, MemRefType)
        element = self.c_type(memref_type.get_element_type(), op)
        name = self.names.fresh(op.result.name_hint or "dsmem")
        self.line(
            f"{element}* {name} = reinterpret_cast<{element}*>(emmy_smem + {op.byte_offset});"
        )
        self.exprs[op.result] = name

    def is_gathered(self, value: SSAValue) -> bool:
        """Whether `value` is computed from values the kernel loaded (an embedding's row, a
        position read from a tensor), not from thread ids, loop indices and arguments alone:
        through the ops that compute it, the loop-carried values of `scf.for`s and the
        values `scf` regions yield (`_sources`)."""
        if value in self.gathered:
            return self.gathered[value]
        seen, stack = {value}, [value]
        while stack:
            source = stack.pop()
            owner = source.owner
            if self.gathered.get(source) or (
                isinstance(owner, memref.LoadOp | kernel.VectorLoadOp)
                and owner.memref not in self.tables
            ):
                self.gathered[value] = True
                return True
            if source not in self.gathered:
                fresh = [v for v in _sources(source) if v not in seen]
                seen.update(fresh)
                stack.extend(fresh)
        # Nothing the value is computed from was loaded, nor for any value on the way.
        self.gathered.update(dict.fromkeys(seen, False))
        return False

    def check_gathered(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> None:
        """Before an access of global memory (an argument's) at a gathered index, a check
        that the index is inside its dim: out of it, the kernel stops at a device-side assert,
        as PyTorch's own kernels do (`emmy_check_index`), where the access would reach
        another buffer's memory. The CPU interpreters refuse such an access themselves."""
        if buffer not in self.func.body.block.args:
            return
        assert isinstance(buffer.type, MemRefType)
        name = self.func.sym_name.data
        for index, size in zip(indices, buffer.type.get_shape(), strict=True):
            if not self.is_gathered(index):
                continue
            if size != DYNAMIC_INDEX:
                if self.proven_within is None:
                    self.proven_within = proven_index_bounds(self.func)
                if self.proven_within(index, size):
                    continue  # clamped where it was computed (`minui`, `remui`)
            bound = self.dynamic_size() if size == DYNAMIC_INDEX else str(size)
            if self.traps_on_indices:
                self.features.helpers.add("emmy_trap_index")
                self.line(f"emmy_trap_index({self.expr(index)}, {bound});")
            else:
                self.features.helpers.add("emmy_check_index")
                self.line(f'emmy_check_index({self.expr(index)}, {bound}, "{name}");')

    def load(self, op: memref.LoadOp) -> None:
        self.c_type(op.res.type, op)
        self.check_gathered(op.memref, op.indices)
        self.declare(op.res, op, self.address(op.memref, op.indices))

    def store(self, op: memref.StoreOp) -> None:
        self.c_type(op.value.type, op)
        self.check_gathered(op.memref, op.indices)
        self.line(f"{self.address(op.memref, op.indices)} = {self.expr(op.value)};")

    def access_type(self, vector_type: VectorType) -> str:
        """The CUDA type of one access of a vector's bytes (`float4`, `uint4`, ...)."""
        element = vector_type.get_element_type()
        count = vector_type.get_shape()[0]
        size = count * element_bytes(element)
        if isinstance(element, Float32Type) and count in (2, 4):
            return f"float{count}"
        if isinstance(element, Float64Type) and count == 2:
            return "double2"
        return {
            16: "uint4",
            8: "uint2",
            4: "unsigned int",
            2: "unsigned short",
            1: "unsigned char",
        }[size]

    def vector_load(self, op: kernel.VectorLoadOp) -> None:
        vector = self.c_type(op.result.type, op)
        access = self.access_type(op.result.type)
        name = self.names.fresh(op.result.name_hint or "vec")
        self.check_gathered(op.memref, op.indices)
        self.line(f"{vector} {name};")
        self.line(
            f"*reinterpret_cast<{access}*>(&{name}) = "
            f"*reinterpret_cast<const {access}*>(&{self.address(op.memref, op.indices)});"
        )
        self.exprs[op.result] = name

    def vector_store(self, op: kernel.VectorStoreOp) -> None:
        self.c_type(op.value.type, op)
        access = self.access_type(op.value.type)
        self.check_gathered(op.memref, op.indices)
        self.line(
            f"*reinterpret_cast<{access}*>(&{self.address(op.memref, op.indices)}) = "
            f"*reinterpret_cast<const {access}*>(&{self.expr(op.value)});"
        )

    def lane(self, op: vector.ExtractOp | vector.InsertOp) -> str:
        """The position of the one lane an extract or insert moves."""
        lane_type = op.result.type if isinstance(op, vector.ExtractOp) else op.source.type
        if isinstance(lane_type, VectorType):
            self.unsupported(op, "it moves single lanes, not sub-vectors")
        (position,) = op.get_mixed_position()
        return str(position) if isinstance(position, int) else self.expr(position)

    def vector_extract(self, op: vector.ExtractOp) -> None:
        self.c_type(op.vector.type, op)
        self.declare(op.result, op, f"{self.expr(op.vector)}.lane[{self.lane(op)}]")

    def vector_insert(self, op: vector.InsertOp) -> None:
        lane = self.lane(op)
        source = self.expr(op.source)
        dest = op.dest.owner
        if (
            isinstance(dest, kernel.VectorLoadOp | vector.BroadcastOp | vector.InsertOp)
            and dest.parent is op.parent
            and op.dest.has_one_use()
        ):
            # Nothing else reads the vector inserted into, which this block declared: the
            # insert updates its variable (a chain of inserts fills one vector).
            self.exprs[op.result] = self.expr(op.dest)
        else:
            self.declare(op.result, op, self.expr(op.dest))
        self.line(f"{self.exprs[op.result]}.lane[{lane}] = {source};")

    def vector_broadcast(self, op: vector.BroadcastOp) -> None:
        if isinstance(op.source.type, VectorType):
            self.unsupported(op, "it broadcasts scalars, not vectors")
        self.c_type(op.source.type, op)
        lanes = ", ".join([self.expr(op.source)] * op.vector.type.get_shape()[0])
        self.declare(op.vector, op, f"{{{{{lanes}}}}}")

    def atomic(self, op: kernel.AtomicOp) -> None:
        element = op.value.type
        c = self.c_type(element, op)
        address = f"&{self.address(op.memref, op.indices)}"
        value = self.expr(op.value)
        kind = op.kind.data
        if op.acq_rel is not None:
            helper = f"emmy_atomic_{kind}_acq_rel"
            self.features.helper(helper, c)
            call = f"{helper}({address}, {value})"
        elif kind == "inc":
            call = (
                f"(int)atomicInc(reinterpret_cast<unsigned int*>({address}), (unsigned int){value})"
            )
        elif kind != "add" and isinstance(element, Float32Type | Float64Type):
            helper = "emmy_atomic_maximumf" if kind == "max" else "emmy_atomic_minimumf"
            self.features.helper(helper, c)
            self.features.helper("emmy_maximumf" if kind == "max" else "emmy_minimumf", c)
            call = f"{helper}({address}, {value})"
        elif kind == "add" and _is_int(element, 64):
            # CUDA adds 64-bit integers as unsigned, which wraps the same.
            call = (
                f"atomicAdd(reinterpret_cast<unsigned long long*>({address}), "
                f"(unsigned long long){value})"
            )
            if op.result in self.needed:
                call = f"(long long){call}"
        else:
            call = f"{_ATOMIC_FUNCTIONS[kind]}({address}, {value})"
        if op.result in self.needed:
            self.declare(op.result, op, call)
        else:
            self.line(f"{call};")

    def cp_async(self, op: kernel.CpAsyncOp) -> None:
        self.c_type(op.source.type.get_element_type(), op)
        size = op.size
        # .cg (cache at L2 only) takes 16 bytes; smaller copies use .ca.
        cache = "cg" if size == 16 else "ca"
        destination = f"&{self.address(op.destination, op.destination_indices)}"
        source = f"&{self.address(op.source, op.source_indices)}"
        # PTX's src-size operand: the bytes read, the rest of the copy zero-filled.
        source_bytes, source_bytes_operand = "", ""
        if op.source_bytes is not None:
            source_bytes = ", %2"
            source_bytes_operand = f', "r"({self.expr(op.source_bytes)})'
        self.line(
            f'asm volatile("cp.async.{cache}.shared.global [%0], [%1], {size}{source_bytes};'
            f'\\n" :: '
            f'"r"(static_cast<unsigned int>(__cvta_generic_to_shared({destination}))), '
            f'"l"({source}){source_bytes_operand} : "memory");'
        )

    def cp_async_commit(self, op: kernel.CpAsyncCommitOp) -> None:
        self.line('asm volatile("cp.async.commit_group;\\n" ::: "memory");')

    def cp_async_wait(self, op: kernel.CpAsyncWaitOp) -> None:
        self.line(f'asm volatile("cp.async.wait_group {op.pending_groups};\\n" ::: "memory");')

    # -- tensor cores --

    def ldmatrix(self, op: kernel.LdmatrixOp) -> None:
        fragment = self.c_type(op.result.type, op)
        helper = _ldmatrix_helper_name(op.matrices, op.transposed)
        self.features.helpers.add(helper)
        name = self.names.fresh(op.result.name_hint or "fragment")
        self.line(f"{fragment} {name};")
        self.line(f"{helper}(&{name}, &{self.address(op.memref, op.indices)});")
        self.exprs[op.result] = name

    def mma_sync(self, op: kernel.MmaSyncOp) -> None:
        a, b, c = (self.expr(value) for value in (op.a, op.b, op.c))
        for value in (op.a, op.b):
            self.c_type(value.type, op)
        if op.tf32 is not None:
            a, b = (self.rounded_to_tf32(value, op) for value in (op.a, op.b))
        accumulator = self.c_type(op.result.type, op)
        element = "tf32" if op.tf32 is not None else str(op.element_type)
        helper = f"emmy_mma_{op.shape.data}_{element}"
        self.features.helpers.add(helper)
        name = self.names.fresh(op.result.name_hint or "acc")
        self.line(f"{accumulator} {name};")
        self.line(f"{helper}(&{name}, &{a}, &{b}, &{c});")
        self.exprs[op.result] = name

    def rounded_to_tf32(self, fragment: SSAValue, op: kernel.MmaSyncOp) -> str:
        """The tf32 words of an f32 fragment, rounded (cvt.rna) where the block's first tf32
        product reads it: an A fragment feeds a row of products, a B fragment a column."""
        key = (fragment, op.parent_block())
        if key not in self.tf32_words:
            self.features.helpers.add("emmy_round_tf32")
            count = fragment.type.get_shape()[0]
            name = self.names.fresh(f"{fragment.name_hint or 'fragment'}_tf32")
            self.line(f"unsigned int {name}[{count}];")
            self.line(f"emmy_round_tf32({name}, &{self.expr(fragment)}, {count});")
            self.tf32_words[key] = name
        return self.tf32_words[key]

    # -- Hopper: mbarriers, TMA, warpgroup tensor cores --

    def mbarrier_alloc(self, op: kernel.MbarrierAllocOp) -> None:
        name = self.names.fresh(op.result.name_hint or "mbarrier")
        self.line(
            f"__shared__ __align__({kernel.MBARRIER_BYTES}) unsigned long long "
            f"{name}[{op.result.type.barriers}];"
        )
        self.exprs[op.result] = name

    def mbarrier(
        self, op: kernel.MbarrierInitOp, *arguments: str, helper: str | None = None
    ) -> None:
        """A call of the mbarrier helper of `op` (or `helper`) on its barrier and `arguments`."""
        helper = helper or _MBARRIER_HELPERS[type(op)]
        self.features.helpers.add(helper)
        barrier = f"&{self.expr(op.barriers)}[{self.expr(op.index)}]"
        self.line(f"{helper}({', '.join((barrier, *arguments))});")

    def mbarrier_arrive(self, op: kernel.MbarrierArriveOp) -> None:
        if op.rank is None:
            self.mbarrier(op)
        else:
            rank = f"(unsigned int){self.expr(op.rank)}"
            self.mbarrier(op, rank, helper="emmy_mbarrier_arrive_cluster")

    def tma_load(self, op: kernel.TmaLoadOp) -> None:
        multicast = op.multicast is not None
        helper = _tma_load_helper_name(len(op.coordinates), multicast)
        self.features.helpers.add(helper)
        self.features.helpers.add("emmy_shared_address")
        destination = self.address(op.destination, op.destination_indices, swizzled=False)
        barrier = f"&{self.expr(op.barriers)}[{self.expr(op.index)}]"
        mask = (f"(unsigned short){self.expr(op.multicast)}",) if multicast else ()
        coordinates = (f"(int){self.expr(c)}" for c in op.coordinates)
        arguments = ", ".join(
            (f"&{destination}", f"&{self.expr(op.map)}", barrier, *mask, *coordinates)
        )
        self.line(f"{helper}({arguments});")

    def tma_store(self, op: kernel.TmaStoreOp) -> None:
        helper = _tma_store_helper_name(len(op.coordinates))
        self.features.helpers.update((helper, "emmy_shared_address"))
        source = self.address(op.source, op.source_indices, swizzled=False)
        coordinates = (f"(int){self.expr(c)}" for c in op.coordinates)
        arguments = ", ".join((f"&{self.expr(op.map)}", f"&{source}", *coordinates))
        self.line(f"{helper}({arguments});")

    def tma_store_wait(self, op: kernel.TmaStoreWaitOp) -> None:
        read = ".read" if op.reads_only else ""
        self.asm_statement(f"cp.async.bulk.wait_group{read} {op.pending_groups};")

    def wgmma(self, op: kernel.WgmmaOp) -> None:
        self.c_type(op.element_type, op)
        b_mn_major = op.b_mn_major is not None
        helper = _wgmma_helper_name(
            op.shape_name, _wgmma_element(op.element_type), b_mn_major, op.a_in_registers
        )
        self.features.helpers.update((helper, "emmy_wgmma_descriptor", "emmy_shared_address"))
        # The accumulator's registers are the instruction's in-out operands: D starts as C, in
        # C's own registers when nothing else reads C (a copy would read them in flight).
        c = self.expr(op.c)
        if op.c.has_one_use() and _valid_identifier(c):
            self.exprs[op.result] = c
        else:
            self.declare(op.result, op, c)
        # The tiles start on a row that is a multiple of 8, where the swizzle moves nothing.
        if op.a_in_registers:
            self.c_type(op.a.type, op)
            a = f"{self.expr(op.a)}.lane"
        else:
            a = f"emmy_wgmma_descriptor(&{self.address(op.a, op.a_indices, swizzled=False)}, 16)"
        b = self.address(op.b, op.b_indices, swizzled=False)
        # A K-major tile's leading byte offset is unused (16 by convention); an MN-major
        # B's is the stride of its panels.
        b_leading = op.b.type.get_shape()[-2] * kernel.WGMMA_ROW_BYTES if b_mn_major else 16
        self.line(
            f"{helper}({self.expr(op.result)}.lane, {a}, emmy_wgmma_descriptor(&{b}, {b_leading}));"
        )

    def wgmma_wait(self, op: kernel.WgmmaWaitOp) -> None:
        self.line(
            f'asm volatile("wgmma.wait_group.sync.aligned {op.pending_groups};\\n" ::: "memory");'
        )
        for accumulator, result in zip(op.accumulators, op.waited):
            # Without the fence nvcc may read the registers before the wait.
            self.features.helpers.add("emmy_fence_registers")
            lanes = accumulator.type.get_shape()[0]
            self.line(f"emmy_fence_registers<{lanes}>({self.expr(accumulator)}.lane);")
            if result in self.needed:
                self.declare(result, op, self.expr(accumulator))

    def setmaxnreg(self, op: kernel.SetmaxnregOp) -> None:
        self.line(
            f'asm volatile("setmaxnreg.{op.action.data}.sync.aligned.u32 {op.registers};\\n");'
        )

    def named_barrier(self, op: kernel.NamedBarrierOp) -> None:
        # "memory" keeps the compiler from moving accesses across it, as bar.sync's
        # __syncthreads does.
        self.line(
            f'asm volatile("bar.{op.action.data} %0, {op.thread_count};\\n" :: '
            f'"r"((unsigned int){self.expr(op.barrier)}) : "memory");'
        )

    def asm_statement(self, instruction: str) -> None:
        self.line(f'asm volatile("{instruction}\\n" ::: "memory");')

    def cluster_barrier(self, op: kernel.ClusterBarrierOp) -> None:
        # Release the block's writes at the arrival, acquire the cluster's at the wait.
        self.asm_statement("barrier.cluster.arrive.release.aligned;")
        self.asm_statement("barrier.cluster.wait.acquire.aligned;")

    def map_shared_rank(self, op: kernel.MapSharedRankOp) -> None:
        element = self.c_type(op.buffer.type.get_element_type(), op)
        name = self.names.fresh(op.result.name_hint or "mapped")
        self.features.helpers.add("emmy_map_shared_rank")
        self.line(
            f"{element}* {name} = emmy_map_shared_rank({self.expr(op.buffer)}, "
            f"(unsigned int){self.expr(op.rank)});"
        )
        self.exprs[op.result] = name

    # -- threads --

    def special_register(self, op: kernel.ThreadIdOp, register: str) -> None:
        self.declare(op.result, op, f"{register}.{op.dimension.data}")

    def barrier(self, op: kernel.BarrierOp) -> None:
        self.line("__syncthreads();")

    def shuffle(self, op: kernel.ShuffleOp) -> None:
        self.c_type(op.value.type, op)
        function = _SHUFFLE_FUNCTIONS[op.mode.data]
        value, offset = self.expr(op.value), self.expr(op.offset)
        self.declare(op.result, op, f"{function}({self.full_mask}, {value}, {offset})")

    # -- control flow --

    def for_loop(self, op: scf.ForOp) -> None:
        body = op.body.block
        iv = body.args[0]
        iv_type = self.c_type(iv.type, op)
        carried: list[tuple[int, str]] = []
        for index, (result, init) in enumerate(zip(op.results, op.iter_args)):
            arg = body.args[index + 1]
            if result not in self.needed and arg not in self.needed:
                continue
            name = self.names.fresh(result.name_hint or arg.name_hint)
            self.line(f"{self.c_type(result.type, op)} {name} = {self.expr(init)};")
            self.exprs[arg] = name
            self.exprs[result] = name
            carried.append((index, name))
        iv_name = self.names.fresh(iv.name_hint or "i")
        self.exprs[iv] = iv_name
        self.line(
            f"for ({iv_type} {iv_name} = {self.expr(op.lb)}; {iv_name} < {self.expr(op.ub)}; "
            f"{iv_name} += {self.expr(op.step)}) {{"
        )
        self.depth += 1
        self.block(body)
        terminator = body.last_op
        assert isinstance(terminator, scf.YieldOp)
        self.current = terminator
        self.assign_yields(
            op,
            [(name, terminator.operands[index]) for index, name in carried],
            {body.args[index + 1] for index, _ in carried},
        )
        self.forget(body)
        self.depth -= 1
        self.line("}")

    def assign_yields(
        self, op: Operation, assignments: list[tuple[str, SSAValue]], overwritten: set[SSAValue]
    ) -> None:
        """`name = value;` for each loop-carried variable; through temporaries when a yielded
        value is another carried variable that an earlier assignment would overwrite."""
        assignments = [(name, value) for name, value in assignments if self.expr(value) != name]
        assigned: set[str] = set()
        clobbered = False
        for name, value in assignments:
            clobbered |= value in overwritten and self.expr(value) in assigned
            assigned.add(name)
        if clobbered:
            temporaries = []
            for name, value in assignments:
                temporary = self.names.fresh(f"{name}_next")
                self.line(f"{self.c_type(value.type, op)} {temporary} = {self.expr(value)};")
                temporaries.append((name, temporary))
            for name, temporary in temporaries:
                self.line(f"{name} = {temporary};")
            return
        for name, value in assignments:
            self.line(f"{name} = {self.expr(value)};")

    def if_op(self, op: scf.IfOp) -> None:
        results = []
        for index, result in enumerate(op.results):
            if result in self.needed:
                name = self.names.fresh(result.name_hint)
                self.line(f"{self.c_type(result.type, op)} {name};")
                self.exprs[result] = name
                results.append((index, name))
        self.line(f"if ({self.expr(op.cond)}) {{")
        self.branch(op.true_region.block, results)
        else_block = op.false_region.block if op.false_region.blocks else None
        else_has_ops = else_block is not None and any(
            not isinstance(o, scf.YieldOp) for o in else_block.ops
        )
        if else_block is not None and (results or else_has_ops):
            self.line("} else {")
            self.branch(else_block, results)
        self.line("}")

    def branch(self, block: Block, results: list[tuple[int, str]]) -> None:
        self.depth += 1
        self.block(block)
        terminator = block.last_op
        if results:
            assert isinstance(terminator, scf.YieldOp)
            self.current = terminator
            for index, name in results:
                self.line(f"{name} = {self.expr(terminator.operands[index])};")
        self.forget(block)
        self.depth -= 1

    # -- arith --

    def constant(self, op: arith.ConstantOp) -> None:
        value = op.value
        t = op.result.type
        if isinstance(value, FloatAttr) and _is_float(t):
            self.c_type(t, op)
            self.exprs[op.result] = _float_literal(value.value.data, t)
        elif isinstance(value, IntegerAttr) and (_is_int(t) or isinstance(t, IndexType)):
            self.c_type(t, op)
            self.exprs[op.result] = _int_literal(value.value.data, t)
        else:
            self.unsupported(op, f"the constant {value} is not a scalar")

    def float_binary(self, op: Operation) -> None:
        self.scalar_operands(op)
        lhs, rhs = (self.expr(v) for v in op.operands)
        t = op.results[0].type
        if _is_half(t):
            self.declare(op.results[0], op, f"{_HALF_INTRINSICS[op.name]}({lhs}, {rhs})")
        elif op.name == "arith.divf" and _is_zero_constant(op.operands[1]):
            # IEEE division by zero (a mean over nothing, say); nvcc diagnoses a literal 0.0f.
            zero = "__int_as_float" if isinstance(t, Float32Type) else "__longlong_as_double"
            sign = "0x80000000" if isinstance(t, Float32Type) else "0x8000000000000000LL"
            bits = sign if math.copysign(1.0, op.operands[1].owner.value.value.data) < 0 else "0"
            self.declare(op.results[0], op, f"{lhs} / {zero}({bits})")
        elif op.name == "arith.divf" and self.fast_math and isinstance(t, Float32Type):
            self.declare(op.results[0], op, f"__fdividef({lhs}, {rhs})")
        else:
            self.declare(op.results[0], op, f"{lhs} {_FLOAT_OPERATORS[op.name]} {rhs}")

    def negf(self, op: arith.NegfOp) -> None:
        self.scalar_operands(op)
        operand = self.expr(op.operand)
        t = op.result.type
        self.declare(op.result, op, f"__hneg({operand})" if _is_half(t) else f"-{operand}")

    def max_min_f(self, op: Operation) -> None:
        self.scalar_operands(op)
        lhs, rhs = (self.expr(v) for v in op.operands)
        t = op.results[0].type
        c = self.c_type(t, op)
        is_max = op.name in ("arith.maximumf", "arith.maxnumf")
        ignores_nan = op.name in ("arith.maxnumf", "arith.minnumf") or self.fast_math
        if ignores_nan:
            # IEEE maxNum / minNum: the other operand of a NaN.
            if _is_half(t):
                function = "__hmax" if is_max else "__hmin"
            elif isinstance(t, Float64Type):
                function = "fmax" if is_max else "fmin"
            else:
                function = "fmaxf" if is_max else "fminf"
        else:
            function = "emmy_maximumf" if is_max else "emmy_minimumf"
            self.features.helper(function, c)
        self.declare(op.results[0], op, f"{function}({lhs}, {rhs})")

    def math(self, op: Operation) -> None:
        self.scalar_operands(op)
        t = op.results[0].type
        if not _is_float(t):
            self.unsupported(op, f"it prints float math functions, not on {t}")
        operands = [self.expr(v) for v in op.operands]
        if _is_half(t) and op.name == "math.absf":
            self.declare(op.results[0], op, f"__habs({operands[0]})")
            return
        if _is_half(t) and op.name == "math.fma":
            self.declare(op.results[0], op, f"__hfma({', '.join(operands)})")
            return
        function = _MATH_F32[op.name]
        if self.fast_math:
            function = _FAST_F32.get(op.name, function)
        if isinstance(t, Float64Type):
            function = _MATH_F32[op.name][:-1]  # expf -> exp: the double overloads
        elif op.name == "math.exp2" and (self.fast_math or _approximates_functions(op)):
            function = "emmy_exp2_approx"
            self.features.helper(function, "float")
        elif op.name == "math.exp" and not self.fast_math:
            # exp(x) = 2^(x log2 e): one multiply and the hardware's exp2 (2 ulp), as Triton
            # does, rather than expf's longer range reduction; the product's rounding adds a
            # relative error of about |x| * 1e-7 (at most 1e-5 before exp overflows).
            x = _to_float(operands[0], t)
            self.declare(op.results[0], op, _from_float(f"exp2f({x} * 1.44269504f)", t))
            return
        arguments = ", ".join(_to_float(operand, t) for operand in operands)
        self.declare(op.results[0], op, _from_float(f"{function}({arguments})", t))

    def int_binary(self, op: Operation) -> None:
        self.scalar_operands(op)
        lhs, rhs = (self.expr(v) for v in op.operands)
        t = op.results[0].type
        symbol = _INT_OPERATORS[op.name]
        if _is_int(t, 1):
            if op.name not in ("arith.andi", "arith.ori", "arith.xori"):
                self.unsupported(op, "on i1 it prints only andi, ori and xori")
            self.declare(op.results[0], op, f"{lhs} {symbol} {rhs}")
            return
        c = self.c_type(t, op)
        if _bits(t) < 32:
            # Computed in int, where i8 and i16 cannot overflow, and wrapped back.
            self.declare(op.results[0], op, f"({c})({lhs} {symbol} {rhs})")
        elif op.name in ("arith.addi", "arith.subi", "arith.muli") and not isinstance(t, IndexType):
            # Wrapping, as arith's: computed on the unsigned type.
            u = self.c_type(t, op, unsigned=True)
            self.declare(
                op.results[0], op, f"({c})({_unsigned(lhs, u)} {symbol} {_unsigned(rhs, u)})"
            )
        else:
            self.declare(op.results[0], op, f"{lhs} {symbol} {rhs}")

    def unsigned_binary(self, op: Operation) -> None:
        self.scalar_operands(op)
        lhs, rhs = (self.expr(v) for v in op.operands)
        t = op.results[0].type
        if _is_int(t, 1):
            self.unsupported(op, "it does not print unsigned arithmetic on i1")
        c = self.c_type(t, op)
        u = self.c_type(t, op, unsigned=True)
        symbol = {"arith.divui": "/", "arith.remui": "%", "arith.shrui": ">>"}[op.name]
        a, b = _unsigned(lhs, u), rhs if op.name == "arith.shrui" else _unsigned(rhs, u)
        self.declare(op.results[0], op, f"({c})({a} {symbol} {b})")

    def int_max_min(self, op: Operation) -> None:
        self.scalar_operands(op)
        lhs, rhs = (self.expr(v) for v in op.operands)
        t = op.results[0].type
        if _is_int(t, 1):
            self.unsupported(op, "it does not print max/min on i1")
        greater = op.name in ("arith.maxsi", "arith.maxui")
        if op.name in ("arith.maxui", "arith.minui"):
            u = self.c_type(t, op, unsigned=True)
            a, b = _unsigned(lhs, u), _unsigned(rhs, u)
        else:
            a, b = lhs, rhs
        self.declare(op.results[0], op, f"{a} {'>' if greater else '<'} {b} ? {lhs} : {rhs}")

    def int_abs(self, op: Operation) -> None:
        self.scalar_operands(op)
        x = self.expr(op.operands[0])
        # Parenthesised: a negative literal operand would make `--x`, a decrement.
        self.declare(op.results[0], op, f"{x} < 0 ? -({x}) : {x}")

    def floor_ceil_div(self, op: Operation) -> None:
        self.scalar_operands(op)
        a, b = (self.expr(v) for v in op.operands)
        t = op.results[0].type
        if _is_int(t, 1):
            self.unsupported(op, "it does not print division on i1")
        if op.name == "arith.floordivsi":
            adjust = f"{a} / {b} - ({a} % {b} != 0 && (({a} % {b} < 0) != ({b} < 0)))"
        else:
            adjust = f"{a} / {b} + ({a} % {b} != 0 && (({a} % {b} < 0) == ({b} < 0)))"
        self.declare(op.results[0], op, f"({self.c_type(t, op)})({adjust})")

    def cmpi(self, op: arith.CmpiOp) -> None:
        self.scalar_operands(op)
        predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        lhs, rhs = self.expr(op.lhs), self.expr(op.rhs)
        if predicate.startswith("u"):
            u = self.c_type(op.lhs.type, op, unsigned=True)
            lhs, rhs = _unsigned(lhs, u), _unsigned(rhs, u)
        self.declare(op.result, op, f"{lhs} {_CMPI[predicate]} {rhs}")

    def cmpf(self, op: arith.CmpfOp) -> None:
        self.scalar_operands(op)
        predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        t = op.lhs.type
        # Comparisons of f16 / bf16 are exact in float.
        a, b = _to_float(self.expr(op.lhs), t), _to_float(self.expr(op.rhs), t)
        expression = {
            "false": "false",
            "oeq": f"{a} == {b}",
            "ogt": f"{a} > {b}",
            "oge": f"{a} >= {b}",
            "olt": f"{a} < {b}",
            "ole": f"{a} <= {b}",
            "one": f"({a} < {b} || {a} > {b})",
            "ord": f"({a} == {a} && {b} == {b})",
            "ueq": f"!({a} < {b} || {a} > {b})",
            "ugt": f"!({a} <= {b})",
            "uge": f"!({a} < {b})",
            "ult": f"!({a} >= {b})",
            "ule": f"!({a} > {b})",
            "une": f"{a} != {b}",
            "uno": f"({a} != {a} || {b} != {b})",
            "true": "true",
        }[predicate]
        self.declare(op.result, op, expression)

    def select(self, op: arith.SelectOp) -> None:
        self.scalar_operands(op)
        self.declare(
            op.result, op, f"{self.expr(op.cond)} ? {self.expr(op.lhs)} : {self.expr(op.rhs)}"
        )

    def cast(self, op: Operation) -> None:
        self.scalar_operands(op)
        (source,) = op.operands
        (result,) = op.results
        s, t = source.type, result.type
        x = self.expr(source)
        c = self.c_type(t, op)
        name = op.name
        if name == "arith.extf":
            if _is_half(s):
                x = _to_float(x, s)
                expression = x if isinstance(t, Float32Type) else f"(double){x}"
            else:
                expression = f"(double){x}"
        elif name == "arith.truncf":
            if isinstance(t, Float32Type):
                expression = f"(float){x}"
            elif isinstance(s, Float64Type):
                expression = (
                    f"__double2half({x})"
                    if isinstance(t, Float16Type)
                    else f"__double2bfloat16({x})"
                )
            else:
                expression = _from_float(x, t)
        elif name in ("arith.sitofp", "arith.uitofp"):
            unsigned = name == "arith.uitofp"
            if _is_int(s, 1):
                x = f"(int){x}"
                s = IntegerType(32)
            if _bits(s) < 32:
                x = f"({'unsigned int' if unsigned else 'int'})({self.c_type(s, op, unsigned)}){x}"
                s = IntegerType(32)
            elif unsigned:
                x = f"({self.c_type(s, op, True)}){x}"
            if _is_half(t):
                prefix = "__" + ("u" if unsigned else "") + ("int" if _bits(s) == 32 else "ll")
                suffix = "half_rn" if isinstance(t, Float16Type) else "bfloat16_rn"
                expression = f"{prefix}2{suffix}({x})"
            else:
                expression = f"({c}){x}"
        elif name in ("arith.fptosi", "arith.fptoui"):
            if _is_int(t, 1):
                self.unsupported(op, "it does not convert floats to i1")
            x = _to_float(x, s)
            if name == "arith.fptoui":
                expression = f"({c})({self.c_type(t, op, True)}){x}"
            else:
                expression = f"({c}){x}"
        elif name in ("arith.extsi", "arith.extui"):
            if _is_int(s, 1):
                expression = f"-({c}){x}" if name == "arith.extsi" else f"({c}){x}"
            elif name == "arith.extui":
                expression = f"({c})({self.c_type(s, op, True)}){x}"
            else:
                expression = f"({c}){x}"
        elif name == "arith.trunci":
            expression = f"(bool)({x} & 1)" if _is_int(t, 1) else f"({c}){x}"
        elif name == "arith.index_cast":
            expression = f"({c}){x}"
        elif name == "arith.bitcast":
            expression = self.bitcast(op, x, s, t)
        else:  # pragma: no cover - the table lists only these
            self.unsupported(op, "unknown cast")
        self.declare(result, op, expression)

    def bitcast(self, op: Operation, x: str, s: Attribute, t: Attribute) -> str:
        if type(s) is type(t) and _bits(s) == _bits(t):
            return x
        table = {
            (Float32Type, 32): "__float_as_int",
            (32, Float32Type): "__int_as_float",
            (Float64Type, 64): "__double_as_longlong",
            (64, Float64Type): "__longlong_as_double",
            (Float16Type, 16): "__half_as_short",
            (16, Float16Type): "__short_as_half",
            (BFloat16Type, 16): "__bfloat16_as_short",
            (16, BFloat16Type): "__short_as_bfloat16",
        }
        key = (type(s) if _is_float(s) else _bits(s), type(t) if _is_float(t) else _bits(t))
        if key not in table:
            self.unsupported(op, f"it does not bitcast {s} to {t}")
        return f"{table[key]}({x})"


def _cast_printer(printer: _KernelPrinter, op: Operation) -> None:
    printer.cast(op)


_OP_PRINTERS: dict[type[Operation], Callable[[_KernelPrinter, Operation], None]] = {
    arith.ConstantOp: _KernelPrinter.constant,
    arith.AddfOp: _KernelPrinter.float_binary,
    arith.SubfOp: _KernelPrinter.float_binary,
    arith.MulfOp: _KernelPrinter.float_binary,
    arith.DivfOp: _KernelPrinter.float_binary,
    arith.NegfOp: _KernelPrinter.negf,
    arith.MaximumfOp: _KernelPrinter.max_min_f,
    arith.MinimumfOp: _KernelPrinter.max_min_f,
    arith.MaxnumfOp: _KernelPrinter.max_min_f,
    arith.MinnumfOp: _KernelPrinter.max_min_f,
    arith.AddiOp: _KernelPrinter.int_binary,
    arith.SubiOp: _KernelPrinter.int_binary,
    arith.MuliOp: _KernelPrinter.int_binary,
    arith.AndIOp: _KernelPrinter.int_binary,
    arith.OrIOp: _KernelPrinter.int_binary,
    arith.XOrIOp: _KernelPrinter.int_binary,
    arith.DivSIOp: _KernelPrinter.int_binary,
    arith.RemSIOp: _KernelPrinter.int_binary,
    arith.ShLIOp: _KernelPrinter.int_binary,
    arith.ShRSIOp: _KernelPrinter.int_binary,
    arith.DivUIOp: _KernelPrinter.unsigned_binary,
    arith.RemUIOp: _KernelPrinter.unsigned_binary,
    arith.ShRUIOp: _KernelPrinter.unsigned_binary,
    arith.MaxSIOp: _KernelPrinter.int_max_min,
    AbsIOp: _KernelPrinter.int_abs,
    arith.MinSIOp: _KernelPrinter.int_max_min,
    arith.MaxUIOp: _KernelPrinter.int_max_min,
    arith.MinUIOp: _KernelPrinter.int_max_min,
    arith.FloorDivSIOp: _KernelPrinter.floor_ceil_div,
    arith.CeilDivSIOp: _KernelPrinter.floor_ceil_div,
    arith.CmpiOp: _KernelPrinter.cmpi,
    arith.CmpfOp: _KernelPrinter.cmpf,
    arith.SelectOp: _KernelPrinter.select,
    arith.ExtFOp: _cast_printer,
    arith.TruncFOp: _cast_printer,
    arith.SIToFPOp: _cast_printer,
    arith.UIToFPOp: _cast_printer,
    arith.FPToSIOp: _cast_printer,
    arith.FPToUIOp: _cast_printer,
    arith.ExtSIOp: _cast_printer,
    arith.ExtUIOp: _cast_printer,
    arith.TruncIOp: _cast_printer,
    arith.IndexCastOp: _cast_printer,
    arith.BitcastOp: _cast_printer,
    memref.LoadOp: _KernelPrinter.load,
    memref.StoreOp: _KernelPrinter.store,
    scf.ForOp: _KernelPrinter.for_loop,
    scf.IfOp: _KernelPrinter.if_op,
    kernel.ThreadIdOp: lambda p, op: p.special_register(op, "threadIdx"),
    kernel.BlockIdOp: lambda p, op: p.special_register(op, "blockIdx"),
    kernel.BlockDimOp: lambda p, op: p.special_register(op, "blockDim"),
    kernel.GridDimOp: lambda p, op: p.special_register(op, "gridDim"),
    kernel.DynamicSharedOp: _KernelPrinter.dynamic_shared,
    kernel.BarrierOp: _KernelPrinter.barrier,
    kernel.ShuffleOp: _KernelPrinter.shuffle,
    kernel.AtomicOp: _KernelPrinter.atomic,
    kernel.VectorLoadOp: _KernelPrinter.vector_load,
    kernel.VectorStoreOp: _KernelPrinter.vector_store,
    vector.ExtractOp: _KernelPrinter.vector_extract,
    vector.InsertOp: _KernelPrinter.vector_insert,
    vector.BroadcastOp: _KernelPrinter.vector_broadcast,
    kernel.CpAsyncOp: _KernelPrinter.cp_async,
    kernel.CpAsyncCommitOp: _KernelPrinter.cp_async_commit,
    kernel.CpAsyncWaitOp: _KernelPrinter.cp_async_wait,
    kernel.LdmatrixOp: _KernelPrinter.ldmatrix,
    kernel.MmaSyncOp: _KernelPrinter.mma_sync,
    kernel.MbarrierInitOp: lambda p, op: p.mbarrier(op, str(op.arrival_count)),
    kernel.MbarrierArriveOp: _KernelPrinter.mbarrier_arrive,
    kernel.MbarrierArriveExpectTxOp: lambda p, op: p.mbarrier(op, str(op.tx_bytes)),
    kernel.MbarrierWaitOp: lambda p, op: p.mbarrier(op, f"(unsigned int){p.expr(op.parity)}"),
    kernel.TmaLoadOp: _KernelPrinter.tma_load,
    kernel.TmaStoreOp: _KernelPrinter.tma_store,
    kernel.TmaStoreCommitOp: lambda p, op: p.asm_statement("cp.async.bulk.commit_group;"),
    kernel.TmaStoreWaitOp: _KernelPrinter.tma_store_wait,
    kernel.FenceProxyAsyncOp: lambda p, op: p.asm_statement("fence.proxy.async.shared::cta;"),
    kernel.ClusterBarrierOp: _KernelPrinter.cluster_barrier,
    kernel.MapSharedRankOp: _KernelPrinter.map_shared_rank,
    kernel.WgmmaFenceOp: lambda p, op: p.asm_statement("wgmma.fence.sync.aligned;"),
    kernel.WgmmaCommitOp: lambda p, op: p.asm_statement("wgmma.commit_group.sync.aligned;"),
    kernel.WgmmaOp: _KernelPrinter.wgmma,
    kernel.WgmmaWaitOp: _KernelPrinter.wgmma_wait,
    kernel.SetmaxnregOp: _KernelPrinter.setmaxnreg,
    kernel.NamedBarrierOp: _KernelPrinter.named_barrier,
}
_MBARRIER_HELPERS: dict[type[Operation], str] = {
    kernel.MbarrierInitOp: "emmy_mbarrier_init",
    kernel.MbarrierArriveOp: "emmy_mbarrier_arrive",
    kernel.MbarrierArriveExpectTxOp: "emmy_mbarrier_arrive_expect_tx",
    kernel.MbarrierWaitOp: "emmy_mbarrier_wait",
}


# --- helper functions -----------------------------------------------------------------------

_C_TYPE_ORDER = ("float", "double", "__half", "__nv_bfloat16")


# The hardware's NaN-propagating max / min (PTX max.NaN, which every GpuTarget has), and the
# bits of each type.
_MAX_MIN_NAN = {
    "float": (
        'asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b))',
        'asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b))',
    ),
    "__half": ("r = __hmax_nan(a, b)", "r = __hmin_nan(a, b)"),
    "__nv_bfloat16": ("r = __hmax_nan(a, b)", "r = __hmin_nan(a, b)"),
}
_BITS = {
    "float": ("unsigned int", "__float_as_uint", "__uint_as_float", "0x7fffffffu", "0x80000000u"),
    "__half": ("unsigned short", "__half_as_ushort", "__ushort_as_half", "0x7fff", "0x8000"),
    "__nv_bfloat16": (
        "unsigned short",
        "__bfloat16_as_ushort",
        "__ushort_as_bfloat16",
        "0x7fff",
        "0x8000",
    ),
}


def _max_min_helper(name: str, maximum: bool) -> Callable[[_Features], str]:
    def text(features: _Features) -> str:
        operation = "maximumf" if maximum else "minimumf"
        zero_rule = "only when both operands are" if maximum else "when either operand is"
        parts = [
            f"// arith.{operation}: NaN when either operand is NaN, and -0.0 < +0.0 "
            f"({'fmaxf' if maximum else 'fminf'} would return the other operand of a NaN). A zero "
            f"result is -0.0 {zero_rule}, "
            f"whatever sign the instruction gives it.\n"
        ]
        for c in _C_TYPE_ORDER:
            if c not in features.helper_types[name]:
                continue
            if c in _MAX_MIN_NAN:
                word, to_bits, from_bits, magnitude, sign = _BITS[c]
                combine = "&" if maximum else "|"
                parts.append(
                    f"__device__ __forceinline__ {c} {name}({c} a, {c} b) {{\n"
                    f"  {c} r;\n"
                    f"  {_MAX_MIN_NAN[c][0 if maximum else 1]};\n"
                    f"  if (({to_bits}(r) & {magnitude}) != 0) return r;\n"
                    f"  return {from_bits}(static_cast<{word}>("
                    f"({to_bits}(a) {combine} {to_bits}(b)) & {sign}));\n"
                    f"}}\n"
                )
            else:  # double: PTX has no NaN-propagating max.f64
                pick = "b : a" if maximum else "a : b"
                compare = ">" if maximum else "<"
                parts.append(
                    f"__device__ __forceinline__ {c} {name}({c} a, {c} b) {{\n"
                    f"  if (a != a || b != b) return a + b;\n"
                    f"  if (a == b) return __double_as_longlong(a) < 0 ? {pick};\n"
                    f"  return a {compare} b ? a : b;\n"
                    f"}}\n"
                )
        return "".join(parts)

    return text


def _atomic_helper(name: str, combine: str) -> Callable[[_Features], str]:
    def text(features: _Features) -> str:
        parts = [
            f"// kernel.atomic {'max' if 'max' in name else 'min'} on floats: a compare-and-swap "
            f"loop storing {combine}(old, value); returns the old value.\n"
        ]
        for c in _C_TYPE_ORDER:
            if c not in features.helper_types[name]:
                continue
            word, to_word, from_word = {
                "float": ("unsigned int", "__float_as_uint", "__uint_as_float"),
                "double": ("unsigned long long", "__double_as_longlong", "__longlong_as_double"),
            }[c]
            cast = f"({word})" if c == "double" else ""
            parts.append(
                f"__device__ __forceinline__ {c} {name}({c}* address, {c} value) {{\n"
                f"  {word}* word = reinterpret_cast<{word}*>(address);\n"
                f"  {word} old = *word;\n"
                f"  {word} assumed;\n"
                f"  do {{\n"
                f"    assumed = old;\n"
                f"    old = atomicCAS(word, assumed, "
                f"{cast}{to_word}({combine}({from_word}(assumed), value)));\n"
                f"  }} while (old != assumed);\n"
                f"  return {from_word}(old);\n"
                f"}}\n"
            )
        return "".join(parts)

    return text


def _sources(value: SSAValue) -> list[SSAValue]:
    """The values `value` is computed from: an op's operands, and for the results of an op
    with regions (an `scf.if`, `scf.for`) what its regions yield besides; for a loop-carried
    block argument of an `scf.for`, its initial value and what the body yields for it."""
    if isinstance(value, OpResult):
        op = value.owner
        yielded = [
            block.last_op.operands[value.index]
            for region in op.regions
            for block in region.blocks
            if block.last_op is not None and len(block.last_op.operands) > value.index
        ]
        return [*op.operands, *yielded]
    assert isinstance(value, BlockArgument)
    loop = value.block.parent_op()
    if isinstance(loop, scf.ForOp) and value.index > 0:
        carried = value.index - 1
        return [loop.iter_args[carried], value.block.last_op.operands[carried]]
    return []


def _check_index_helper(features: _Features) -> str:
    return (
        "// A gathered index outside its dim stops the kernel at a device-side assert, as\n"
        "// PyTorch's kernels do, where the access would reach another buffer's memory.\n"
        'extern "C" __device__ void __assertfail(const char* message, const char* file,\n'
        "                                        unsigned int line, const char* function,\n"
        "                                        unsigned long char_size);\n"
        "__device__ __forceinline__ void emmy_check_index(long index, long size, "
        "const char* kernel) {\n"
        "  if (index < 0 || index >= size)\n"
        '    __assertfail("an index is outside its dim (emmy: a gathered index)", kernel, 0, '
        "kernel, 1);\n"
        "}\n"
    )


def _trap_index_helper(features: _Features) -> str:
    return (
        "// A gathered index outside its dim stops a kernel that issues wgmma with a trap (an\n"
        "// illegal instruction to CUDA): a call to the device assert there would serialise the\n"
        "// kernel's wgmmas.\n"
        "__device__ __forceinline__ void emmy_trap_index(long index, long size) {\n"
        '  if (index < 0 || index >= size) asm volatile("trap;");\n'
        "}\n"
    )


def _swizzle_helper(features: _Features) -> str:
    return (
        "// Element i of a swizzled shared buffer (#kernel.swizzle): its 16-byte chunk permuted\n"
        "// by its 128-byte row's place in the swizzle pattern.\n"
        "__device__ __forceinline__ long emmy_swizzle(long i, int shift, long mask, "
        "int chunk_shift) {\n"
        "  return i ^ (((i >> shift) & mask) << chunk_shift);\n"
        "}\n"
    )


def _round_tf32_helper(features: _Features) -> str:
    return (
        "// The tf32 words of f32 values, rounded to nearest (ties away from zero), as\n"
        "// mma.sync's tf32 operands take them.\n"
        "template <typename Fragment>\n"
        "__device__ __forceinline__ void emmy_round_tf32(unsigned int* words, "
        "const Fragment* values, int count) {\n"
        "  const float* f32 = reinterpret_cast<const float*>(values);\n"
        "  for (int i = 0; i < count; ++i) "
        'asm("cvt.rna.tf32.f32 %0, %1;\\n" : "=r"(words[i]) : "f"(f32[i]));\n'
        "}\n"
    )


# Warp instructions, `asm volatile` as CUTLASS writes them, so that the compiler neither drops
# nor moves them; the fragments are taken by address, and nvcc keeps them in registers.


def _ldmatrix_helper_name(matrices: int, transposed: bool) -> str:
    return f"emmy_ldmatrix_x{matrices}{'_trans' if transposed else ''}"


def _ldmatrix_helper(matrices: int, transposed: bool) -> Callable[[_Features], str]:
    def text(features: _Features) -> str:
        registers = ", ".join(f"%{i}" for i in range(matrices))
        outputs = ", ".join(f'"=r"(r[{i}])' for i in range(matrices))
        trans = ".trans" if transposed else ""
        return (
            f"// kernel.ldmatrix x{matrices}{' trans' if transposed else ''}: the warp loads "
            f"{matrices} matri{'x' if matrices == 1 else 'ces'} of 8 rows of 16 bytes from "
            f"shared memory; lane\n// 8i + j gives the address of row j of matrix i, and each "
            f"lane receives a 32-bit word of each\n// (two 16-bit elements, or an f32)"
            f"{', transposed' if transposed else ''}.\n"
            f"__device__ __forceinline__ void {_ldmatrix_helper_name(matrices, transposed)}("
            f"void* fragment, const void* row) {{\n"
            f"  unsigned int* r = static_cast<unsigned int*>(fragment);\n"
            f'  asm volatile("ldmatrix.sync.aligned.m8n8.x{matrices}{trans}.shared.b16 '
            f'{{{registers}}}, [%{matrices}];\\n"\n'
            f"               : {outputs}\n"
            f'               : "r"(static_cast<unsigned int>(__cvta_generic_to_shared(row)))\n'
            f'               : "memory");\n'
            f"}}\n"
        )

    return text


def _mma_helper(shape: str, element: str) -> Callable[[_Features], str]:
    """D = A * B + C on a warp's tile; tf32 operands are words that `emmy_round_tf32` made."""
    k = 16 if shape == "m16n8k16" else 8
    a_words, b_words = 16 * k // 32, 8 * k // 32
    if element != "tf32":  # two 16-bit elements to a register
        a_words, b_words = a_words // 2, b_words // 2
    operands = [f'"=f"(D[{i}])' for i in range(4)]
    operands += [f'"r"(A[{i}])' for i in range(a_words)] + [f'"r"(B[{i}])' for i in range(b_words)]
    operands += [f'"f"(C[{i}])' for i in range(4)]
    groups, first = [], 0
    for count in (4, a_words, b_words, 4):
        groups.append("{" + ", ".join(f"%{first + i}" for i in range(count)) + "}")
        first += count

    def text(features: _Features) -> str:
        rounded = (
            ";\n// A and B are tf32 words (f32 rounded by emmy_round_tf32)"
            if element == "tf32"
            else ""
        )
        return (
            f"// kernel.mma_sync {shape} on {element}: D = A * B + C on the warp's 16x8 tile, "
            f"accumulating in f32{rounded}.\n"
            f"__device__ __forceinline__ void emmy_mma_{shape}_{element}("
            f"void* d, const void* a, const void* b, const void* c) {{\n"
            f"  float* D = static_cast<float*>(d);\n"
            "  const unsigned int* A = static_cast<const unsigned int*>(a);\n"
            "  const unsigned int* B = static_cast<const unsigned int*>(b);\n"
            f"  const float* C = static_cast<const float*>(c);\n"
            f'  asm volatile("mma.sync.aligned.{shape}.row.col.f32.{element}.{element}.f32 '
            f'{", ".join(groups)};\\n"\n'
            f"               : {', '.join(operands[:4])}\n"
            f"               : {', '.join(operands[4:])});\n"
            f"}}\n"
        )

    return text


# Hopper: mbarriers, TMA and wgmma, `asm volatile` as CUTLASS writes them. Shared addresses are
# 32-bit (`__cvta_generic_to_shared`); a tensor map is the generic address of the kernel's
# `__grid_constant__` parameter.


def _shared_address_helper(features: _Features) -> str:
    return (
        "__device__ __forceinline__ unsigned int emmy_shared_address(const void* p) {\n"
        "  return static_cast<unsigned int>(__cvta_generic_to_shared(p));\n"
        "}\n"
    )


def _mbarrier_helper(
    name: str, comment: str, instruction: str, *parameters: str
) -> Callable[[_Features], str]:
    signature = ", ".join(
        ("unsigned long long* barrier", *(f"unsigned int {p}" for p in parameters))
    )
    inputs = ", ".join(('"r"(emmy_shared_address(barrier))', *(f'"r"({p})' for p in parameters)))

    def text(features: _Features) -> str:
        return (
            f"// {comment}\n"
            f"__device__ __forceinline__ void {name}({signature}) {{\n"
            f'  asm volatile("{instruction}" :: {inputs} : "memory");\n'
            f"}}\n"
        )

    return text


_MBARRIER_WAIT = (
    "// kernel.mbarrier_wait: spins until the phase of this parity has completed.\n"
    "__device__ __forceinline__ void emmy_mbarrier_wait(unsigned long long* barrier, "
    "unsigned int parity) {\n"
    '  asm volatile("{\\n"\n'
    '               ".reg .pred p;\\n"\n'
    '               "EMMY_MBARRIER_WAIT_%=:\\n"\n'
    '               "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\\n"\n'
    '               "@!p bra EMMY_MBARRIER_WAIT_%=;\\n"\n'
    '               "}\\n"\n'
    '               :: "r"(emmy_shared_address(barrier)), "r"(parity) : "memory");\n'
    "}\n"
)


_MAP_SHARED_RANK = (
    "// kernel.map_shared_rank: the same shared variable in the block of this rank of the\n"
    "// cluster, as a generic address (distributed shared memory).\n"
    "template <typename T>\n"
    "__device__ __forceinline__ T* emmy_map_shared_rank(T* p, unsigned int rank) {\n"
    "  unsigned long long address;\n"
    '  asm("mapa.u64 %0, %1, %2;\\n" : "=l"(address) : "l"(p), "r"(rank));\n'
    "  return reinterpret_cast<T*>(address);\n"
    "}\n"
)


def _tma_load_helper_name(rank: int, multicast: bool) -> str:
    return f"emmy_tma_load{'_multicast' if multicast else ''}_{rank}d"


def _tma_coordinates(rank: int, first: int) -> tuple[str, str, str]:
    """The parameters `int c0, ..` of a TMA helper of a rank-`rank` box (outer dimension
    first), and its asm's operands `%first, ..` and their inputs, innermost first as PTX
    takes them."""
    parameters = ", ".join(f"int c{i}" for i in range(rank))
    operands = ", ".join(f"%{first + i}" for i in range(rank))
    inputs = ", ".join(f'"r"(c{i})' for i in reversed(range(rank)))
    return parameters, operands, inputs


def _tma_load_helper(rank: int, multicast: bool) -> Callable[[_Features], str]:
    # The coordinates follow the mask, if any.
    coordinates, operands, inputs = _tma_coordinates(rank, 4 if multicast else 3)
    if multicast:
        comment = (
            f"// kernel.tma_load multicast of a rank-{rank} box at (c0, ..) into the shared\n"
            f"// memory of each block of the cluster in the mask, completing its bytes on each\n"
            f"// block's mbarrier.\n"
        )
        qualifier, mask, mask_operand = ".multicast::cluster", "unsigned short mask, ", ", %3"
        mask_input = '"h"(mask), '
    else:
        comment = (
            f"// kernel.tma_load of a rank-{rank} box at (c0, ..) into shared memory, completing\n"
            f"// its bytes on the mbarrier.\n"
        )
        qualifier = mask = mask_operand = mask_input = ""

    def text(features: _Features) -> str:
        return (
            f"{comment}"
            f"__device__ __forceinline__ void {_tma_load_helper_name(rank, multicast)}("
            f"void* destination, const void* map, unsigned long long* barrier, {mask}"
            f"{coordinates}) {{\n"
            f'  asm volatile("cp.async.bulk.tensor.{rank}d.shared::cluster.global.'
            f"mbarrier::complete_tx::bytes{qualifier} [%0], [%1, {{{operands}}}], "
            f'[%2]{mask_operand};\\n"\n'
            f'               :: "r"(emmy_shared_address(destination)), '
            f'"l"(reinterpret_cast<unsigned long long>(map)),\n'
            f'                  "r"(emmy_shared_address(barrier)), {mask_input}{inputs}\n'
            f'               : "memory");\n'
            f"}}\n"
        )

    return text


def _tma_store_helper_name(rank: int) -> str:
    return f"emmy_tma_store_{rank}d"


def _tma_store_helper(rank: int) -> Callable[[_Features], str]:
    coordinates, operands, inputs = _tma_coordinates(rank, 2)

    def text(features: _Features) -> str:
        return (
            f"// kernel.tma_store of a rank-{rank} box at (c0, ..) from shared memory, in this\n"
            f"// thread's open bulk-async group.\n"
            f"__device__ __forceinline__ void {_tma_store_helper_name(rank)}(const void* map, "
            f"const void* source, {coordinates}) {{\n"
            f'  asm volatile("cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group '
            f'[%0, {{{operands}}}], [%1];\\n"\n'
            f'               :: "l"(reinterpret_cast<unsigned long long>(map)), '
            f'"r"(emmy_shared_address(source)),\n'
            f"                  {inputs}\n"
            f'               : "memory");\n'
            f"}}\n"
        )

    return text


def _wgmma_descriptor_helper(features: _Features) -> str:
    return (
        "// The shared-memory matrix descriptor of a wgmma tile of 128-byte rows in the\n"
        "// 128-byte swizzle (PTX ISA, Matrix Descriptor; CUTLASS make_gmma_desc): start\n"
        "// address >> 4, leading byte offset >> 4 (K-major: unused, 16; MN-major: the stride\n"
        "// of the panels of 64 N-elements), stride byte offset 1024 >> 4 (8 rows), layout\n"
        "// type 1 (128-byte swizzle).\n"
        "__device__ __forceinline__ unsigned long long emmy_wgmma_descriptor(const void* tile, "
        "unsigned int leading_bytes) {\n"
        "  unsigned long long address = emmy_shared_address(tile);\n"
        "  return ((address & 0x3FFFF) >> 4) | ((unsigned long long)(leading_bytes >> 4) << 16) |\n"
        "         ((1024ull >> 4) << 32) | (1ull << 62);\n"
        "}\n"
    )


def _wgmma_element(element: Attribute) -> str:
    """The PTX type a wgmma multiplies tiles of `element` as (f32 as tf32)."""
    return "tf32" if isinstance(element, Float32Type) else str(element)


def _wgmma_helper_name(
    shape: str, element: str, b_mn_major: bool, a_in_registers: bool = False
) -> str:
    return (
        f"emmy_wgmma_{shape}_{element}"
        + ("_a_registers" if a_in_registers else "")
        + ("_b_mn_major" if b_mn_major else "")
    )


def _wgmma_helper(
    n: int, element: str, b_mn_major: bool, a_in_registers: bool
) -> Callable[[_Features], str]:
    registers = n // 2
    accumulators = ", ".join(f"%{i}" for i in range(registers))
    outputs = ", ".join(f'"+f"(d[{i}])' for i in range(registers))
    k = 8 if element == "tf32" else 16
    shape = f"m64n{n}k{k}"
    name = _wgmma_helper_name(shape, element, b_mn_major, a_in_registers)
    b_major = "an N-major" if b_mn_major else "a K-major"
    if a_in_registers:
        # A is four .b32 registers of two elements each; the form has no imm-trans-a.
        a_operand = "{" + ", ".join(f"%{registers + i}" for i in range(4)) + "}"
        b_index, a_inputs = registers + 4, "".join(f'"r"(A[{i}]), ' for i in range(4))
        a_parameter, a_is, transposes = "const void* a", "A in\n// registers", "1, 1"
        a_words = "  const unsigned int* A = static_cast<const unsigned int*>(a);\n"
        b_is = f"B {b_major} tile in shared memory (a descriptor)"
    else:
        a_operand, b_index, a_inputs = f"%{registers}", registers + 1, '"l"(a), '
        a_parameter, a_is, transposes = "unsigned long long a", "A a\n// K-major", "1, 1, 0"
        a_words = ""
        b_is = f"B {b_major} tile in shared memory (descriptors)"
    # The scales of A and B, then the transposes (of A from shared memory, and of B), which
    # PTX has none of for tf32.
    if element == "tf32":
        transposes = "1, 1"
    else:
        transposes += f", {int(b_mn_major)}"

    def text(features: _Features) -> str:
        return (
            f"// kernel.wgmma {shape} on {element}: the warpgroup starts D += A * B, "
            f"{a_is} and {b_is}, D in f32 registers.\n"
            f"__device__ __forceinline__ void {name}(float* d, "
            f"{a_parameter}, unsigned long long b) {{\n"
            f"{a_words}"
            f'  asm volatile("{{\\n"\n'
            f'               ".reg .pred p;\\n"\n'
            f'               "setp.ne.b32 p, %{b_index + 1}, 0;\\n"\n'
            f'               "wgmma.mma_async.sync.aligned.{shape}.f32.{element}.{element} '
            f"{{{accumulators}}}, {a_operand}, %{b_index}, p, {transposes};"
            f'\\n"\n'
            f'               "}}\\n"\n'
            f"               : {outputs}\n"
            f'               : {a_inputs}"l"(b), "r"(1));\n'
            f"}}\n"
        )

    return text


def _approximates_functions(op: Operation) -> bool:
    flags = op.properties.get("fastmath")
    approximate = arith.FastMathFlag.APPROX_FUNC
    return isinstance(flags, arith.FastMathFlagsAttr) and approximate in flags.data


def _exp2_approx_helper(features: _Features) -> str:
    return (
        "// math.exp2 fastmath<afn>: the hardware's exp2 alone (2 ulp); exp2f scales the inputs\n"
        "// whose results are below 2^-126 around it, which this flushes to 0.\n"
        "__device__ __forceinline__ float emmy_exp2_approx(float x) {\n"
        "  float r;\n"
        '  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));\n'
        "  return r;\n"
        "}\n"
    )


def _atomic_acq_rel_helper(kind: str) -> Callable[[_Features], str]:
    def text(features: _Features) -> str:
        return (
            f"// kernel.atomic {kind} acq_rel: atom.acq_rel at the GPU's scope, which CUDA's "
            f"atomic{kind.title()} (relaxed) is not.\n"
            f"__device__ __forceinline__ int emmy_atomic_{kind}_acq_rel(int* address, "
            f"int value) {{\n"
            f"  int old;\n"
            f'  asm volatile("atom.acq_rel.gpu.{kind}.u32 %0, [%1], %2;" : "=r"(old) '
            f': "l"(address), "r"(value) : "memory");\n'
            f"  return old;\n"
            f"}}\n"
        )

    return text


def _fence_registers_helper(features: _Features) -> str:
    return (
        "// Keeps nvcc from moving reads of wgmma accumulators before their wgmma.wait_group.\n"
        "template <int N>\n"
        "__device__ __forceinline__ void emmy_fence_registers(float* r) {\n"
        "#pragma unroll\n"
        '  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i]) :: "memory");\n'
        "}\n"
    )


_HELPERS: dict[str, Callable[[_Features], str]] = {
    "emmy_maximumf": _max_min_helper("emmy_maximumf", True),
    "emmy_minimumf": _max_min_helper("emmy_minimumf", False),
    "emmy_atomic_maximumf": _atomic_helper("emmy_atomic_maximumf", "emmy_maximumf"),
    "emmy_atomic_minimumf": _atomic_helper("emmy_atomic_minimumf", "emmy_minimumf"),
    "emmy_atomic_add_acq_rel": _atomic_acq_rel_helper("add"),
    "emmy_atomic_inc_acq_rel": _atomic_acq_rel_helper("inc"),
    "emmy_swizzle": _swizzle_helper,
    "emmy_check_index": _check_index_helper,
    "emmy_trap_index": _trap_index_helper,
    "emmy_round_tf32": _round_tf32_helper,
    "emmy_exp2_approx": _exp2_approx_helper,
    **{
        _ldmatrix_helper_name(matrices, transposed): _ldmatrix_helper(matrices, transposed)
        for matrices in (1, 2, 4)
        for transposed in (False, True)
    },
    **{
        f"emmy_mma_{shape}_{element}": _mma_helper(shape, element)
        for shape, element in (
            ("m16n8k16", "f16"),
            ("m16n8k16", "bf16"),
            ("m16n8k8", "f16"),
            ("m16n8k8", "bf16"),
            ("m16n8k8", "tf32"),
        )
    },
    "emmy_shared_address": _shared_address_helper,
    "emmy_mbarrier_init": _mbarrier_helper(
        "emmy_mbarrier_init",
        "kernel.mbarrier_init: the arrivals that complete each phase.",
        "mbarrier.init.shared::cta.b64 [%0], %1;\\n",
        "arrivals",
    ),
    "emmy_mbarrier_arrive": _mbarrier_helper(
        "emmy_mbarrier_arrive",
        "kernel.mbarrier_arrive: one arrival on the current phase.",
        "mbarrier.arrive.shared::cta.b64 _, [%0];\\n",
    ),
    "emmy_mbarrier_arrive_expect_tx": _mbarrier_helper(
        "emmy_mbarrier_arrive_expect_tx",
        "kernel.mbarrier_arrive_expect_tx: one arrival; the phase also waits for these bytes.",
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n",
        "bytes",
    ),
    "emmy_mbarrier_arrive_cluster": _mbarrier_helper(
        "emmy_mbarrier_arrive_cluster",
        "kernel.mbarrier_arrive rank: one arrival on the same mbarrier of the cluster's block "
        "of this rank.",
        "{\\n.reg .b32 remote;\\nmapa.shared::cluster.u32 remote, %0, %1;\\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\\n}\\n",
        "rank",
    ),
    "emmy_mbarrier_wait": lambda features: _MBARRIER_WAIT,
    **{
        _tma_load_helper_name(rank, multicast): _tma_load_helper(rank, multicast)
        for multicast in (False, True)
        for rank in range(1, 6)
    },
    **{_tma_store_helper_name(rank): _tma_store_helper(rank) for rank in range(1, 6)},
    "emmy_wgmma_descriptor": _wgmma_descriptor_helper,
    **{
        _wgmma_helper_name(f"m64n{n}k16", element, b_mn_major, a_in_registers): _wgmma_helper(
            n, element, b_mn_major, a_in_registers
        )
        for n in range(8, 257, 8)
        for element in ("bf16", "f16")
        for a_in_registers in (False, True)
        for b_mn_major in (False, True)
    },
    **{
        _wgmma_helper_name(f"m64n{n}k8", "tf32", False): _wgmma_helper(n, "tf32", False, False)
        for n in range(8, 257, 8)
    },
    "emmy_fence_registers": _fence_registers_helper,
    "emmy_map_shared_rank": lambda features: _MAP_SHARED_RANK,
}
_HELPER_ORDER = tuple(_HELPERS)
