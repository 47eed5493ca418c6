"""The prim, fused and loop dialects from Python.

Ops built with their constructors verify, print, and parse back to the same text, in the
custom and in the generic form. Broken IR, built or written, fails with an xDSL ParseError
(which carries a position) or VerifyException, never with another Python exception.
"""

from __future__ import annotations

import math
import re
from io import StringIO

import pytest
from xdsl.dialects import arith, func, memref
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i32,
)
from xdsl.ir import Block, Operation, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from emmy.dialects import fused, loop, make_context, prim
from emmy.dialects.combiner import COMBINERS, combine, float_literal, identity


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def generic_text(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out, print_generic_format=True).print_op(module)
    return out.getvalue()


def assert_round_trips(module: ModuleOp) -> str:
    """Verifies `module` and checks that both of its printed forms parse back to it."""
    module.verify()
    text = str(module)
    assert str(parse(text)) == text
    assert str(parse(generic_text(module))) == text
    return text


def host_function(
    name: str, arg_types, result_types, build_body
) -> tuple[func.FuncOp, list[Operation]]:
    """A func.func whose body is `build_body(block_args)`'s ops, returning what it says."""
    block = Block(arg_types=arg_types)
    ops, results = build_body(block.args)
    block.add_ops([*ops, func.ReturnOp(*results)])
    return func.FuncOp(name, (arg_types, result_types), Region(block)), ops


# --- ops built from Python ---------------------------------------------------------------


def test_map_built_with_a_body_round_trips():
    t = TensorType(f32, [4, 8])

    def scale_and_exp(scalars):
        x, w = scalars
        product = arith.MulfOp(x, w)
        exp = math_dialect.ExpOp(product.result)
        return [product, exp], exp.result

    def body(args):
        mapped = prim.MapOp.build(list(args), t, scale_and_exp)
        return [mapped], [mapped.result]

    function, (mapped,) = host_function("scale", [t, t], [t], body)
    text = assert_round_trips(ModuleOp([function]))
    assert "prim.map(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {" in text
    assert mapped.body.block.args[0].type == f32
    assert isinstance(mapped.body.block.last_op, prim.YieldOp)


@pytest.mark.parametrize("kind", COMBINERS)
@pytest.mark.parametrize("element_type", [f32, f16, bf16, i32], ids=str)
def test_reduce_from_its_identity(kind, element_type):
    source, reduced = TensorType(element_type, [2, 3, 4]), TensorType(element_type, [2, 1, 1])

    def body(args):
        op = prim.ReduceOp(kind, args[0], [1, 2], identity(kind, element_type), True, reduced)
        return [op], [op.result]

    function, (op,) = host_function("reduce", [source], [reduced], body)
    text = assert_round_trips(ModuleOp([function]))
    assert op.axis_list == (1, 2)
    assert f"prim.reduce {kind} %0 axes [1, 2] keepdim init " in text


def test_broadcast_adds_and_expands_dims():
    source, target = TensorType(f16, [3, 1]), TensorType(f16, [2, 3, 5])

    def body(args):
        op = prim.BroadcastOp(args[0], target)
        return [op], [op.result]

    function, _ = host_function("broadcast", [source], [target], body)
    text = assert_round_trips(ModuleOp([function]))
    assert "prim.broadcast %0 : tensor<3x1xf16> -> tensor<2x3x5xf16>" in text


def test_fused_kernel_with_several_results_round_trips():
    t, row = TensorType(f32, [4, 8]), TensorType(f32, [4])

    def body(args):
        kernel_block = Block(arg_types=[t])
        (x,) = kernel_block.args
        row_max = prim.ReduceOp("max", x, [1], identity("max", f32), False, row)
        kernel_block.add_ops([row_max, fused.YieldOp(x, row_max.result)])
        kernel = fused.KernelOp("k_max", list(args), [t, row], Region(kernel_block))
        return [kernel], list(kernel.outputs)

    function, (kernel,) = host_function("forward", [t], [t, row], body)
    text = assert_round_trips(ModuleOp([function]))
    assert kernel.kernel_name.data == "k_max"
    assert (
        "fused.kernel @k_max(%0) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {" in text
    )


