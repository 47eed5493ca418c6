"""fuse-prims: the structure of the fused program, its kernel names, and numerically: the fused
program computes what the prim program computes (exactly: the same ops on the same values),
and so does it after lower-fused-to-loop."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from emmy.dialects import fused, make_context, prim
from emmy.passes.fuse_prims import FusePrimsPass, kernel_name, location_name
from emmy.passes.lower_fused_to_loop import LowerFusedToLoopPass
from emmy.passes.registry import registered_passes
from emmy.tools.interpreter.run import find_function, random_inputs, run_module

LIT_FILE = Path(__file__).parents[1] / "Transforms" / "fuse-prims.mlir"


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def fuse(module: ModuleOp) -> ModuleOp:
    FusePrimsPass().apply(make_context(), module)
    module.verify()
    return module


def functions(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.body.block.ops if isinstance(op, func.FuncOp)]


def kernels(function: func.FuncOp) -> list[fused.KernelOp]:
    return [op for op in function.body.block.ops if isinstance(op, fused.KernelOp)]


def kernel_names(module: ModuleOp, function: str = "forward") -> list[str]:
    return [k.kernel_name.data for k in kernels(find_function(module, function))]


def count_expensive(ops) -> int:
    return sum(isinstance(op, prim.ReduceOp | prim.ContractOp) for op in ops)


def live_expensive(function: func.FuncOp) -> int:
    """The reductions and contractions that the function's results depend on."""
    live, stack = set(), list(function.body.block.last_op.operands)
    while stack:
        owner = stack.pop().owner
        if isinstance(owner, Operation) and owner not in live:
            live.add(owner)
            stack.extend(owner.operands)
    return count_expensive(live)


def assert_fused_structure(module: ModuleOp, expensive_before: dict[str, int]) -> None:
    """The host functions hold only kernels, dense constants and the return; each kernel reads
    only host values defined before it, and each of its results is used; every reduction and
    contraction is in exactly one kernel."""
    for function in functions(module):
        block = function.body.block
        defined = set(block.args)
        for op in block.ops:
            assert isinstance(op, fused.KernelOp | prim.ConstantOp | func.ReturnOp), op.name
            for operand in op.operands:
                assert operand in defined, f"{op.name} reads a value defined after it"
            defined.update(op.results)
            if isinstance(op, fused.KernelOp):
                assert all(result.uses for result in op.outputs), "a kernel result is unused"
                assert len(set(op.inputs)) == len(op.inputs), "a kernel reads a value twice"
                assert re.fullmatch(r"k_[A-Za-z0-9_]+", op.kernel_name.data)
        inside = [o for k in kernels(function) for o in k.body.walk()]
        assert count_expensive(inside) == expensive_before[function.sym_name.data]


def check_numerics(text: str, seed: int = 0) -> ModuleOp:
    """Runs each function before fuse-prims, after it (the same results exactly), and after
    lower-fused-to-loop (to 1e-5 relative)."""
    module = parse(text)
    names = [f.sym_name.data for f in functions(module)]
    inputs = {n: random_inputs(find_function(module, n), seed) for n in names}
    expected = {n: run_module(module, inputs[n], n) for n in names}
    expensive = {f.sym_name.data: live_expensive(f) for f in functions(module)}
    fuse(module)
    assert_fused_structure(module, expensive)
    got = {n: run_module(module, inputs[n], n) for n in names}
    for n in names:
        for a, b in zip(expected[n], got[n], strict=True):
            np.testing.assert_array_equal(b, a, err_msg=f"@{n} after fuse-prims")
    lowered = parse(str(module))
    LowerFusedToLoopPass().apply(make_context(), lowered)
    lowered.verify()
    for n in names:
        for a, b in zip(got[n], run_module(lowered, inputs[n], n), strict=True):
            # float32 sums in another order: relative to the result's scale, as elements
            # near a cancellation differ by more than their own size allows.
            scale = max(1.0, float(np.abs(a).max(initial=0.0)))
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5 * scale, err_msg=f"@{n} loops")
    return module


def lit_cases() -> list[str]:
    return [chunk for chunk in LIT_FILE.read_text().split("// -----") if "func.func" in chunk]


def case_id(chunk: str) -> str:
    return re.search(r"func\.func @(\w+)", chunk).group(1)


