"""The CPU interpreter against numpy and Python's `math`, at the prim, fused and loop levels."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from emmy.dialects import make_context
from emmy.tools.interpreter.run import ExecutionError, find_function, random_inputs, run_module

ROWS, COLS = 32, 2048
EPS = 1e-5  # written 1.0e-05 in the IR: MLIR reads `1e-05` as an integer and an identifier


def parse(text: str, verify: bool = True) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    if verify:
        module.verify()
    return module


def run(text: str, inputs, function: str = "forward", verify: bool = True) -> list[np.ndarray]:
    return run_module(parse(text, verify), inputs, function)


def run_random(text: str, seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Runs @forward on fresh random inputs; returns the inputs and the results."""
    module = parse(text)
    inputs = random_inputs(find_function(module, "forward"), seed)
    return inputs, run_module(module, inputs)


def assert_close(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6, equal_nan=True)


# --- references, in float64 -------------------------------------------------------------


def rms_norm(x, w):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * w


def softmax(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, w, b):
    x = x.astype(np.float64)
    centered = x - x.mean(axis=-1, keepdims=True)
    return centered / np.sqrt((centered**2).mean(axis=-1, keepdims=True) + EPS) * w + b


# --- prim and fused programs -----------------------------------------------------------
# Each is the body of a prim-level computation from named inputs to %y; `as_prim` makes it
# a host function of prims, `as_fused` wraps it in one fused.kernel.

T = f"tensor<{ROWS}x{COLS}xf32>"
ROW = f"tensor<{ROWS}x1xf32>"
W = f"tensor<{COLS}xf32>"

RMS_NORM_BODY = f"""
  %sq = prim.map(%x) : ({T}) -> {T} {{
  ^bb0(%a: f32):
    %a2 = arith.mulf %a, %a : f32
    prim.yield %a2 : f32
  }}
  %ss = prim.reduce add %sq axes [1] keepdim init 0.0 : {T} -> {ROW}
  %ssb = prim.broadcast %ss : {ROW} -> {T}
  %wb = prim.broadcast %w : {W} -> {T}
  %y = prim.map(%x, %ssb, %wb) : ({T}, {T}, {T}) -> {T} {{
  ^bb0(%a: f32, %s: f32, %g: f32):
    %n = arith.constant {float(COLS)} : f32
    %eps = arith.constant 1.0e-05 : f32
    %mean = arith.divf %s, %n : f32
    %var = arith.addf %mean, %eps : f32
    %r = math.rsqrt %var : f32
    %ar = arith.mulf %a, %r : f32
    %o = arith.mulf %ar, %g : f32
    prim.yield %o : f32
  }}
"""

SOFTMAX_BODY = f"""
  %m = prim.reduce max %x axes [1] keepdim init -inf : {T} -> {ROW}
  %mb = prim.broadcast %m : {ROW} -> {T}
  %e = prim.map(%x, %mb) : ({T}, {T}) -> {T} {{
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %ed = math.exp %d : f32
    prim.yield %ed : f32
  }}
  %s = prim.reduce add %e axes [1] keepdim init 0.0 : {T} -> {ROW}
  %sb = prim.broadcast %s : {ROW} -> {T}
  %y = prim.map(%e, %sb) : ({T}, {T}) -> {T} {{
  ^bb0(%a: f32, %b: f32):
    %q = arith.divf %a, %b : f32
    prim.yield %q : f32
  }}
"""

LAYER_NORM_BODY = f"""
  %s = prim.reduce add %x axes [1] keepdim init 0.0 : {T} -> {ROW}
  %sb = prim.broadcast %s : {ROW} -> {T}
  %c = prim.map(%x, %sb) : ({T}, {T}) -> {T} {{
  ^bb0(%a: f32, %b: f32):
    %n = arith.constant {float(COLS)} : f32
    %mean = arith.divf %b, %n : f32
    %d = arith.subf %a, %mean : f32
    prim.yield %d : f32
  }}
  %c2 = prim.map(%c) : ({T}) -> {T} {{
  ^bb0(%a: f32):
    %a2 = arith.mulf %a, %a : f32
    prim.yield %a2 : f32
  }}
  %v = prim.reduce add %c2 axes [1] keepdim init 0.0 : {T} -> {ROW}
  %vb = prim.broadcast %v : {ROW} -> {T}
  %wb = prim.broadcast %w : {W} -> {T}
  %bb = prim.broadcast %bias : {W} -> {T}
  %y = prim.map(%c, %vb, %wb, %bb) : ({T}, {T}, {T}, {T}) -> {T} {{
  ^bb0(%a: f32, %var: f32, %g: f32, %h: f32):
    %n = arith.constant {float(COLS)} : f32
    %eps = arith.constant 1.0e-05 : f32
    %mv = arith.divf %var, %n : f32
    %ve = arith.addf %mv, %eps : f32
    %r = math.rsqrt %ve : f32
    %ar = arith.mulf %a, %r : f32
    %ag = arith.mulf %ar, %g : f32
    %o = arith.addf %ag, %h : f32
    prim.yield %o : f32
  }}
"""

PROGRAMS = {
    "rms_norm": (RMS_NORM_BODY, [("x", T), ("w", W)], rms_norm),
    "softmax": (SOFTMAX_BODY, [("x", T)], softmax),
    "layer_norm": (LAYER_NORM_BODY, [("x", T), ("w", W), ("bias", W)], layer_norm),
}


