"""Dynamic shapes: a program with a dim marked dynamic (`torch.export.Dim`, `dynamic=True`,
`torch._dynamo.mark_dynamic`) is lowered once and runs at every size in its range, at every
level (the SIMT emulator at Kernel IR), against PyTorch on fresh inputs; its CUDA compiles;
inputs outside what it was compiled for are refused, never run."""

import re

import numpy as np
import pytest
import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F
from corpus import FunctionModule
from launched import launched_kernels
from test_cuda_target import needs_nvcc, nvcc_compile
from torch.export import Dim, export
from xdsl.dialects.builtin import DYNAMIC_INDEX

from emmy.dialects.sizes import DynamicSize
from emmy.passes.pipelines import LEVELS, printed
from emmy.tools import dynamo_backend
from emmy.tools.bench.differential import lower, to_numpy
from emmy.tools.cuda.target import print_cuda
from emmy.tools.frontend.importer import decomposed, forward_arguments, import_exported_program
from emmy.tools.interpreter.run import run_module
from emmy.tools.runtime.host import HostFunctionError, HostProgram

SEQ = Dim("seq", min=1, max=512)
SIZES = (1, 7, 300)
TABLE = torch.randn(512, 16)
"""A table of a row per position, sliced to the dynamic size (`cos[:seq]`)."""


PROGRAMS = {
    # name: (function, input shapes with None for the dynamic dim)
    "rms_norm_rows": (lambda x, w: F.rms_norm(x, (64,), w), [(None, 64), (64,)]),
    "layer_norm_rows": (lambda x: F.layer_norm(x, (64,)), [(None, 64)]),
    "softmax_over_seq": (lambda x: torch.softmax(x, -1), [(4, None)]),
    "amax_over_seq": (lambda x: x.amax(-1), [(4, None)]),
    "sum_over_seq": (lambda x: x.sum(0), [(None, 16)]),
    "mean_over_seq": (lambda x: x.mean(0) + x.mean((0, 1), keepdim=True), [(None, 16)]),
    "variance_over_seq": (lambda x: x.var(0) + x.var(0, correction=0), [(None, 16)]),
    "bias_gelu": (lambda x, b: F.gelu(x + b), [(2, None, 32), (32,)]),
    "residual_silu": (lambda x, y: F.silu(x) * y + x, [(1, None, 48), (1, None, 48)]),
    "diagonals_of_rows": (lambda x: torch.diagonal(x, 1, 1, 2), [(None, 4, 5)]),
}


def _inputs(shapes, size: int, seed: int) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return [
        torch.randn(*[size if d is None else d for d in shape], generator=generator)
        for shape in shapes
    ]


def _exported(name: str):
    function, shapes = PROGRAMS[name]
    dynamic = tuple({d: SEQ for d, n in enumerate(s) if n is None} or None for s in shapes)
    example = _inputs(shapes, 5, seed=0)
    exported = export(FunctionModule(function), tuple(example), dynamic_shapes={"inputs": dynamic})
    return import_exported_program(exported, None, [])


@pytest.fixture(scope="module")
def programs():
    return {name: _exported(name) for name in PROGRAMS}


def test_the_importer_writes_dynamic_dims_and_the_declared_range(programs):
    text = printed(programs["rms_norm_rows"])
    assert 'emmy.dynamic_size = {symbol = "s' in text
    assert "min = 1 : i64, max = 512 : i64}" in text
    assert "%x: tensor<?x64xf32>" in text or re.search(r"tensor<\?x64xf32> \{emmy.input", text)
    assert DynamicSize.of(programs["rms_norm_rows"]).representative == 512


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("level", LEVELS)
def test_one_lowering_runs_at_every_size(programs, name, level):
    function, shapes = PROGRAMS[name]
    lowered = lower(programs[name], level)
    for seed, size in enumerate(SIZES):
        inputs = _inputs(shapes, size, seed)
        (output,) = run_module(lowered, [x.numpy() for x in inputs])
        expected = function(*inputs).numpy()
        assert output.shape == expected.shape
        np.testing.assert_allclose(output, expected, rtol=1e-5, atol=1e-5)