def row_sum_kernel(source: MemRefType, target: MemRefType) -> loop.KernelOp:
    """`target[i] = sum_j source[i, j]`, built with the loop op constructors."""
    body = Block(arg_types=[source, target])
    x, y = body.args
    rows = loop.ForOp.empty(0, source.get_shape()[0])
    i = rows.induction_var
    columns = Block(arg_types=[IndexType()])
    value = loop.LoadOp(x, [i, columns.args[0]])
    columns.add_ops([value, loop.YieldOp(value.result)])
    total = loop.ForOp(0, source.get_shape()[1], Region(columns), ("add", identity("add", f32)))
    store = loop.StoreOp(total.accumulator[0], y, [i])
    rows.body.block.insert_ops_before([total, store], rows.body.block.last_op)
    body.add_op(rows)
    return loop.KernelOp("k_row_sum", [source, target], Region(body))


def test_loop_kernel_launched_from_the_host_round_trips():
    source, target = MemRefType(f32, [4, 8]), MemRefType(f32, [4])
    kernel = row_sum_kernel(source, target)

    def body(args):
        output = memref.AllocOp([], [], target)
        launch = loop.LaunchOp("k_row_sum", [args[0], output.memref])
        return [output, launch], [output.memref]

    host, _ = host_function("forward", [source], [target], body)
    text = assert_round_trips(ModuleOp([kernel, host]))
    assert (
        """\
  loop.kernel @k_row_sum(%0: memref<4x8xf32>, %1: memref<4xf32>) {
    loop.for %2 in 0 to 4 {
      %3 = loop.for %4 in 0 to 8 reduce add init 0.0 : f32 {
        %5 = loop.load %0[%2, %4] : memref<4x8xf32>
        loop.yield %5 : f32
      }
      loop.store %3, %1[%2] : memref<4xf32>
    }
  }
"""
        in text
    )
    assert "loop.launch @k_row_sum(%0, %1) : memref<4x8xf32>, memref<4xf32>" in text
    assert kernel.argument_types == (source, target)


def test_empty_loop_has_a_yield_and_an_index_induction_variable():
    parallel = loop.ForOp.empty(2, 7)
    assert parallel.trip_count == 5
    assert not parallel.is_reduction
    assert isinstance(parallel.induction_var.type, IndexType)
    assert isinstance(parallel.body.block.last_op, loop.YieldOp)
    reduction = loop.ForOp.empty(0, 0, ("max", identity("max", i8)))
    assert reduction.is_reduction
    assert reduction.accumulator[0].type == i8


# --- combiners ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "element_type", "expected"),
    [
        ("add", f32, 0.0),
        ("mul", bf16, 1.0),
        ("max", f16, -math.inf),
        ("min", f64, math.inf),
        ("max", i8, -128),
        ("min", i8, 127),
        ("max", i32, -(2**31)),
        ("mul", i32, 1),
        ("max", i1, 0),
        ("min", i1, 1),
    ],
)
def test_identity(kind, element_type, expected):
    init = identity(kind, element_type)
    assert init.type == element_type
    assert (
        init.value.data == expected
        or init.value.data == IntegerAttr(expected, element_type).value.data
    )


def test_identity_of_a_non_number_type_is_a_verify_error():
    with pytest.raises(VerifyException, match="no combiner identity for element type index"):
        identity("add", IndexType())