def as_prim(body: str, arguments: list[tuple[str, str]]) -> str:
    signature = ", ".join(f"%{name}: {type}" for name, type in arguments)
    return f"func.func @forward({signature}) -> {T} {{{body}  func.return %y : {T}\n}}"


def as_fused(body: str, arguments: list[tuple[str, str]]) -> str:
    host_signature = ", ".join(f"%host_{name}: {type}" for name, type in arguments)
    operands = ", ".join(f"%host_{name}" for name, _ in arguments)
    types = ", ".join(type for _, type in arguments)
    kernel_arguments = ", ".join(f"%{name}: {type}" for name, type in arguments)
    return f"""
func.func @forward({host_signature}) -> {T} {{
  %out = fused.kernel @k({operands}) : ({types}) -> {T} {{
  ^bb0({kernel_arguments}):{body}
    fused.yield %y : {T}
  }}
  func.return %out : {T}
}}
"""


@pytest.mark.parametrize("level", [as_prim, as_fused], ids=["prim", "fused"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_tensor_level_program(name, level):
    body, arguments, reference = PROGRAMS[name]
    inputs, (y,) = run_random(level(body, arguments), seed=1)
    assert y.shape == (ROWS, COLS) and y.dtype == np.float32
    assert_close(y, reference(*inputs))


def test_reductions_without_keepdim():
    text = f"""
func.func @forward(%x: {T}) -> ({T}, tensor<f32>) {{
  %m = prim.reduce max %x axes [0] init -inf : {T} -> {W}
  %mb = prim.broadcast %m : {W} -> {T}
  %y = prim.map(%x, %mb) : ({T}, {T}) -> {T} {{
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    prim.yield %d : f32
  }}
  %t = prim.reduce add %x axes [0, 1] init 1.5 : {T} -> tensor<f32>
  func.return %y, %t : {T}, tensor<f32>
}}
"""
    (x,), (y, total) = run_random(text)
    assert_close(y, x - x.max(axis=0))
    assert total.shape == ()
    np.testing.assert_allclose(total, x.astype(np.float64).sum() + 1.5, rtol=1e-4)


def test_fused_kernels_with_several_results_in_sequence():
    text = f"""
func.func @forward(%x: {T}) -> ({T}, {ROW}) {{
  %e, %m = fused.kernel @exp_and_max(%x) : ({T}) -> ({T}, {ROW}) {{
  ^bb0(%a: {T}):
    %max = prim.reduce max %a axes [1] keepdim init -inf : {T} -> {ROW}
    %exp = prim.map(%a) : ({T}) -> {T} {{
    ^bb0(%v: f32):
      %ev = math.exp %v : f32
      prim.yield %ev : f32
    }}
    fused.yield %exp, %max : {T}, {ROW}
  }}
  %y = fused.kernel @scale(%e, %m) : ({T}, {ROW}) -> {T} {{
  ^bb0(%a: {T}, %b: {ROW}):
    %bb = prim.broadcast %b : {ROW} -> {T}
    %r = prim.map(%a, %bb) : ({T}, {T}) -> {T} {{
    ^bb0(%u: f32, %v: f32):
      %p = arith.mulf %u, %v : f32
      prim.yield %p : f32
    }}
    fused.yield %r : {T}
  }}
  func.return %y, %m : {T}, {ROW}
}}
"""
    (x,), (y, m) = run_random(text)
    assert_close(m, x.max(axis=1, keepdims=True))
    assert_close(y, np.exp(x.astype(np.float64)) * x.max(axis=1, keepdims=True))


# --- loop programs ---------------------------------------------------------------------

M = f"memref<{ROWS}x{COLS}xf32>"
MW = f"memref<{COLS}xf32>"

LOOP_RMS_NORM = f"""
loop.kernel @rms_norm(%x: {M}, %w: {MW}, %y: {M}) {{
  loop.for %i in 0 to {ROWS} {{
    %ss = loop.for %j in 0 to {COLS} reduce add init 0.0 : f32 {{
      %v = loop.load %x[%i, %j] : {M}
      %sq = arith.mulf %v, %v : f32
      loop.yield %sq : f32
    }}
    %n = arith.constant {float(COLS)} : f32
    %eps = arith.constant 1.0e-05 : f32
    %mean = arith.divf %ss, %n : f32
    %var = arith.addf %mean, %eps : f32
    %r = math.rsqrt %var : f32
    loop.for %j in 0 to {COLS} {{
      %v = loop.load %x[%i, %j] : {M}
      %g = loop.load %w[%j] : {MW}
      %vr = arith.mulf %v, %r : f32
      %o = arith.mulf %vr, %g : f32
      loop.store %o, %y[%i, %j] : {M}
    }}
  }}
}}
func.func @forward(%x: {M}, %w: {MW}) -> {M} {{
  %y = memref.alloc() : {M}
  loop.launch @rms_norm(%x, %w, %y) : {M}, {MW}, {M}
  func.return %y : {M}
}}
"""

LOOP_SOFTMAX = f"""
loop.kernel @softmax(%x: {M}, %y: {M}) {{
  loop.for %i in 0 to {ROWS} {{
    %m = loop.for %j in 0 to {COLS} reduce max init -inf : f32 {{
      %v = loop.load %x[%i, %j] : {M}
      loop.yield %v : f32
    }}
    %s = loop.for %j in 0 to {COLS} reduce add init 0.0 : f32 {{
      %v = loop.load %x[%i, %j] : {M}
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      loop.yield %e : f32
    }}
    loop.for %j in 0 to {COLS} {{
      %v = loop.load %x[%i, %j] : {M}
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      %q = arith.divf %e, %s : f32
      loop.store %q, %y[%i, %j] : {M}
    }}
  }}
}}
func.func @forward(%x: {M}) -> {M} {{
  %y = memref.alloc() : {M}
  loop.launch @softmax(%x, %y) : {M}, {M}
  func.return %y : {M}
}}
"""

LOOP_LAYER_NORM = f"""
loop.kernel @layer_norm(%x: {M}, %w: {MW}, %b: {MW}, %y: {M}) {{
  %n = arith.constant {float(COLS)} : f32
  %eps = arith.constant 1.0e-05 : f32
  loop.for %i in 0 to {ROWS} {{
    %s = loop.for %j in 0 to {COLS} reduce add init 0.0 : f32 {{
      %v = loop.load %x[%i, %j] : {M}
      loop.yield %v : f32
    }}
    %mean = arith.divf %s, %n : f32
    %ss = loop.for %j in 0 to {COLS} reduce add init 0.0 : f32 {{
      %v = loop.load %x[%i, %j] : {M}
      %d = arith.subf %v, %mean : f32
      %d2 = arith.mulf %d, %d : f32
      loop.yield %d2 : f32
    }}
    %var = arith.divf %ss, %n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    loop.for %j in 0 to {COLS} {{
      %v = loop.load %x[%i, %j] : {M}
      %g = loop.load %w[%j] : {MW}
      %h = loop.load %b[%j] : {MW}
      %d = arith.subf %v, %mean : f32
      %dr = arith.mulf %d, %r : f32
      %dg = arith.mulf %dr, %g : f32
      %o = arith.addf %dg, %h : f32
      loop.store %o, %y[%i, %j] : {M}
    }}
  }}
}}
func.func @forward(%x: {M}, %w: {MW}, %b: {MW}) -> {M} {{
  %y = memref.alloc() : {M}
  loop.launch @layer_norm(%x, %w, %b, %y) : {M}, {MW}, {MW}, {M}
  func.return %y : {M}
}}
"""


@pytest.mark.parametrize(
    "text, reference",
    [(LOOP_RMS_NORM, rms_norm), (LOOP_SOFTMAX, softmax), (LOOP_LAYER_NORM, layer_norm)],
    ids=["rms_norm", "softmax", "layer_norm"],
)
def test_loop_level_program(text, reference):
    inputs, (y,) = run_random(text, seed=2)
    assert_close(y, reference(*inputs))


def test_loop_level_agrees_with_prim_level():
    body, arguments, _ = PROGRAMS["layer_norm"]
    inputs = random_inputs(find_function(parse(LOOP_LAYER_NORM), "forward"), seed=3)
    (prim_result,) = run(as_prim(body, arguments), inputs)
    (loop_result,) = run(LOOP_LAYER_NORM, inputs)
    assert_close(loop_result, prim_result)


def test_loop_inputs_are_not_modified():
    inputs, _ = run_random(LOOP_SOFTMAX)
    kept = inputs[0].copy()
    run(LOOP_SOFTMAX, inputs)
    np.testing.assert_array_equal(inputs[0], kept)


def test_nested_reductions_and_init():
    text = """
loop.kernel @totals(%x: memref<32x64xf32>, %t: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sum = loop.for %i in 0 to 32 reduce add init 1.5 : f32 {
    %row = loop.for %j in 0 to 64 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %j] : memref<32x64xf32>
      loop.yield %v : f32
    }
    loop.yield %row : f32
  }
  loop.store %sum, %t[%c0] : memref<2xf32>
  %max = loop.for %j in 0 to 64 reduce max init -inf : f32 {
    %col = loop.for %i in 0 to 32 reduce max init -inf : f32 {
      %v = loop.load %x[%i, %j] : memref<32x64xf32>
      loop.yield %v : f32
    }
    loop.yield %col : f32
  }
  loop.store %max, %t[%c1] : memref<2xf32>
}
func.func @forward(%x: memref<32x64xf32>) -> memref<2xf32> {
  %t = memref.alloc() : memref<2xf32>
  loop.launch @totals(%x, %t) : memref<32x64xf32>, memref<2xf32>
  func.return %t : memref<2xf32>
}
"""
    (x,), (t,) = run_random(text)
    np.testing.assert_allclose(t, [x.astype(np.float64).sum() + 1.5, x.max()], rtol=1e-5)


def test_contribution_independent_of_the_induction_variable_counts_every_iteration():
    text = """
loop.kernel @k(%x: memref<8x4xf32>, %y: memref<8x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.for %i in 0 to 8 {
    %count = loop.for %j in 0 to 64 reduce add init 0.0 : f32 {
      %one = arith.constant 1.0 : f32
      loop.yield %one : f32
    }
    %first = loop.for %j in 0 to 4 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %c0] : memref<8x4xf32>
      loop.yield %v : f32
    }
    %power = loop.for %j in 0 to 10 reduce mul init 3.0 : f32 {
      %two = arith.constant 2.0 : f32
      loop.yield %two : f32
    }
    loop.store %count, %y[%i, %c0] : memref<8x3xf32>
    loop.store %first, %y[%i, %c1] : memref<8x3xf32>
    loop.store %power, %y[%i, %c2] : memref<8x3xf32>
  }
}
func.func @forward(%x: memref<8x4xf32>) -> memref<8x3xf32> {
  %y = memref.alloc() : memref<8x3xf32>
  loop.launch @k(%x, %y) : memref<8x4xf32>, memref<8x3xf32>
  func.return %y : memref<8x3xf32>
}
"""
    (x,), (y,) = run_random(text)
    np.testing.assert_array_equal(y[:, 0], 64.0)
    assert_close(y[:, 1], 4 * x[:, 0])
    np.testing.assert_array_equal(y[:, 2], 3.0 * 2.0**10)


def test_zero_trip_loops():
    text = """
loop.kernel @k(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  loop.for %i in 0 to 4 {
    %s = loop.for %j in 3 to 3 reduce add init 7.0 : f32 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      loop.yield %v : f32
    }
    loop.for %j in 0 to 8 {
      loop.store %s, %y[%i, %j] : memref<4x8xf32>
    }
    loop.for %j in 5 to 5 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      loop.store %v, %y[%i, %j] : memref<4x8xf32>
    }
  }
  loop.for %i in 2 to 2 {
    loop.for %j in 0 to 8 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      loop.store %v, %y[%i, %j] : memref<4x8xf32>
    }
  }
}
func.func @forward(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %y = memref.alloc() : memref<4x8xf32>
  loop.launch @k(%x, %y) : memref<4x8xf32>, memref<4x8xf32>
  func.return %y : memref<4x8xf32>
}
"""
    _, (y,) = run_random(text)
    np.testing.assert_array_equal(y, np.full((4, 8), 7.0, np.float32))


def test_index_arithmetic_on_induction_variables():
    text = """
loop.kernel @k(%x: memref<4x8xf32>, %reversed: memref<4x8xf32>, %shifted: memref<4x8xf32>,
               %transposed: memref<8x4xf32>, %flat: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  loop.for %i in 0 to 4 {
    loop.for %j in 0 to 8 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      %jr = arith.subi %c7, %j : index
      loop.store %v, %reversed[%i, %jr] : memref<4x8xf32>
      loop.store %v, %transposed[%j, %i] : memref<8x4xf32>
      %row = arith.muli %i, %c8 : index
      %k = arith.addi %row, %j : index
      loop.store %v, %flat[%k] : memref<32xf32>
    }
    loop.for %j in 1 to 8 {
      %previous = arith.subi %j, %c1 : index
      %v = loop.load %x[%i, %previous] : memref<4x8xf32>
      loop.store %v, %shifted[%i, %j] : memref<4x8xf32>
    }
  }
}
func.func @forward(%x: memref<4x8xf32>)
    -> (memref<4x8xf32>, memref<4x8xf32>, memref<8x4xf32>, memref<32xf32>) {
  %reversed = memref.alloc() : memref<4x8xf32>
  %shifted = memref.alloc() : memref<4x8xf32>
  %transposed = memref.alloc() : memref<8x4xf32>
  %flat = memref.alloc() : memref<32xf32>
  loop.launch @k(%x, %reversed, %shifted, %transposed, %flat)
      : memref<4x8xf32>, memref<4x8xf32>, memref<4x8xf32>, memref<8x4xf32>, memref<32xf32>
  func.return %reversed, %shifted, %transposed, %flat
      : memref<4x8xf32>, memref<4x8xf32>, memref<8x4xf32>, memref<32xf32>
}
"""
    (x,), (reversed_, shifted, transposed, flat) = run_random(text)
    np.testing.assert_array_equal(reversed_, x[:, ::-1])
    np.testing.assert_array_equal(transposed, x.T)
    np.testing.assert_array_equal(flat, x.reshape(-1))
    np.testing.assert_array_equal(shifted[:, 1:], x[:, :-1])
    # memref.alloc fills with NaN, so the column no iteration writes shows up.
    assert np.isnan(shifted[:, 0]).all()


def test_multi_kernel_host_function_with_a_call():
    text = """
loop.kernel @row_sums(%x: memref<32x64xf32>, %s: memref<32xf32>) {
  loop.for %i in 0 to 32 {
    %sum = loop.for %j in 0 to 64 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %j] : memref<32x64xf32>
      loop.yield %v : f32
    }
    loop.store %sum, %s[%i] : memref<32xf32>
  }
}
loop.kernel @divide(%x: memref<32x64xf32>, %s: memref<32xf32>, %y: memref<32x64xf32>) {
  loop.for %i in 0 to 32 {
    loop.for %j in 0 to 64 {
      %v = loop.load %x[%i, %j] : memref<32x64xf32>
      %d = loop.load %s[%i] : memref<32xf32>
      %q = arith.divf %v, %d : f32
      loop.store %q, %y[%i, %j] : memref<32x64xf32>
    }
  }
}
func.func @normalize(%x: memref<32x64xf32>) -> memref<32x64xf32> {
  %s = memref.alloc() : memref<32xf32>
  %y = memref.alloc() : memref<32x64xf32>
  loop.launch @row_sums(%x, %s) : memref<32x64xf32>, memref<32xf32>
  loop.launch @divide(%x, %s, %y) : memref<32x64xf32>, memref<32xf32>, memref<32x64xf32>
  memref.dealloc %s : memref<32xf32>
  func.return %y : memref<32x64xf32>
}
func.func @forward(%x: memref<32x64xf32>) -> memref<32x64xf32> {
  %y = func.call @normalize(%x) : (memref<32x64xf32>) -> memref<32x64xf32>
  func.return %y : memref<32x64xf32>
}
"""
    x = np.abs(np.random.default_rng(4).standard_normal((32, 64))).astype(np.float32) + 0.1
    (y,) = run(text, [x])
    assert_close(y, x / x.astype(np.float64).sum(axis=1, keepdims=True))


def test_integer_reductions():
    text = """
loop.kernel @k(%x: memref<16x8xi32>, %y: memref<16x2xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  loop.for %i in 0 to 16 {
    %sum = loop.for %j in 0 to 8 reduce add init 100 : i32 {
      %v = loop.load %x[%i, %j] : memref<16x8xi32>
      loop.yield %v : i32
    }
    %max = loop.for %j in 0 to 8 reduce max init -2147483648 : i32 {
      %v = loop.load %x[%i, %j] : memref<16x8xi32>
      %n = arith.subi %zero, %v : i32
      loop.yield %n : i32
    }
    loop.store %sum, %y[%i, %c0] : memref<16x2xi32>
    loop.store %max, %y[%i, %c1] : memref<16x2xi32>
  }
}
func.func @forward(%x: memref<16x8xi32>) -> memref<16x2xi32> {
  %y = memref.alloc() : memref<16x2xi32>
  loop.launch @k(%x, %y) : memref<16x8xi32>, memref<16x2xi32>
  func.return %y : memref<16x2xi32>
}
"""
    (x,), (y,) = run_random(text)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y[:, 0], x.sum(axis=1) + 100)
    np.testing.assert_array_equal(y[:, 1], (-x).max(axis=1))


# --- errors ----------------------------------------------------------------------------


def test_out_of_bounds_access_is_an_error():
    text = """
loop.kernel @k(%x: memref<4xf32>, %y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  loop.for %i in 0 to 4 {
    %p = arith.subi %i, %c1 : index
    %v = loop.load %x[%p] : memref<4xf32>
    loop.store %v, %y[%i] : memref<4xf32>
  }
}
func.func @forward(%x: memref<4xf32>) -> memref<4xf32> {
  %y = memref.alloc() : memref<4xf32>
  loop.launch @k(%x, %y) : memref<4xf32>, memref<4xf32>
  func.return %y : memref<4xf32>
}
"""
    # The verifier rejects this kernel; the interpreter reports it too, when it runs unverified.
    with pytest.raises(VerifyException, match=r"index %p of memref<4xf32> ranges over \[-1, 2\]"):
        parse(text)
    with pytest.raises(ExecutionError, match="loop.load.*from -1 to 2") as error:
        run(text, [np.zeros(4, np.float32)], verify=False)
    assert error.value.op.name == "loop.load"


def test_inputs_are_checked_against_the_signature():
    module = parse(as_prim(SOFTMAX_BODY, [("x", T)]))
    good = np.zeros((ROWS, COLS), np.float32)
    with pytest.raises(ValueError, match="takes 1 arguments .* but 2 inputs"):
        run_module(module, [good, good])
    with pytest.raises(ValueError, match=r"input #0 has shape \[2048, 32\]"):
        run_module(module, [good.T.copy()])
    with pytest.raises(ValueError, match="input #0 has dtype float64 .* held as float32"):
        run_module(module, [good.astype(np.float64)])
    with pytest.raises(ValueError, match="no function @main; the module's functions are: @forward"):
        run_module(module, [good], "main")
    with pytest.raises(ValueError, match="@k is a 'loop.kernel'"):
        run_module(parse(LOOP_SOFTMAX.replace("@softmax", "@k")), [good], "k")


def test_random_inputs():
    function = find_function(parse(LOOP_LAYER_NORM), "forward")
    first, again, other = (random_inputs(function, seed) for seed in (5, 5, 6))
    assert [a.shape for a in first] == [(ROWS, COLS), (COLS,), (COLS,)]
    assert all(a.dtype == np.float32 for a in first)
    np.testing.assert_array_equal(first[0], again[0])
    assert not np.array_equal(first[0], other[0])
    assert abs(first[0].std() - 1) < 0.05


# --- scalar ops, each inside a prim.map, against Python's math -------------------------

N = 64


def map_program(op_text: str, argument_types: list[str], result_type: str) -> str:
    """@forward maps `op_text` (operands %a0, %a1, ...; result %r) over tensors of N."""
    signature = ", ".join(f"%t{i}: tensor<{N}x{t}>" for i, t in enumerate(argument_types))
    operands = ", ".join(f"%t{i}" for i in range(len(argument_types)))
    tensor_types = ", ".join(f"tensor<{N}x{t}>" for t in argument_types)
    block_arguments = ", ".join(f"%a{i}: {t}" for i, t in enumerate(argument_types))
    return f"""
func.func @forward({signature}) -> tensor<{N}x{result_type}> {{
  %m = prim.map({operands}) : ({tensor_types}) -> tensor<{N}x{result_type}> {{
  ^bb0({block_arguments}):
    {op_text}
    prim.yield %r : {result_type}
  }}
  func.return %m : tensor<{N}x{result_type}>
}}
"""


def values(domain: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if domain == "any":
        return (rng.standard_normal(N) * 3).astype(np.float32)
    if domain == "positive":
        return (np.abs(rng.standard_normal(N)) * 3 + 0.01).astype(np.float32)
    if domain == "unit":
        return rng.uniform(-0.99, 0.99, N).astype(np.float32)
    if domain == "above_one":
        return rng.uniform(1.0, 10.0, N).astype(np.float32)
    if domain == "halves":
        return np.concatenate([np.arange(-8, 8) * 0.5, rng.standard_normal(N - 16) * 3]).astype(
            np.float32
        )
    if domain == "special":
        special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0, -2.0]
        return np.concatenate([special * 2, rng.standard_normal(N - 16)]).astype(np.float32)
    raise AssertionError(domain)


def elementwise(reference, *columns) -> np.ndarray:
    return np.array([reference(*map(float, row)) for row in zip(*columns)], np.float64)


def round_half_away_from_zero(x: float) -> float:
    return math.copysign(math.floor(abs(x) + 0.5), x) if abs(x) % 1 == 0.5 else float(round(x))


FLOAT_UNARY = {
    "arith.negf": (lambda x: -x, "any"),
    "math.absf": (abs, "any"),
    "math.exp": (math.exp, "any"),
    "math.exp2": (lambda x: 2.0**x, "any"),
    "math.expm1": (math.expm1, "any"),
    "math.log": (math.log, "positive"),
    "math.log2": (math.log2, "positive"),
    "math.log10": (math.log10, "positive"),
    "math.log1p": (math.log1p, "positive"),
    "math.sqrt": (math.sqrt, "positive"),
    "math.rsqrt": (lambda x: 1 / math.sqrt(x), "positive"),
    "math.cbrt": (lambda x: math.copysign(abs(x) ** (1 / 3), x), "any"),
    "math.tanh": (math.tanh, "any"),
    "math.erf": (math.erf, "any"),
    "math.sin": (math.sin, "any"),
    "math.cos": (math.cos, "any"),
    "math.tan": (math.tan, "any"),
    "math.sinh": (math.sinh, "any"),
    "math.cosh": (math.cosh, "any"),
    "math.asin": (math.asin, "unit"),
    "math.acos": (math.acos, "unit"),
    "math.atan": (math.atan, "any"),
    "math.asinh": (math.asinh, "any"),
    "math.acosh": (math.acosh, "above_one"),
    "math.atanh": (math.atanh, "unit"),
    "math.floor": (math.floor, "halves"),
    "math.ceil": (math.ceil, "halves"),
    "math.trunc": (math.trunc, "halves"),
    "math.round": (round_half_away_from_zero, "halves"),
    "math.roundeven": (round, "halves"),
}


@pytest.mark.parametrize("op", FLOAT_UNARY)
def test_float_unary_op(op):
    reference, domain = FLOAT_UNARY[op]
    x = values(domain, seed=len(op))
    (y,) = run(map_program(f"%r = {op} %a0 : f32", ["f32"], "f32"), [x])
    assert y.dtype == np.float32
    assert_close(y, elementwise(reference, x))


def maximum(x, y):
    return math.nan if math.isnan(x) or math.isnan(y) else max(x, y)


def minimum(x, y):
    return math.nan if math.isnan(x) or math.isnan(y) else min(x, y)


def maxnum(x, y):
    return y if math.isnan(x) else x if math.isnan(y) else max(x, y)


def minnum(x, y):
    return y if math.isnan(x) else x if math.isnan(y) else min(x, y)


def divide(x, y):
    if y == 0:
        if x == 0 or math.isnan(x):
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1, y)
    return x / y


