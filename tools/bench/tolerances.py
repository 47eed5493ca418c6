"""How close an output must be to PyTorch eager's to pass, by dtype; no PyTorch import needed.

    tolerance("bfloat16", allows_tf32=False, largest=3.0)   # (0.02, 0.02): (rtol, atol)
    tolerance(torch.float32, allows_tf32=True, largest=8.0) # (1e-4, 0.04): tf32's atol

An element passes when `|got - want| <= atol + rtol * |want|`, the rule of `torch.allclose`:
`emmy run` checks every level with it (`emmy.tools.bench.differential`), the GPU checks do too
(`emmy.tools.bench.timing`), and `emmy run --help` and its results table state it (`summary`,
`rule`). The table's relative error is `|got - want| / (|want| + atol)`, which may exceed rtol
for an element that passes: one near zero, which atol covers.
"""

from __future__ import annotations

from collections.abc import Iterable

TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-5),
    "float64": (1e-4, 1e-5),
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 2e-2),
}
"""(rtol, atol) by output dtype name; other dtypes (integers, bool) must match exactly. fp32
allows for a different order of summation than PyTorch's kernels; the 16-bit bounds are a few
units in the last place of their 11- and 8-bit mantissas."""

TF32_TOLERANCE = 5e-3
"""How far an f32 output may be from eager's where f32 products may run on tf32 (a module's
float32 matmul precision "high" or "medium"), as a fraction of the output's largest
magnitude. tf32 keeps 10 fraction bits of each factor: rounded to nearest (mma_sync's
`cvt.rna`, relative error up to 2^-11) or truncated (what a tf32 wgmma may do to the f32 it
reads from shared memory, and the SIMT emulator does: up to 2^-10). A sum of K products of
random signs is then off by about 2^-10 sqrt(K) times a typical product, where the largest
output is some 3 sqrt(K) times it: some 3e-4 of it; a chain of products compounds that (a
SwiGLU MLP, two products on tf32 wgmma in the emulator, came out 2.1-2.2e-3 off), and 5e-3
leaves room for the largest of many errors while a fragment in the wrong place, off by whole
products, still fails."""


def dtype_name(dtype: object) -> str:
    """`float32` for `torch.float32` or for `"float32"`."""
    return str(dtype).removeprefix("torch.")


def tolerance(dtype: object, allows_tf32: bool, largest: float) -> tuple[float, float]:
    """(rtol, atol) of an output of `dtype` (a torch dtype or its name) whose largest magnitude
    is `largest`, where f32 products may run on tf32 or not (see TF32_TOLERANCE)."""
    name = dtype_name(dtype)
    rtol, atol = TOLERANCES.get(name, (0.0, 0.0))
    if allows_tf32 and name == "float32":
        atol = max(atol, TF32_TOLERANCE * largest)
    return rtol, atol


def summary() -> str:
    """Every dtype's tolerance, for `emmy run --help`."""
    by_dtype = "; ".join(f"{name} {rtol:g}, {atol:g}" for name, (rtol, atol) in TOLERANCES.items())
    return (
        f"an element passes within atol + rtol * |eager| (rtol, atol by dtype: {by_dtype}; "
        f"integers and booleans exactly; f32 within {TF32_TOLERANCE:g} of the output's largest "
        "magnitude where the program's float32 matmul precision allows tf32)"
    )


def rule(dtypes: Iterable[object], allows_tf32: bool) -> str:
    """The rule the outputs of `dtypes` are checked by, printed under `emmy run`'s table."""
    limits = []
    for name in dict.fromkeys(map(dtype_name, dtypes)):
        if name not in TOLERANCES:
            limits.append(f"{name} exactly")
            continue
        rtol, atol = TOLERANCES[name]
        if allows_tf32 and name == "float32":
            limits.append(f"{name} rtol {rtol:g}, atol {TF32_TOLERANCE:g} of its largest |eager|")
        else:
            limits.append(f"{name} rtol {rtol:g}, atol {atol:g}")
    return (
        f"an element passes within atol + rtol * |eager| ({'; '.join(limits)}); rel error is\n"
        "|error| / (|eager| + atol), so an element near 0 may pass with a rel error above rtol"
    )
