"""Differential checking: a program at every level against PyTorch eager, on the same inputs.

    reports = check_levels(program, torch_ir, EXECUTABLE_LEVELS, seed=0)   # `emmy run`
    [(r.level, r.passed) for r in reports]     # [("torch", True), ("prim", True), ...]

Each run draws fresh random inputs shaped like the program's example inputs (floats from a
standard normal; integers uniformly within the example's range, so indices stay valid;
booleans at random), runs the eager module on them, and runs each level's host function on
the same values through the CPU interpreter. A level passes when every output matches within
the tolerance of its dtype (`TOLERANCES`), or for f32 outputs of a program whose float32
matmul precision allows tf32, within tf32's (`TF32_TOLERANCE`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from xdsl.dialects.builtin import ModuleOp

from emmy.dialects import make_context
from emmy.dialects.torch import float32_matmul_precision
from emmy.passes.pipelines import LEVELS, passes_to, run_passes
from emmy.tools.diagnostics import verify
from emmy.tools.frontend.importer import forward_arguments
from emmy.tools.frontend.program import Program
from emmy.tools.interpreter.run import run_module

TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float32: (1e-4, 1e-5),
    torch.float64: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (2e-2, 2e-2),
}
"""(rtol, atol) by output dtype; other dtypes (integers, bool) must match exactly. fp32
allows for a different order of summation than PyTorch's kernels; the 16-bit bounds are a few
units in the last place of their 11- and 8-bit mantissas."""

TF32_TOLERANCE = 1e-3
"""How far an f32 output may be from eager's where f32 products may run on tf32 (a module's
float32 matmul precision "high" or "medium"), as a fraction of the output's largest
magnitude: tf32 rounds each factor to 10 fraction bits (relative error up to 2^-11), so a sum
of K products of random signs is off by about 2^-11 sqrt(K) times a typical product, while
the largest output is some 3 sqrt(K) times it: about 1e-4 of it, and 1e-3 leaves room for the
largest of many errors."""


def tolerance(dtype: torch.dtype, allows_tf32: bool, largest: float) -> tuple[float, float]:
    """(rtol, atol) of an output of `dtype` whose largest magnitude is `largest`, where f32
    products may run on tf32 or not (see TF32_TOLERANCE)."""
    rtol, atol = TOLERANCES.get(dtype, (0.0, 0.0))
    if allows_tf32 and dtype == torch.float32:
        atol = max(atol, TF32_TOLERANCE * largest)
    return rtol, atol


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


def random_inputs(program: Program, seed: int) -> list[torch.Tensor]:
    """Fresh inputs shaped like the example inputs (flattened, in signature order)."""
    generator = torch.Generator().manual_seed(seed)
    examples = torch.utils._pytree.tree_leaves((program.example_args, program.example_kwargs))
    inputs = []
    for example in examples:
        if not isinstance(example, torch.Tensor):
            inputs.append(example)
        elif example.dtype == torch.bool:
            inputs.append(torch.randint(0, 2, example.shape, generator=generator).bool())
        elif example.dtype.is_floating_point:
            inputs.append(torch.randn(example.shape, generator=generator).to(example.dtype))
        else:
            low, high = int(example.min()), int(example.max())
            inputs.append(
                torch.randint(low, high + 1, example.shape, generator=generator).to(example.dtype)
            )
    return inputs


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
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
    inputs = random_inputs(program, seed)
    args, kwargs = torch.utils._pytree.tree_unflatten(
        inputs, torch.utils._pytree.tree_structure((program.example_args, program.example_kwargs))
    )
    with torch.no_grad():
        reference = torch.utils._pytree.tree_leaves(program.module(*args, **kwargs))
    arguments = [to_numpy(a) for a in forward_arguments(program.exported, inputs)]
    allows_tf32 = float32_matmul_precision(torch_ir) != "highest"
    reports = []
    for level in levels:
        outputs = run_module(lower(torch_ir, level), arguments)
        reports.append(LevelReport(level, *compare(outputs, reference, allows_tf32)))
    return reports
