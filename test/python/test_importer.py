"""The PyTorch frontend and importer: programs in, verified Torch IR out, or a located error."""

from __future__ import annotations

import io
import re

import pytest
import torch
from corpus import PROGRAMS as CORPUS
from corpus import source
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, StringAttr
from xdsl.parser import Parser
from xdsl.printer import Printer

from emmy.dialects import make_context
from emmy.dialects import torch as t
from emmy.tools.bench.differential import check_levels
from emmy.tools.frontend.program import FrontendError, compile_source, load_program

LAMBDA_MODULE = """
class Apply(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *args):
        return self.f(*args)
"""


def applied(expression: str, *inputs: str) -> str:
    """A program that applies `lambda x, y, ...: expression` to example inputs."""
    names = "xyzw"[: len(inputs)]
    return f"{LAMBDA_MODULE}\nApply(lambda {', '.join(names)}: {expression})({', '.join(inputs)})"


X = "torch.randn(2, 8, 16)"

# Programs for forms the corpus does not reach. name: (program, torch ops that must appear)
EDGE_CASES = {
    "layer_norm_without_bias": (
        "nn.LayerNorm(16, bias=False)(torch.randn(2, 8, 16))",
        {"torch.layer_norm"},
    ),
    "views": (
        applied(
            "x.reshape(16, 16).view(2, 8, 16).permute(2, 0, 1).transpose(0, 1)"
            ".unsqueeze(0).squeeze(0)[:, None].expand(2, 3, 16, 8)[..., 1:7:2]",
            X,
        ),
        {
            "torch.reshape",
            "torch.permute",
            "torch.transpose",
            "torch.unsqueeze",
            "torch.squeeze",
            "torch.expand",
            "torch.slice",
        },
    ),
    "cat_split_select": (
        applied("torch.cat([x, x * 2], dim=-1).chunk(2, dim=-1)[1] + x[:, 3:4] + x[-1]", X),
        {"torch.cat", "torch.slice", "torch.squeeze"},
    ),
    "reductions": (
        applied(
            "x.var(-1) + x.var(-1, unbiased=False) + x.mean(-1) + x.amax(-1) + x.amin(-1) "
            "+ x.sum(-1, keepdim=True).squeeze(-1) + x.sum()",
            X,
        ),
        {"torch.var", "torch.mean", "torch.amax", "torch.amin", "torch.sum"},
    ),
    "where_clamp_comparisons": (
        applied(
            "torch.where(x > 0, x, 0.0) + x.clamp(-1, 1) + x.clamp(min=0.5) "
            "+ (x <= 0.5).float() + (x == x).float() + (x != 1).float() + (x >= x).float() "
            "+ torch.where(x < 1, 1.0, x) + x.masked_fill(x < 0, float('-inf'))",
            X,
        ),
        {
            "torch.where",
            "torch.clamp",
            "torch.gt",
            "torch.le",
            "torch.eq",
            "torch.ne",
            "torch.ge",
            "torch.lt",
            "torch.to",
            "torch.constant",
        },
    ),
    "arithmetic": (
        applied(
            "(x + 1) * 2 - x / 3 + x.add(x, alpha=2) + 1 - x + 2 ** x + x ** 2 "
            "+ torch.maximum(x, y) + torch.minimum(x, y) + torch.exp(x) + torch.log(x) "
            "+ torch.sqrt(x) + torch.rsqrt(x) + torch.tanh(x) + torch.sigmoid(x) + torch.relu(-x)",
            X,
            "torch.randn(16)",
        ),
        {
            "torch.add",
            "torch.sub",
            "torch.mul",
            "torch.div",
            "torch.pow",
            "torch.maximum",
            "torch.minimum",
            "torch.exp",
            "torch.log",
            "torch.sqrt",
            "torch.rsqrt",
            "torch.tanh",
            "torch.sigmoid",
            "torch.relu",
            "torch.neg",
        },
    ),
    "matmul": (
        applied(
            "x @ y + torch.bmm(x, y) + (x[0] @ y[0]) + torch.matmul(x[0, 0], y)[:, None] + x[0, "
            "0] @ y[0, 0]",
            "torch.randn(3, 4, 4)",
            "torch.randn(3, 4, 4)",
        ),
        {"torch.matmul", "torch.bmm"},
    ),
    "factories": (
        applied("x + torch.ones(16) + torch.full((8, 16), 2.0) + torch.arange(16)", X),
        {"torch.constant"},
    ),
}

