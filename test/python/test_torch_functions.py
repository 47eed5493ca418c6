"""Torch IR executed on the CPU (`emmy.tools.interpreter.torch_ops`), checked against PyTorch eager.

Each program is loaded with the frontend, imported to Torch IR and run at the torch level on
fresh random inputs; eager runs the module on the same inputs. Torch IR runs the same aten
ops as eager, so the results agree almost bit for bit:
- fp32 (and f16/f64): rtol = 1e-6, atol = 1e-7. What can differ is the last bit of a few
  elements: the importer writes a Python scalar as a 0-d tensor constant (eager special-cases
  some scalar forms, e.g. `x ** 0.5`), and contiguous operands can take another vectorized path
  than eager's strided views.
- bf16: at most one bf16 ulp (2^-7 relative to the power of two below the value), for the same
  reasons plus one more: eager computes `bf16_tensor * 0.1` with the scalar in f32, Torch IR
  with the scalar rounded to a bf16 constant.
- Integer and boolean results: exactly.

Hand-written IR covers what the importer never emits (an empty reduction, `causal` with a
mask, an integer clamp) and the result-type check.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from corpus import PROGRAMS, fresh_like, source
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from emmy.dialects import make_context
from emmy.dialects import torch as t
from emmy.dialects.torch import Torch
from emmy.tools.frontend.importer import forward_arguments
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter.run import ExecutionError, run_module
from emmy.tools.interpreter.torch_ops import TORCH_IMPLS, TorchFunctions

FRESH_SEED = 4321

OWN_PROGRAMS: dict[str, str] = {
    "scalar_forms": """
class Scalars(nn.Module):
    def forward(self, x):
        return (torch.add(x, x, alpha=3) - 2 * x + torch.rsub(x, 1.5) + x.reciprocal()
                + x.square() + x / 7 + torch.clamp(x, max=0.25) + F.relu(x - 0.1))
Scalars()(torch.randn(3, 9, dtype=DT))
""",
    "masked_fill_compare": """
class Fill(nn.Module):
    def forward(self, x, y):
        keep = torch.where(x == 0.5, x == 0.5, x >= y)
        return x.masked_fill(x < -0.2, -1.0), keep, x != y, torch.where(keep, x, 0.0)
Fill()(torch.randn(5, 6, dtype=DT), torch.randn(6, dtype=DT))
""",
    "reductions_default": """
class Reduce(nn.Module):
    def forward(self, x):
        return (x.sum(), x.mean(), torch.amax(x, dim=(0, 2), keepdim=True), x.max(), x.min(),
                torch.var(x), torch.var(x, dim=(0, 1), unbiased=False, keepdim=True))
Reduce()(torch.randn(3, 4, 5, dtype=DT))
""",
    "attention_variants": """
class Attention(nn.Module):
    def forward(self, q, k, v):
        a = F.scaled_dot_product_attention(q, k, v, scale=0.2)
        b = F.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True,
                                           is_causal=True)
        return a + b
Attention()(torch.randn(1, 4, 5, 8, dtype=DT), torch.randn(1, 4, 5, 8, dtype=DT),
            torch.randn(1, 4, 5, 8, dtype=DT))
""",
    "vector_matmul_views": """
class Vec(nn.Module):
    def forward(self, m, v):
        a, b = (m @ v).chunk(2, dim=0)
        c = torch.matmul(v, m.t())
        return a * b, c[1], m.select(1, -1).unsqueeze(-1).expand(6, 3), m.split([1, 3], dim=1)[1]
Vec()(torch.randn(6, 4, dtype=DT), torch.randn(4, dtype=DT))
""",
    "norms_without_affine": """
class Norms(nn.Module):
    def forward(self, x):
        return (F.rms_norm(x, (4, 8)), F.layer_norm(x, (8,), eps=1e-3),
                F.rms_norm(x, (8,), eps=0.5) + F.gelu(x, approximate="tanh"))