@pytest.mark.parametrize("kind", COMBINERS)
@pytest.mark.parametrize("element_type", [f32, i32], ids=str)
def test_combine_keeps_the_type(kind, element_type):
    block = Block(arg_types=[element_type, element_type])
    op = combine(kind, *block.args)
    assert op.dialect_name() == "arith"
    assert op.results[0].type == element_type


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (3.0, "3.0"),
        (1e-07, "1.0e-07"),
        (-1e20, "-1.0e+20"),
        (2.5e-300, "2.5e-300"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (math.nan, "nan"),
    ],
)
def test_float_literal(value, literal):
    assert float_literal(value) == literal


@pytest.mark.parametrize("value", [1e-07, -1e20, 65504.0, 2.0**-24, -0.0, math.inf, math.nan])
@pytest.mark.parametrize("element_type", [f16, f32, f64], ids=str)
def test_float_init_prints_as_a_literal_that_parses_back(value, element_type):
    t, scalar = TensorType(element_type, [4]), TensorType(element_type, [])

    def body(args):
        op = prim.ReduceOp("add", args[0], [0], FloatAttr(value, element_type), False, scalar)
        return [op], [op.result]

    function, (op,) = host_function("f", [t], [scalar], body)
    module = ModuleOp([function])
    reparsed = parse(assert_round_trips(module))
    (again,) = [o for o in reparsed.walk() if isinstance(o, prim.ReduceOp)]
    before, after = op.init.value.data, again.init.value.data
    assert (math.isnan(before) and math.isnan(after)) or (
        before == after and math.copysign(1, before) == math.copysign(1, after)
    )


# --- broken IR built from Python ------------------------------------------------------------


def test_launch_outside_a_module_is_a_verify_error():
    buffer = MemRefType(f32, [4])

    def body(args):
        return [loop.LaunchOp("k_missing", [args[0]])], []

    host, _ = host_function("forward", [buffer], [], body)
    with pytest.raises(
        VerifyException, match="no loop.kernel named @k_missing in the enclosing module"
    ):
        host.verify()


def test_loop_outside_a_kernel_is_a_verify_error():
    def body(args):
        return [loop.ForOp.empty(0, 4)], []

    host, _ = host_function("forward", [], [], body)
    with pytest.raises(VerifyException, match="'loop.for' must be nested in a loop.kernel"):
        ModuleOp([host]).verify()


def test_map_that_captures_a_value_is_a_verify_error():
    t = TensorType(f32, [4])

    def body(args):
        x, scale = args

        def scaled(scalars):
            product = arith.MulfOp(scalars[0], scale)
            return [product], product.result

        mapped = prim.MapOp.build([x], t, scaled)
        return [mapped], [mapped.result]

    host, _ = host_function("forward", [t, f32], [t], body)
    with pytest.raises(VerifyException, match="uses a value defined outside the map"):
        ModuleOp([host]).verify()


def test_fused_kernel_outside_a_function_is_a_verify_error():
    t = TensorType(f32, [4])
    kernel_block = Block(arg_types=[t])
    kernel_block.add_op(fused.YieldOp(kernel_block.args[0]))
    outer = Block(arg_types=[t])
    outer.add_op(fused.KernelOp("k", [outer.args[0]], [t], Region(kernel_block)))
    with pytest.raises(VerifyException, match="its parent is 'builtin.module'"):
        ModuleOp(Region(outer)).verify()


def test_reduce_over_a_missing_axis_is_a_verify_error():
    t = TensorType(f32, [4])

    def body(args):
        op = prim.ReduceOp("add", args[0], [1], identity("add", f32), False, t)
        return [op], [op.result]

    host, _ = host_function("forward", [t], [t], body)
    with pytest.raises(VerifyException, match="reduce axis 1 is out of range for a rank-1 input"):
        ModuleOp([host]).verify()


# --- malformed text ------------------------------------------------------------------------


def in_function(body: str, args: str = "%x: tensor<4xf32>, %s: f32, %m: memref<4xf32>") -> str:
    return f"func.func @f({args}) {{\n{body}\n  func.return\n}}"