def test_each_level_shows_the_dynamic_size(programs):
    module = programs["softmax_over_seq"]
    loop_ir = printed(lower(module, "loop"))
    assert re.search(
        r"loop.kernel @\w+\(%\w+: memref<4x\?xf32>, %out: memref<4x\?xf32>, %(s\d+)", loop_ir
    )
    assert re.search(r"loop.for %r1 in 0 to %s\d+ reduce max", loop_ir)
    assert re.search(r"%(s\d+) = memref.dim %\w+, %\w+ : memref<4x\?xf32>", loop_ir)
    tile_ir = printed(lower(module, "tile"))
    assert re.search(r"tile.for %r1 in 0 to %s\d+ map thread reduce max", tile_ir)
    kernel_ir = printed(lower(module, "kernel"))
    assert re.search(r"kernel.func @\w+\(.*, %s\d+: index\)", kernel_ir)


@needs_nvcc
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_cuda_of_a_dynamic_program_compiles(programs, name, tmp_path):
    source = print_cuda(lower(programs[name], "kernel"))
    assert re.search(r"long s\d+\)", source)
    nvcc_compile(source, tmp_path)


def test_a_stride_across_the_dynamic_dim_reads_the_size_argument(programs):
    source = print_cuda(lower(programs["softmax_over_seq"], "kernel"))
    size = re.search(r"long (s\d+)\)", source).group(1)
    assert re.search(rf"= \w+\[i \* {size} \+ i_\d+\];", source)  # the load
    assert f"out[i * {size} + " in source


@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        ([(3, 65), (64,)], "input #0 has size 65 in dim 1, the program was compiled for 64"),
        ([(600, 64), (64,)], "= 600 is outside the range [1, 512] the program was compiled for"),
        ([(0, 64), (64,)], "= 0 is outside the range [1, 512]"),
        ([(3, 64, 1), (64,)], "input #0 has 3 dims, the program was compiled for 2"),
    ],
)
def test_inputs_outside_what_was_compiled_are_refused(programs, shapes, message):
    inputs = [np.zeros(shape, np.float32) for shape in shapes]
    for level in ("torch", "loop", "kernel"):
        with pytest.raises(ValueError, match=re.escape(message)):
            run_module(lower(programs["rms_norm_rows"], level), inputs)


def test_two_dynamic_inputs_must_agree(programs):
    inputs = [np.zeros(shape, np.float32) for shape in [(1, 5, 48), (1, 6, 48)]]
    with pytest.raises(ValueError, match=r"input #1 has size 6 in its dynamic dim 1, another"):
        run_module(lower(programs["residual_silu"], "loop"), inputs)


@pytest.mark.parametrize("kept", [False, True], ids=["module", "plan"])
def test_the_gpu_runtime_checks_the_size_before_it_runs(programs, kept):
    """Also a program read back from its plan (`HostProgram.plan_text`), as a cached one is."""
    program = HostProgram(lower(programs["rms_norm_rows"], "kernel"))
    if kept:
        program = HostProgram.from_plan_text(program.plan_text(), "")
    assert any(launch.sized for launch in program.launches)
    with pytest.raises(HostFunctionError, match=r"= 513 is outside the range \[1, 512\]"):
        program.check_inputs([torch.zeros(513, 64), torch.zeros(64)])
    with pytest.raises(HostFunctionError, match="has size 63 in dim 1"):
        program.check_inputs([torch.zeros(5, 63), torch.zeros(64)])
    program.check_inputs([torch.zeros(5, 64), torch.zeros(64)])


def test_the_diagonal_of_the_dynamic_dim_is_refused_with_a_reason():
    exported = export(
        FunctionModule(lambda x: x.diagonal()),
        (torch.randn(5, 16),),
        dynamic_shapes={"inputs": ({0: SEQ},)},
    )
    with pytest.raises(Exception, match="the diagonal of a dynamic dim is not supported"):
        import_exported_program(exported, None, [])


def _table_sliced_to_rows():
    exported = export(
        FunctionModule(lambda x: x * TABLE[: x.shape[0]]),
        (torch.randn(5, 16),),
        dynamic_shapes={"inputs": ({0: SEQ},)},
    )
    return exported, import_exported_program(exported, None, [])


@pytest.mark.parametrize("level", LEVELS)
def test_a_table_sliced_to_the_dynamic_size_runs_at_every_size(level):
    exported, module = _table_sliced_to_rows()
    assert f"end {DYNAMIC_INDEX} step 1 : tensor<512x16xf32> -> tensor<?x16xf32>" in printed(module)
    lowered = lower(module, level)
    for seed, size in enumerate(SIZES):
        (x,) = _inputs([(size, 16)], size, seed)
        arguments = [v.numpy() for v in forward_arguments(exported, [x])]
        (output,) = run_module(lowered, arguments)
        np.testing.assert_allclose(output, (x * TABLE[:size]).numpy(), rtol=1e-6, atol=1e-6)