Norms()(torch.randn(2, 4, 8, dtype=DT))
""",
    "float_mask_causal_attention": """
class FloatMask(nn.Module):
    def forward(self, q, k, v, bias):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias), F.log_softmax(q, dim=1)
FloatMask()(torch.randn(3, 4, 8, dtype=DT), torch.randn(3, 6, 8, dtype=DT),
            torch.randn(3, 6, 2, dtype=DT), torch.randn(1, 6, dtype=DT))
""",
}

INTEGER_PROGRAMS: dict[str, str] = {
    "integer_arithmetic": """
class Ints(nn.Module):
    def forward(self, ids, x):
        shifted = (ids * 3 + 1 - ids.abs()).clamp(min=2, max=40)
        return (shifted, shifted.sum(dim=1), ids.amax(dim=0), torch.maximum(ids, 9 - ids),
                (ids > 7).sum(dim=1), ids.to(torch.float32) / 2, (x * 3).to(torch.int32),
                x.to(torch.bool), -ids, torch.pow(ids, 2))
Ints()(torch.randint(0, 16, (4, 5)), torch.randn(4, 5))
""",
}

FLOAT_DTYPES = ("float32", "bfloat16")


def program_cases() -> list:
    cases = []
    for name in PROGRAMS:
        cases += [
            pytest.param(source(name, dtype), dtype, id=f"{name}-{dtype}") for dtype in FLOAT_DTYPES
        ]
    for name, text in OWN_PROGRAMS.items():
        dtypes = (*FLOAT_DTYPES, "float16", "float64") if name == "scalar_forms" else FLOAT_DTYPES
        cases += [
            pytest.param(text.replace("DT", f"torch.{dtype}"), dtype, id=f"{name}-{dtype}")
            for dtype in dtypes
        ]
    cases += [pytest.param(text, "int64", id=name) for name, text in INTEGER_PROGRAMS.items()]
    return cases


# --- helpers ---------------------------------------------------------------------------------


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    tensor = tensor.detach()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def bf16_ulp(values: np.ndarray) -> np.ndarray:
    """The spacing of bf16 numbers at each value: 2^(exponent - 7)."""
    magnitude = np.maximum(np.abs(values.astype(np.float64)), np.finfo(np.float32).tiny)
    return np.exp2(np.floor(np.log2(magnitude)) - 7)


def assert_matches(got: np.ndarray, want: torch.Tensor, index: int) -> None:
    expected = to_numpy(want)
    assert got.shape == expected.shape, f"output #{index}: shape {got.shape} != {expected.shape}"
    assert got.dtype == expected.dtype, f"output #{index}: dtype {got.dtype} != {expected.dtype}"
    message = f"output #{index} ({want.dtype})"
    if want.dtype == torch.bfloat16:
        with np.errstate(invalid="ignore"):  # inf - inf of equal infinities, which `same` takes
            error = np.abs(got.astype(np.float64) - expected)
        same = (got == expected) | (np.isnan(got) & np.isnan(expected))
        within = same | (error <= bf16_ulp(expected))
        assert within.all(), f"{message}: {np.count_nonzero(~within)} elements off by > 1 ulp"
    elif want.dtype.is_floating_point:
        np.testing.assert_allclose(
            got, expected, rtol=1e-6, atol=1e-7, equal_nan=True, err_msg=message
        )
    else:
        np.testing.assert_array_equal(got, expected, err_msg=message)


def run_torch_level(
    text: str, seed: int = FRESH_SEED
) -> tuple[list[np.ndarray], list[torch.Tensor]]:
    """The program's Torch IR and its eager module on the same fresh inputs."""
    program = load_program(text, "<test>")
    module = program.to_torch_ir()
    generator = torch.Generator().manual_seed(seed)
    leaves, spec = torch.utils._pytree.tree_flatten((program.example_args, program.example_kwargs))
    fresh = [fresh_like(v, generator) if isinstance(v, torch.Tensor) else v for v in leaves]
    args, kwargs = torch.utils._pytree.tree_unflatten(fresh, spec)
    with torch.no_grad():
        expected = torch.utils._pytree.tree_leaves(program.module(*args, **kwargs))
    inputs = [to_numpy(v) for v in forward_arguments(program.exported, fresh)]
    return run_module(module, inputs), expected


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