def in_kernel(body: str) -> str:
    return (
        "loop.kernel @k(%x: memref<4x8xf32>) {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %s = arith.constant 0.0 : f32\n"
        f"{body}\n}}"
    )


MAP_BODY = "{\n^bb0(%a: f32):\n  prim.yield %a : f32\n}"

MALFORMED = [
    # prim.map
    (
        "map of a scalar",
        in_function(f"%r = prim.map(%s) : (f32) -> tensor<4xf32> {MAP_BODY}"),
        "prim.map input must be a ranked tensor, got f32",
    ),
    (
        "map to a scalar",
        in_function(f"%r = prim.map(%x) : (tensor<4xf32>) -> f32 {MAP_BODY}"),
        "prim.map result must be a ranked tensor, got f32",
    ),
    (
        "map of an unranked tensor",
        in_function(
            f"%r = prim.map(%u) : (tensor<*xf32>) -> tensor<4xf32> {MAP_BODY}", "%u: tensor<*xf32>"
        ),
        "prim.map input must be a ranked tensor, got tensor<*xf32>",
    ),
    (
        "map without a body",
        in_function("%r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32>"),
        "Expected region",
    ),
    (
        "map with more types than inputs",
        in_function(
            f"%r = prim.map(%x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {MAP_BODY}"
        ),
        "expected 2 operand types but had 1",
    ),
    (
        "map without a colon",
        in_function("%r = prim.map(%x) (tensor<4xf32>) -> tensor<4xf32> {\n}"),
        "Expected ':'",
    ),
    (
        "map with an empty region",
        in_function("%r = prim.map(%x) : (tensor<4xf32>) -> tensor<4xf32> {\n}"),
        "expected a single block, but got 0 blocks",
    ),
    # prim.reduce
    (
        "reduce with an unknown combiner",
        in_function("%r = prim.reduce sum %x axes [0] init 0.0 : tensor<4xf32> -> tensor<f32>"),
        "unknown combiner 'sum'; expected one of add, mul, max, min",
    ),
    (
        "reduce with a quoted combiner",
        in_function('%r = prim.reduce "add" %x axes [0] init 0.0 : tensor<4xf32> -> tensor<f32>'),
        "for the combiner",
    ),
    (
        "reduce of a memref",
        in_function("%r = prim.reduce add %m axes [0] init 0.0 : memref<4xf32> -> tensor<f32>"),
        "prim.reduce input must be a ranked tensor, got memref<4xf32>",
    ),
    (
        "reduce to a scalar",
        in_function("%r = prim.reduce add %x axes [0] init 0.0 : tensor<4xf32> -> f32"),
        "prim.reduce result must be a ranked tensor, got f32",
    ),
    (
        "reduce over a named axis",
        in_function("%r = prim.reduce add %x axes [i] init 0.0 : tensor<4xf32> -> tensor<f32>"),
        "for a reduce axis",
    ),
    (
        "reduce over a boolean axis",
        in_function("%r = prim.reduce add %x axes [true] init 0.0 : tensor<4xf32> -> tensor<f32>"),
        "for a reduce axis",
    ),
    (
        "reduce over an enormous axis",
        in_function(
            "%r = prim.reduce add %x axes [99999999999999999999999] init 0.0 : tensor<4xf32> -> "
            "tensor<f32>"
        ),
        "reduce axis 99999999999999999999999 does not fit in i64",
    ),
    (
        "reduce without axes",
        in_function("%r = prim.reduce add %x init 0.0 : tensor<4xf32> -> tensor<f32>"),
        "Expected 'axes'",
    ),
    (
        "reduce without init",
        in_function("%r = prim.reduce add %x axes [0] : tensor<4xf32> -> tensor<f32>"),
        "Expected 'init'",
    ),
    (
        "reduce from a word",
        in_function("%r = prim.reduce add %x axes [0] init zero : tensor<4xf32> -> tensor<f32>"),
        "for the init value",
    ),
    # MLIR lexes `1e-07` as the integer 1 followed by an identifier.
    (
        "reduce from an exponent without a point",
        in_function("%r = prim.reduce add %x axes [0] init 1e-07 : tensor<4xf32> -> tensor<f32>"),
        "Expected ':'",
    ),
    (
        "reduce of integers from a fraction",
        in_function(
            "%r = prim.reduce add %n axes [0] init 0.5 : tensor<4xi32> -> tensor<i32>",
            "%n: tensor<4xi32>",
        ),
        "init 0.5 is not a valid i32 constant",
    ),
    (
        "reduce of bytes from 300",
        in_function(
            "%r = prim.reduce add %n axes [0] init 300 : tensor<4xi8> -> tensor<i8>",
            "%n: tensor<4xi8>",
        ),
        "init 300 is out of range for i8; expected -128 <= init < 256",
    ),
    (
        "reduce of integers from -inf",
        in_function(
            "%r = prim.reduce max %n axes [0] init -inf : tensor<4xi32> -> tensor<i32>",
            "%n: tensor<4xi32>",
        ),
        "init -inf is not a valid i32 constant",
    ),
    (
        "reduce of indices",
        in_function(
            "%r = prim.reduce add %n axes [0] init 0 : tensor<4xindex> -> tensor<index>",
            "%n: tensor<4xindex>",
        ),
        "init 0 is not a valid index constant",
    ),
    # prim.broadcast
    (
        "broadcast to a scalar",
        in_function("%r = prim.broadcast %x : tensor<4xf32> -> f32"),
        "prim.broadcast result must be a ranked tensor, got f32",
    ),
    (
        "broadcast of a memref",
        in_function("%r = prim.broadcast %m : memref<4xf32> -> tensor<4xf32>"),
        "prim.broadcast input must be a ranked tensor, got memref<4xf32>",
    ),
    (
        "broadcast without an arrow",
        in_function("%r = prim.broadcast %x : tensor<4xf32> tensor<2x4xf32>"),
        "Expected '->'",
    ),
    # fused.kernel, fused.yield
    (
        "kernel of a scalar",
        in_function("%r = fused.kernel @k(%s) : (f32) -> tensor<4xf32> {\n^bb0(%a: f32):\n}"),
        "fused.kernel operand must be a ranked tensor, got f32",
    ),
    (
        "kernel to a scalar",
        in_function(
            "%r = fused.kernel @k(%x) : (tensor<4xf32>) -> f32 {\n^bb0(%a: tensor<4xf32>):\n}"
        ),
        "fused.kernel result must be a ranked tensor, got f32",
    ),
    (
        "kernel with more types than operands",
        in_function(
            "%r = fused.kernel @k(%x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {\n}"
        ),
        "expected 2 operand types but had 1",
    ),
    (
        "kernel without a name",
        in_function("%r = fused.kernel (%x) : (tensor<4xf32>) -> tensor<4xf32> {\n}"),
        "expect symbol name",
    ),
    (
        "kernel without a body",
        in_function("%r = fused.kernel @k(%x) : (tensor<4xf32>) -> tensor<4xf32>"),
        "Expected region",
    ),
    (
        "kernel with an unclosed result list",
        in_function("%r = fused.kernel @k(%x) : (tensor<4xf32>) -> (tensor<4xf32> {\n}"),
        "Expected ')'",
    ),
    (
        "kernel yielding a scalar",
        in_function("%r = fused.kernel @k() : () -> tensor<4xf32> {\n  fused.yield %s : f32\n}"),
        "fused.yield value must be a ranked tensor, got f32",
    ),
    (
        "kernel without results",
        in_function(
            "fused.kernel @k(%x) : (tensor<4xf32>) -> () "
            "{\n^bb0(%a: tensor<4xf32>):\n  fused.yield\n}"
        ),
        "a fused.kernel has at least one result; it has none",
    ),
    # loop.kernel, loop.for
    ("loop kernel argument without a type", "loop.kernel @k(%x) {\n}", "Expected ':'"),
    (
        "loop kernel of a scalar",
        "loop.kernel @k(%x: f32) {\n}",
        "kernel argument #0 must be a memref (or, last, the dynamic size as an index), got f32",
    ),
    ("loop kernel without a body", "loop.kernel @k(%x: memref<4xf32>)", "Expected region"),
    (
        "fractional loop bound",
        in_kernel("loop.for %i in 0 to 1.5 {\n}"),
        "Expected integer literal",
    ),
    (
        "symbolic loop bound",
        in_kernel("loop.for %i in 0 to %c0 {\n}"),
        "a loop with an upper bound operand runs to the dynamic size: its kernel's last "
        "argument, an index",
    ),
    ("loop without 'in'", in_kernel("loop.for %i 0 to 4 {\n}"), "Expected 'in'"),
    (
        "loop with a typed induction variable",
        in_kernel("loop.for %i : index in 0 to 4 {\n}"),
        "Expected 'in'",
    ),
    (
        "loop with an unknown combiner",
        in_kernel("%r = loop.for %i in 0 to 4 reduce avg init 0.0 : f32 {\n}"),
        "unknown combiner 'avg'",
    ),
    (
        "loop reducing memrefs",
        in_kernel("%r = loop.for %i in 0 to 4 reduce add init 0.0 : memref<4xf32> {\n}"),
        "init 0.0 is not a valid memref<4xf32> constant",
    ),
    (
        "loop with an entry block label",
        in_kernel("loop.for %i in 0 to 4 {\n^bb0(%j: index):\n}"),
        "invalid block name in region with named arguments",
    ),
    (
        "loop with a second block",
        in_kernel("loop.for %i in 0 to 4 {\n  loop.yield\n^bb1:\n  loop.yield\n}"),
        "a loop.for body is a single block",
    ),
    (
        "loop with descending bounds",
        in_kernel("loop.for %i in 4 to 0 {\n}"),
        "loop bounds 4 to 0 must satisfy 0 <= lower <= upper",
    ),
    # loop.load, loop.store, loop.launch
    (
        "load from a scalar",
        in_kernel("%v = loop.load %s[%c0] : f32"),
        "an accessed buffer must be a memref, got f32",
    ),
    (
        "load from a tensor",
        in_kernel("%v = loop.load %x[%c0, %c0] : tensor<4x8xf32>"),
        "an accessed buffer must be a memref, got tensor<4x8xf32>",
    ),
    (
        "load at a float index",
        in_kernel("%v = loop.load %x[%s, %c0] : memref<4x8xf32>"),
        "operand is used with type index",
    ),
    ("load without indices", in_kernel("%v = loop.load %x : memref<4x8xf32>"), "'[' expected"),
    (
        "load with too few indices",
        in_kernel("%v = loop.load %x[%c0] : memref<4x8xf32>"),
        "a rank-2 memref<4x8xf32> takes 2 indices, but 1 are given",
    ),
    (
        "store of an index",
        in_kernel("loop.store %c0, %x[%c0, %c0] : memref<4x8xf32>"),
        "operand is used with type f32",
    ),
    (
        "store without a comma",
        in_kernel("loop.store %s %x[%c0, %c0] : memref<4x8xf32>"),
        "Expected ','",
    ),
    (
        "launch of a scalar",
        in_function("loop.launch @k(%s) : f32"),
        "loop.launch argument must be a memref or index, got f32",
    ),
    ("launch without types", in_function("loop.launch @k(%m)"), "Expected ':'"),
    (
        "launch with more types than buffers",
        in_function("loop.launch @k(%m) : memref<4xf32>, memref<4xf32>"),
        "expected 2 operand types but had 1",
    ),
    (
        "launch of a nested symbol",
        in_function("loop.launch @k::@j(%m) : memref<4xf32>"),
        "'(' expected",
    ),
    (
        "launch of an unknown kernel",
        in_function("loop.launch @k(%m) : memref<4xf32>"),
        "no loop.kernel named @k in the enclosing module",
    ),
]