def _made_of_the_dynamic_size(x):
    """A causal mask, positions and a tensor of ones, each made of the sequence's length."""
    length = x.shape[0]
    mask = torch.triu(torch.full((length, length), float("-inf")), 1)
    mixed = torch.softmax(x @ x.transpose(0, 1) + mask, -1) @ x
    return mixed + torch.arange(length)[:, None] * 0.5 + torch.ones(length, 1)


@pytest.fixture(scope="module")
def made_of_the_size():
    exported = decomposed(
        export(
            FunctionModule(_made_of_the_dynamic_size),
            (torch.randn(5, 16),),
            dynamic_shapes={"inputs": ({0: SEQ},)},
        )
    )
    return exported, import_exported_program(exported, None, [])


@pytest.mark.parametrize("level", LEVELS)
def test_tensors_made_of_the_dynamic_size_run_at_every_size(made_of_the_size, level):
    exported, module = made_of_the_size
    assert "torch.iota dim 0 : tensor<?xi64>" in printed(module)
    lowered = lower(module, level)
    for seed, size in enumerate(SIZES):
        (x,) = _inputs([(size, 16)], size, seed)
        (output,) = run_module(lowered, [v.numpy() for v in forward_arguments(exported, [x])])
        expected = _made_of_the_dynamic_size(x).numpy()
        np.testing.assert_allclose(output, expected, rtol=1e-5, atol=1e-5)


@needs_nvcc
def test_the_cuda_of_tensors_made_of_the_dynamic_size_compiles(made_of_the_size, tmp_path):
    nvcc_compile(print_cuda(lower(made_of_the_size[1], "kernel")), tmp_path)


def _entries_of_the_dynamic_dim(x):
    """The last row, the first, and the last three (NaN and -0.0 among them)."""
    y = torch.where(x > 1.5, float("nan"), torch.where(x.abs() < 0.2, x * 0.0, x))
    return y[-1] * 2 + y[0], y[-3:] - 1


@pytest.mark.parametrize("level", LEVELS)
def test_entries_from_either_end_of_the_dynamic_dim_run_at_every_size(level):
    long_enough = Dim("long_enough", min=4, max=512)  # three rows from the end, and one more
    exported = export(
        FunctionModule(_entries_of_the_dynamic_dim),
        (torch.randn(6, 16),),
        dynamic_shapes={"inputs": ({0: long_enough},)},
    )
    lowered = lower(import_exported_program(exported, None, []), level)
    for seed, size in enumerate((4, 7, 300)):
        (x,) = _inputs([(size, 16)], size, seed)
        outputs = run_module(lowered, [x.numpy()])
        for got, want in zip(outputs, _entries_of_the_dynamic_dim(x), strict=True):
            np.testing.assert_array_equal(got, want.numpy())
            assert (np.signbit(got) == want.signbit().numpy()).all()


@pytest.mark.parametrize(
    "function, message",
    [
        (lambda x: (x > 0)[-1], "an entry of the dynamic dim of a bool tensor is not supported"),
        (
            lambda x: torch.arange(1, x.shape[0] + 1) * x[:, 0],
            "'aten.arange.start' of the dynamic size is not supported",
        ),
    ],
)
def test_parts_of_the_dynamic_dim_are_refused_with_a_reason(function, message):
    exported = export(
        FunctionModule(function), (torch.randn(5, 16),), dynamic_shapes={"inputs": ({0: SEQ},)}
    )
    with pytest.raises(Exception, match=re.escape(message)):
        import_exported_program(exported, None, [])


@needs_nvcc
def test_the_cuda_of_a_table_sliced_to_the_dynamic_size_compiles(tmp_path):
    _, module = _table_sliced_to_rows()
    nvcc_compile(print_cuda(lower(module, "kernel")), tmp_path)


def test_two_symbolic_sizes_are_refused():
    batch = Dim("batch", min=2, max=8)
    exported = export(
        FunctionModule(lambda x: x * 2.0),
        (torch.randn(3, 5),),
        dynamic_shapes={"inputs": ({0: batch, 1: SEQ},)},
    )
    with pytest.raises(Exception, match="two dynamic sizes"):
        import_exported_program(exported, None, [])


# --- torch.compile ------------------------------------------------------------------------