# --- programs against eager -------------------------------------------------------------------


def test_every_torch_op_has_an_implementation() -> None:
    assert set(TORCH_IMPLS) == set(Torch.operations)
    registered = {op_type for op_type, _ in TorchFunctions._impls()}
    assert registered == set(Torch.operations)


@pytest.mark.parametrize("text, dtype", program_cases())
def test_torch_level_matches_eager(text: str, dtype: str) -> None:
    actual, expected = run_torch_level(text)
    assert len(actual) == len(expected)
    for index, (got, want) in enumerate(zip(actual, expected)):
        assert_matches(got, want, index)


# --- hand-written Torch IR ---------------------------------------------------------------------


def test_empty_reduction_dims_reduce_nothing() -> None:
    # aten reads dim=[] as "every dim"; Torch IR's dims are explicit, so [] reduces nothing.
    module = parse(
        """
        func.func @forward(%x: tensor<2x3xf32>)
            -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
          %s = torch.sum %x dims [] : tensor<2x3xf32> -> tensor<2x3xf32>
          %m = torch.amax %x dims [] keepdim : tensor<2x3xf32> -> tensor<2x3xf32>
          %v = torch.var %x dims [] correction 0 : tensor<2x3xf32> -> tensor<2x3xf32>
          func.return %s, %m, %v : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
        }
        """
    )
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    total, largest, variance = run_module(module, [x])
    np.testing.assert_array_equal(total, x)
    np.testing.assert_array_equal(largest, x)
    np.testing.assert_array_equal(variance, np.zeros_like(x))


def test_causal_attention_with_a_mask_keeps_both() -> None:
    module = parse(
        """
        func.func @forward(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x5x4xf32>,
                           %m: tensor<3x5xi1>, %b: tensor<3x5xf32>)
            -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
          %x = torch.sdpa %q, %k, %v mask %m causal scale 3.000000e-01
            : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32> mask tensor<3x5xi1>
            -> tensor<2x3x4xf32>
          %y = torch.sdpa %q, %k, %v mask %b causal scale 3.000000e-01
            : tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32> mask tensor<3x5xf32>
            -> tensor<2x3x4xf32>
          func.return %x, %y : tensor<2x3x4xf32>, tensor<2x3x4xf32>
        }
        """
    )
    rng = np.random.default_rng(1)
    shapes = ((2, 3, 4), (2, 5, 4), (2, 5, 4), (3, 5))
    q, k, v, b = (rng.standard_normal(shape).astype(np.float32) for shape in shapes)
    mask = rng.random((3, 5)) < 0.6
    mask[:, 0] = True  # every query keeps key 0, which the causal mask keeps too
    actual_bool, actual_float = run_module(module, [q, k, v, mask, b])

    causal = np.tril(np.ones((3, 5), dtype=bool))
    scores = q.astype(np.float64) @ k.transpose(0, 2, 1) * 0.3
    for actual, bias in ((actual_bool, np.where(mask, 0.0, -np.inf)), (actual_float, b)):
        masked = np.where(causal, scores + bias, -np.inf)
        weights = np.exp(masked - masked.max(-1, keepdims=True))
        expected = weights / weights.sum(-1, keepdims=True) @ v
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def test_integer_clamp_bounds_stay_integers() -> None:
    module = parse(
        """
        func.func @forward(%x: tensor<6xi32>) -> tensor<6xi32> {
          %y = torch.clamp %x min -2.000000e+00 max 3.000000e+00 : tensor<6xi32> -> tensor<6xi32>
          func.return %y : tensor<6xi32>
        }
        """
    )
    x = np.array([-5, -2, 0, 3, 4, 100], np.int32)
    (y,) = run_module(module, [x])
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, np.clip(x, -2, 3))