FLOAT_BINARY = {
    "arith.addf": (lambda x, y: x + y, "special", "any"),
    "arith.subf": (lambda x, y: x - y, "any", "special"),
    "arith.mulf": (lambda x, y: x * y, "any", "any"),
    "arith.divf": (divide, "special", "special"),
    "arith.maximumf": (maximum, "special", "any"),
    "arith.minimumf": (minimum, "any", "special"),
    "arith.maxnumf": (maxnum, "special", "any"),
    "arith.minnumf": (minnum, "any", "special"),
    "math.powf": (math.pow, "positive", "any"),
    "math.atan2": (math.atan2, "any", "any"),
    "math.copysign": (math.copysign, "any", "special"),
}


@pytest.mark.parametrize("op", FLOAT_BINARY)
def test_float_binary_op(op):
    reference, lhs_domain, rhs_domain = FLOAT_BINARY[op]
    x, y = values(lhs_domain, seed=1), values(rhs_domain, seed=2)
    (z,) = run(map_program(f"%r = {op} %a0, %a1 : f32", ["f32", "f32"], "f32"), [x, y])
    assert_close(z, elementwise(reference, x, y))


def test_fpowi():
    x, n = values("any", seed=21), integers("shift", seed=22) - 16
    (y,) = run(map_program("%r = math.fpowi %a0, %a1 : f32, i32", ["f32", "i32"], "f32"), [x, n])
    assert_close(y, elementwise(lambda b, e: b ** int(e), x, n))


