"""decompose-torch, checked numerically against PyTorch eager.

The programs are the differential corpus (`corpus.py`) and, here, edge cases the corpus does
not reach. Each program is loaded with the frontend, imported to Torch IR, decomposed to prim,
verified, and run on the CPU interpreter with FRESH random user inputs (seeded apart from the
example inputs the program was traced with); PyTorch eager runs the same module on the same
inputs. Every program runs in fp32 and in bf16 (`DT` in its source is the dtype under test),
except those without floating-point math.

Tolerances (`numpy.testing.assert_allclose`, `|actual - expected| <= atol + rtol * |expected|`):
- fp32: rtol = atol = 1e-5: elementwise ops and reductions agree to a few ulps (the
  interpreter's numpy kernels and torch's vectorized ones differ in summation order and in
  the last bit of exp/tanh/erf); programs dominated by matrix products or attention use
  rtol = atol = 1e-4, since their K-long dot products are summed in a different order.
- bf16: rtol = atol = 2e-2. One bf16 ulp is 2^-8 (0.4%) relative; the decomposition computes
  each op in f32 and rounds once, as torch's kernels do, but torch rounds some intermediates
  the decomposition does not (e.g. the attention probabilities in its CPU flash kernel), so a
  result can sit a few ulps away. Deep programs (the decoder layers) use 5e-2, since a one-ulp
  difference in an early bf16 intermediate propagates through several matrix products.
- Views, comparisons, where, conversions and integer programs are exact under any of these
  (they are checked with the same helper, whose tolerance only matters for rounding ops).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from corpus import PROGRAMS as CORPUS
from corpus import fresh_like, with_dtype
from corpus import source as corpus_source
from xdsl.dialects.builtin import ModuleOp, NameLoc
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from emmy.dialects import make_context
from emmy.passes.decompose_torch import DecomposeTorchPass
from emmy.tools.frontend.importer import forward_arguments
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter.run import run_module

FRESH_SEED = 1234
"""The example inputs come from `torch.manual_seed(0)`; fresh ones from this seed."""

TOLERANCES = {
    # (dtype, kind): (rtol, atol)
    ("float32", "default"): (1e-5, 1e-5),
    ("float32", "matmul"): (1e-4, 1e-4),
    ("float32", "deep"): (1e-4, 1e-4),
    ("bfloat16", "default"): (2e-2, 2e-2),
    ("bfloat16", "matmul"): (2e-2, 2e-2),
    ("bfloat16", "deep"): (5e-2, 5e-2),
}


# --- the reusable check ---------------------------------------------------------------------


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A tensor as the interpreter holds it: bf16 as float32 (exactly: bf16 values are
    float32 values)."""
    tensor = tensor.detach()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def decomposed(module: ModuleOp) -> ModuleOp:
    """Applies decompose-torch in place, verifies, and checks that no torch op is left."""
    DecomposeTorchPass().apply(make_context(), module)
    module.verify()
    left = sorted({op.name for op in module.walk() if op.dialect_name() == "torch"})
    assert not left, f"torch ops left after decompose-torch: {left}"
    return module


def check_against_eager(
    source: str,
    rtol: float,
    atol: float,
    seed: int = FRESH_SEED,
    filename: str = "<test>",
    fresh: Callable[[torch.Tensor, torch.Generator], torch.Tensor] = fresh_like,
) -> ModuleOp:
    """Loads the program `source`, decomposes its Torch IR to prim, runs that on fresh random
    user inputs (`fresh(example, generator)` for each tensor input) and compares every output
    with PyTorch eager on the same inputs. Returns the prim-level module."""
    program = load_program(source, filename)
    module = decomposed(program.to_torch_ir())

    generator = torch.Generator().manual_seed(seed)
    user_leaves, spec = torch.utils._pytree.tree_flatten(
        (program.example_args, program.example_kwargs)
    )
    fresh_leaves = [fresh(v, generator) if isinstance(v, torch.Tensor) else v for v in user_leaves]
    args, kwargs = torch.utils._pytree.tree_unflatten(fresh_leaves, spec)
    with torch.no_grad():
        expected = torch.utils._pytree.tree_leaves(program.module(*args, **kwargs))

    inputs = [to_numpy(v) for v in forward_arguments(program.exported, fresh_leaves)]
    actual = run_module(module, inputs)

    assert len(actual) == len(expected)
    for index, (got, want) in enumerate(zip(actual, expected)):
        want = to_numpy(want)
        assert got.shape == want.shape, f"output #{index}: shape {got.shape} != {want.shape}"
        assert got.dtype == want.dtype, f"output #{index}: dtype {got.dtype} != {want.dtype}"
        np.testing.assert_allclose(
            got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"output #{index}"
        )
    return module


