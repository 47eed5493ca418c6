"""Complex tensors as pairs of reals (`emmy.tools.frontend.complex_pairs`): under
`torch.compile`, through `emmy.compile`, and the shape of the rewritten graph. The corpus
programs `complex_rotary` and `complex_arithmetic` run every level against eager."""

import warnings

import pytest
import torch
from torch import nn
from torch._dynamo.backends.common import aot_autograd

import emmy
from emmy.tools.dynamo_backend import FallbackWarning
from emmy.tools.frontend.complex_pairs import BOUNDARY, complex_as_real_pairs
from emmy.tools.frontend.importer import decompositions
from emmy.tools.frontend.program import FrontendError


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def lines_of(marker: str) -> int:
    with open(__file__) as source:
        return next(n for n, text in enumerate(source.read().splitlines(), 1) if marker in text)


def rotated(x, freqs):
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(pairs * freqs).flatten(-2).type_as(x)


def test_complex_inputs_and_results_cross_the_boundary_as_views_without_fallback():
    def program(x, freqs, z):
        spun = freqs * torch.polar(torch.ones_like(x[..., ::2]), x[..., 1::2]) + z
        return rotated(x, freqs), spun, spun.abs()

    x = torch.randn(3, 5, 8)
    freqs = torch.randn(5, 4, dtype=torch.complex64)
    z = torch.randn(5, 4, dtype=torch.complex64)
    compiled = torch.compile(program, backend="emmy", options={"fallback": False})
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        got = compiled(x, freqs, z)
    for have, want in zip(got, program(x, freqs, z), strict=True):
        assert have.dtype == want.dtype
        torch.testing.assert_close(have, want, rtol=1e-5, atol=1e-5)


def test_other_ops_of_complex_tensors_fall_back_at_their_line():
    def program(x, freqs):
        turned = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2)) * freqs
        return torch.view_as_real(torch.cumsum(turned, 0)) * 2  # cumsum line

    x, freqs = torch.randn(6, 8), torch.randn(6, 4, dtype=torch.complex64)
    with pytest.warns(FallbackWarning) as caught:
        got = torch.compile(program, backend="emmy")(x, freqs)
    torch.testing.assert_close(got, program(x, freqs), rtol=1e-5, atol=1e-5)
    (message,) = [str(w.message) for w in caught if issubclass(w.category, FallbackWarning)]
    assert "emmy runs 1 op(s)" in message
    assert f"{__file__}:{lines_of('# cumsum line')}:" in message
    assert "'aten.cumsum.default': emmy takes complex tensors, as pairs of reals" in message


class Rotary(nn.Module):
    def __init__(self):
        super().__init__()
        angles = torch.outer(torch.arange(6.0), torch.rand(4))
        self.register_buffer("freqs", torch.polar(torch.ones(6, 4), angles))

    def forward(self, x):
        return rotated(x, self.freqs)


def test_a_complex_buffer_is_passed_to_emmy_compile_as_its_pair():
    model = Rotary()
    x = torch.randn(2, 6, 8)
    compiled = emmy.compile(model, x)
    assert "6x4x2xf32" in compiled.ir("torch")
    fresh = torch.randn(2, 6, 8)
    torch.testing.assert_close(compiled(fresh), model(fresh), rtol=1e-5, atol=1e-5)


def test_emmy_compile_refuses_a_complex_result_at_its_line():
    class Spin(nn.Module):
        def forward(self, x):
            return torch.polar(x, x)  # polar line

    with pytest.raises(FrontendError) as caught:
        emmy.compile(Spin(), torch.rand(4))
    message = str(caught.value)
    assert f"{__file__}:{lines_of('# polar line')}:" in message
    assert "a complex result: emmy takes complex tensors, as pairs of reals" in message


def rewritten(program, *inputs):
    """The forward graph AOTAutograd hands a backend, with complex values as pairs."""
    graphs = []

    def keep(gm, _):
        complex_as_real_pairs(gm.graph)
        graphs.append(gm.graph)
        return gm

    backend = aot_autograd(fw_compiler=keep, decompositions=decompositions())
    torch.compile(program, backend=backend)(*inputs)
    return graphs[0]


def test_a_chain_of_complex_ops_computes_on_parts_and_pairs_once():
    def program(x, freqs):
        turned = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        chained = torch.exp(turned * freqs * 0.5).conj() / (freqs + 1j)
        return torch.view_as_real(chained)

    graph = rewritten(program, torch.randn(4, 8), torch.randn(4, 4, dtype=torch.complex64))
    calls = [n for n in graph.nodes if n.op == "call_function"]
    cats = [n for n in calls if n.target is torch.ops.aten.cat.default]
    assert len(cats) == 1, "one pair is made, of the result's parts"
    taken_apart = [n for n in calls if n.target is torch.ops.aten.select.int and n.args[0] in cats]
    assert not taken_apart
    assert not any(v.is_complex() for n in calls if BOUNDARY not in n.meta for v in [n.meta["val"]])
    boundaries = [n.meta[BOUNDARY] for n in calls if BOUNDARY in n.meta]
    assert boundaries == ["a complex input"]
