"""Splat constants (`dense<1.0> : tensor<10000000xf32>`) stay one element through parsing,
printing and lowering (`emmy.dialects.dense`), and every level computes with them what PyTorch
does."""

from __future__ import annotations

import tracemalloc
from io import StringIO

import numpy as np
import pytest
import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from emmy.dialects import make_context
from emmy.passes.pipelines import LEVELS, passes_to, run_passes
from emmy.tools.interpreter.run import run_module


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def printed(module: ModuleOp) -> str:
    stream = StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def lowered(text: str, level: str, start: str = "torch") -> ModuleOp:
    module = parse(text)
    run_passes(make_context(), module, passes_to(level, start), f"{start}-to-{level}")
    module.verify()
    return module


def add_splat(shape: str, element: str, literal: str) -> str:
    tensor = f"tensor<{shape}x{element}>"
    return f"""
func.func @forward(%x: {tensor}) -> {tensor} {{
  %c = torch.constant dense<{literal}> : {tensor}
  %y = torch.add %x, %c : {tensor}, {tensor} -> {tensor}
  func.return %y : {tensor}
}}
"""


def test_a_large_splat_parses_prints_and_lowers_in_little_memory():
    # 10^7 f32 elements: 40 MB expanded, and some 800 MB as the Python floats xDSL unpacks.
    text = add_splat("10000000", "f32", "1.5")
    tracemalloc.start()
    try:
        module = parse(text)
        assert "dense<1.500000e+00> : tensor<10000000xf32>" in printed(module)
        generic = StringIO()
        Printer(stream=generic, print_generic_format=True).print_op(module)
        assert "<{value = dense<1.500000e+00> : tensor<f32>}>" in generic.getvalue()
        loop = lowered(text, "loop")
        assert "arith.constant 1.500000e+00 : f32" in printed(loop)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20, f"peak {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize(
    "element, literal, dtype, value",
    [
        ("f32", "1.5", torch.float32, 1.5),
        ("f32", "0xFF800000", torch.float32, float("-inf")),
        ("i32", "-7", torch.int32, -7),
        ("f16", "2.0", torch.float16, 2.0),
    ],
)
@pytest.mark.parametrize("level", LEVELS)
def test_every_level_adds_a_splat_as_pytorch_does(element, literal, dtype, value, level):
    shape = (33, 70)
    text = add_splat("x".join(map(str, shape)), element, literal)
    generator = torch.Generator().manual_seed(1)
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=generator).to(dtype)
    else:
        x = torch.randint(-100, 100, shape, generator=generator, dtype=dtype)
    expected = x + torch.full(shape, value, dtype=dtype)
    module = parse(text) if level == "torch" else lowered(text, level)
    (result,) = run_module(module, [x.numpy()])
    np.testing.assert_array_equal(result, expected.numpy())


PRIM_SPLAT = """
func.func @forward(%x: tensor<40x50xf32>) -> (tensor<40x50xf32>, tensor<40x50xf32>) {
  %c = prim.constant dense<-0.25> : tensor<40x50xf32>
  %y = prim.map(%x, %c) : (tensor<40x50xf32>, tensor<40x50xf32>) -> tensor<40x50xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b : f32
    prim.yield %s : f32
  }
  func.return %y, %c : tensor<40x50xf32>, tensor<40x50xf32>
}
"""


@pytest.mark.parametrize("level", LEVELS[1:])
def test_a_prim_splat_is_computed_by_the_kernels(level):
    x = torch.randn(40, 50, generator=torch.Generator().manual_seed(2))
    module = parse(PRIM_SPLAT) if level == "prim" else lowered(PRIM_SPLAT, level, "prim")
    product, constant = run_module(module, [x.numpy()])
    np.testing.assert_array_equal(product, (x * -0.25).numpy())
    np.testing.assert_array_equal(constant, np.full((40, 50), -0.25, np.float32))
    assert "memref.global" not in printed(module)


# A splat held at the fused level, past fuse-prims: lower-fused-to-loop fills its buffer with
# a kernel, whatever its size (a global would hold 4 TB here).
FUSED_SPLAT = """
func.func @forward() -> tensor<1000000x1000000xi32> {
  %c = prim.constant dense<-7> : tensor<1000000x1000000xi32>
  func.return %c : tensor<1000000x1000000xi32>
}
"""


def test_a_fused_level_splat_is_filled_by_a_kernel():
    module = parse(FUSED_SPLAT)
    run_passes(make_context(), module, passes_to("loop", "fused"), "fused-to-loop")
    text = printed(module)
    assert "loop.kernel @k_constant(%out: memref<1000000x1000000xi32>)" in text
    assert "arith.constant -7 : i32" in text and "memref.global" not in text