def test_fma_select_and_constants():
    x, y, z = (values("any", seed) for seed in (3, 4, 5))
    program = map_program(
        """%f = math.fma %a0, %a1, %a2 : f32
    %half = arith.constant 0.5 : f32
    %big = arith.cmpf ogt, %f, %half : f32
    %zero = arith.constant -0.0 : f32
    %r = arith.select %big, %f, %zero : f32""",
        ["f32", "f32", "f32"],
        "f32",
    )
    (r,) = run(program, [x, y, z])
    fma = elementwise(lambda a, b, c: a * b + c, x, y, z)
    assert_close(r, np.where(fma > 0.5, fma, 0.0))


def test_map_body_that_ignores_its_inputs():
    program = map_program("%r = arith.constant 3.0 : f32", ["f32"], "f32")
    (y,) = run(program, [values("any", seed=20)])
    np.testing.assert_array_equal(y, np.full(N, 3.0, np.float32))


def compare_floats(predicate: str, x: float, y: float) -> bool:
    unordered = math.isnan(x) or math.isnan(y)
    if predicate in ("false", "true"):
        return predicate == "true"
    if predicate in ("ord", "uno"):
        return unordered == (predicate == "uno")
    if unordered:
        return predicate.startswith("u")
    relation = predicate[1:]
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[
        relation
    ]