# corpus program: torch ops that must appear
CORPUS_OPS = {
    "rms_norm": {"torch.rms_norm"},
    "layer_norm": {"torch.layer_norm"},
    "linear_bias": {"torch.linear"},
    "linear_no_bias": {"torch.linear"},
    "softmax_middle_dim": {"torch.softmax"},
    "log_softmax": {"torch.log_softmax"},
    "gelu_mlp": {"torch.gelu"},
    "swiglu_mlp": {"torch.linear", "torch.silu", "torch.mul"},
    "causal_attention": {"torch.sdpa"},
    "masked_attention": {"torch.sdpa"},
    "embedding": {"torch.embedding"},
    "to_dtype": {"torch.to", "torch.mul"},
    "llama_gqa_decoder_layer": {
        "torch.rms_norm",
        "torch.linear",
        "torch.sdpa",
        "torch.slice",
        "torch.cat",
        "torch.silu",
    },
}

# name: (program, torch ops that must appear): every corpus program in fp32 and bf16, and the
# edge cases
PROGRAMS = {
    f"{name}_{dtype}": (source(name, dtype), CORPUS_OPS.get(name, set()))
    for name in CORPUS
    for dtype in ("float32", "bfloat16")
} | EDGE_CASES

LLAMA_GQA_FP32 = source("llama_gqa_decoder_layer", "float32")


def test_expected_ops_name_corpus_programs():
    assert CORPUS_OPS.keys() <= CORPUS.keys()


def print_ir(module: ModuleOp, debuginfo: bool = False) -> str:
    stream = io.StringIO()
    Printer(stream, print_debuginfo=debuginfo).print_op(module)
    return stream.getvalue()


def forward_of(module: ModuleOp) -> func.FuncOp:
    (forward,) = module.body.block.ops
    assert isinstance(forward, func.FuncOp) and forward.sym_name.data == "forward"
    return forward


def argument_roles(forward: func.FuncOp) -> list[tuple[str, str, str]]:
    """(name, role, target) of each argument of @forward."""
    roles = []
    for argument, attrs in zip(forward.body.block.args, forward.arg_attrs.data):
        ((role, target),) = attrs.data.items()
        roles.append((argument.name_hint, role, target.data))
    return roles


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_imports_verifies_and_round_trips(name: str):
    source, expected_ops = PROGRAMS[name]
    module = compile_source(source, f"{name}.py")
    module.verify()
    for debuginfo in (False, True):
        text = print_ir(module, debuginfo)
        reparsed = Parser(make_context(), text).parse_module()
        reparsed.verify()
        assert print_ir(reparsed, debuginfo) == text
    op_names = {op.name for op in module.walk()}
    assert expected_ops <= op_names
    assert {n for n in op_names if not n.startswith("torch.")} == {
        "builtin.module",
        "func.func",
        "func.return",
    }


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_torch_op_is_located_in_the_program(name: str):
    module = compile_source(PROGRAMS[name][0], f"{name}.py")
    for op in module.walk():
        if op.name.startswith("torch."):
            assert isinstance(op.location, FileLineColLoc), op
            assert op.location.filename.data == f"{name}.py"


def test_parameters_are_function_arguments_in_signature_order():
    program = load_program("nn.Linear(3, 2)(torch.randn(4, 3))", "<string>")
    forward = forward_of(program.to_torch_ir())
    assert argument_roles(forward) == [
        ("p_weight", "emmy.param", "weight"),
        ("p_bias", "emmy.param", "bias"),
        ("input", "emmy.input", "input"),
    ]
    weight, bias, x = program.forward_arguments()
    assert weight is program.module.weight and bias is program.module.bias
    assert x is program.example_args[0]
    (linear,) = [op for op in forward.walk() if isinstance(op, t.LinearOp)]
    assert linear.weight is forward.body.block.args[0]
    assert linear.bias is forward.body.block.args[1]