@pytest.mark.parametrize(
    ("text", "message"), [case[1:] for case in MALFORMED], ids=[case[0] for case in MALFORMED]
)
def test_malformed_ir_is_a_parse_or_verify_error(text, message):
    with pytest.raises((ParseError, VerifyException)) as raised:
        parse(text)
    assert message in str(raised.value)
    if isinstance(raised.value, ParseError):
        assert re.match(r"<unknown>:\d+:\d+", str(raised.value)), "a parse error has a position"


# --- mutated programs ---------------------------------------------------------------------

PROGRAMS = {
    "prim": """\
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4xf32> {
  %b = prim.broadcast %w : tensor<8xf32> -> tensor<4x8xf32>
  %m = prim.map(%x, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%u: f32, %v: f32):
    %p = arith.mulf %u, %v : f32
    prim.yield %p : f32
  }
  %r = prim.reduce max %m axes [1] init -inf : tensor<4x8xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
""",
    "fused": """\
func.func @g(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<1xf32>) {
  %y:2 = fused.kernel @k(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<1xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %s = prim.reduce add %a axes [0] keepdim init 0.0 : tensor<4xf32> -> tensor<1xf32>
    fused.yield %a, %s : tensor<4xf32>, tensor<1xf32>
  }
  func.return %y#0, %y#1 : tensor<4xf32>, tensor<1xf32>
}
""",
    # The launch comes before the kernel, so it is verified first.
    "loop": """\
func.func @h(%x: memref<4x8xf32>) -> memref<4xf32> {
  %y = memref.alloc() : memref<4xf32>
  loop.launch @k(%x, %y) : memref<4x8xf32>, memref<4xf32>
  func.return %y : memref<4xf32>
}
loop.kernel @k(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  loop.for %i in 0 to 4 {
    %s = loop.for %j in 0 to 8 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%i] : memref<4xf32>
  }
}
""",
}

