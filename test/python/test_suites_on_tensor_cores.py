"""Every matrix product and attention of the benchmark suites, at the suites' own shapes,
reaches a tensor-core tile (`tile.gemm`, alone or with its siblings, or `tile.attention`) on
sm_90a: a product that falls back to a loop nest runs one dot product per output element,
100x or more slower, and is correct, so no numerical test notices. Compiling only (no run),
so the real shapes cost little; f16 cases share the bf16 ones' structure and are left out.
Besides the suites: a Llama-style layer on one sequence (a batch of one) in prefill and in a
decode step of one token, the shapes `benchmarks/llama.py` runs."""

import re

import pytest
import torch
from launched import launched_kernels

from emmy.tools.bench import suites
from emmy.tools.bench.differential import lower
from emmy.tools.frontend.program import load_program

CASES = {
    case.name: case
    for case in [
        *suites.gemm_cases(),
        *suites.attention_cases(),
        suites.decoder_layer_case(1, 128, 2048, 32, 5632, "bfloat16"),
        suites.decoder_layer_case(1, 1, 2048, 32, 5632, "bfloat16"),
    ]
    if case.dtype != "float16"
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_product_of_the_suites_is_a_tensor_core_tile(name: str) -> None:
    case = CASES[name]
    precision = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(case.float32_matmul_precision or precision)
    try:
        source = re.sub(r"\bDT\b", f"torch.{case.dtype}", case.source)
        torch_ir = load_program(source, "<suite>").to_torch_ir()
    finally:
        torch.set_float32_matmul_precision(precision)
    fused, tile = str(lower(torch_ir, "fused")), str(lower(torch_ir, "tile"))
    products = fused.count("prim.contract ") + fused.count("prim.attention ")
    assert products >= 1, fused
    # A tile.gemm of sibling products (`* (%gate, %up)[n, k]`) computes one for each rhs;
    # a kernel launched for several products (the layer's q, k and v) counts at each launch.
    tiles = 0
    for _, body in launched_kernels(tile, "tile"):
        rhs = re.findall(r"tile\.gemm %\w+\[[^\]]*\] \* (\([^)]*\)|%\w+)", body)
        tiles += sum(r.count("%") for r in rhs) + body.count("tile.attention ")
    assert tiles == products, tile