def test_buffers_and_lifted_constants_are_function_arguments():
    program = load_program(
        """
class Shifted(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((4,), 2.0))
        self.register_buffer("shift", torch.ones(4), persistent=False)
        self.offset = torch.arange(4.0)

    def forward(self, x):
        return x * self.scale + self.shift + self.offset

Shifted()(torch.randn(3, 4))
""",
        "shifted.py",
    )
    forward = forward_of(program.to_torch_ir())
    assert argument_roles(forward) == [
        ("b_scale", "emmy.buffer", "scale"),
        ("b_shift", "emmy.buffer", "shift"),
        ("c_offset", "emmy.constant", "offset"),
        ("x", "emmy.input", "x"),
    ]
    values = program.forward_arguments()
    expected = [
        program.module.scale,
        program.module.shift,
        program.module.offset,
        program.example_args[0],
    ]
    assert all(torch.equal(a, b) for a, b in zip(values, expected, strict=True))


def test_llama_layer_weights_and_rotary_tables_are_arguments():
    forward = forward_of(compile_source(LLAMA_GQA_FP32, "llama.py"))
    roles = argument_roles(forward)
    assert ("p_attention_wq_weight", "emmy.param", "attention.wq.weight") in roles
    assert ("b_attention_cos", "emmy.buffer", "attention.cos") in roles
    assert roles[-1] == ("x", "emmy.input", "x")
    assert not [
        op for op in forward.walk() if isinstance(op, t.ConstantOp) and op.result.type.get_shape()
    ]


def test_tensor_promotion_is_an_explicit_conversion():
    module = compile_source(applied("x + y", "torch.randn(4).half()", "torch.randn(4)"), "p.py")
    to, add = [op for op in module.walk() if op.name.startswith("torch.")]
    assert isinstance(to, t.ToOp) and str(to.result.type) == "tensor<4xf32>"
    assert isinstance(add, t.AddOp) and add.lhs is to.result


def test_scalar_is_a_constant_of_the_tensors_type():
    module = compile_source(applied("x * 0.1", "torch.randn(4, dtype=torch.bfloat16)"), "p.py")
    (constant,) = [op for op in module.walk() if isinstance(op, t.ConstantOp)]
    assert str(constant.result.type) == "tensor<bf16>"
    # the value is 0.1 rounded to bf16, as torch rounds the scalar
    assert constant.value.get_values() == (torch.tensor(0.1, dtype=torch.bfloat16).item(),)


def test_add_alpha_scales_the_other_operand():
    module = compile_source(
        applied("x.add(y, alpha=3)", "torch.randn(4)", "torch.randn(4)"), "p.py"
    )
    constant, mul, add = [op for op in module.walk() if op.name.startswith("torch.")]
    assert constant.value.get_values() == (3.0,)
    assert isinstance(mul, t.MulOp) and isinstance(add, t.AddOp) and add.rhs is mul.result


def test_rms_norm_default_eps_is_resolved_for_the_compute_type():
    module = compile_source("nn.RMSNorm(8).half()(torch.randn(2, 8).half())", "p.py")
    (norm,) = [op for op in module.walk() if isinstance(op, t.RmsNormOp)]
    assert norm.eps.value.data == torch.finfo(torch.float32).eps


def test_sdpa_default_scale_is_resolved():
    module = compile_source(
        applied("F.scaled_dot_product_attention(x, x, x)", "torch.randn(1, 2, 4, 64)"), "p.py"
    )
    (sdpa,) = [op for op in module.walk() if isinstance(op, t.SdpaOp)]
    assert sdpa.scale.value.data == 0.125 and sdpa.is_causal is None


def test_grouped_query_attention_repeats_key_value_heads():
    module = compile_source(
        applied(
            "F.scaled_dot_product_attention(x, y, y, enable_gqa=True)",
            "torch.randn(1, 4, 8, 16)",
            "torch.randn(1, 2, 8, 16)",
        ),
        "p.py",
    )
    (sdpa,) = [op for op in module.walk() if isinstance(op, t.SdpaOp)]
    assert str(sdpa.key.type) == str(sdpa.value.type) == "tensor<1x4x8x16xf32>"