@pytest.fixture
def imported_graphs(monkeypatch):
    """The Torch IR of every partition the backend imports: one per compile."""
    imported = []
    import_graph = dynamo_backend.import_graph

    def recording(graph):
        imported.append(import_graph(graph))
        return imported[-1]

    monkeypatch.setattr(dynamo_backend, "import_graph", recording)
    torch._dynamo.reset()
    yield imported
    torch._dynamo.reset()


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(64)

    def forward(self, x, y):
        return torch.softmax(self.norm(x) * 2.0 + y, -1)


@torch.no_grad()
def test_torch_compile_dynamic_compiles_once_for_several_sizes(imported_graphs):
    model = _Block()
    compiled = torch.compile(model, backend="emmy", dynamic=True, options={"fallback": False})
    for seed, size in enumerate((3, 7, 100, 33)):
        x, y = _inputs([(size, 64), (size, 64)], size, seed)
        torch.testing.assert_close(compiled(x, y), model(x, y))
    assert len(imported_graphs) == 1
    assert DynamicSize.of(imported_graphs[0]) is not None
    assert "tensor<?x64xf32>" in printed(imported_graphs[0])


@torch.no_grad()
def test_mark_dynamic_compiles_once_for_several_sizes(imported_graphs):
    model = _Block()
    compiled = torch.compile(model, backend="emmy", options={"fallback": False})
    for seed, size in enumerate((4, 9, 250)):
        x, y = _inputs([(size, 64), (size, 64)], size, seed)
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(y, 0)
        torch.testing.assert_close(compiled(x, y), model(x, y))
    assert len(imported_graphs) == 1
    assert DynamicSize.of(imported_graphs[0]) is not None


@torch.no_grad()
def test_complex_rotary_tables_sliced_to_a_marked_length_compile_once(imported_graphs):
    class Rotary(nn.Module):
        def __init__(self):
            super().__init__()
            angles = torch.outer(torch.arange(64.0), torch.rand(8))
            self.register_buffer("freqs", torch.polar(torch.ones_like(angles), angles))

        def forward(self, x):
            turned = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
            return torch.view_as_real(turned * self.freqs[: x.shape[1]]).flatten(-2)

    model = Rotary()
    compiled = torch.compile(model, backend="emmy", options={"fallback": False})
    for seed, size in enumerate((5, 64, 17)):
        (x,) = _inputs([(2, size, 16)], size, seed)
        torch._dynamo.mark_dynamic(x, 1)
        torch.testing.assert_close(compiled(x), model(x))
    assert len(imported_graphs) == 1
    assert f"end {DYNAMIC_INDEX} step 1" in printed(imported_graphs[0])


class _BatchedAttention(nn.Module):
    """A Hugging Face style attention layer: positions from `arange`, rotary angles of a
    product over them, a causal mask from `triu`, projections with and without a bias."""

    def __init__(self, dim: int = 32, heads: int = 4):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q, self.k, self.v = (nn.Linear(dim, dim, bias=False) for _ in range(3))
        self.o = nn.Linear(dim, dim)
        inverse = 1.0 / 10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim)
        self.register_buffer("inv_freq", inverse, persistent=False)

    def forward(self, x):
        batch, length, _ = x.shape
        positions = torch.arange(length, device=x.device).unsqueeze(0).expand(batch, -1)
        turns = (
            self.inv_freq[None, :, None].float().expand(batch, -1, 1) @ positions[:, None].float()
        )
        angles = torch.cat((turns, turns), 1).transpose(1, 2)[:, None].to(x.dtype)
        heads = [
            f(x).view(batch, length, self.heads, self.head_dim).transpose(1, 2)
            for f in (self.q, self.k, self.v)
        ]
        half = self.head_dim // 2
        q, k = (
            h * angles.cos() + torch.cat((-h[..., half:], h[..., :half]), -1) * angles.sin()
            for h in heads[:2]
        )
        mask = torch.full((length, length), -1e9, dtype=x.dtype, device=x.device).triu(1)
        out = F.scaled_dot_product_attention(q, k, heads[2], attn_mask=mask)
        return x + self.o(out.transpose(1, 2).reshape(batch, length, -1))