# --- programs ---------------------------------------------------------------------------------

APPLY = """
class Apply(nn.Module):
    def __init__(self, f, **buffers):
        super().__init__()
        self.f = f
        for name, value in buffers.items():
            self.register_buffer(name, value, persistent=False)

    def forward(self, *args):
        return self.f(self, *args)
"""


def applied(expression: str, *inputs: str, buffers: str = "") -> str:
    """A program applying `lambda m, x, y, ...: expression` (`m` holds the buffers)."""
    names = "xyzw"[: len(inputs)]
    keywords = f", {buffers}" if buffers else ""
    return (
        f"{APPLY}\nApply(lambda m, {', '.join(names)}: {expression}{keywords})({', '.join(inputs)})"
    )


def randn(*shape: int) -> str:
    return f"torch.randn({', '.join(map(str, shape))}, dtype=DT)"


CAUSAL_MASK = "torch.ones(5, 7, dtype=torch.bool).tril()"
"""A boolean attention mask that keeps at least one key for every query."""

X = randn(2, 5, 8)


@dataclass(frozen=True)
class Case:
    source: str
    kind: str = "default"
    dtypes: tuple[str, ...] = ("float32", "bfloat16")


EDGE_CASES: dict[str, Case] = {
    "neg_abs_relu": Case(applied("(-x, x.abs(), torch.relu(x))", X)),
    "exp_log_sqrt_rsqrt": Case(
        applied("(x.exp(), x.abs().log(), x.abs().sqrt(), (x.abs() + 0.25).rsqrt())", X)
    ),
    "tanh_sigmoid_silu": Case(applied("(x.tanh(), torch.sigmoid(x), F.silu(x))", X)),
    "gelu_both_forms": Case(applied('(F.gelu(x), F.gelu(x, approximate="tanh"))', X)),
    "binary_with_broadcasting": Case(
        applied(
            "(x + y, x - y, x * y, x / (y.abs() + 0.5), y - x, x * 0.5 + 1, 2.0 - x,"
            " 1 / (x.abs() + 1))",
            X,
            randn(5, 1),
        )
    ),
    "pow": Case(
        applied(
            "(x ** 2, x ** 3, x.abs() ** 0.5, (x.abs() + 0.5) ** -0.5, (x.abs() + 0.5) ** -1,"
            " (x.abs() + 0.5) ** -2, x.abs() ** 1.7, x.abs() ** y.abs(), 2 ** x)",
            X,
            randn(8),
        )
    ),
    "maximum_minimum": Case(applied("(torch.maximum(x, y), torch.minimum(y, x))", X, randn(8))),
    "comparisons": Case(
        applied(
            "(x > y, x < y, x >= 0.25, x <= y, x == x.clamp(-0.5, 0.5), x != y,"
            " (x > 0) > (y > 0), (x > 0) <= (y > 0), (x > 0) == (y > 0))",
            X,
            randn(5, 8),
        )
    ),
    "clamp_where": Case(
        applied(
            "(x.clamp(-0.5, 0.5), x.clamp(min=0.1), x.clamp(max=-0.3),"
            " torch.where(x > y, x, y), torch.where(x > 0, x, 0.0), x.masked_fill(y > 0, -1.0))",
            X,
            randn(8),
        )
    ),
    "to": Case(
        applied(
            "(x.to(torch.bfloat16), x.to(torch.float32), x.to(torch.float16),"
            " (x * 8).to(torch.int32),"
            " (x > 0).to(DT), (x * 8).to(torch.int64).to(DT), x.to(torch.bool),"
            " (x * 4).to(torch.int32).to(torch.bool), (x * 4).to(torch.int64).to(torch.int32),"
            " (x * 4).to(torch.int32).to(torch.int64))",
            X,
        )
    ),
    "integer_arithmetic": Case(
        applied(
            "(x + y, x - y, x * y, -x, x.abs(), torch.relu(x), torch.maximum(x, y),"
            " torch.minimum(x, y), x ** 2, x ** 3, x.clamp(-3, 4), x > y, x.sum(-1), x.amax(0))",
            "torch.randint(-9, 9, (4, 6))",
            "torch.randint(-9, 9, (6,))",
        ),
        dtypes=("float32",),
    ),
    "sum_mean": Case(
        applied("(x.sum(-1), x.mean(dim=(0, 2), keepdim=True), x.sum(), x.mean(1))", X)
    ),
    "amax_amin": Case(
        applied(
            "(x.amax(1), x.amin(dim=(0, 2), keepdim=True), x.max(), x.min(),"
            " (x > 0).amax(-1), (x > 0).amin(0))",
            X,
        )
    ),
    "var": Case(
        applied(
            "(x.var(-1), x.var(dim=0, keepdim=True, unbiased=False),"
            " torch.var(x, dim=(1, 2), correction=2), x.var())",
            X,
        )
    ),
    "rms_norm_without_weight_over_two_dims": Case(
        applied("(F.rms_norm(x, (4, 32)), F.rms_norm(x, (32,)))", randn(2, 4, 32))
    ),
    "layer_norm_variants": Case(
        applied(
            "(F.layer_norm(x, (4, 32)), F.layer_norm(x, (32,), eps=1e-3),"
            " nn.functional.layer_norm(x, (32,), weight=y))",
            randn(2, 4, 32),
            randn(32),
        )
    ),
    "softmax_non_last_dim": Case(applied("(F.softmax(x, dim=1), F.softmax(x, dim=0))", X)),
    "log_softmax": Case(applied("(F.log_softmax(x, dim=-1), F.log_softmax(x, dim=1))", X)),
    "linear_without_bias": Case(
        applied(
            "(F.linear(x, y), F.linear(x[0, 0], y), F.linear(x[0], y))",
            randn(2, 3, 16),
            randn(8, 16),
        ),
        kind="matmul",
    ),
    "matmul": Case(
        applied(
            "(x @ y, torch.matmul(x, y[0]), z @ y, torch.matmul(x[0, 0], y[0]), x[0] @ y[1, :, 0])",
            randn(2, 3, 4, 5),
            randn(3, 5, 6),
            randn(3, 1, 4, 5),
        ),
        kind="matmul",
    ),
    "bmm": Case(applied("torch.bmm(x, y)", randn(3, 4, 5), randn(3, 5, 6)), kind="matmul"),
    "causal_sdpa": Case(
        applied(
            "(F.scaled_dot_product_attention(x, y, z, is_causal=True),"
            " F.scaled_dot_product_attention(x[..., :3, :], y, z, is_causal=True),"
            " F.scaled_dot_product_attention(x, y, z, is_causal=True, scale=0.3))",
            randn(2, 2, 5, 8),
            randn(2, 2, 5, 8),
            randn(2, 2, 5, 4),
        ),
        kind="matmul",
    ),
    "sdpa_with_masks": Case(
        applied(
            "(F.scaled_dot_product_attention(x, y, z, attn_mask=m.mask),"
            " F.scaled_dot_product_attention(x, y, z, attn_mask=w),"
            " F.scaled_dot_product_attention(x, y, z))",
            randn(2, 2, 5, 8),
            randn(2, 2, 7, 8),
            randn(2, 2, 7, 4),
            randn(5, 7),
            buffers=f"mask={CAUSAL_MASK}",
        ),
        kind="matmul",
    ),
    "views": Case(
        applied(
            "(x.view(10, 8), x.reshape(2, 40), x.unsqueeze(1), x[:, 0:1].squeeze(1),"
            " x.permute(2, 0, 1),"
            " x.transpose(0, 2), x[0].t(), x[:, :1].expand(2, 3, 8), x[:, 1:4:2], x[..., 1],"
            " x.reshape(-1), x[:, -2:])",
            X,
        )
    ),
    "cat": Case(
        applied(
            "(torch.cat([x, y], dim=1), torch.cat([x, x, x], dim=-1),"
            " torch.cat([x[:, :1], y], dim=1) * 2)",
            X,
            randn(2, 3, 8),
        )
    ),
    "constants": Case(
        applied(
            "(x + torch.ones(5, 8, dtype=DT), x * torch.arange(8).to(DT),"
            " torch.full((2, 5, 8), 3.0, dtype=DT) - x,"
            " torch.where(x > 0, x, torch.zeros_like(x)))",
            X,
        )
    ),
    "rms_norm_linear_silu_residual": Case(
        """
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(16)
        self.proj = nn.Linear(16, 16)

    def forward(self, x):
        return x + F.silu(self.proj(self.norm(x)))

Block().to(DT)(torch.randn(2, 4, 16, dtype=DT))
""",
        kind="matmul",
    ),
}
"""Programs for forms the corpus does not reach, or reaches only in part."""

