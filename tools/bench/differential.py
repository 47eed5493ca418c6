"""Differential checking: a program at every level against PyTorch eager, on the same inputs.

    reports = check_levels(program, torch_ir, EXECUTABLE_LEVELS, seed=0)   # `emmy run`
    [(r.level, r.passed) for r in reports]     # [("torch", True), ("prim", True), ...]

Each run draws fresh random inputs shaped like the program's example inputs (floats from a
standard normal; an integer input that indexes a table, such as an embedding's indices,
uniformly below the table's size, other integers within the example's range; booleans at
random), runs the eager module on them, and runs each level's host function on the same
values through the CPU interpreter. A level passes when every output matches within the
tolerance of its dtype (`emmy.tools.bench.tolerances`), or for f32 outputs of a program whose
float32 matmul precision allows tf32, within tf32's.

PyTorch and the interpreter are imported by the functions that use them: `emmy compile` lowers
with `lower` and loads neither.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from emmy.dialects import make_context
from emmy.dialects.torch import float32_matmul_precision
from emmy.passes.pipelines import LEVELS, passes_to, run_passes
from emmy.tools.bench.tolerances import tolerance
from emmy.tools.diagnostics import verify

if TYPE_CHECKING:
    import torch

    from emmy.tools.frontend.program import Program

EXECUTABLE_LEVELS = LEVELS
"""Levels the CPU interpreter runs: all of them. Torch IR runs on PyTorch's own CPU ops
(`emmy.tools.interpreter.torch_ops`), so a mismatch at the torch level names the importer, and one
that first appears at prim names decompose-torch."""


def lower(torch_ir: ModuleOp, level: str) -> ModuleOp:
    """A copy of a Torch IR program, taken down to `level`."""
    module = torch_ir.clone()
    run_passes(make_context(), module, passes_to(level), f"torch-to-{level}")
    verify(module)
    return module


def random_inputs(program: Program, torch_ir: ModuleOp, seed: int) -> list[torch.Tensor]:
    """Fresh inputs shaped like the example inputs (flattened, in signature order); an integer
    input of `torch_ir`'s `@forward` that indexes a dim (`index_bounds`) stays below its size."""
    import torch

    from emmy.tools.interpreter.index_bounds import index_bounds
    from emmy.tools.interpreter.run import find_function

    forward = find_function(torch_ir, "forward")
    bounds = index_bounds(forward)
    # The user's tensors are @forward's arguments marked emmy.input, in order.
    input_arguments = iter(
        number for number, attrs in enumerate(forward.arg_attrs) if "emmy.input" in attrs.data
    )
    generator = torch.Generator().manual_seed(seed)
    examples = torch.utils._pytree.tree_leaves((program.example_args, program.example_kwargs))
    inputs = []
    for example in examples:
        if not isinstance(example, torch.Tensor):
            inputs.append(example)
            continue
        bound = bounds.get(next(input_arguments))
        if example.dtype == torch.bool:
            inputs.append(torch.randint(0, 2, example.shape, generator=generator).bool())
        elif example.dtype.is_floating_point:
            inputs.append(torch.randn(example.shape, generator=generator).to(example.dtype))
        elif example.dtype.is_complex:
            inputs.append(torch.randn(example.shape, generator=generator, dtype=example.dtype))
        else:
            low, high = (0, bound - 1) if bound else (int(example.min()), int(example.max()))
            inputs.append(
                torch.randint(low, high + 1, example.shape, generator=generator).to(example.dtype)
            )
    return inputs


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    import torch

    # bf16 has no numpy dtype: the interpreter holds it as float32 values rounded to bf16.
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.detach().numpy().copy()


@dataclass(frozen=True)
class LevelReport:
    level: str
    max_abs_error: float
    max_rel_error: float
    passed: bool


def compare(
    outputs: list[np.ndarray], reference: list[torch.Tensor], allows_tf32: bool = False
) -> tuple[float, float, bool]:
    """Largest absolute and relative errors over all outputs, and whether all are in tolerance
    (`tolerance`)."""
    max_abs = max_rel = 0.0
    passed = len(outputs) == len(reference)
    for got, want_tensor in zip(outputs, reference):
        want = to_numpy(want_tensor).astype(np.float64)
        got = np.asarray(got, np.float64)
        if got.shape != want.shape:
            return float("inf"), float("inf"), False
        largest = float(np.nanmax(np.abs(want), initial=0.0))
        rtol, atol = tolerance(want_tensor.dtype, allows_tf32, largest)
        with np.errstate(invalid="ignore"):  # inf - inf of equal infinities, which `same` takes
            error = np.abs(got - want)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        error = np.where(same, 0.0, error)
        if error.size:
            max_abs = max(max_abs, float(error.max()))
            max_rel = max(max_rel, float((error / (np.abs(want) + atol + 1e-30)).max()))
        passed &= bool(np.all(same | (error <= atol + rtol * np.abs(want))))
    return max_abs, max_rel, passed


def check_levels(
    program: Program, torch_ir: ModuleOp, levels: tuple[str, ...], seed: int
) -> list[LevelReport]:
    """Runs each level on one set of fresh random inputs and compares it with eager, f32
    outputs within tf32's tolerance where the program's float32 matmul precision allows it."""
    return list(level_reports(program, torch_ir, levels, seed))


def level_reports(
    program: Program, torch_ir: ModuleOp, levels: tuple[str, ...], seed: int
) -> Iterator[LevelReport]:
    """`check_levels` a level at a time: each report as soon as its level has run (`emmy run`
    shows its progress by them). The first also runs eager."""
    import torch

    from emmy.tools.frontend.importer import forward_arguments
    from emmy.tools.interpreter.run import run_module

    inputs = random_inputs(program, torch_ir, seed)
    args, kwargs = torch.utils._pytree.tree_unflatten(
        inputs, torch.utils._pytree.tree_structure((program.example_args, program.example_kwargs))
    )
    with torch.no_grad():
        reference = torch.utils._pytree.tree_leaves(program.module(*args, **kwargs))
    arguments = [to_numpy(a) for a in forward_arguments(program.exported, inputs)]
    allows_tf32 = float32_matmul_precision(torch_ir) != "highest"
    for level in levels:
        outputs = run_module(lower(torch_ir, level), arguments)
        yield LevelReport(level, *compare(outputs, reference, allows_tf32))