def test_constants_splat_and_listed() -> None:
    module = parse(
        """
        func.func @forward() -> (tensor<2x3xbf16>, tensor<3xi64>, tensor<2xi1>, tensor<f64>) {
          %a = torch.constant dense<1.000000e-01> : tensor<2x3xbf16>
          %b = torch.constant dense<[4, -1, 7]> : tensor<3xi64>
          %c = torch.constant dense<[true, false]> : tensor<2xi1>
          %d = torch.constant dense<2.500000e+00> : tensor<f64>
          func.return %a, %b, %c, %d : tensor<2x3xbf16>, tensor<3xi64>, tensor<2xi1>, tensor<f64>
        }
        """
    )
    a, b, c, d = run_module(module, [])
    tenth = torch.tensor(0.1, dtype=torch.bfloat16).item()
    np.testing.assert_array_equal(a, np.full((2, 3), tenth, np.float32))
    np.testing.assert_array_equal(b, np.array([4, -1, 7], np.int64))
    np.testing.assert_array_equal(c, np.array([True, False]))
    assert d.shape == () and d.dtype == np.float64 and d == 2.5


def test_to_bool_tests_nonzero_and_float_to_int_truncates() -> None:
    module = parse(
        """
        func.func @forward(%x: tensor<5xbf16>) -> (tensor<5xi1>, tensor<5xi32>, tensor<5xf16>) {
          %m = torch.to %x : tensor<5xbf16> -> tensor<5xi1>
          %i = torch.to %x : tensor<5xbf16> -> tensor<5xi32>
          %h = torch.to %x : tensor<5xbf16> -> tensor<5xf16>
          func.return %m, %i, %h : tensor<5xi1>, tensor<5xi32>, tensor<5xf16>
        }
        """
    )
    x = np.array([0.0, -0.0, 2.75, -2.75, 0.5], np.float32)
    mask, ints, halves = run_module(module, [x])
    np.testing.assert_array_equal(mask, [False, False, True, True, True])
    np.testing.assert_array_equal(ints, np.array([0, 0, 2, -2, 0], np.int32))
    assert halves.dtype == np.float16
    np.testing.assert_array_equal(halves, x.astype(np.float16))


def test_a_result_type_torch_disagrees_with_is_reported() -> None:
    module = parse(
        """
        func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
          %y = torch.sum %x dims [1] keepdim : tensor<2x3xf32> -> tensor<2x1xf32>
          func.return %y : tensor<2x1xf32>
        }
        """
    )
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(run_module(module, [x])[0], np.full((2, 1), 3.0, np.float32))

    # An op the verifier would reject, as a buggy importer could build it unverified: it sums
    # dim 0, giving [1, 3], but its result type says [2, 1].
    (sum_op,) = (op for op in module.walk() if isinstance(op, t.SumOp))
    sum_op.dims = t.dims_attr([0])
    with pytest.raises(ExecutionError, match=r"'torch\.sum'.*\[1, 3\].*result type.*importer"):
        run_module(module, [x])


def test_emmy_run_checks_the_torch_level(capsys: pytest.CaptureFixture[str]) -> None:
    from emmy.passes.pipelines import LEVELS
    from emmy.tools.cli import main

    assert main(["run", "-c", "nn.RMSNorm(64)(torch.randn(2, 8, 64))"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split() for line in lines[1 : 1 + len(LEVELS)]]
    assert [row[0] for row in rows] == list(LEVELS)
    assert rows[0][0] == "torch"
    assert rows[0][1:] == ["0.000e+00", "0.000e+00", "pass"]
