"""lower-fused-to-loop, numerically: each fused program of test/Conversion/FusedToLoop, its
lowered loop program and that program with its loop.contracts expanded to loop nests all equal
a numpy reference on fresh random inputs."""

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from emmy.dialects import make_context
from emmy.passes.expand_loop_contract import ExpandLoopContractPass
from emmy.passes.lower_fused_to_loop import LowerFusedToLoopPass
from emmy.tools.bench.differential import check_levels, lower
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter.run import find_function, random_inputs, run_module

CASES = Path(__file__).parents[1] / "Conversion" / "FusedToLoop"


def rms_norm(x, w):
    return x / np.sqrt((x * x).sum(-1, keepdims=True) / x.shape[-1] + 1e-6) * w


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x, w, b):
    centred = x - x.mean(-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(-1, keepdims=True) + 1e-5) * w + b


def add_silu(x, b):
    s = x + b
    return s / (1 + np.exp(-s))


def silu(x):
    return x / (1 + np.exp(-x))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


REFERENCES = {
    "rms_norm.mlir": [lambda x, w: [rms_norm(x, w)]],
    "softmax.mlir": [lambda x: [softmax(x)]],
    "layer_norm.mlir": [lambda x, w, b: [layer_norm(x, w, b)]],
    "elementwise.mlir": [lambda x, b: [add_silu(x, b)], lambda x: [x * 4]],
    "reductions.mlir": [
        lambda x: [x.sum() + 1.5],
        lambda x: [x.max(0)],
        lambda x: [x[:, 0] * 2],
    ],
    "keep_unit_dims.mlir": [lambda x: [np.maximum(x, 0)]],
    "multi_reduce.mlir": [
        lambda x: [x.max(1) * 2, x.argmax(1)],
        lambda x: [x.mean((0, 2))],
    ],
    "contract.mlir": [
        lambda w, b, x: [x @ w.T + b],
        lambda a, b: [a @ b],
        lambda w, b, x: [x @ w.T + b],
        lambda w, x, h: [x + (h @ w.T).reshape(x.shape)],
        lambda w, x, up: [(silu(x @ w.T) * up).reshape(6, 4)],
        lambda a, v: [a @ v],
        lambda x, w, b: [gelu_tanh(x @ w + b), x @ w + b],
        lambda x, w: [(2 * x) @ w],
        lambda a, b: [(a @ b).T],
        lambda p, v: [(p @ v.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3).reshape(8, 24)],
        lambda a, b: [(a @ b).T[1::2]],
    ],
}


def cases() -> list:
    return list(_cases())


def _cases():
    for name, references in REFERENCES.items():
        chunks = (CASES / name).read_text().split("// -----")
        assert len(chunks) == len(references), name
        for index, (chunk, reference) in enumerate(zip(chunks, references)):
            yield pytest.param(chunk, reference, id=f"{name}#{index}")


@pytest.mark.parametrize("keep_unit_dims", [False, True])
@pytest.mark.parametrize("text, reference", cases())
def test_fused_and_loop_programs_match_numpy(text, reference, keep_unit_dims):
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    module.verify()
    inputs = random_inputs(find_function(module, "forward"), seed=11)
    # bf16 and f16 programs round to 16 bits and numpy does not: compare at their precision.
    rtol = 2e-2 if "f16" in text else 1e-5
    expected = reference(*(a.astype(np.float64) for a in inputs))
    fused_outputs = run_module(module, inputs)
    LowerFusedToLoopPass(keep_unit_dims=keep_unit_dims).apply(ctx, module)
    module.verify()
    loop_outputs = run_module(module, inputs)
    ExpandLoopContractPass().apply(ctx, module)
    module.verify()
    expanded_outputs = run_module(module, inputs)
    for want, *values in zip(expected, fused_outputs, loop_outputs, expanded_outputs):
        for value in values:
            np.testing.assert_allclose(value, want, rtol=rtol, atol=rtol)


LONG_CHAIN = """
class Chain(nn.Module):
    def forward(self, x):
        for i in range(400):
            x = torch.relu(x) + i
        return x
Chain()(torch.randn(4, 8))
"""


def test_a_chain_of_any_length_lowers_and_matches_eager() -> None:
    """800 elementwise ops in one kernel, deeper than Python's recursion limit would allow a
    recursive walk from the output back to the input (issue 12: RecursionError at ~170)."""
    program = load_program(LONG_CHAIN, "<chain>")
    torch_ir = program.to_torch_ir()
    assert str(lower(torch_ir, "fused")).count("fused.kernel @") == 1
    (report,) = check_levels(program, torch_ir, ["loop"], seed=3)
    assert report.passed, report