def test_ops_are_located_at_their_source_line_and_call():
    source = (
        "class M(nn.Module):\n    def forward(self, x):\n        return torch.exp(x) + 1\n"
        "M()(torch.randn(3))"
    )
    module = compile_source(source, "<string>")
    locations = {op.name: op.location for op in module.walk() if op.name.startswith("torch.")}
    exp = locations["torch.exp"]
    assert (exp.filename, exp.line.data, exp.column.data) == (StringAttr("<string>"), 3, 22)
    assert locations["torch.add"].line.data == 3


def test_ops_in_helper_functions_are_located_in_the_helper():
    module = compile_source(LLAMA_GQA_FP32, "llama.py")
    (neg, *_) = [op for op in module.walk() if isinstance(op, t.NegOp)]
    assert (
        neg.location.line.data
        == LLAMA_GQA_FP32.splitlines().index(
            "    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)"
        )
        + 1
    )


def test_unsupported_op_names_the_aten_op_and_the_source_line():
    source = (
        "class M(nn.Module):\n    def forward(self, x):\n"
        "        return torch.special.ndtri(x) * 2\nM()(torch.randn(3))"
    )
    with pytest.raises(FrontendError) as error:
        compile_source(source, "<string>")
    message = str(error.value)
    expected = "<string>:3:30: error: unsupported PyTorch op 'aten.special_ndtri.default'"
    assert message.startswith(expected)
    assert "        return torch.special.ndtri(x) * 2" in message.splitlines()


def test_calls_of_one_function_on_one_line_are_located_at_their_own_calls():
    """Two unsupported calls of `torch.special.ndtri` on one line: each error is at its own call
    (columns 30 and 61), in the one report of all of them."""
    line = "        return torch.special.ndtri(x).sum() + torch.special.ndtri(x * 2).sum() + 1"
    source = f"class M(nn.Module):\n    def forward(self, x):\n{line}\nM()(torch.randn(3, 4))"
    with pytest.raises(FrontendError) as error:
        compile_source(source, "<string>")
    located = re.findall(
        r"<string>:3:(\d+): error: unsupported PyTorch op 'aten.special_ndtri", str(error.value)
    )
    assert located == ["30", "61"]


DECOMPOSED = {
    "triu": ("torch.triu(x) + 1", ["torch.randn(5, 5)"]),
    "stack_unbind": ("torch.stack([r * 2 for r in x.unbind(0)], dim=1)", ["torch.randn(3, 4)"]),
    "flatten": ("torch.relu(torch.flatten(x, 1))", ["torch.randn(2, 3, 4)"]),
    "cross_entropy": ("F.cross_entropy(x, y)", ["torch.randn(6, 5)", "torch.randint(0, 5, (6,))"]),
}
"""Composite ops that Torch IR has no op for: PyTorch's core decompositions bring them to ops
it has, on emmy's own path (`emmy run`, `emmy compile`) as on the torch.compile backend's."""


@pytest.mark.parametrize("name", sorted(DECOMPOSED))
def test_composite_ops_reach_emmy_through_pytorchs_decompositions(name: str):
    expression, inputs = DECOMPOSED[name]
    source = applied(expression, *inputs)
    program = load_program(source, "<string>")
    torch_ir = program.to_torch_ir()
    line = (
        source.splitlines().index(
            f"Apply(lambda {', '.join('xy'[: len(inputs)])}: {expression})({', '.join(inputs)})"
        )
        + 1
    )
    for op in torch_ir.walk():
        if op.name.startswith("torch."):
            assert isinstance(op.location, FileLineColLoc) and op.location.line.data == line, op
    reports = check_levels(program, torch_ir, ("torch", "loop", "kernel"), seed=11)
    assert all(r.passed for r in reports), [(r.level, r.max_abs_error) for r in reports]