@pytest.mark.parametrize("chunk", lit_cases(), ids=case_id)
def test_lit_cases_compute_the_same(chunk):
    check_numerics(chunk)


def test_registered():
    assert registered_passes()["fuse-prims"] is FusePrimsPass


# --- programs built here -----------------------------------------------------------------


def unary(name: str, x: str, shape: str, body: str, loc: str | None = None) -> str:
    """A one-input map; `body` computes `%o` from `%a`."""
    where = f' loc("{loc}")' if loc else ""
    return (
        f"  %{name} = prim.map(%{x}) : (tensor<{shape}xf32>) -> tensor<{shape}xf32> {{\n"
        f"  ^bb0(%a: f32):\n    {body}\n    prim.yield %o : f32\n  }}{where}\n"
    )


def binary(name: str, x: str, y: str, shape: str, op: str, loc: str | None = None) -> str:
    where = f' loc("{loc}")' if loc else ""
    return (
        f"  %{name} = prim.map(%{x}, %{y}) : (tensor<{shape}xf32>, tensor<{shape}xf32>) -> "
        f"tensor<{shape}xf32> {{\n  ^bb0(%a: f32, %b: f32):\n    %o = arith.{op} %a, %b : f32\n"
        f"    prim.yield %o : f32\n  }}{where}\n"
    )


def rms_norm(out: str, x: str, w: str, rows: str, n: int, loc="rms_norm") -> str:
    return (
        unary(f"{out}_sq", x, f"{rows}x{n}", "%o = arith.mulf %a, %a : f32", loc)
        + f"  %{out}_ss = prim.reduce add %{out}_sq axes [{rows.count('x') + 1}] keepdim init 0.0 "
        f": "
        f'tensor<{rows}x{n}xf32> -> tensor<{rows}x1xf32> loc("{loc}")\n'
        + unary(
            f"{out}_r",
            f"{out}_ss",
            f"{rows}x1",
            f"%n = arith.constant {float(n)} : f32\n    %e = arith.constant 1.0e-5 : f32\n"
            "    %m = arith.divf %a, %n : f32\n    %t = arith.addf %m, %e : f32\n"
            "    %o = math.rsqrt %t : f32",
            loc,
        )
        + f"  %{out}_rb = prim.broadcast %{out}_r : tensor<{rows}x1xf32> -> "
        f'tensor<{rows}x{n}xf32> loc("{loc}")\n'
        + f"  %{out}_wb = prim.broadcast %{w} : tensor<{n}xf32> -> tensor<{rows}x{n}xf32> "
        f'loc("{loc}")\n'
        + binary(f"{out}_y", x, f"{out}_rb", f"{rows}x{n}", "mulf", loc)
        + binary(out, f"{out}_y", f"{out}_wb", f"{rows}x{n}", "mulf", loc)
    )


def linear(out: str, x: str, w: str, rows: str, k: int, n: int) -> str:
    """`x @ w.T` for a [n, k] weight."""
    return (
        f"  %{out}_wt = prim.permute %{w} [1, 0] : tensor<{n}x{k}xf32> -> tensor<{k}x{n}xf32> "
        f'loc("linear")\n'
        f"  %{out} = prim.contract %{x}, %{out}_wt : tensor<{rows}x{k}xf32>, tensor<{k}x{n}xf32> "
        f"-> "
        f'tensor<{rows}x{n}xf32> loc("linear")\n'
    )


SEQ, DIM, HIDDEN = 8, 16, 32