@torch.no_grad()
def test_a_batched_attention_layer_compiles_once_for_every_length(imported_graphs):
    """Batch 2: each projection's rows, flattened by AOTAutograd to 2*s, stay [2, s, k]
    (`unflatten_products`), which the one dynamic size types."""
    model = _BatchedAttention().eval()
    compiled = torch.compile(model, backend="emmy", options={"fallback": False})
    for seed, length in enumerate((5, 16, 9)):
        (x,) = _inputs([(2, length, 32)], length, seed)
        torch._dynamo.mark_dynamic(x, 1)
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    assert len(imported_graphs) == 1
    text = printed(imported_graphs[0])
    assert text.count("torch.matmul") >= 4
    assert re.search(r"torch.matmul %\S+, %\S+ : tensor<2x\?x32xf32>, tensor<32x32xf32>", text)


def test_a_part_of_the_dynamic_dim_is_refused_with_a_reason():
    compiled = torch.compile(lambda x: x[1:] * 2, backend="emmy", options={"fallback": False})
    x = torch.randn(6, 4)
    torch._dynamo.mark_dynamic(x, 0)
    with pytest.raises(Exception, match=r"the size s\d+ - 1 is an expression of symbolic sizes"):
        compiled(x)


@torch.no_grad()
def test_a_graph_of_two_dynamic_sizes_runs_in_pytorch_with_the_reason(imported_graphs):
    model = nn.RMSNorm(64)
    compiled = torch.compile(model, backend="emmy", dynamic=True)
    x = torch.randn(3, 5, 64)
    with pytest.warns(dynamo_backend.FallbackWarning, match="two dynamic sizes"):
        torch.testing.assert_close(compiled(x), model(x))
    assert imported_graphs == []


# --- a decoder layer --------------------------------------------------------------------------


class _RotaryAttention(nn.Module):
    """Causal attention with rotary embeddings, whose cos and sin tables come in with the
    input (as a model passes its positions' embeddings to every layer)."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim, bias=False) for _ in range(4))

    def rotate(self, x, cos, sin):
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin

    def forward(self, x, cos, sin):
        b, s, d = x.shape
        q, k, v = (
            p(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
            for p in (self.q, self.k, self.v)
        )
        q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, s, d))


class _DecoderLayer(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4, hidden: int = 64):
        super().__init__()
        self.attention_norm = nn.RMSNorm(dim, eps=1e-5)
        self.attention = _RotaryAttention(dim, heads)
        self.mlp_norm = nn.RMSNorm(dim, eps=1e-5)
        self.gate, self.up = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x, cos, sin):
        h = x + self.attention(self.attention_norm(x), cos, sin)
        n = self.mlp_norm(h)
        return h + self.down(F.silu(self.gate(n)) * self.up(n))


def _rotary_tables(length: int, head_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    position = torch.arange(length).float()[:, None]
    frequency = 1.0 / 10000 ** (torch.arange(0, head_dim, 2).float() / head_dim)
    angles = torch.cat([position * frequency] * 2, dim=-1)
    return angles.cos(), angles.sin()


def _exported_layer(dtype: torch.dtype, dim: int, heads: int, hidden: int):
    torch.manual_seed(0)
    layer = _DecoderLayer(dim, heads, hidden).eval().to(dtype)
    seq = Dim("seq", min=1, max=2048)
    example = (torch.randn(1, 5, dim), *_rotary_tables(5, dim // heads))
    dynamic = {"x": {1: seq}, "cos": {0: seq}, "sin": {0: seq}}
    exported = export(layer, tuple(t.to(dtype) for t in example), dynamic_shapes=dynamic)
    return layer, exported, import_exported_program(exported, None, [])


@pytest.fixture(scope="module")
def decoder_layer():
    return _exported_layer(torch.float32, 32, 4, 64)


@pytest.fixture(scope="module")
def bf16_decoder_layer():
    """In bf16 with heads of 64, which attention's tensor-core kernel takes."""
    return _exported_layer(torch.bfloat16, 128, 2, 256)


@pytest.mark.parametrize(
    ("level", "lengths"),
    [
        ("torch", (1, 7, 512, 2048)),
        ("fused", (1, 7, 512, 2048)),
        ("loop", (1, 7, 512, 2048)),
        ("kernel", (1, 7, 64)),  # the SIMT emulator: 2048 tokens take minutes
    ],
)
def test_a_decoder_layer_compiled_once_runs_at_every_sequence_length(decoder_layer, level, lengths):
    layer, exported, module = decoder_layer
    lowered = lower(module, level)
    for length in lengths:
        inputs = (torch.randn(1, length, 32), *_rotary_tables(length, 8))
        arguments = [a.detach().numpy() for a in forward_arguments(exported, inputs)]
        (output,) = run_module(lowered, arguments)
        with torch.no_grad():
            expected = layer(*inputs).numpy()
        np.testing.assert_allclose(output, expected, rtol=1e-5, atol=2e-5)