@pytest.mark.parametrize(
    "expression",
    ["F.instance_norm(x, weight=y[0], bias=y[1], eps=1e-3)", "F.instance_norm(x.flatten(2))"],
)
def test_instance_norm_is_a_group_norm_of_a_channel_a_group(expression: str):
    """Instance norm with the input's statistics, with and without its affine, at every
    level (in f32: eager's bf16 instance norm rounds on its own way, not once as group
    norm does)."""
    program = load_program(
        applied(expression, "torch.randn(2, 3, 4, 5)", "torch.randn(2, 3)"), "<string>"
    )
    reports = check_levels(program, program.to_torch_ir(), ("torch", "loop", "kernel"), seed=3)
    assert all(r.passed for r in reports), [(r.level, r.max_abs_error) for r in reports]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_bicubic_interpolation_through_pytorchs_decomposition(dtype: str):
    """Bicubic `F.interpolate` reaches emmy through PyTorch's own decomposition (index lookups
    and arithmetic in the input's dtype), at every level within the levels' tolerances; not
    bit for bit with eager's kernel, which keeps its arithmetic in f32, so the torch-level
    corpus leaves it out."""
    program = load_program(
        applied(
            'F.interpolate(x, scale_factor=1.5, mode="bicubic")',
            f"torch.randn(2, 3, 6, 8, dtype=torch.{dtype})",
        ),
        "<string>",
    )
    reports = check_levels(program, program.to_torch_ir(), ("torch", "loop", "kernel"), seed=5)
    assert all(r.passed for r in reports), [(r.level, r.max_abs_error) for r in reports]


def test_ops_emmy_takes_keep_their_form_beside_a_decomposed_one():
    """Only the ops without a handler are decomposed: the layer norm stays one op."""
    module = compile_source(
        applied("torch.triu(F.layer_norm(x, (5,)))", "torch.randn(5, 5)"), "<s>"
    )
    names = {op.name for op in module.walk()}
    assert "torch.layer_norm" in names and "torch.where" in names, names


@pytest.mark.parametrize(
    "expression, inputs, message",
    [
        ("F.dropout(x, 0.5)", ["torch.randn(4)"], "dropout in training mode (p=0.5) is random"),
        (
            "F.scaled_dot_product_attention(x, x, x, dropout_p=0.1)",
            ["torch.randn(1, 4, 8)"],
            "attention dropout (dropout_p=0.1) is random",
        ),
        (
            "x.contiguous(memory_format=torch.channels_last)",
            ["torch.randn(1, 2, 3, 4)"],
            "memory format torch.channels_last is not supported",
        ),
        # Decomposed (functionalised) to exp and a write back into the input.
        ("x.exp_()", ["torch.randn(4)"], "the program mutates an input in place"),
        ("x.to(torch.uint8)", ["torch.randn(4)"], "dtype torch.uint8 is not supported"),
        (
            "torch.view_as_complex(x).cumsum(0).abs()",
            ["torch.randn(4, 2)"],
            "'aten.cumsum.default' of complex tensors: emmy takes complex tensors, as pairs",
        ),
        (
            "x.var(-1, correction=0.5)",
            ["torch.randn(4)"],
            "a fractional variance correction (0.5) is not supported",
        ),
        (
            "x.sort(-1).values",
            ["torch.randn(2, 5000)"],
            "sorting along a dim of more than 4096 elements (or a dynamic one) is not supported",
        ),
        (
            "x.median()",
            ["torch.randn(64, 65)"],
            "sorting along a dim of more than 4096 elements (or a dynamic one) is not supported",
        ),
        (
            "torch.kthvalue(x, 3, 0).values",
            ["torch.randn(4097, 2)"],
            "sorting along a dim of more than 4096 elements (or a dynamic one) is not supported",
        ),
        (
            "torch.zeros(3, 4).scatter_add(0, torch.zeros(2, 2, dtype=torch.long), x[:2, :2])",
            ["torch.randn(4, 3)"],
            "scatter_add whose index is not the source's shape and the input's along the other",
        ),
        (
            "torch.ops.aten.index_put(x, [torch.tensor([1]), None, torch.tensor([2])], x[0, :1])",
            ["torch.randn(4, 3, 2)"],
            "index tensors must be on adjacent dims after whole ones (x[:, i, j])",
        ),
        (
            "torch.ops.aten.index_put(x, [x > 0], torch.tensor(1.0))",
            ["torch.randn(4, 3)"],
            "indexing with a bool mask is not supported",
        ),
    ],
)
def test_forms_without_an_exact_torch_op_are_errors(
    expression: str, inputs: list[str], message: str
):
    with pytest.raises(FrontendError) as error:
        compile_source(applied(expression, *inputs), "p.py")
    assert message in str(error.value)
    assert error.value.location is not None and error.value.location.filename.data == "p.py"


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            "nn.Linear(3, 2)(torch.randn(4, 3)",
            "<string>:1:16: error: invalid Python: '(' was never closed",
        ),
        ("x = 1\nx + 2", "<string>:2:1: error: the last statement must call an nn.Module"),
        (
            "y = nn.ReLU()(torch.randn(3))",
            "<string>:1:1: error: the last statement must call an nn.Module",
        ),
        (
            "torch.relu(torch.randn(3))",
            "<string>:1:1: error: the last statement calls a builtin_function_or_method, not an "
            "nn.Module",
        ),
        (
            "def f():\n    raise ValueError('boom')\nf()\nnn.ReLU()(torch.randn(3))",
            "<string>:2:5: error: the program raised: ValueError: boom",
        ),
        (
            "nn.Linear(3, 2)(torch.randn(4, 5))",
            "<string>:1:1: error: torch.export failed: RuntimeError",
        ),
        (
            "nn.Linear(3, 2)(*[torch.randn(4, 3)])",
            "<string>:1:1: error: the last call takes plain arguments",
        ),
    ],
)
def test_bad_programs_are_located_errors(source: str, expected: str):
    with pytest.raises(FrontendError) as error:
        compile_source(source, "<string>")
    assert str(error.value).startswith(expected)
    assert "Traceback" not in str(error.value)


