"""lower-fused-to-loop, numerically: each fused program of test/Conversion/FusedToLoop and its
lowered loop program both equal a numpy reference on fresh random inputs."""

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from emmy.dialects import make_context
from emmy.passes.lower_fused_to_loop import LowerFusedToLoopPass
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
    # bf16 programs compute in bf16 and numpy in float32: compare at bf16's precision.
    bf16 = "bf16" in text
    rtol = 2e-2 if bf16 else 1e-5
    expected = reference(*(a.astype(np.float64) for a in inputs))
    fused_outputs = run_module(module, inputs)
    LowerFusedToLoopPass(keep_unit_dims=keep_unit_dims).apply(ctx, module)
    module.verify()
    loop_outputs = run_module(module, inputs)
    for want, fused_value, loop_value in zip(expected, fused_outputs, loop_outputs):
        np.testing.assert_allclose(fused_value, want, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(loop_value, want, rtol=rtol, atol=rtol)