TOKEN = re.compile(r'%[\w#]+|@\w+|\^\w+|"[\w.]+"|#[\w.]+<[^>]*>|[\w.]+|->|::|\S')
CUSTOM_REPLACEMENTS = [
    "",
    "f32",
    "index",
    "tensor<4xf32>",
    "memref<4xf32>",
    "}",
    "-1",
    "1.5",
    "inf",
]
GENERIC_REPLACEMENTS = [
    "",
    "f32",
    '"x"',
    "0 : index",
    "array<i32: 0>",
    "#builtin.int<-3>",
    "@k::@j",
]


def mutants(text: str, replacements: list[str]):
    """`text` cut before each token, and with each token replaced by each replacement, on
    the lines of this project's ops (xDSL's own ops are not under test here)."""
    offset = 0
    for line in text.splitlines(keepends=True):
        if any(dialect in line for dialect in ("prim.", "fused.", "loop.")):
            for token in TOKEN.finditer(line):
                start, end = offset + token.start(), offset + token.end()
                yield text[:start]
                for replacement in replacements:
                    yield text[:start] + replacement + text[end:]
        offset += len(line)


def assert_fails_cleanly_or_round_trips(text: str) -> None:
    try:
        module = parse(text)
    except (ParseError, VerifyException):
        return
    assert_round_trips(module)


@pytest.mark.parametrize("program", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_mutated_custom_form_fails_cleanly(program):
    for mutant in mutants(program, CUSTOM_REPLACEMENTS):
        assert_fails_cleanly_or_round_trips(mutant)


@pytest.mark.parametrize("program", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_mutated_generic_form_fails_cleanly(program):
    for mutant in mutants(generic_text(parse(program)), GENERIC_REPLACEMENTS):
        assert_fails_cleanly_or_round_trips(mutant)