def transformer_block(layer: int, x: str) -> str:
    """One pre-norm block over a [SEQ, DIM] activation: attention with one head, then a
    SwiGLU MLP, each with a residual add. Weights are @forward arguments named by layer."""
    p = f"l{layer}"
    s, d, h = SEQ, DIM, HIDDEN
    text = rms_norm(f"{p}_n1", x, f"{p}_g1", f"{s}", d)
    for name in ("q", "k", "v"):
        text += linear(f"{p}_{name}", f"{p}_n1", f"{p}_w{name}", f"{s}", d, d)
    text += (
        f"  %{p}_kt = prim.permute %{p}_k [1, 0] : tensor<{s}x{d}xf32> -> tensor<{d}x{s}xf32> "
        f'loc("sdpa")\n'
        f"  %{p}_sc = prim.contract %{p}_q, %{p}_kt : tensor<{s}x{d}xf32>, tensor<{d}x{s}xf32> -> "
        f'tensor<{s}x{s}xf32> loc("sdpa")\n'
        + unary(
            f"{p}_sc2",
            f"{p}_sc",
            f"{s}x{s}",
            "%c = arith.constant 0.25 : f32\n    %o = arith.mulf %a, %c : f32",
            "sdpa",
        )
        + f"  %{p}_mx = prim.reduce max %{p}_sc2 axes [1] keepdim init -inf : tensor<{s}x{s}xf32> "
        f'-> tensor<{s}x1xf32> loc("sdpa")\n'
        f"  %{p}_mxb = prim.broadcast %{p}_mx : tensor<{s}x1xf32> -> tensor<{s}x{s}xf32> "
        f'loc("sdpa")\n'
        + binary(f"{p}_d", f"{p}_sc2", f"{p}_mxb", f"{s}x{s}", "subf", "sdpa")
        + unary(f"{p}_e", f"{p}_d", f"{s}x{s}", "%o = math.exp %a : f32", "sdpa")
        + f"  %{p}_sm = prim.reduce add %{p}_e axes [1] keepdim init 0.0 : tensor<{s}x{s}xf32> -> "
        f'tensor<{s}x1xf32> loc("sdpa")\n'
        f"  %{p}_smb = prim.broadcast %{p}_sm : tensor<{s}x1xf32> -> tensor<{s}x{s}xf32> "
        f'loc("sdpa")\n'
        + binary(f"{p}_pr", f"{p}_e", f"{p}_smb", f"{s}x{s}", "divf", "sdpa")
        + f"  %{p}_at = prim.contract %{p}_pr, %{p}_v : tensor<{s}x{s}xf32>, tensor<{s}x{d}xf32> "
        f'-> tensor<{s}x{d}xf32> loc("sdpa")\n'
    )
    text += linear(f"{p}_o", f"{p}_at", f"{p}_wo", f"{s}", d, d)
    text += binary(f"{p}_h", x, f"{p}_o", f"{s}x{d}", "addf", "add")
    text += rms_norm(f"{p}_n2", f"{p}_h", f"{p}_g2", f"{s}", d)
    text += linear(f"{p}_gt", f"{p}_n2", f"{p}_wg", f"{s}", d, h)
    text += linear(f"{p}_up", f"{p}_n2", f"{p}_wu", f"{s}", d, h)
    text += unary(
        f"{p}_sl",
        f"{p}_gt",
        f"{s}x{h}",
        "%one = arith.constant 1.0 : f32\n    %n = arith.negf %a : f32\n    %ex = math.exp %n : "
        "f32\n"
        "    %den = arith.addf %one, %ex : f32\n    %o = arith.divf %a, %den : f32",
        "silu",
    )
    text += binary(f"{p}_gu", f"{p}_sl", f"{p}_up", f"{s}x{h}", "mulf", "mul")
    text += linear(f"{p}_dn", f"{p}_gu", f"{p}_wd", f"{s}", h, d)
    text += binary(f"{p}_out", f"{p}_h", f"{p}_dn", f"{s}x{d}", "addf", "add")
    return text


def transformer(layers: int) -> str:
    s, d, h = SEQ, DIM, HIDDEN
    args = [f"%x: tensor<{s}x{d}xf32>"]
    for layer in range(layers):
        p = f"l{layer}"
        args += [f"%{p}_g1: tensor<{d}xf32>", f"%{p}_g2: tensor<{d}xf32>"]
        args += [f"%{p}_w{n}: tensor<{d}x{d}xf32>" for n in ("q", "k", "v", "o")]
        args += [f"%{p}_wg: tensor<{h}x{d}xf32>", f"%{p}_wu: tensor<{h}x{d}xf32>"]
        args += [f"%{p}_wd: tensor<{d}x{h}xf32>"]
    body, x = "", "x"
    for layer in range(layers):
        body += transformer_block(layer, x)
        x = f"l{layer}_out"
    return (
        f"func.func @forward({', '.join(args)}) -> tensor<{s}x{d}xf32> {{\n{body}"
        f"  func.return %{x} : tensor<{s}x{d}xf32>\n}}\n"
    )