def test_arguments_of_unsupported_dtypes_are_each_named_at_the_modules_call():
    source = """
class Lookup(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.arange(4, dtype=torch.uint8))

    def forward(self, x, y):
        return x + y.float() + (self.table + 1).float()
Lookup()(torch.randn(4), torch.ones(4, dtype=torch.uint16))
"""
    # The uint8 buffer is refused for its arithmetic (a uint8 value only converted is read).
    with pytest.raises(FrontendError) as error:
        compile_source(source, "<string>")
    assert str(error.value).splitlines()[::3] == [
        "<string>:9:1: error: buffer 'table': dtype torch.uint8 is not supported (an input the "
        "program only converts, as x.float(), is read)",
        "<string>:9:1: error: input 'y': dtype torch.uint16 is not supported",
    ]


def test_program_keeps_the_eager_reference():
    program = load_program(
        "nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5))(torch.randn(2, 3))", "p.py"
    )
    assert not program.module.training
    again = load_program(
        "nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5))(torch.randn(2, 3))", "p.py"
    )
    # torch.manual_seed(0) precedes the program: the same weights and inputs every time
    assert torch.equal(program.example_args[0], again.example_args[0])
    assert torch.equal(program.module(*program.example_args), again.module(*again.example_args))


def test_a_form_torch_ir_refuses_is_one_located_line(monkeypatch):
    """A handler's op that fails its verifier (xDSL's constraint messages span lines) is
    reported as one line at the user's call, with the constraint's reason."""
    from emmy.tools.frontend import importer

    def shifted(ir, node, a):
        x = ir.tensor(a["self"])
        return ir.emit(t.ShiftLeftOp(x, x, x.type))  # floats: shifts take integers

    monkeypatch.setitem(importer.HANDLERS, "aten.relu.default", shifted)
    source = (
        "class M(nn.Module):\n    def forward(self, x):\n        return x.relu()\n"
        "M()(torch.randn(4))"
    )
    with pytest.raises(FrontendError) as error:
        compile_source(source, "<string>")
    first = str(error.value).splitlines()[0]
    assert first.startswith("<string>:3:18: error: unsupported form of PyTorch op 'aten.relu")
    assert "expected a tensor of i8, i16, i32 or i64" in first
