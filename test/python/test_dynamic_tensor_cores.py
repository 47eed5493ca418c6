"""Products and attention over a dynamic size on tensor cores: one lowering of nn.Linear
(+ bias + GELU) over a dynamic number of tokens is a `tile.gemm` (wgmma on sm_90a, mma_sync on
sm_80, the fma atom for f32), a batched matmul over a dynamic batch one too, and causal
attention over a dynamic sequence length (and a decode over a dynamic KV length) a
`tile.attention`; each runs in the SIMT emulator at several sizes, the tails of its tiles
among them, against PyTorch on fresh inputs; their CUDA compiles for sm_90a without spills;
sizes outside what was compiled are refused."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from corpus import FunctionModule
from test_cuda_target import needs_nvcc, nvcc_compile
from torch.export import Dim, export
from xdsl.dialects.builtin import DenseArrayBase, i64

from emmy.dialects import kernel
from emmy.dialects.target import TARGET_ATTRIBUTE, TargetAttr
from emmy.passes.pipelines import printed
from emmy.tools.bench.differential import lower, to_numpy
from emmy.tools.bench.tolerances import tolerance
from emmy.tools.cuda.target import print_cuda
from emmy.tools.frontend.importer import forward_arguments, import_exported_program
from emmy.tools.interpreter.run import run_module

MAX = 512
SIZES = (1, 7, 130)


class _LinearGelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(64, 96)

    def forward(self, *inputs):
        (x,) = inputs
        return F.gelu(self.linear(x))


def _sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def _gqa_sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def _decode_sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


PROGRAMS = {
    # name: (module, input shapes with None for the dynamic size, dtype, target, what the
    # tile IR holds)
    "linear_gelu_wgmma": (_LinearGelu, [(1, None, 64)], torch.bfloat16, "sm_90a", "atom wgmma"),
    "linear_gelu_mma_sync": (
        _LinearGelu,
        [(1, None, 64)],
        torch.bfloat16,
        "sm_80",
        "atom mma_sync m16n8k16",
    ),
    "linear_gelu_fma": (_LinearGelu, [(1, None, 64)], torch.float32, "sm_90a", "atom fma"),
    "bmm_dynamic_batch": (
        lambda: FunctionModule(lambda a, b: torch.bmm(a, b) * 2.0),
        [(None, 40, 48), (None, 48, 24)],
        torch.bfloat16,
        "sm_90a",
        "atom mma_sync m16n8k16",
    ),
    "causal_sdpa": (
        lambda: FunctionModule(_sdpa),
        [(1, 2, None, 64)] * 3,
        torch.bfloat16,
        "sm_90a",
        "tile.attention",
    ),
    "causal_gqa_sdpa": (
        lambda: FunctionModule(_gqa_sdpa),
        [(1, 4, None, 64), (1, 2, None, 64), (1, 2, None, 64)],
        torch.bfloat16,
        "sm_90a",
        "tile.attention",
    ),
    "decode_over_dynamic_keys": (
        lambda: FunctionModule(_decode_sdpa),
        [(1, 4, 1, 64), (1, 2, None, 64), (1, 2, None, 64)],
        torch.bfloat16,
        "sm_90a",
        "tile.attention",
    ),
}


def _inputs(shapes, size: int, dtype: torch.dtype, seed: int) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return [
        torch.randn(*[size if d is None else d for d in shape], generator=generator).to(dtype)
        for shape in shapes
    ]


def _program(name: str):
    """The eager module, its export and its Torch IR for the program's target."""
    make, shapes, dtype, arch, _ = PROGRAMS[name]
    torch.manual_seed(0)
    module = make().to(dtype).eval()
    size = Dim("size", min=1, max=MAX)
    dynamic = tuple({d: size for d, n in enumerate(s) if n is None} or None for s in shapes)
    example = tuple(_inputs(shapes, 5, dtype, seed=0))
    exported = export(module, example, dynamic_shapes={"inputs": dynamic})
    torch_ir = import_exported_program(exported, None, [])
    torch_ir.attributes[TARGET_ATTRIBUTE] = TargetAttr(arch)
    return module, exported, torch_ir


@pytest.fixture(scope="module")
def kernels():
    """Each program lowered to Kernel IR once, with its eager module and export."""
    lowered = {}
    for name in PROGRAMS:
        module, exported, torch_ir = _program(name)
        lowered[name] = (module, exported, torch_ir, lower(torch_ir, "kernel"))
    return lowered


def _run(kernel_ir, exported, inputs) -> np.ndarray:
    (output,) = run_module(kernel_ir, [to_numpy(a) for a in forward_arguments(exported, inputs)])
    return output


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_product_is_structured_over_the_dynamic_size(kernels, name):
    _, _, torch_ir, _ = kernels[name]
    tile_ir = printed(lower(torch_ir, "tile"))
    assert PROGRAMS[name][-1] in tile_ir
    assert re.search(r"tile\.(gemm|attention) .*\?x", tile_ir)