def test_transformer_block_kernels():
    module = check_numerics(transformer(1))
    assert kernel_names(module) == [
        "k_rms_norm",  # the normalized rows the projections read (a computed operand)
        "k_linear",  # q and v, siblings (products read as they are), each stored
        "k_linear_sdpa",  # k, stored transposed for the scores (its epilogue): no sibling
        "k_sdpa",  # the scores, scaled in the epilogue
        "k_sdpa",  # the softmax: its statistics and the probabilities P @ V reads
        "k_sdpa",  # probabilities @ v
        "k_linear_add",  # the output projection with the residual add
        "k_rms_norm",
        "k_linear_silu_mul",  # gate and up, siblings: silu(gate) * up as their epilogue
        "k_linear_add",  # down, with the residual add
    ]
    function = find_function(module, "forward")
    siblings = [
        k
        for k in kernels(function)
        if sum(isinstance(op, prim.ContractOp) for op in k.body.block.ops) == 2
    ]
    assert [k.kernel_name.data for k in siblings] == ["k_linear", "k_linear_silu_mul"]
    softmax = kernels(function)[4]
    assert [type(op) for op in softmax.body.walk() if isinstance(op, prim.ReduceOp)] == [
        prim.ReduceOp,
        prim.ReduceOp,
    ]
    assert len(softmax.outputs) == 1


def test_deep_models_read_a_bounded_number_of_tensors_per_kernel():
    """The residual stream is materialized by the kernels whose epilogue adds to it, so no
    kernel recomputes the sum of every earlier layer's output."""
    module = check_numerics(transformer(3))
    function = find_function(module, "forward")
    assert max(len(k.inputs) for k in kernels(function)) <= 5
    names = kernel_names(module)
    assert names[:10] == names[10:20] == names[20:]


def post_norm(layers: int) -> str:
    """`x = rms_norm(x + linear(x))`, repeated: the residual stream passes through norms."""
    s, d = SEQ, DIM
    args = [f"%x: tensor<{s}x{d}xf32>"]
    body, x = "", "x"
    for layer in range(layers):
        p = f"l{layer}"
        args += [f"%{p}_w: tensor<{d}x{d}xf32>", f"%{p}_g: tensor<{d}xf32>"]
        body += linear(f"{p}_o", x, f"{p}_w", f"{s}", d, d)
        body += binary(f"{p}_r", x, f"{p}_o", f"{s}x{d}", "addf", "add")
        body += rms_norm(f"{p}_x", f"{p}_r", f"{p}_g", f"{s}", d)
        x = f"{p}_x"
    return (
        f"func.func @forward({', '.join(args)}) -> tensor<{s}x{d}xf32> {{\n{body}"
        f"  func.return %{x} : tensor<{s}x{d}xf32>\n}}\n"
    )


def test_post_norm_layers_read_a_bounded_number_of_tensors_per_kernel():
    module = check_numerics(post_norm(6))
    function = find_function(module, "forward")
    assert max(len(k.inputs) for k in kernels(function)) <= 5
    # Per layer: the linear with the residual add as its epilogue, then the norm, which
    # materializes the normalized stream the next linear reads (a computed operand); the
    # last norm's kernel yields the result.
    assert kernel_names(module) == ["k_linear_add", "k_rms_norm"] * 6


def test_many_layers_fuse_quickly():
    import time

    module = parse(transformer(8))
    start = time.perf_counter()
    fuse(module)
    assert time.perf_counter() - start < 20
    assert len(kernel_names(module)) == 10 * 8


# --- kernel names ------------------------------------------------------------------------


def named(desc: str) -> NameLoc:
    return NameLoc(StringAttr(desc), FileLineColLoc(StringAttr("model.py"), IntAttr(3), IntAttr(5)))


SOFTMAX = """
func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = prim.reduce max %x axes [1] keepdim init -inf : tensor<4x8xf32> -> tensor<4x1xf32>
  %mb = prim.broadcast %m : tensor<4x1xf32> -> tensor<4x8xf32>
  %e = prim.map(%x, %mb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %o = math.exp %d : f32
    prim.yield %o : f32
  }
  %s = prim.reduce add %e axes [1] keepdim init 0.0 : tensor<4x8xf32> -> tensor<4x1xf32>
  %sb = prim.broadcast %s : tensor<4x1xf32> -> tensor<4x8xf32>
  %r = prim.map(%e, %sb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %o = arith.divf %a, %b : f32
    prim.yield %o : f32
  }
  func.return %r : tensor<4x8xf32>
}
"""