CORPUS_KINDS = {
    "linear_bias": "matmul",
    "linear_no_bias": "matmul",
    "gelu_mlp": "matmul",
    "swiglu_mlp": "matmul",
    "causal_attention": "matmul",
    "masked_attention": "matmul",
    "matmul_bmm": "matmul",
    "layer_norm_linear": "matmul",
    "softmax_attention_by_hand": "matmul",
    "llama_decoder_layer": "deep",
    "llama_gqa_decoder_layer": "deep",
}
"""The tolerance kind of each corpus program that is not "default"."""

CASES: dict[str, Case] = {
    **{name: Case(text, CORPUS_KINDS.get(name, "default")) for name, text in CORPUS.items()},
    **EDGE_CASES,
}


def test_corpus_kinds_name_corpus_programs():
    assert CORPUS_KINDS.keys() <= CORPUS.keys()


@pytest.mark.parametrize(
    "name, dtype",
    [(name, dtype) for name, case in CASES.items() for dtype in case.dtypes],
)
def test_program_matches_eager(name: str, dtype: str):
    case = CASES[name]
    rtol, atol = TOLERANCES[(dtype, case.kind)]
    check_against_eager(with_dtype(case.source, dtype), rtol, atol)


def test_every_torch_op_is_covered():
    """The corpus imports to every torch op the pass decomposes."""
    from emmy.dialects.torch import Torch

    seen = set()
    for case in CASES.values():
        for dtype in case.dtypes:
            source = with_dtype(case.source, dtype)
            module = load_program(source, "<test>").to_torch_ir()
            seen |= {op.name for op in module.walk() if op.dialect_name() == "torch"}
    assert {op.name for op in Torch.operations} - seen == set()