@pytest.mark.parametrize("name", PROGRAMS)
def test_one_lowering_runs_at_every_size_in_the_emulator(kernels, name):
    module, exported, _, kernel_ir = kernels[name]
    _, shapes, dtype, _, _ = PROGRAMS[name]
    for seed, size in enumerate(SIZES):
        inputs = _inputs(shapes, size, dtype, seed + 1)
        output = _run(kernel_ir, exported, inputs)
        with torch.no_grad():
            expected = module(*inputs).float().numpy()
        assert output.shape == expected.shape
        rtol, atol = tolerance(dtype, allows_tf32=False, largest=float(np.abs(expected).max()))
        np.testing.assert_allclose(output, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize(
    ("name", "sized"),
    [
        # Two tiles of 64 columns (planned at the representative size, few tiles: `_narrowed`)
        # for each 128 rows.
        ("linear_gelu_wgmma", "sized [2, 128, 1]"),
        ("linear_gelu_mma_sync", "sized [1, 64, 1]"),  # a block per 64 rows (2 N tiles on y)
        ("bmm_dynamic_batch", "sized [1, 1, 1]"),  # a block per batch point (one M tile)
        ("causal_sdpa", "sized [1, 64, 1]"),  # a block per 64 query rows
        ("causal_gqa_sdpa", "sized [1, 32, 1]"),  # 2 query heads a key head: 32 rows a head
    ],
)
def test_the_launch_runs_the_blocks_the_size_needs(kernels, name, sized):
    _, _, _, kernel_ir = kernels[name]
    assert sized in printed(kernel_ir)


@pytest.mark.parametrize(
    "name", ["linear_gelu_wgmma", "linear_gelu_mma_sync", "bmm_dynamic_batch", "causal_gqa_sdpa"]
)
def test_the_blocks_stride_through_the_tiles_past_the_grid(kernels, name):
    """A size past the one the grid was planned for (a size torch declares no maximum for)
    runs on the grid's blocks, each taking several tiles: here every sized launch's grid is
    cut to one block along x (one cluster, for a kernel of clusters)."""
    module, exported, _, kernel_ir = kernels[name]
    _, shapes, dtype, _, _ = PROGRAMS[name]
    one_block = kernel_ir.clone()
    clusters = {
        op.sym_name.data: op.cluster_blocks
        for op in one_block.walk()
        if isinstance(op, kernel.FuncOp)
    }
    for launch in one_block.walk():
        if isinstance(launch, kernel.LaunchOp) and launch.sized is not None:
            grid = [clusters[launch.kernel.root_reference.data], *launch.grid_shape[1:]]
            launch.properties["grid"] = DenseArrayBase.from_list(i64, grid)
    inputs = _inputs(shapes, 130, dtype, seed=7)
    output = _run(one_block, exported, inputs)
    with torch.no_grad():
        expected = module(*inputs).float().numpy()
    rtol, atol = tolerance(dtype, allows_tf32=False, largest=float(np.abs(expected).max()))
    np.testing.assert_allclose(output, expected, rtol=rtol, atol=atol)


def test_an_unbounded_size_past_the_representative_runs():
    """Without a declared maximum the schedule is planned for 2048 rows; 2100 rows run on
    that grid, a block taking two tiles."""
    torch.manual_seed(0)
    linear = nn.Linear(32, 40).bfloat16()
    rows = Dim("rows", min=1)
    example = (torch.randn(5, 32, dtype=torch.bfloat16),)
    exported = export(linear, example, dynamic_shapes={"input": {0: rows}})
    torch_ir = import_exported_program(exported, None, [])
    torch_ir.attributes[TARGET_ATTRIBUTE] = TargetAttr("sm_80")
    kernel_ir = lower(torch_ir, "kernel")
    assert re.search(r"grid \[32, 1, 1\] sized \[1, 64, 1\]", printed(kernel_ir))
    x = torch.randn(2100, 32).bfloat16()
    with torch.no_grad():
        expected = linear(x).float().numpy()
    np.testing.assert_allclose(_run(kernel_ir, exported, [x]), expected, rtol=2e-2, atol=2e-2)


def test_a_decode_over_dynamic_keys_runs_its_static_grid(kernels):
    """Only the keys are the size: the query rows, and so the grid, are static."""
    kernel_ir = printed(kernels["decode_over_dynamic_keys"][3])
    (launch,) = re.findall(r"kernel.launch @\w+\(.*", kernel_ir)
    assert "sized" not in launch and "grid [1, 1, 2]" in launch


def test_the_schedule_is_the_one_of_the_representative_size():
    """A dynamic product is planned as the static one of its declared maximum size."""
    _, _, dynamic_ir = _program("linear_gelu_wgmma")
    static = export(_LinearGelu().bfloat16(), (torch.randn(1, MAX, 64).bfloat16(),))
    static_ir = import_exported_program(static, None, [])

    def schedule(module) -> str:
        return re.search(r"#tile\.schedule<[^>]*>", printed(lower(module, "tile"))).group(0)

    assert schedule(dynamic_ir) == schedule(static_ir)


def test_sizes_outside_what_was_compiled_are_refused(kernels):
    _, exported, _, kernel_ir = kernels["linear_gelu_mma_sync"]
    with pytest.raises(ValueError, match=rf"= {MAX + 1} is outside the range \[1, {MAX}\]"):
        _run(kernel_ir, exported, [torch.zeros(1, MAX + 1, 64, dtype=torch.bfloat16)])
    with pytest.raises(ValueError, match="has size 63 in dim 2, the program was compiled for 64"):
        _run(kernel_ir, exported, [torch.zeros(1, 5, 63, dtype=torch.bfloat16)])


@needs_nvcc
@pytest.mark.parametrize("name", PROGRAMS)
def test_the_cuda_compiles_for_sm_90a_without_spills(kernels, name, tmp_path):
    _, _, _, kernel_ir = kernels[name]
    source = print_cuda(kernel_ir)
    assert re.search(r"long s\d+\)", source)
    report = nvcc_compile(source, tmp_path, ptxas_report=True)
    spills = re.findall(r"(\d+) bytes spill (?:stores|loads)", report)
    assert spills and set(spills) == {"0"}, report