def _gemm_launches(tile_ir: str, gemm: str) -> list[tuple[str, str]]:
    """(kernel, first argument) of each tile.launch of a kernel holding a `gemm` match."""
    launches = re.findall(r"tile.launch @(\w+)\((%\w+)", tile_ir)
    kernels = launched_kernels(tile_ir, "tile")
    return [launch for launch, (_, body) in zip(launches, kernels) if re.search(gemm, body)]


def test_a_decoder_layers_projections_are_gemms_over_the_dynamic_size(decoder_layer):
    """Its q, k, v, o and down projections launch tile.gemms on the fma atom (f32), and gate
    and up one of sibling rhs; the output projection reads attention's output transposed back,
    which another kernel materializes for it (its k spans two dims of attention's output).
    The q, k and v projections, alike, launch one kernel (merge-identical-kernels)."""
    _, _, module = decoder_layer
    tile_ir = printed(lower(module, "tile"))
    launched = _gemm_launches(tile_ir, r"tile.gemm %\w+\[m, k\] \* %\w+\[n, k\] : memref<\?x")
    projections = sorted(re.match(r"%p_(\w+)_weight", a).group(1) for _, a in launched)
    assert projections == ["attention_k", "attention_o", "attention_q", "attention_v", "down"]
    qkv = ("%p_attention_q_weight", "%p_attention_k_weight", "%p_attention_v_weight")
    assert len({kernel for kernel, weight in launched if weight in qkv}) == 1
    assert "* (%p_gate_weight, %p_up_weight)[n, k] : memref<?x" in tile_ir
    assert "atom fma" in tile_ir


@needs_nvcc
def test_the_cuda_of_a_dynamic_decoder_layer_compiles(decoder_layer, tmp_path):
    _, _, module = decoder_layer
    kernel_ir = lower(module, "kernel")
    launches = re.findall(
        r"grid \[\d+, \d+, \d+\] sized \[(\d+), (\d+), (\d+)\]", printed(kernel_ir)
    )
    assert ("1", "64", "1") in launches  # a projection: a block per 64 rows of the size
    nvcc_compile(print_cuda(kernel_ir), tmp_path)


def test_a_bf16_decoder_layer_runs_on_tensor_cores_at_every_sequence_length(bf16_decoder_layer):
    """Its projections are wgmma tile.gemms and its attention a tile.attention, all over the
    dynamic size, and one lowering gives eager's result at 1, 7 and 64 tokens in the SIMT
    emulator."""
    layer, exported, module = bf16_decoder_layer
    tile_ir = printed(lower(module, "tile"))
    assert len(_gemm_launches(tile_ir, r"tile.gemm .*memref<\?x\d+xbf16>.* atom wgmma")) == 6
    assert re.search(r"tile.attention .* causal .*memref<1x2x\?x64xbf16>", tile_ir)
    lowered = lower(module, "kernel")
    for length in (1, 7, 64):
        inputs = (torch.randn(1, length, 128), *_rotary_tables(length, 64))
        inputs = tuple(t.bfloat16() for t in inputs)
        arguments = [to_numpy(a) for a in forward_arguments(exported, inputs)]
        (output,) = run_module(lowered, arguments)
        with torch.no_grad():
            expected = layer(*inputs).float().numpy()
        np.testing.assert_allclose(output, expected, rtol=2e-2, atol=2e-2)


def test_emmy_compile_with_a_dynamic_dim_serves_every_size():
    import emmy

    model = _Block()
    seq = Dim("seq", min=1, max=64)
    example = _inputs([(5, 64), (5, 64)], 5, seed=0)
    compiled = emmy.compile(model, *example, dynamic_shapes=({0: seq}, {0: seq}))
    assert "tensor<?x64xf32>" in compiled.ir("torch")
    with torch.no_grad():
        for seed, size in enumerate((1, 9, 64)):
            x, y = _inputs([(size, 64), (size, 64)], size, seed)
            torch.testing.assert_close(compiled(x, y), model(x, y))
        with pytest.raises(ValueError, match=r"= 65 is outside the range \[1, 64\]"):
            compiled(*_inputs([(65, 64), (65, 64)], 65, seed=9))