LINEAR_SILU = """
func.func @forward(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>)
    -> tensor<4x8xf32> {
  %c = prim.contract %x, %w : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %bb = prim.broadcast %b : tensor<8xf32> -> tensor<4x8xf32>
  %y = prim.map(%c, %bb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%u: f32, %v: f32):
    %s = arith.addf %u, %v : f32
    prim.yield %s : f32
  }
  %z = prim.map(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%u: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.negf %u : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %s = arith.divf %u, %d : f32
    prim.yield %s : f32
  }
  func.return %z : tensor<4x8xf32>
}
"""


def prim_ops(module: ModuleOp) -> list[Operation]:
    block = find_function(module, "forward").body.block
    return [op for op in block.ops if op.dialect_name() == "prim"]


def test_kernel_named_for_its_torch_op():
    module = parse(SOFTMAX)
    for op in prim_ops(module):
        op.location = named("softmax")
    assert kernel_names(fuse(module)) == ["k_softmax"]


def test_contraction_named_first_then_program_order():
    module = parse(LINEAR_SILU)
    contract, broadcast, bias, silu = prim_ops(module)
    silu.location = named("silu")
    for op in (contract, broadcast, bias):
        op.location = named("linear")
    assert kernel_names(fuse(module)) == ["k_linear_silu"]


def test_reduction_named_before_earlier_elementwise_ops():
    module = parse(SOFTMAX)
    ops = prim_ops(module)
    for op, desc in zip(ops, ["amax", "expand", "exp", "sum", "expand", "div"]):
        op.location = named(desc)
    # Reductions first (amax, sum), then the rest in program order; three parts at most.
    assert kernel_names(fuse(module)) == ["k_amax_sum_expand"]


def test_ops_without_a_name_contribute_their_kind():
    assert kernel_names(fuse(parse(SOFTMAX))) == ["k_reduce_broadcast_map"]
    module = parse(LINEAR_SILU)
    prim_ops(module)[3].location = named("silu")
    assert kernel_names(fuse(module)) == ["k_contract_broadcast_map"]


def test_name_is_sanitized_and_found_in_fused_and_callsite_locations():
    assert location_name(FusedLoc([UnknownLoc(), named("layer_norm")], NoneAttr())) == "layer_norm"
    module = parse(SOFTMAX)
    for op in prim_ops(module):
        op.location = FusedLoc([UnknownLoc(), named("aten.softmax.int")], NoneAttr())
    assert kernel_names(fuse(module)) == ["k_aten_softmax_int"]


def test_names_are_stable():
    def names() -> list[str]:
        module = parse(transformer(2))
        for index, op in enumerate(prim_ops(module)):
            if index % 3 == 0:
                op.location = UnknownLoc()
        return [str(fuse(module))]

    assert names() == names()


def test_kernel_name_helper_caps_parts():
    module = parse(SOFTMAX)
    ops = prim_ops(module)
    for op, desc in zip(ops, "abcdef"):
        op.location = named(desc)
    assert kernel_name(ops) == "k_a_d_b"


# --- the pass's contract -----------------------------------------------------------------


def test_second_run_changes_nothing():
    module = fuse(parse(transformer(1)))
    before = str(module)
    assert str(fuse(module)) == before


def test_kernel_location_is_its_primary_op():
    module = parse(LINEAR_SILU)
    prim_ops(module)[0].location = named("linear")
    (kernel,) = kernels(find_function(fuse(module), "forward"))
    assert location_name(kernel.location) == "linear"


def test_unknown_host_op_is_an_error():
    text = """
    func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
      %c = arith.constant 1.0 : f32
      func.return %x : tensor<4xf32>
    }
    """
    with pytest.raises(PassFailedException, match="arith.constant"):
        fuse(parse(text))


def test_function_without_prim_ops_is_left_alone():
    text = """
    func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
      func.return %x : tensor<4xf32>
    }
    """
    module = parse(text)
    assert str(fuse(module)) == str(parse(text))


# --- random programs -----------------------------------------------------------------------