# --- NaN, locations, failures -------------------------------------------------------------------


def with_nans(example: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Fresh values with every third float replaced by NaN."""
    values = fresh_like(example, generator)
    if values.dtype.is_floating_point:
        values.view(-1)[::3] = float("nan")
    return values


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_nan_propagates_as_in_torch(dtype: str):
    """maximum / minimum / clamp / relu / amax / amin propagate NaN, `ne` is true and the
    other comparisons false on NaN, and sums and softmax rows with a NaN are NaN."""
    source = applied(
        "(torch.maximum(x, y), torch.minimum(x, y), x.clamp(-0.5, 0.5), torch.relu(x),"
        " x.amax(-1), x.amin(0), x != y, x == y, x < y, x >= y, torch.where(x > y, x, y),"
        " x.sum(-1), F.softmax(x, dim=-1), F.rms_norm(x, (8,)), F.silu(x) * y)",
        X,
        randn(8),
    )
    rtol, atol = TOLERANCES[(dtype, "default")]
    check_against_eager(with_dtype(source, dtype), rtol, atol, fresh=with_nans)


def test_every_op_is_located_at_its_torch_op():
    """Every op the pass creates, scalar ops in map bodies included, is located at
    NameLoc(<torch op short name>, <that torch op's location>)."""
    source = corpus_source("llama_gqa_decoder_layer", "bfloat16")
    module = load_program(source, "llama.py").to_torch_ir()
    torch_ops = {
        (op.name.partition(".")[2], op.location)
        for op in module.walk()
        if op.dialect_name() == "torch"
    }
    decomposed(module)
    names = set()
    for op in module.walk():
        if op.dialect_name() not in ("prim", "arith", "math"):
            continue
        assert isinstance(op.location, NameLoc), f"{op.name} is located at {op.location}"
        assert (op.location.desc.data, op.location.location) in torch_ops, op.location
        names.add(op.location.desc.data)
    assert {"rms_norm", "linear", "sdpa", "silu", "mul", "add", "cat"} <= names


def test_a_form_without_an_exact_decomposition_fails_at_the_op():
    module = Parser(
        make_context(),
        """
        func.func @f(%m: tensor<4xi1>) -> tensor<4xi1> {
          %0 = torch.mul %m, %m : tensor<4xi1>, tensor<4xi1> -> tensor<4xi1>
          func.return %0 : tensor<4xi1>
        }
        """,
    ).parse_module()
    mul = next(op for op in module.walk() if op.name == "torch.mul")
    with pytest.raises(PassFailedException, match="cannot decompose 'torch.mul'") as failure:
        DecomposeTorchPass().apply(make_context(), module)
    assert mul in failure.value.args


def test_the_pass_is_registered():
    from emmy.passes.registry import registered_passes

    assert registered_passes()["decompose-torch"] is DecomposeTorchPass


def test_bf16_results_are_bf16_values():
    """The interpreter holds bf16 as float32; every bf16 output must be exactly a bf16."""
    source = corpus_source("llama_gqa_decoder_layer", "bfloat16")
    program = load_program(source, "<test>")
    module = decomposed(program.to_torch_ir())
    inputs = [to_numpy(v) for v in program.forward_arguments()]
    (output,) = run_module(module, inputs)
    assert np.array_equal(output, to_numpy(torch.from_numpy(output).bfloat16()))
