"""`index_bounds`: which integer inputs of a host function index a dim, and its size, followed
through views, kernels, launches, loads and casts; and random inputs that stay below it."""

from __future__ import annotations

import pytest

from emmy.dialects import make_context
from emmy.tools.diagnostics import Source, parse
from emmy.tools.interpreter.index_bounds import index_bounds
from emmy.tools.interpreter.run import find_function, random_inputs, run_module


def forward_of(text: str):
    module = parse(make_context(), Source("test.mlir", text), 1, text)
    return module, find_function(module, "forward")


TORCH_VIEW = """
func.func @forward(%w: tensor<10x8xf32>, %i: tensor<2x3xi64>, %n: tensor<6xi64>)
    -> tensor<6x8xf32> {
  %flat = torch.reshape %i : tensor<2x3xi64> -> tensor<6xi64>
  %rows = torch.embedding %w, %flat : tensor<10x8xf32>, tensor<6xi64> -> tensor<6x8xf32>
  func.return %rows : tensor<6x8xf32>
}
"""

FUSED_GATHER = """
func.func @forward(%w: tensor<7x4xf32>, %i: tensor<5xi32>) -> tensor<5x4xf32> {
  %r = fused.kernel @k(%w, %i) : (tensor<7x4xf32>, tensor<5xi32>) -> tensor<5x4xf32> {
  ^bb0(%w1: tensor<7x4xf32>, %i1: tensor<5xi32>):
    %g = prim.gather %w1[%i1] : tensor<7x4xf32>, tensor<5xi32> -> tensor<5x4xf32>
    fused.yield %g : tensor<5x4xf32>
  }
  func.return %r : tensor<5x4xf32>
}
"""

# The index picks a column here, and the same input also indexes a smaller table: the
# smaller size bounds it.
LOOP_TWO_TABLES = """
loop.kernel @k(%a: memref<4x12xf32>, %b: memref<9xf32>, %i: memref<4xi32>, %o: memref<4xf32>) {
  loop.for %r in 0 to 4 {
    %v = loop.load %i[%r] : memref<4xi32>
    %c = arith.index_cast %v : i32 to index
    %x = loop.load %a[%r, %c] : memref<4x12xf32>
    %y = loop.load %b[%c] : memref<9xf32>
    %s = arith.addf %x, %y : f32
    loop.store %s, %o[%r] : memref<4xf32>
  }
}
func.func @forward(%a: memref<4x12xf32>, %b: memref<9xf32>, %i: memref<4xi32>) -> memref<4xf32> {
  %o = memref.alloc() : memref<4xf32>
  loop.launch @k(%a, %b, %i, %o) : memref<4x12xf32>, memref<9xf32>, memref<4xi32>, memref<4xf32>
  func.return %o : memref<4xf32>
}
"""


@pytest.mark.parametrize(
    "text, bounds",
    [(TORCH_VIEW, {1: 10}), (FUSED_GATHER, {1: 7}), (LOOP_TWO_TABLES, {2: 9})],
    ids=["torch view", "fused gather", "loop accesses"],
)
def test_index_bounds(text, bounds):
    _, forward = forward_of(text)
    assert index_bounds(forward) == bounds


@pytest.mark.parametrize("text", [FUSED_GATHER, LOOP_TWO_TABLES], ids=["gather", "loop"])
def test_random_inputs_index_inside_the_table(text):
    module, forward = forward_of(text)
    for seed in range(5):
        run_module(module, random_inputs(forward, seed))  # no access out of bounds


def test_an_integer_that_indexes_nothing_takes_0_to_15():
    _, forward = forward_of(TORCH_VIEW)
    values = random_inputs(forward, seed=0)[2]
    assert values.min() >= 0 and values.max() <= 15 and values.max() >= 10