def random_program(seed: int) -> str:
    """A random DAG over 4x4 tensors: elementwise maps; row, column and full reductions
    (computed on, then broadcast back); contractions; transposes, reshapes, slices and
    concats; returning a few of its values."""
    rng = random.Random(seed)
    full = "tensor<4x4xf32>"
    values = ["x", "y", "z"]
    lines = []
    kinds = [
        "unary",
        "binary",
        "binary",
        "reduce",
        "reduce",
        "contract",
        "permute",
        "reshape",
        "halves",
    ]
    for index in range(rng.randint(4, 16)):
        name = f"v{index}"
        kind = rng.choice(kinds)
        a, b = rng.choice(values), rng.choice(values)
        if kind == "unary":
            lines.append(unary(name, a, "4x4", "%o = math.tanh %a : f32"))
        elif kind == "binary":
            lines.append(binary(name, a, b, "4x4", rng.choice(["addf", "mulf", "subf"])))
        elif kind == "reduce":
            axes, small, keep = rng.choice(
                [
                    ("0", "1x4", " keepdim"),
                    ("1", "4x1", " keepdim"),
                    ("0", "4", ""),
                    ("0, 1", "1x1", " keepdim"),
                ]
            )
            combiner, init = rng.choice([("add", "0.0"), ("max", "-inf")])
            lines.append(
                f"  %{name}_r = prim.reduce {combiner} %{a} axes [{axes}]{keep} init {init} : "
                f"{full} -> tensor<{small}xf32>\n"
            )
            source = f"{name}_r"
            if rng.random() < 0.5:  # computed on at the reduced shape first
                lines.append(unary(f"{name}_s", source, small, "%o = math.tanh %a : f32"))
                source = f"{name}_s"
            lines.append(f"  %{name} = prim.broadcast %{source} : tensor<{small}xf32> -> {full}\n")
        elif kind == "contract":
            lines.append(f"  %{name}_c = prim.contract %{a}, %{b} : {full}, {full} -> {full}\n")
            lines.append(unary(name, f"{name}_c", "4x4", "%o = math.tanh %a : f32"))
        elif kind == "permute":
            lines.append(f"  %{name} = prim.permute %{a} [1, 0] : {full} -> {full}\n")
        elif kind == "reshape":
            lines.append(
                f"  %{name}_f = prim.reshape %{a} : {full} -> tensor<2x8xf32>\n"
                f"  %{name}_p = prim.permute %{name}_f [1, 0] : tensor<2x8xf32> -> "
                f"tensor<8x2xf32>\n"
                f"  %{name} = prim.reshape %{name}_p : tensor<8x2xf32> -> {full}\n"
            )
        else:  # the odd columns of one value beside the even columns of another
            lines.append(
                f"  %{name}_a = prim.slice %{a} dim 1 start 1 step 2 : {full} -> tensor<4x2xf32>\n"
                f"  %{name}_b = prim.slice %{b} dim 1 start 0 step 2 : {full} -> tensor<4x2xf32>\n"
                f"  %{name} = prim.concat %{name}_a, %{name}_b dim 1 : tensor<4x2xf32>, "
                f"tensor<4x2xf32> -> {full}\n"
            )
        values.append(name)
    returned = sorted({values[-1], *rng.sample(values[3:], min(2, len(values) - 3))})
    types = ", ".join([full] * len(returned))
    return (
        f"func.func @forward(%x: {full}, %y: {full}, %z: {full}) -> ({types}) {{\n"
        + "".join(lines)
        + f"  func.return {', '.join('%' + v for v in returned)} : {types}\n}}\n"
    )


@pytest.mark.parametrize("seed", range(200))
def test_random_programs(seed):
    check_numerics(random_program(seed), seed)


def test_a_products_operand_of_a_deep_elementwise_dag_is_fused_in_linear_time() -> None:
    """The operand of a product computed by 48 rounds of `x = exp(x) * sin(x)` reaches x along
    2^48 paths: fuse-prims follows each value once, within seconds, not once a path."""
    from emmy.tools.bench.differential import lower
    from emmy.tools.frontend.program import load_program, time_limit

    source = (
        "class Deep(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.linear = nn.Linear(8, 4)\n"
        "    def forward(self, x):\n"
        "        for _ in range(48):\n"
        "            x = torch.exp(x) * torch.sin(x)\n"
        "        return self.linear(x)\n"
        "Deep()(torch.randn(3, 8))\n"
    )
    torch_ir = load_program(source, "<source>").to_torch_ir()
    with time_limit(60):
        fused_ir = str(lower(torch_ir, "fused"))
    assert fused_ir.count("prim.contract") == 1, fused_ir