@pytest.mark.parametrize(
    "predicate",
    ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord"]
    + ["ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"],
)
def test_cmpf(predicate):
    x, y = values("special", seed=6), values("special", seed=7)
    y[20:30] = x[20:30]
    program = map_program(f"%r = arith.cmpf {predicate}, %a0, %a1 : f32", ["f32", "f32"], "i1")
    (result,) = run(program, [x, y])
    assert result.dtype == np.bool_
    expected = [compare_floats(predicate, float(a), float(b)) for a, b in zip(x, y)]
    np.testing.assert_array_equal(result, expected)


def wrap(value: int, bits: int = 32) -> int:
    return (value + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


def unsigned(value: int, bits: int = 32) -> int:
    return value % 2**bits


def truncating_divide(x: int, y: int) -> int:
    quotient = abs(x) // abs(y)
    return quotient if (x < 0) == (y < 0) else -quotient


INTEGER_BINARY = {
    "arith.addi": (lambda x, y: x + y, "wide", "wide"),
    "arith.subi": (lambda x, y: x - y, "wide", "wide"),
    "arith.muli": (lambda x, y: x * y, "wide", "wide"),
    "arith.divsi": (truncating_divide, "small", "nonzero"),
    "arith.remsi": (lambda x, y: x - y * truncating_divide(x, y), "small", "nonzero"),
    "arith.floordivsi": (lambda x, y: x // y, "small", "nonzero"),
    "arith.ceildivsi": (lambda x, y: -(-x // y), "small", "nonzero"),
    "arith.divui": (lambda x, y: unsigned(x) // unsigned(y), "small", "nonzero"),
    "arith.remui": (lambda x, y: unsigned(x) % unsigned(y), "small", "nonzero"),
    "arith.ceildivui": (lambda x, y: -(-unsigned(x) // unsigned(y)), "small", "nonzero"),
    "arith.maxsi": (max, "small", "small"),
    "arith.minsi": (min, "small", "small"),
    "arith.maxui": (lambda x, y: max(unsigned(x), unsigned(y)), "small", "small"),
    "arith.minui": (lambda x, y: min(unsigned(x), unsigned(y)), "small", "small"),
    "arith.andi": (lambda x, y: x & y, "wide", "wide"),
    "arith.ori": (lambda x, y: x | y, "wide", "wide"),
    "arith.xori": (lambda x, y: x ^ y, "wide", "wide"),
    "arith.shli": (lambda x, y: x << y, "wide", "shift"),
    "arith.shrsi": (lambda x, y: x >> y, "wide", "shift"),
    "arith.shrui": (lambda x, y: unsigned(x) >> y, "wide", "shift"),
}


def integers(domain: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    low, high = {
        "wide": (-(2**31), 2**31),
        "small": (-1000, 1000),
        "nonzero": (1, 50),
        "shift": (0, 32),
    }[domain]
    drawn = rng.integers(low, high, N)
    if domain == "nonzero":
        drawn *= rng.choice([-1, 1], N)
    return drawn.astype(np.int32)


@pytest.mark.parametrize("op", INTEGER_BINARY)
def test_integer_binary_op(op):
    reference, lhs_domain, rhs_domain = INTEGER_BINARY[op]
    x, y = integers(lhs_domain, seed=8), integers(rhs_domain, seed=9)
    (z,) = run(map_program(f"%r = {op} %a0, %a1 : i32", ["i32", "i32"], "i32"), [x, y])
    assert z.dtype == np.int32
    expected = [wrap(reference(int(a), int(b))) for a, b in zip(x, y)]
    np.testing.assert_array_equal(z, expected)


@pytest.mark.parametrize(
    "predicate, reference",
    [
        ("eq", lambda x, y: x == y),
        ("ne", lambda x, y: x != y),
        ("slt", lambda x, y: x < y),
        ("sle", lambda x, y: x <= y),
        ("sgt", lambda x, y: x > y),
        ("sge", lambda x, y: x >= y),
        ("ult", lambda x, y: unsigned(x) < unsigned(y)),
        ("ule", lambda x, y: unsigned(x) <= unsigned(y)),
        ("ugt", lambda x, y: unsigned(x) > unsigned(y)),
        ("uge", lambda x, y: unsigned(x) >= unsigned(y)),
    ],
)
def test_cmpi(predicate, reference):
    x, y = integers("small", seed=10), integers("small", seed=11)
    y[:10] = x[:10]
    program = map_program(f"%r = arith.cmpi {predicate}, %a0, %a1 : i32", ["i32", "i32"], "i1")
    (result,) = run(program, [x, y])
    np.testing.assert_array_equal(result, [reference(int(a), int(b)) for a, b in zip(x, y)])


def test_integer_unary_ops():
    x = integers("wide", seed=12)
    program = map_program(
        """%abs = math.absi %a0 : i32
    %pop = math.ctpop %a0 : i32
    %r = arith.addi %abs, %pop : i32""",
        ["i32"],
        "i32",
    )
    (result,) = run(program, [x])
    expected = [wrap(abs(int(v)) + bin(unsigned(int(v))).count("1")) for v in x]
    np.testing.assert_array_equal(result, expected)


def bfloat16(x: float) -> float:
    """Rounds to bf16 (nearest, ties to even) through the bits."""
    (bits,) = struct.unpack("<I", struct.pack("<f", x))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def float_bits(x: float) -> int:
    """The bits of an f32, read as an i32."""
    return struct.unpack("<i", struct.pack("<f", x))[0]


CASTS = {
    "arith.extf %a0 : f16 to f32": ("f16", "f32", float),
    "arith.truncf %a0 : f32 to f16": ("f32", "f16", lambda x: float(np.float16(x))),
    "arith.truncf %a0 : f32 to bf16": ("f32", "bf16", bfloat16),
    "arith.extf %a0 : bf16 to f64": ("bf16", "f64", float),
    "arith.fptosi %a0 : f32 to i32": ("f32", "i32", math.trunc),
    "arith.sitofp %a0 : i32 to f32": ("i32", "f32", np.float32),
    "arith.uitofp %a0 : i32 to f32": ("i32", "f32", lambda x: np.float32(unsigned(x))),
    "arith.extsi %a0 : i8 to i32": ("i8", "i32", int),
    "arith.extui %a0 : i8 to i32": ("i8", "i32", lambda x: unsigned(x, 8)),
    "arith.trunci %a0 : i32 to i8": ("i32", "i8", lambda x: wrap(x, 8)),
    "arith.index_cast %a0 : i32 to index": ("i32", "index", int),
    "arith.index_cast %a0 : index to i16": ("index", "i16", lambda x: wrap(x, 16)),
    "arith.extsi %a0 : i1 to i32": ("i1", "i32", lambda x: -int(x)),
    "arith.extui %a0 : i1 to i32": ("i1", "i32", int),
    "arith.sitofp %a0 : i1 to f32": ("i1", "f32", lambda x: -float(x)),
    "arith.bitcast %a0 : f32 to i32": ("f32", "i32", float_bits),
}


def cast_inputs(element_type: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if element_type in ("f16", "f32", "bf16"):
        x = (rng.standard_normal(N) * 1000).astype(np.float32)
        if element_type == "f16":
            return x.astype(np.float16)
        return np.array([bfloat16(v) for v in x], np.float32) if element_type == "bf16" else x
    if element_type == "i1":
        return rng.integers(0, 2, N).astype(np.bool_)
    bits = {"i8": 8, "i32": 32, "index": 64}[element_type]
    dtype = np.int64 if element_type == "index" else f"i{bits // 8}"
    return rng.integers(-(2 ** (bits - 1)), 2 ** (bits - 1), N).astype(dtype)


@pytest.mark.parametrize("cast", CASTS)
def test_cast(cast):
    source, target, reference = CASTS[cast]
    x = cast_inputs(source, seed=len(cast))
    (y,) = run(map_program(f"%r = {cast}", [source], target), [x])
    np.testing.assert_array_equal(y, [reference(v.item()) for v in x])


def test_fptoui_wraps_to_the_result_width():
    x = np.random.default_rng(19).uniform(0, 4e9, N).astype(np.float32)
    (y,) = run(map_program("%r = arith.fptoui %a0 : f32 to i32", ["f32"], "i32"), [x])
    np.testing.assert_array_equal(y, [wrap(math.trunc(v)) for v in x.tolist()])


def test_bf16_arithmetic_rounds_every_result():
    x, y = values("any", seed=13), values("any", seed=14)
    x_bf16 = np.array([bfloat16(v) for v in x], np.float32)
    y_bf16 = np.array([bfloat16(v) for v in y], np.float32)
    program = map_program(
        "%p = arith.mulf %a0, %a1 : bf16\n    %r = arith.addf %p, %a0 : bf16",
        ["bf16", "bf16"],
        "bf16",
    )
    (z,) = run(program, [x, y])
    expected = [bfloat16(bfloat16(a * b) + a) for a, b in zip(x_bf16.tolist(), y_bf16.tolist())]
    np.testing.assert_array_equal(z, expected)


def test_f16_and_i1_arithmetic():
    x, y = (values("any", seed).astype(np.float16) for seed in (15, 16))
    (z,) = run(map_program("%r = arith.mulf %a0, %a1 : f16", ["f16", "f16"], "f16"), [x, y])
    assert z.dtype == np.float16
    np.testing.assert_array_equal(z, x * y)
    p, q = (np.random.default_rng(seed).integers(0, 2, N).astype(bool) for seed in (17, 18))
    (s,) = run(map_program("%r = arith.addi %a0, %a1 : i1", ["i1", "i1"], "i1"), [p, q])
    np.testing.assert_array_equal(s, p ^ q)
