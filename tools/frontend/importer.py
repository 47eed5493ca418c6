"""The PyTorch importer: a `torch.export.ExportedProgram` in, Torch IR out.

    module = import_exported_program(exported, "<string>", source.splitlines())

The result is one `func.func @forward`. Its arguments are, in the order of the exported
program's signature, the parameters, buffers and lifted tensor constants (so weights are
host-function arguments, never baked into kernels) and then the user's inputs. Each argument
is named after its placeholder (`%p_n_weight`, `%b_cos`, `%x`) and carries one attribute
saying what it is and where its value comes from:

    {emmy.param = "n.weight"}       a parameter: `exported.state_dict["n.weight"]`
    {emmy.buffer = "cos"}           a buffer: `state_dict` or, if not persistent, `constants`
    {emmy.constant = "c"}           a lifted tensor constant: `exported.constants["c"]`
    {emmy.input = "x"}              the user input of that name

`forward_arguments` gathers those values. The function's results are the module's outputs.
The module records `torch.get_float32_matmul_precision()` at import, as
`{torch.float32_matmul_precision = "highest"}` (see `emmy.dialects.torch`). A dim torch
holds symbolic (`torch.export.Dim`, Dynamo's dynamic shapes) is `?` in the types, and the
module names its symbol and range as `emmy.dynamic_size` (see `emmy.dialects.sizes`: one such
size per program, a symbol of its own).

The graph keeps torch.export's high-level aten ops, and each maps to the `torch` op of the
same meaning, with type promotion made explicit (`torch.to`, scalars
as 0-d `torch.constant`s of the computation type). Every op is located at the line of the
user's source that produced it. An op or form that Torch IR cannot represent exactly raises
`FrontendError` naming the aten op and quoting that line; the importer never guesses.
Before that, `decomposed` applies PyTorch's core decompositions to the ops it has no handler
for (`triu`, `flatten`, `stack`, cross-entropy, ...), as the torch.compile backend's graphs have
them applied: an op it handles keeps its own form.
"""

from __future__ import annotations

import itertools
import linecache
import math
import operator
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from math import inf, prod
from pathlib import Path
from typing import Any

import torch
from torch._decomp import core_aten_decompositions, decomposition_table
from torch.export import ExportedProgram
from torch.export.graph_signature import (
    ConstantArgument,
    ExportGraphSignature,
    InputKind,
    OutputKind,
    TensorArgument,
)
from torch.fx import Graph, Node
from torch.utils._sympy.numbers import int_oo
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FileLineColLoc,
    FunctionType,
    LocationAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnknownLoc,
    bf16,
    f16,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

import emmy
from emmy.dialects import dtypes
from emmy.dialects import torch as t
from emmy.dialects.sizes import DYNAMIC_SIZE, DynamicSize
from emmy.tools.diagnostics import one_line
from emmy.tools.frontend.complex_pairs import (
    BOUNDARY,
    COMPLEX_OPS,
    COMPLEX_REFUSAL,
    RULES,
    as_pairs,
    complex_as_real_pairs,
)
from emmy.tools.frontend.corrected_decompositions import CORRECTED_DECOMPOSITIONS
from emmy.tools.frontend.narrow_integers import NARROW, only_converted
from emmy.tools.frontend.program import FrontendError, location
from emmy.tools.frontend.transformer_decompositions import TRANSFORMER_DECOMPOSITIONS

ARGUMENT_ROLES = {
    InputKind.PARAMETER: "emmy.param",
    InputKind.BUFFER: "emmy.buffer",
    InputKind.CONSTANT_TENSOR: "emmy.constant",
    InputKind.USER_INPUT: "emmy.input",
}

# Checks torch.export leaves in the graph that hold for every value of the traced program.
NO_OP_ASSERTS = {
    "aten._assert_tensor_metadata.default",
    "aten._assert_scalar.default",
    # The dynamic size, as a view's size argument: the view's result type has it as `?`.
    "aten.sym_size.int",
}

LIBRARY_FOLDERS = tuple(
    str(folder)
    for package in (torch, emmy)
    for folder in {Path(package.__file__).parent, Path(package.__file__).resolve().parent}
)
"""Where PyTorch and emmy live: a stack frame in them is not the user's line."""

TORCH_NAMESPACES = ("special", "linalg", "fft")
"""The namespaces of torch whose functions torch names with theirs as a prefix."""

STACK_FRAME = re.compile(r'File "(?P<file>[^"]*)", line (?P<line>\d+)')


def import_exported_program(
    exported: ExportedProgram,
    source_name: str | None,
    source_lines: Sequence[str],
    call_location: FileLineColLoc | None = None,
    mutations: bool = False,
) -> ModuleOp:
    """Torch IR for `exported`; `source_name` and `source_lines` are the user's program, for
    the locations of ops and the text of errors (None: a module in the user's own files,
    whose ops are located at their innermost frame outside PyTorch and emmy).
    `call_location`, where the program calls the module, locates `@forward` and the ops that
    no line of the user's source produced (those of a library module called directly, such
    as `nn.RMSNorm(64)(x)`). Complex tensors become pairs of reals first
    (`complex_as_real_pairs`: a complex input's argument is its pair, as `forward_arguments`
    passes it). With `mutations`, the new values of the buffers and inputs the program
    mutates are results of `@forward`, in the signature's order (for `write_back_mutations`);
    without, a mutation is an error."""
    if complex_as_real_pairs(exported.graph, retype_inputs=True):
        exported.graph_module.recompile()
    importer = _Importer(
        exported.graph, exported.graph_signature, source_name, source_lines, call_location
    )
    importer.mutations = mutations
    importer.ranges = dict(exported.range_constraints)
    module = importer.run()
    module.verify()
    return module


EXTRA_DECOMPOSITIONS = (
    "upsample_linear1d.default",
    "upsample_bilinear2d.default",
    "upsample_bilinear2d.vec",
    "upsample_trilinear3d.default",
    "upsample_trilinear3d.vec",
    "upsample_bicubic2d.default",
    "upsample_bicubic2d.vec",
    "max_pool2d_with_indices.default",
    "max_pool3d_with_indices.default",
    "_adaptive_avg_pool2d.default",
    "bucketize.Tensor",
    "grid_sampler_2d.default",
    "dist.default",
    "ldexp.Tensor",
)
"""Ops outside the core ATen set that PyTorch's own decompositions take to ops emmy compiles
(interpolation and `grid_sample`: index lookups and arithmetic, but grid_sample's reflection
padding, which computes in int8; max pooling with its indices,
adaptive pooling: windows gathered and reduced; bucketize: a binary search in compares;
`torch.dist`: a norm of the difference; `ldexp`: a product with a power of 2)."""


def decompositions() -> dict[Any, Any]:
    """PyTorch's core ATen decompositions (and `EXTRA_DECOMPOSITIONS`, and emmy's own of the
    transformer fast path's fused ops, `TRANSFORMER_DECOMPOSITIONS`, and of the ops whose
    PyTorch decompositions differ from eager, `CORRECTED_DECOMPOSITIONS`) of the ops the importer
    has no handler for, so that composite ops (stack, triu, cross-entropy, interpolation, ...)
    reach ops emmy compiles; an op it handles keeps its own form (a layer norm stays one op,
    not its arithmetic)."""
    extra = {**TRANSFORMER_DECOMPOSITIONS, **CORRECTED_DECOMPOSITIONS}
    for name in EXTRA_DECOMPOSITIONS:
        packet, overload = name.split(".")
        op = getattr(getattr(torch.ops.aten, packet), overload)
        if op in decomposition_table:  # an older PyTorch may lack one (2.11 max pooling's)
            extra[op] = decomposition_table[op]
    return {
        op: rule
        for op, rule in {**core_aten_decompositions(), **extra}.items()
        if isinstance(op, torch._ops.OpOverload) and str(op) not in HANDLERS
    }


def decomposed(exported: ExportedProgram) -> ExportedProgram:
    """`exported` with `decompositions` applied, where it has an op the importer has no
    handler for (the ops that come of one keep its line); else `exported` itself, as
    re-tracing it takes a while."""
    if all(
        node.op != "call_function"
        or node.target is operator.getitem
        or target_name(node) in HANDLERS
        or target_name(node) in NO_OP_ASSERTS
        or node.target in RULES
        for node in exported.graph.nodes
    ):
        return exported
    with warnings.catch_warnings():
        # torch.export's own deprecation notices, which the user can do nothing about.
        warnings.simplefilter("ignore", FutureWarning)
        return exported.run_decompositions(decompositions())


def import_graph(graph: Graph) -> ModuleOp:
    """Torch IR for a graph of aten ops whose placeholders are all inputs and whose outputs
    are all results (as Dynamo and AOTAutograd hand a backend), each placeholder's example
    value in its `val` meta; ops are located at the innermost frame of their stack trace
    outside PyTorch and emmy. Ops Torch IR cannot represent raise `UnsupportedNodes`."""
    module = _Importer(graph, None, None, (), None).run()
    module.verify()
    return module


def unsupported_op(node: Node, reason: str | None = None) -> UnsupportedNode:
    """The error for a node Torch IR cannot take (by default: whose op it has no handler
    for), at the user's line."""
    importer = _Importer(node.graph, None, None, (), None)
    importer.location = importer.location_of(node)
    message = f"unsupported PyTorch op '{target_name(node)}'"
    return UnsupportedNode(importer.error(f"{message}: {reason}" if reason else message), node)


def user_location(node: Node) -> LocationAttr:
    """Where in the user's source a node came from (`_Importer.location_of`)."""
    return _Importer(node.graph, None, None, (), None).location_of(node)


class UnsupportedNodes(FrontendError):
    """Every node of a graph that Torch IR cannot represent, each with its reason (see
    `UnsupportedNode`); printed one after another."""

    def __init__(self, errors: Sequence[UnsupportedNode]):
        first = errors[0]
        super().__init__(first.message, first.location, first.source_line)
        self.errors = list(errors)

    def __str__(self) -> str:
        return "\n".join(FrontendError.__str__(error) for error in self.errors)


class UnsupportedNode(FrontendError):
    """A node of the graph that Torch IR cannot represent, with the reason (see
    `FrontendError`): a backend can leave that node to PyTorch."""

    def __init__(self, error: FrontendError, node: Node):
        super().__init__(error.message, error.location, error.source_line)
        self.node = node


MUTATIONS = (OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION)
"""The outputs of an exported program that are new values of its buffers or inputs."""


def _held_tensor(exported: ExportedProgram, target: str) -> torch.Tensor:
    """The module's own tensor of a parameter or buffer: in the state dict, or among the
    constants for a buffer that is not persistent."""
    if target in exported.state_dict:
        return exported.state_dict[target]
    return exported.constants[target]


def write_back_mutations(
    exported: ExportedProgram, user_inputs: Sequence[Any], outputs: Sequence[torch.Tensor]
) -> list[torch.Tensor]:
    """The user's outputs of `outputs` (`@forward`'s results for `exported`, imported with
    `mutations`), after copying each new value of a buffer or an input into it, as eager
    PyTorch's in-place ops would have written it (the tensors `forward_arguments` passes:
    the module's own buffers, the user's inputs)."""
    signature = exported.graph_signature
    user_names = [s.arg.name for s in signature.input_specs if s.kind is InputKind.USER_INPUT]
    results = []
    for spec, value in zip(signature.output_specs, outputs, strict=True):
        if spec.kind is OutputKind.BUFFER_MUTATION:
            live = _held_tensor(exported, spec.target)
        elif spec.kind is OutputKind.USER_INPUT_MUTATION:
            live = user_inputs[user_names.index(spec.target)]
        else:
            results.append(value)
            continue
        target = torch.view_as_real(live) if live.is_complex() else live
        if target.data_ptr() != value.data_ptr():  # else computed in place already
            target.copy_(value)
    return results


def mutated_buffer_arguments(exported: ExportedProgram) -> dict[int, int]:
    """{result: argument} of `@forward` (imported with `mutations`) for each buffer the program
    mutates: the new value's result and the buffer's argument."""
    signature = exported.graph_signature
    tensors = [s for s in signature.input_specs if not isinstance(s.arg, ConstantArgument)]
    argument = {s.target: n for n, s in enumerate(tensors) if s.kind is InputKind.BUFFER}
    return {
        number: argument[spec.target]
        for number, spec in enumerate(signature.output_specs)
        if spec.kind is OutputKind.BUFFER_MUTATION and spec.target in argument
    }


def forward_arguments(exported: ExportedProgram, user_inputs: Sequence[Any]) -> list[torch.Tensor]:
    """The values of `@forward`'s arguments, given the user's inputs flattened in the
    signature's order (non-tensor inputs included: export bakes them into the graph); a
    complex tensor as its pair of reals (`torch.view_as_real`)."""
    remaining = iter(user_inputs)
    values = []
    for spec in exported.graph_signature.input_specs:
        if spec.kind is InputKind.USER_INPUT:
            value = next(remaining)
            if isinstance(spec.arg, TensorArgument):
                values.append(value)
        elif spec.kind is InputKind.CONSTANT_TENSOR:
            values.append(exported.constants[spec.target])
        else:
            values.append(_held_tensor(exported, spec.target))
    # A uint8 tensor reaches Torch IR only where the program only converts it, as int32.
    widened = [v.to(torch.int32) if v.dtype == torch.uint8 else v for v in values]
    return as_pairs(widened)


Handler = Callable[["_Importer", Node, dict[str, Any]], "SSAValue | list[SSAValue]"]
HANDLERS: dict[str, Handler] = {}


def handles(*targets: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        for target in targets:
            HANDLERS[target] = handler
        return handler

    return register


def target_name(node: Node) -> str:
    if isinstance(node.target, torch._ops.OpOverload):
        return str(node.target)  # e.g. aten.cumsum.default
    return getattr(node.target, "__name__", str(node.target))


def bind_arguments(node: Node) -> dict[str, Any]:
    """The node's arguments by schema name, defaults filled in."""
    bound = {}
    for index, argument in enumerate(node.target._schema.arguments):
        if index < len(node.args):
            bound[argument.name] = node.args[index]
        elif argument.name in node.kwargs:
            bound[argument.name] = node.kwargs[argument.name]
        elif argument.has_default_value():
            bound[argument.name] = argument.default_value
    return bound


class _Importer:
    """Builds `@forward` node by node: `values` maps each fx node to its SSA value (to a list
    of them for an op with several results, such as split), and every op emitted while a
    node is imported gets that node's location. `signature` says what each placeholder and
    output of an exported program is; without one (a graph from Dynamo or AOTAutograd) every
    placeholder is an input and every output a result."""

    def __init__(
        self,
        graph: Graph,
        signature: ExportGraphSignature | None,
        source_name: str | None,
        source_lines: Sequence[str],
        call_location: FileLineColLoc | None,
    ):
        self.graph = graph
        self.signature = signature
        self.source_name = source_name
        self.source_lines = source_lines
        self.call_location = call_location
        self.values: dict[Node, SSAValue | list[SSAValue]] = {}
        self.ops: list[Operation] = []
        self.location: LocationAttr = UnknownLoc()
        self.mutations = False
        """Whether the new values of mutated buffers and inputs are results (see
        `import_exported_program`)."""
        self.dynamic_size: DynamicSize | None = None
        self.ranges: dict[Any, Any] = {}
        """An exported program's declared range of each symbol (`torch.export.Dim`'s)."""
        self.calls_on_lines: dict[tuple[str, int, str], list[str]] = {}
        """The calls of each torch function on each source line (Dynamo's `torch_fn` ids),
        in the order they ran: the k-th is located at the function's k-th call on the line."""

    # --- diagnostics ------------------------------------------------------------------------

    def source_line(self, file: str, line: int) -> str:
        if file == self.source_name:
            return self.source_lines[line - 1] if 1 <= line <= len(self.source_lines) else ""
        return linecache.getline(file, line).rstrip("\n")

    def is_users(self, file: str) -> bool:
        """Whether a stack frame's file is the user's: the program's source when there is
        one, else any file outside PyTorch and emmy."""
        if self.source_name is not None:
            return file == self.source_name
        return not file.startswith(LIBRARY_FOLDERS)

    def location_of(self, node: Node) -> LocationAttr:
        """The innermost frame of the user's source in the node's stack trace (else the
        call location, else the innermost frame), at the call of the torch function the node
        came from if that appears on the line, else at the line's first token."""
        trace = node.meta.get("stack_trace") or ""
        frames = [(m["file"], int(m["line"])) for m in STACK_FRAME.finditer(trace)]
        user_frames = [frame for frame in frames if self.is_users(frame[0])]
        if not user_frames and self.call_location is not None:
            return self.call_location
        if not frames:
            return UnknownLoc()
        file, line = (user_frames or frames)[-1]
        text = self.source_line(file, line)
        column = len(text) - len(text.lstrip()) + 1
        torch_fn = node.meta.get("torch_fn")
        if torch_fn:
            function = torch_fn[1].rpartition(".")[2]
            calls = self.calls_on_lines.setdefault((file, line, function), [])
            if torch_fn[0] not in calls:
                calls.append(torch_fn[0])
            # `torch.special.ndtri` is `special_ndtri` to torch: its call reads `ndtri(`.
            namespace, _, name = function.partition("_")
            names = {function, name} if namespace in TORCH_NAMESPACES else {function}
            spelled = "|".join(re.escape(n) for n in sorted(names))
            found = list(re.finditer(rf"\b(?:{spelled})\s*\(", text))
            if found:
                # Calls run in the order they are written, but for one nested in another of
                # the same function (then the first is taken).
                occurrence = calls.index(torch_fn[0])
                column = found[occurrence if occurrence < len(found) else 0].start() + 1
        return location(file, line, column)

    def error(self, message: str) -> FrontendError:
        if not isinstance(self.location, FileLineColLoc):
            return FrontendError(message, None)
        line = self.source_line(self.location.filename.data, self.location.line.data)
        return FrontendError(message, self.location, line)

    def static_shape(self, value: SSAValue, what: str) -> tuple[int, ...]:
        """`value`'s shape, refused where it has the program's dynamic size: `what` (a row
        lookup, positions matched) is built for static shapes."""
        shape = tuple(t.shape_of(value))
        if DYNAMIC_INDEX in shape:
            raise self.error(f"{what} of a tensor with the dynamic size is not supported")
        return shape

    # --- building ---------------------------------------------------------------------------

    def emit(self, op: Operation) -> SSAValue | None:
        op.location = self.location
        self.ops.append(op)
        return op.results[0] if op.results else None

    def tensor_type(self, value: Any) -> TensorType:
        if not isinstance(value, torch.Tensor):
            raise self.error(f"expected a tensor, got {type(value).__name__}")
        element_type = self.element_type(value.dtype)
        return TensorType(element_type, [self.size(size) for size in value.shape])

    def size(self, size: int | torch.SymInt) -> int:
        """A static size, or `DYNAMIC_INDEX` for the program's one symbolic size, whose symbol
        and range are recorded (`DynamicSize`); any other symbolic size is an error."""
        if isinstance(size, int):
            return size
        expr = size.node.expr
        if not expr.is_symbol:
            raise self.error(
                f"the size {expr} is an expression of symbolic sizes; emmy takes a dynamic "
                "dim only where the size is a symbol of its own"
            )
        name = str(expr)
        if self.dynamic_size is not None and self.dynamic_size.symbol != name:
            raise self.error(
                f"two dynamic sizes ({self.dynamic_size.symbol} and {name}); emmy compiles a "
                "program with at most one"
            )
        if self.dynamic_size is None:
            bounds = self.ranges.get(expr) or size.node.shape_env.var_to_range[expr]
            upper = None if bounds.upper == int_oo else int(bounds.upper)
            self.dynamic_size = DynamicSize(name, int(bounds.lower), upper)
        return DYNAMIC_INDEX

    def element_type(self, dtype: torch.dtype) -> Attribute:
        """The Torch IR element type of a torch dtype (`dtypes.ELEMENT_TYPES`, those that
        Torch IR takes); an error for any other."""
        element_type = dtypes.from_torch_dtype(dtype)
        if element_type not in t.AnyTorchTensor.element_types:
            where = " (an input the program only converts, as x.float(), is read)"
            raise self.error(f"dtype {dtype} is not supported{where if dtype in NARROW else ''}")
        return element_type

    def result_type(self, node: Node) -> TensorType:
        return self.tensor_type(node.meta["val"])

    def first_result_type(self, node: Node) -> TensorType:
        """The type of the node's result, or of the first of its results: AOTAutograd's forms
        of some ops also return what only the backward pass reads."""
        value = node.meta["val"]
        return self.tensor_type(value[0] if isinstance(value, Sequence) else value)

    def first_result(self, node: Node, value: SSAValue) -> SSAValue | list[SSAValue]:
        """`value` as the node's result, or as the first (and only kept) of its results."""
        return [value] if isinstance(node.meta["val"], Sequence) else value

    def result_element(self, node: Node) -> Attribute:
        return self.result_type(node).get_element_type()

    def tensor(self, arg: Any) -> SSAValue:
        value = self.values.get(arg) if isinstance(arg, Node) else None
        if not isinstance(value, SSAValue):
            raise self.error(f"expected a tensor operand, got {arg!r}")
        return value

    def convert(self, value: SSAValue, element_type: Attribute) -> SSAValue:
        if t.element_type_of(value) == element_type:
            return value
        return self.emit(t.ToOp(value, TensorType(element_type, t.shape_of(value))))

    def operand(self, arg: Any, element_type: Attribute) -> SSAValue:
        """A tensor or Python scalar operand as a tensor of the computation type."""
        if isinstance(arg, (bool, int, float)):
            return self.constant(torch.tensor(arg, dtype=dtypes.torch_dtype(element_type)))
        return self.convert(self.tensor(arg), element_type)

    def constant(self, value: torch.Tensor) -> SSAValue:
        flat = value.flatten()
        result_type = self.tensor_type(value)
        if flat.numel() > 1 and bool((flat == flat[0]).all()):
            # A splat is its one element (see emmy.dialects.dense).
            element = TensorType(result_type.get_element_type(), [])
            attr = DenseIntOrFPElementsAttr.from_list(element, flat[:1].tolist())
        else:
            attr = DenseIntOrFPElementsAttr.from_list(result_type, flat.tolist())
        return self.emit(t.ConstantOp(attr, result_type))

    def promoted_element(self, lhs: Any, rhs: Any) -> Attribute:
        """torch's type promotion of two operands, tensors or scalars: a 0-d tensor or a
        scalar only raises the category (bool < int < float), not the width."""

        def stand_in(arg: Any) -> Any:
            if not isinstance(arg, Node):
                return arg
            fake = arg.meta["val"]
            return torch.empty((0,) * min(fake.dim(), 1), dtype=fake.dtype)

        return self.element_type(torch.result_type(stand_in(lhs), stand_in(rhs)))

    def dim(self, dim: int, rank: int) -> int:
        if not -rank <= dim < rank:
            raise self.error(f"dim {dim} is out of range for rank {rank}")
        return dim % rank

    # --- the graph --------------------------------------------------------------------------

    def run(self) -> ModuleOp:
        placeholders = {node.name: node for node in self.graph.nodes if node.op == "placeholder"}
        arguments: list[tuple[Node, str, str]] = []
        if self.signature is None:
            # by position: two layers' graphs name their placeholders apart
            # Dynamo's symbolic sizes are placeholders too: the tensors' `?` dims carry them.
            arguments = [
                (node, "emmy.input", str(number))
                for number, node in enumerate(placeholders.values())
                if not isinstance(node.meta.get("val"), torch.SymInt)
            ]
        for spec in self.signature.input_specs if self.signature else ():
            if isinstance(spec.arg, ConstantArgument):
                continue  # a non-tensor input: export baked its value into the graph
            if not isinstance(spec.arg, TensorArgument) or spec.kind not in ARGUMENT_ROLES:
                raise self.error(f"unsupported input {spec.arg} of kind {spec.kind.name}")
            role_target = spec.arg.name if spec.kind is InputKind.USER_INPUT else spec.target
            arguments.append((placeholders[spec.arg.name], ARGUMENT_ROLES[spec.kind], role_target))
        block = Block(arg_types=self.argument_types(arguments))
        for argument, (node, _, _) in zip(block.args, arguments, strict=True):
            argument.name_hint = node.name
            self.values[node] = argument

        results: list[SSAValue] = []
        # Every node Torch IR cannot take is reported, at once; a node that reads one is not
        # imported (its error would only repeat the first).
        unsupported: list[UnsupportedNode] = []
        skipped: set[Node] = set()
        for node in self.graph.nodes:
            self.location = self.location_of(node)
            if any(source in skipped for source in node.all_input_nodes):
                skipped.add(node)
            elif node.op == "call_function":
                try:
                    self.import_call(node)
                except UnsupportedNode as error:
                    unsupported.append(error)
                    skipped.add(node)
            elif node.op == "output":
                results = self.outputs(node)
            elif node.op != "placeholder":
                raise self.error(f"unsupported graph node '{node.op}' ({node.target})")
        if unsupported:
            raise UnsupportedNodes(unsupported)

        self.location = self.call_location or UnknownLoc()
        if self.dynamic_size is not None and not any(
            DYNAMIC_INDEX in t.shape_of(argument) for argument in block.args
        ):
            # The host reads the size off an argument's dim (`emmy.dialects.sizes`).
            raise self.error(
                f"the dynamic size {self.dynamic_size.symbol} is not the size of any tensor "
                "the program takes, which is where emmy reads it"
            )
        self.emit(func.ReturnOp(*results))
        block.add_ops(self.ops)
        forward = func.FuncOp(
            "forward",
            FunctionType.from_lists(block.arg_types, [r.type for r in results]),
            Region(block),
            arg_attrs=ArrayAttr(
                [DictionaryAttr({role: StringAttr(target)}) for _, role, target in arguments]
            ),
        )
        forward.location = self.location
        # Recorded now, so that compiling the module later chooses its f32 products' atom as
        # torch would have (tf32 or not), whatever the setting is then.
        precision = StringAttr(torch.get_float32_matmul_precision())
        attributes: dict[str, Attribute] = {t.FLOAT32_MATMUL_PRECISION: precision}
        if self.dynamic_size is not None:
            attributes[DYNAMIC_SIZE] = self.dynamic_size.attribute()
        return ModuleOp([forward], attributes)

    def argument_types(self, arguments: list[tuple[Node, str, str]]) -> list[Attribute]:
        """The types of `@forward`'s arguments; an argument of a dtype Torch IR does not take
        is an error naming it, at the program's call of the module (all such at once)."""
        types, errors = [], []
        for node, role, target in arguments:
            try:
                if self.signature is not None and only_converted(node):
                    # read as int32, as `forward_arguments` passes it (`narrow_integers`)
                    shape = [self.size(size) for size in node.meta["val"].shape]
                    types.append(TensorType(i32, shape))
                    continue
                types.append(self.result_type(node))
            except FrontendError as error:
                self.location = self.call_location or self.location_of(node)
                kind = role.removeprefix("emmy.").replace("param", "parameter")
                message = f"{kind} '{target}': {error.message}"
                errors.append(UnsupportedNode(self.error(message), node))
        if errors:
            raise UnsupportedNodes(errors)
        return types

    def outputs(self, node: Node) -> list[SSAValue]:
        results = []
        specs = self.signature.output_specs if self.signature else None
        values = node.args[0] if isinstance(node.args[0], (tuple, list)) else node.args[:1]
        for number, value in enumerate(values):
            spec = specs[number] if specs else None
            mutation = spec is not None and spec.kind in MUTATIONS
            if (
                spec is not None
                and spec.kind is not OutputKind.USER_OUTPUT
                and not (mutation and self.mutations)
            ):
                self.location = self.location_of(value)
                # An input's name is export's placeholder's (args_0), not the user's.
                buffer = spec.kind is OutputKind.BUFFER_MUTATION
                what = f"its buffer '{spec.target}'" if buffer else "an input"
                raise self.error(
                    f"the program mutates {what} in place, which `emmy "
                    "compile` does not write back; `emmy.compile` and `torch.compile(..., "
                    'backend="emmy")` do'
                )
            if spec is not None and not isinstance(spec.arg, TensorArgument):
                raise self.error(f"the module returns a non-tensor value {spec.arg}")
            results.append(self.tensor(value))
        return results

    def import_call(self, node: Node) -> None:
        name = target_name(node)
        if name in NO_OP_ASSERTS or isinstance(node.meta.get("val"), torch.SymInt):
            return  # arithmetic of sizes: what reads it, reads the size off its result type
        if node.target is operator.getitem:
            pieces, index = node.args
            kept = self.values.get(pieces)
            if not isinstance(kept, list):
                raise UnsupportedNode(self.error(f"unsupported indexing of '{pieces.name}'"), node)
            if not 0 <= index < len(kept):
                # The op that made it is what cannot be imported (a partitioner keeps an op
                # and the pieces of its result together).
                self.location = self.location_of(pieces)
                raise UnsupportedNode(
                    self.error(f"result {index} of '{target_name(pieces)}' is not supported"),
                    pieces,
                )
            self.values[node] = self.values[pieces][index]
            return
        if BOUNDARY in node.meta:
            raise UnsupportedNode(self.error(f"{node.meta[BOUNDARY]}: {COMPLEX_REFUSAL}"), node)
        handler = HANDLERS.get(name)
        if handler is None:
            raise UnsupportedNode(self.error(f"unsupported PyTorch op '{name}'"), node)
        first = len(self.ops)
        try:
            value = handler(self, node, bind_arguments(node))
            for op in self.ops[first:]:
                # A form of the op that Torch IR does not take (operands of mixed dtypes,
                # say) is the user's error, at their line, not an invalid module.
                try:
                    op.verify()
                except VerifyException as error:
                    message = one_line(str(error))
                    raise self.error(
                        f"unsupported form of PyTorch op '{name}': {message}"
                    ) from None
        except FrontendError as error:
            raise UnsupportedNode(error, node) from None
        if isinstance(value, SSAValue) and value.name_hint is None:
            value.name_hint = node.name
        self.values[node] = value


# --- elementwise --------------------------------------------------------------------------


def unary(op_class: type[t.UnaryOp], ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.operand(a["self"], ir.result_element(node))
    return ir.emit(op_class(x, ir.result_type(node)))


for _target, _op in {
    "aten.neg.default": t.NegOp,
    "aten.abs.default": t.AbsOp,
    "aten.relu.default": t.ReluOp,
    "aten.exp.default": t.ExpOp,
    "aten.log.default": t.LogOp,
    "aten.sqrt.default": t.SqrtOp,
    "aten.rsqrt.default": t.RsqrtOp,
    "aten.floor.default": t.FloorOp,
    "aten.ceil.default": t.CeilOp,
    "aten.round.default": t.RoundOp,
    "aten.trunc.default": t.TruncOp,
    "aten.sin.default": t.SinOp,
    "aten.cos.default": t.CosOp,
    "aten.tan.default": t.TanOp,
    "aten.atan.default": t.AtanOp,
    "aten.asin.default": t.AsinOp,
    "aten.acos.default": t.AcosOp,
    "aten.sinh.default": t.SinhOp,
    "aten.cosh.default": t.CoshOp,
    "aten.asinh.default": t.AsinhOp,
    "aten.acosh.default": t.AcoshOp,
    "aten.atanh.default": t.AtanhOp,
    "aten.erf.default": t.ErfOp,
    "aten.erfc.default": t.ErfcOp,
    "aten.erfinv.default": t.ErfinvOp,
    "aten.lgamma.default": t.LgammaOp,
    "aten.digamma.default": t.DigammaOp,
    "aten.log1p.default": t.Log1pOp,
    "aten.expm1.default": t.Expm1Op,
    "aten.log2.default": t.Log2Op,
    "aten.tanh.default": t.TanhOp,
    "aten.sigmoid.default": t.SigmoidOp,
    "aten.silu.default": t.SiluOp,
}.items():
    HANDLERS[_target] = partial(unary, _op)


@handles("aten.round.decimals")
def round_decimals(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`torch.round(x, decimals=d)`: `round(x * 10^d) / 10^d` (`round(x / 10^-d) * 10^-d` for
    negative d), halves to even, in f32 for 16-bit inputs and rounded once, as torch's."""
    element = ir.result_element(node)
    x = ir.convert(ir.tensor(a["self"]), widened(element))
    wide = x.type
    scale = ir.operand(10.0 ** abs(a["decimals"]), t.element_type_of(x))
    into, back = (t.MulOp, t.DivOp) if a["decimals"] >= 0 else (t.DivOp, t.MulOp)
    rounded = ir.emit(t.RoundOp(ir.emit(into(x, scale, wide)), wide))
    return ir.convert(ir.emit(back(rounded, scale, wide)), element)


@handles("aten.exp2.default")
def exp2(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`2 ** x`."""
    element = ir.result_element(node)
    x = ir.operand(a["self"], element)
    return ir.emit(t.PowOp(ir.operand(2, element), x, ir.result_type(node)))


@handles("aten.gelu.default")
def gelu(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.operand(a["self"], ir.result_element(node))
    return ir.emit(t.GeluOp(x, ir.result_type(node), a["approximate"]))


@handles("aten.clamp.default", "aten.clamp_min.default", "aten.clamp_max.default")
def clamp(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.operand(a["self"], ir.result_element(node))
    bounds = [None if a.get(k) is None else float(a[k]) for k in ("min", "max")]
    return ir.emit(t.ClampOp(x, ir.result_type(node), *bounds))


@handles("aten.clamp.Tensor", "aten.clamp_min.Tensor", "aten.clamp_max.Tensor")
def clamp_by_tensors(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`clamp` with tensor bounds: the larger of the input and `min`, then the smaller of
    that and `max` (NaN stays NaN, as torch's)."""
    element, result_type = ir.result_element(node), ir.result_type(node)
    x = ir.operand(a["self"], element)
    if a.get("min") is not None:
        x = ir.emit(t.MaximumOp(x, ir.operand(a["min"], element), result_type))
    if a.get("max") is not None:
        x = ir.emit(t.MinimumOp(x, ir.operand(a["max"], element), result_type))
    return x


@handles("aten.hardtanh.default")
def hardtanh(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.operand(a["self"], ir.result_element(node))
    bounds = (float(a["min_val"]), float(a["max_val"]))
    return ir.emit(t.ClampOp(x, ir.result_type(node), *bounds))


def _positive(ir: _Importer, x: SSAValue) -> SSAValue:
    """`x > 0`, elementwise."""
    mask_type = TensorType(i1, t.shape_of(x))
    return ir.emit(t.GtOp(x, ir.operand(0, t.element_type_of(x)), mask_type))


@handles("aten.leaky_relu.default")
def leaky_relu(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x` where it is positive, else `x * negative_slope`."""
    return sloped_below_zero(ir, a["self"], a["negative_slope"], ir.result_type(node))


@handles("aten.rrelu_with_noise_functional.default")
def rrelu(ir: _Importer, node: Node, a: dict[str, Any]) -> list[SSAValue]:
    """`F.rrelu` in eval: a leaky ReLU of the mean of its slopes, `(lower + upper) / 2`; the
    noise comes back as it was. In training the slopes are random."""
    if a.get("training", False):
        raise ir.error("rrelu in training mode is random; call it with training=False")
    slope = (a.get("lower", 0.125) + a.get("upper", 1 / 3)) / 2
    result_type = ir.first_result_type(node)
    return [sloped_below_zero(ir, a["self"], slope, result_type), ir.tensor(a["noise"])]


def sloped_below_zero(ir: _Importer, arg: Any, slope: float, result_type: TensorType) -> SSAValue:
    """`arg` where it is positive, else `arg * slope` (a leaky ReLU)."""
    x = ir.operand(arg, result_type.get_element_type())
    sloped = ir.emit(t.MulOp(x, ir.operand(slope, result_type.get_element_type()), result_type))
    return ir.emit(t.WhereOp(_positive(ir, x), x, sloped, result_type))


@handles("aten.elu.default")
def elu(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`scale * x` where `x` is positive, else `scale * alpha * (exp(input_scale * x) - 1)`."""
    element, result_type = ir.result_element(node), ir.result_type(node)
    x = ir.operand(a["self"], element)

    def times(value: SSAValue, factor: float) -> SSAValue:
        if factor == 1:
            return value
        return ir.emit(t.MulOp(value, ir.operand(factor, element), result_type))

    negative = ir.emit(t.Expm1Op(times(x, a["input_scale"]), result_type))
    negative = times(negative, a["alpha"] * a["scale"])
    return ir.emit(t.WhereOp(_positive(ir, x), times(x, a["scale"]), negative, result_type))


@handles("aten.sign.default")
def sign(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """1, -1 or 0 by the sign of `x` (0 for NaN, as torch's)."""
    element, result_type = ir.result_element(node), ir.result_type(node)
    x = ir.operand(a["self"], element)
    mask_type = TensorType(i1, t.shape_of(x))
    zero = ir.operand(0, element)
    negative = ir.emit(t.LtOp(x, zero, mask_type))
    signed = ir.emit(t.WhereOp(negative, ir.operand(-1, element), zero, result_type))
    return ir.emit(t.WhereOp(_positive(ir, x), ir.operand(1, element), signed, result_type))


@handles("aten.signbit.default")
def signbit(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """Whether the sign bit is set: of -0.0 and a negative NaN too (`copysign(1, x) < 0`)."""
    x = ir.tensor(a["self"])
    element = t.element_type_of(x)
    if element == i1:
        return ir.emit(t.NeOp(x, x, ir.result_type(node)))
    if not dtypes.torch_dtype(element).is_floating_point:
        return ir.emit(t.LtOp(x, ir.operand(0, element), ir.result_type(node)))
    one = ir.operand(1.0, element)
    signed_one = ir.emit(t.CopySignOp(one, x, TensorType(element, t.shape_of(x))))
    return ir.emit(t.LtOp(signed_one, ir.operand(0.0, element), ir.result_type(node)))


@handles("aten.angle.default")
def angle(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """The angle of a real number: pi if it is negative, else 0; NaN where it is NaN (a
    complex one's is `complex_pairs`' atan2)."""
    element, result_type = ir.result_element(node), ir.result_type(node)
    x = ir.operand(a["self"], element)
    negative = ir.emit(t.LtOp(x, ir.operand(0, element), TensorType(i1, t.shape_of(x))))
    half_turns = ir.emit(
        t.WhereOp(negative, ir.operand(math.pi, element), ir.operand(0.0, element), result_type)
    )
    return ir.emit(t.WhereOp(nan_mask(ir, x), x, half_turns, result_type))


@handles("aten.isnan.default")
def isnan(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    return nan_mask(ir, ir.tensor(a["self"]))


INFINITY_SIGNS = {"aten.isposinf.default": 1.0, "aten.isneginf.default": -1.0}
"""The infinity each op of one sign looks for (`aten.isinf` looks for both)."""


@handles("aten.isinf.default", "aten.isposinf.default", "aten.isneginf.default")
def isinf(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """Where `x` is infinite (of either sign, or the one the op names); nowhere for integers."""
    x = ir.tensor(a["self"])
    element, result_type = t.element_type_of(x), ir.result_type(node)
    if not dtypes.torch_dtype(element).is_floating_point:
        nowhere = ir.operand(False, i1)
        return nowhere if nowhere.type == result_type else ir.emit(t.ExpandOp(nowhere, result_type))
    sign = INFINITY_SIGNS.get(target_name(node))
    if sign is None:
        x, sign = ir.emit(t.AbsOp(x, x.type)), 1.0
    return ir.emit(t.EqOp(x, ir.operand(sign * math.inf, element), result_type))


def nan_mask(ir: _Importer, x: SSAValue) -> SSAValue:
    """Where `x` is NaN: `x != x`, as only NaN differs from itself."""
    return ir.emit(t.NeOp(x, x, TensorType(i1, t.shape_of(x))))


BOOL_ARITHMETIC: dict[type[t.BinaryOp], type[t.BinaryOp]] = {
    t.MulOp: t.BitwiseAndOp,
    t.MinimumOp: t.BitwiseAndOp,
    t.AddOp: t.BitwiseOrOp,
    t.MaximumOp: t.BitwiseOrOp,
}
"""The arithmetic ops that torch takes on bool tensors, as what they are there: a product or
a minimum is true where both operands are, a sum or a maximum where either is."""


def arithmetic(
    op_class: type[t.BinaryOp],
    operands: tuple[str, str],
    ir: _Importer,
    node: Node,
    a: dict[str, Any],
) -> SSAValue:
    """`lhs op alpha * rhs`, computed in the result's type (torch converts both operands to
    it: an int tensor divided or raised to a float power is converted to float first)."""
    element = ir.result_element(node)
    if element == i1:
        if op_class not in BOOL_ARITHMETIC or a.get("alpha", 1) != 1:
            raise ir.error(f"arithmetic on bool tensors ('{target_name(node)}') is not supported")
        op_class = BOOL_ARITHMETIC[op_class]
    lhs, rhs = (ir.operand(a[name], element) for name in operands)
    alpha = a.get("alpha", 1)
    if alpha != 1:
        rhs = ir.emit(t.MulOp(rhs, ir.operand(alpha, element), rhs.type))
    return ir.emit(op_class(lhs, rhs, ir.result_type(node)))


for _target, (_op, _operands) in {
    "aten.add.Tensor": (t.AddOp, ("self", "other")),
    "aten.add.Scalar": (t.AddOp, ("self", "other")),
    "aten.sub.Tensor": (t.SubOp, ("self", "other")),
    "aten.sub.Scalar": (t.SubOp, ("self", "other")),
    "aten.rsub.Tensor": (t.SubOp, ("other", "self")),
    "aten.rsub.Scalar": (t.SubOp, ("other", "self")),
    "aten.mul.Tensor": (t.MulOp, ("self", "other")),
    "aten.mul.Scalar": (t.MulOp, ("self", "other")),
    "aten.div.Tensor": (t.DivOp, ("self", "other")),
    "aten.div.Scalar": (t.DivOp, ("self", "other")),
    "aten.pow.Tensor_Tensor": (t.PowOp, ("self", "exponent")),
    "aten.pow.Tensor_Scalar": (t.PowOp, ("self", "exponent")),
    "aten.pow.Scalar": (t.PowOp, ("self", "exponent")),
    "aten.remainder.Tensor": (t.RemainderOp, ("self", "other")),
    "aten.remainder.Scalar": (t.RemainderOp, ("self", "other")),
    "aten.fmod.Tensor": (t.FmodOp, ("self", "other")),
    "aten.fmod.Scalar": (t.FmodOp, ("self", "other")),
    "aten.floor_divide.default": (t.FloorDivideOp, ("self", "other")),
    "aten.floor_divide.Scalar": (t.FloorDivideOp, ("self", "other")),
    "aten.atan2.default": (t.Atan2Op, ("self", "other")),
    "aten.hypot.default": (t.HypotOp, ("self", "other")),
    "aten.copysign.Tensor": (t.CopySignOp, ("self", "other")),
    "aten.copysign.Scalar": (t.CopySignOp, ("self", "other")),
    "aten.maximum.default": (t.MaximumOp, ("self", "other")),
    "aten.minimum.default": (t.MinimumOp, ("self", "other")),
}.items():
    HANDLERS[_target] = partial(arithmetic, _op, _operands)


@handles("aten.div.Tensor_mode", "aten.div.Scalar_mode")
def divide_rounding(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`torch.div(x, y, rounding_mode=...)`: "floor" is `//`, "trunc" rounds toward zero."""
    rounded = {None: t.DivOp, "floor": t.FloorDivideOp, "trunc": t.TruncDivideOp}
    return arithmetic(rounded[a["rounding_mode"]], ("self", "other"), ir, node, a)


@handles("aten.reciprocal.default")
def reciprocal(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    element = ir.result_element(node)
    one = ir.operand(1, element)
    return ir.emit(t.DivOp(one, ir.operand(a["self"], element), ir.result_type(node)))


@handles("aten.square.default")
def square(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.operand(a["self"], ir.result_element(node))
    return ir.emit(t.MulOp(x, x, ir.result_type(node)))


def bits_element(ir: _Importer, node: Node) -> Attribute:
    """The result's element type of a bitwise op: bool or an integer."""
    element = ir.result_element(node)
    if element not in (i1, *t.INTEGER_ELEMENT_TYPES):
        raise ir.error(f"'{target_name(node)}' takes bool or integer tensors, got {element}")
    return element


def bitwise(op_class: type[t.BitwiseOp], ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`&`, `|`, `^` of bool or integer tensors, and the logical ops of any tensors (their
    operands tested `!= 0` first, as their bool result's type asks)."""
    element = bits_element(ir, node)
    lhs, rhs = (ir.operand(a[name], element) for name in ("self", "other"))
    return ir.emit(op_class(lhs, rhs, ir.result_type(node)))


for _name, _op in {
    "and": t.BitwiseAndOp,
    "or": t.BitwiseOrOp,
    "xor": t.BitwiseXorOp,
}.items():
    for _overload in ("Tensor", "Scalar"):
        HANDLERS[f"aten.bitwise_{_name}.{_overload}"] = partial(bitwise, _op)
    HANDLERS[f"aten.logical_{_name}.default"] = partial(bitwise, _op)


def shift(op_class: type[t.ShiftOp], ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`<<` and `>>` of integer tensors (`ShiftLeftOp`, `ShiftRightOp`)."""
    element = ir.result_element(node)
    if element not in t.INTEGER_ELEMENT_TYPES:
        raise ir.error(f"'{target_name(node)}' takes integer tensors, got {element}")
    lhs, rhs = (ir.operand(a[name], element) for name in ("self", "other"))
    return ir.emit(op_class(lhs, rhs, ir.result_type(node)))


for _name, _op in {"left": t.ShiftLeftOp, "right": t.ShiftRightOp}.items():
    _dunder = "lshift" if _name == "left" else "rshift"
    for _target in (
        f"aten.__{_dunder}__.Scalar",
        f"aten.__{_dunder}__.Tensor",
        f"aten.bitwise_{_name}_shift.Tensor",
        f"aten.bitwise_{_name}_shift.Tensor_Scalar",
    ):
        HANDLERS[_target] = partial(shift, _op)


@handles("aten.gcd.default", "aten.lcm.default")
def divisors(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`torch.gcd` and `torch.lcm` of integer tensors."""
    element = ir.result_element(node)
    if element not in t.INTEGER_ELEMENT_TYPES:
        raise ir.error(f"'{target_name(node)}' takes integer tensors, got {element}")
    lhs, rhs = (ir.operand(a[name], element) for name in ("self", "other"))
    op_class = t.GcdOp if target_name(node) == "aten.gcd.default" else t.LcmOp
    return ir.emit(op_class(lhs, rhs, ir.result_type(node)))


@handles("aten.bitwise_not.default", "aten.logical_not.default")
def bitwise_not(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`~x` of a bool or integer tensor; `logical_not` of any (tested `!= 0` first)."""
    x = ir.operand(a["self"], bits_element(ir, node))
    return ir.emit(t.BitwiseNotOp(x, ir.result_type(node)))


def comparison(
    op_class: type[t.ComparisonOp], ir: _Importer, node: Node, a: dict[str, Any]
) -> SSAValue:
    element = ir.promoted_element(a["self"], a["other"])
    lhs, rhs = (ir.operand(a[name], element) for name in ("self", "other"))
    return ir.emit(op_class(lhs, rhs, ir.result_type(node)))


for _name, _op in {
    "gt": t.GtOp,
    "lt": t.LtOp,
    "ge": t.GeOp,
    "le": t.LeOp,
    "eq": t.EqOp,
    "ne": t.NeOp,
}.items():
    HANDLERS[f"aten.{_name}.Tensor"] = HANDLERS[f"aten.{_name}.Scalar"] = partial(comparison, _op)


def select(ir: _Importer, node: Node, condition: Any, on_true: Any, on_false: Any) -> SSAValue:
    mask = ir.tensor(condition)
    if t.element_type_of(mask) != i1:
        raise ir.error(f"the condition must be a bool tensor, got {mask.type}")
    element = ir.result_element(node)
    on_true, on_false = ir.operand(on_true, element), ir.operand(on_false, element)
    return ir.emit(t.WhereOp(mask, on_true, on_false, ir.result_type(node)))


@handles("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar")
def where(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    return select(ir, node, a["condition"], a["self"], a["other"])


@handles("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
def masked_fill(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    return select(ir, node, a["mask"], a["value"], a["self"])


@handles("aten.masked_scatter.default")
def masked_scatter(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x.masked_scatter(mask, source)`: where `mask` (broadcast to `x`) is True, the next
    element of `source` (flattened, in order), as eager's CUDA kernel computes it: each True
    element's place in `source` is the count of True elements before it (a cumsum of the
    flattened mask), its element a row lookup there. A mask broadcast along `x`'s last dims
    (a vision-language model's `(ids == image)[..., None]`) is scanned without them: its
    True element `r` takes the `width` elements from `(count before r) * width`."""
    result_type = ir.result_type(node)
    element = result_type.get_element_type()
    x, mask = ir.operand(a["self"], element), ir.tensor(a["mask"])
    shape = ir.static_shape(x, "masked_scatter")
    source = ir.operand(a["source"], element)
    available = prod(t.shape_of(source))
    given = (1,) * (len(shape) - len(t.shape_of(mask))) + tuple(t.shape_of(mask))
    kept = max((d + 1 for d, size in enumerate(given) if size != 1), default=0)
    rows, width = prod(shape[:kept]), prod(shape[kept:])
    row_mask = ir.emit(t.ReshapeOp(mask, TensorType(i1, given[:kept])))
    if given[:kept] != shape[:kept]:
        row_mask = ir.emit(t.ExpandOp(row_mask, TensorType(i1, shape[:kept])))
    row_mask = ir.emit(t.ReshapeOp(row_mask, TensorType(i1, (rows, 1))))
    counts = ir.convert(row_mask, i64)
    taken = ir.emit(t.CumsumOp(counts, counts.type, 0))
    # A False row's lookup is unused; it reads at the True row before it (at 0 before the
    # first), never past what the True rows take. A True row past the source is refused, as
    # eager refuses it.
    start = ir.emit(t.SubOp(taken, ir.operand(1, i64), taken.type))
    start = ir.emit(t.ClampOp(start, start.type, 0.0, None))
    if width != 1:
        start = ir.emit(t.MulOp(start, ir.operand(width, i64), start.type))
    places_type = TensorType(i64, (rows, width))
    place = ir.emit(t.AddOp(start, positions(ir, (1, width), 1), places_type))
    picked = lookup_rows(ir, source, available, place, TensorType(element, (rows, width)))
    picked = ir.emit(t.ReshapeOp(picked, result_type))
    if t.shape_of(mask) != shape:
        mask = ir.emit(t.ExpandOp(mask, TensorType(i1, shape)))
    return ir.emit(t.WhereOp(mask, picked, x, result_type))


# --- conversions and identities -----------------------------------------------------------


def check_layout(ir: _Importer, a: dict[str, Any]) -> None:
    """Torch IR has value semantics, so it can only honour the default strided layout. A
    format may come as its number in c10's MemoryFormat (0 contiguous, 1 preserve), as a
    re-traced graph's does."""
    memory_format = a.get("memory_format")
    if memory_format not in (None, torch.preserve_format, torch.contiguous_format, 0, 1):
        raise ir.error(f"memory format {memory_format} is not supported")
    if a.get("layout") not in (None, torch.strided):
        raise ir.error(f"layout {a['layout']} is not supported")


@handles(
    "aten.to.dtype",
    "aten.to.dtype_layout",
    "aten.to.device",
    "aten.to.other",
    "aten._to_copy.default",
    "aten.type_as.default",
)
def to(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    check_layout(ir, a)
    return ir.operand(a["self"], ir.result_element(node))


@handles(
    "aten.clone.default",
    "aten.contiguous.default",
    "aten.alias.default",
    "aten.detach.default",
    "aten.detach_.default",
    "aten.lift_fresh_copy.default",
)
def identity(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    check_layout(ir, a)
    return ir.tensor(a["self"])


@handles("aten.dropout.default")
def dropout(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    if a["train"] and a["p"] != 0:
        raise ir.error(
            f"dropout in training mode (p={a['p']}) is random; call it with training=False"
        )
    return ir.tensor(a["input"])


UNINITIALIZED = (
    "aten.empty.memory_format",
    "aten.empty_permuted.default",
    "aten.empty_strided.default",
    "aten.empty_like.default",
    "aten.new_empty.default",
    "aten.new_empty_strided.default",
)
"""The factories of a tensor whose elements are whatever its memory held."""


@handles(
    "aten.ones.default",
    "aten.zeros.default",
    "aten.full.default",
    "aten.arange.default",
    "aten.arange.start",
    "aten.arange.start_step",
    "aten.scalar_tensor.default",
    "aten.ones_like.default",
    "aten.zeros_like.default",
    "aten.full_like.default",
    "aten.new_ones.default",
    "aten.new_zeros.default",
    "aten.new_full.default",
    "aten.tril_indices.default",
    "aten.triu_indices.default",
    *UNINITIALIZED,
)
def factory(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """A tensor made from its arguments alone (a `*_like` reads only its input's shape and
    dtype): computed now, with torch, and kept as a literal (of the dynamic size:
    `factory_of_dynamic_size`). An uninitialized tensor (`empty`) is zeros: any value is
    one its program may find there, and decompositions make one to write slices into
    (circular padding) or only for its shape (`empty_permuted` then `full_like`)."""
    result_type = ir.result_type(node)
    if DYNAMIC_INDEX in result_type.get_shape():
        return factory_of_dynamic_size(ir, node, a, result_type)
    if target_name(node) in UNINITIALIZED:
        value = node.meta["val"]
        return ir.constant(torch.zeros(value.shape, dtype=value.dtype))

    def stand_in(arg: Any) -> Any:
        if isinstance(arg, Node):
            return torch.zeros(arg.meta["val"].shape, dtype=arg.meta["val"].dtype)
        return arg

    kwargs = {k: stand_in(v) for k, v in node.kwargs.items() if k != "device"}
    value = node.target(*map(stand_in, node.args), **kwargs)
    return ir.constant(value)


FILLED_WITH = {
    f"aten.{stem}.default": value
    for value, stems in (
        (1, ("ones", "ones_like", "new_ones")),
        (0, ("zeros", "zeros_like", "new_zeros")),
    )
    for stem in stems
} | dict.fromkeys(UNINITIALIZED, 0)
"""The value the factories of one fixed value fill with (the `full`s take theirs as an
argument)."""


def factory_of_dynamic_size(
    ir: _Importer, node: Node, a: dict[str, Any], result_type: TensorType
) -> SSAValue:
    """A factory whose result has the dynamic dim: `arange(n)` counts (`torch.iota`), and
    a tensor of one value (`ones`, `full`, `zeros_like`, ...) is that value expanded."""
    name, element = target_name(node), result_type.get_element_type()
    if name == "aten.arange.default" or (name == "aten.arange.start" and a["start"] == 0):
        count = ir.emit(t.IotaOp(0, TensorType(i64, result_type.get_shape())))
        return ir.convert(count, element)
    value = FILLED_WITH.get(name, a.get("fill_value"))
    if not isinstance(value, bool | int | float):
        raise ir.error(f"'{name}' of the dynamic size is not supported")
    scalar = ir.constant(torch.tensor(value, dtype=dtypes.torch_dtype(element)))
    return ir.emit(t.ExpandOp(scalar, result_type))


# --- reductions ---------------------------------------------------------------------------


def reduced_dims(ir: _Importer, dims: Any, rank: int) -> list[int]:
    if dims is None or (isinstance(dims, Sequence) and len(dims) == 0):
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else dims
    return sorted({ir.dim(d, rank) for d in dims})


def reduction(
    op_class: type[t.ReductionOp], ir: _Importer, node: Node, a: dict[str, Any]
) -> SSAValue:
    """Reduces in the result's type: `dtype=` and the int64 sum of integers convert the
    input first, as torch does."""
    x = ir.operand(a["self"], ir.result_element(node))
    dims = reduced_dims(ir, a.get("dim"), len(t.shape_of(x)))
    return ir.emit(op_class(x, ir.result_type(node), dims, a.get("keepdim", False)))


for _target, _op in {
    "aten.sum.default": t.SumOp,
    "aten.sum.dim_IntList": t.SumOp,
    "aten.prod.default": t.ProdOp,
    "aten.prod.dim_int": t.ProdOp,
    "aten.mean.default": t.MeanOp,
    "aten.mean.dim": t.MeanOp,
    "aten.amax.default": t.AmaxOp,
    "aten.amin.default": t.AminOp,
    "aten.max.default": t.AmaxOp,
    "aten.min.default": t.AminOp,
    # Whether any (all) elements are nonzero: the max (min) of the input as bools, the
    # result's type.
    **{f"aten.any.{overload}": t.AmaxOp for overload in ("default", "dim", "dims")},
    **{f"aten.all.{overload}": t.AminOp for overload in ("default", "dim", "dims")},
}.items():
    HANDLERS[_target] = partial(reduction, _op)


@handles("aten.max.dim", "aten.min.dim")
def max_min_dim(ir: _Importer, node: Node, a: dict[str, Any]) -> list[SSAValue]:
    """`x.max(dim)` (`min`): the largest (smallest) values along `dim` and their first
    positions."""
    x = ir.tensor(a["self"])
    values_type, indices_type = (ir.tensor_type(v) for v in node.meta["val"])
    dim, keepdim = ir.dim(a["dim"], max(len(t.shape_of(x)), 1)), a.get("keepdim", False)
    largest = target_name(node) == "aten.max.dim"
    values_class, indices_class = (t.AmaxOp, t.ArgmaxOp) if largest else (t.AminOp, t.ArgminOp)
    return [
        ir.emit(values_class(x, values_type, [dim], keepdim)),
        ir.emit(indices_class(x, indices_type, [dim], keepdim)),
    ]


@handles("aten.argmax.default", "aten.argmin.default")
def argmax(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """The first position of the largest (argmin: smallest) value along a dim, or of the
    flattened input where no dim is given."""
    x = ir.tensor(a["self"])
    if a["dim"] is None:
        x = ir.emit(t.ReshapeOp(x, TensorType(t.element_type_of(x), (prod(t.shape_of(x)),))))
    dim = ir.dim(0 if a["dim"] is None else a["dim"], max(len(t.shape_of(x)), 1))
    op_class = t.ArgmaxOp if target_name(node) == "aten.argmax.default" else t.ArgminOp
    keepdim = a["keepdim"] and a["dim"] is not None
    return ir.emit(op_class(x, ir.result_type(node), [dim], keepdim))


SORT_LIMIT = 4096
"""The longest dim `sort`, `topk`, `median` and `kthvalue` take: they count each element's
rank, n^2 comparisons a row (an MoE router's top-k over its experts, not a vocabulary's)."""


def rows_to_rank(
    ir: _Importer, x: SSAValue, dim: int, action: str = "sorting"
) -> tuple[SSAValue, list[int]]:
    """`x` with `dim` moved last, for `ranked` (or another op that compares every pair of a
    row, named by `action`), and the order of its dims; refused where such an op cannot take
    it (booleans, a dim longer than `SORT_LIMIT` or a dynamic one)."""
    shape, element = t.shape_of(x), t.element_type_of(x)
    if element == i1:
        raise ir.error(f"{action} booleans is not supported")
    size = shape[dim]
    if size == DYNAMIC_INDEX or size > SORT_LIMIT:
        raise ir.error(
            f"{action} along a dim of more than {SORT_LIMIT} elements (or a dynamic one) is "
            "not supported: emmy compares every pair of a row's elements, n^2 a row"
        )
    order = [*(d for d in range(len(shape)) if d != dim), dim]
    if dim != len(shape) - 1:
        x = ir.emit(t.PermuteOp(x, TensorType(element, tuple(shape[d] for d in order)), order))
    return x, order


@handles("aten.sort.default", "aten.sort.stable", "aten.topk.default")
def sort(ir: _Importer, node: Node, a: dict[str, Any]) -> list[SSAValue]:
    """`torch.sort` (and `argsort`) and `torch.topk`: the values along `dim` in order, with
    their positions. Element i's rank is the count of the elements that go before it (a
    larger one, for descending; NaN larger than any number, as torch orders it; an equal
    one before it in the input, so the order is stable); the k-th output is the element of
    rank k (`ranked`). topk's first k are sorted whatever `sorted` asks."""
    x = ir.tensor(a["self"])
    scalar = not t.shape_of(x)
    if scalar:
        # A 0-d tensor sorts as its one element.
        x = ir.emit(t.ReshapeOp(x, TensorType(t.element_type_of(x), (1,))))
    shape, element = t.shape_of(x), t.element_type_of(x)
    topk = target_name(node) == "aten.topk.default"
    descending = a.get("largest", True) if topk else a.get("descending", False)
    dim = ir.dim(a.get("dim", -1), len(shape))
    x, order = rows_to_rank(ir, x, dim)
    count = a["k"] if topk else shape[dim]
    values, indices = ranked(ir, x, count, descending)
    if scalar:
        return reshaped_results(ir, node, [values, indices])
    if dim != len(shape) - 1:
        back = sorted(range(len(order)), key=order.__getitem__)
        moved = (*(shape[d] for d in order[:-1]), count)
        out = tuple(moved[b] for b in back)
        values = ir.emit(t.PermuteOp(values, TensorType(element, out), back))
        indices = ir.emit(t.PermuteOp(indices, TensorType(i64, out), back))
    return [values, indices]


@handles(
    "aten.kthvalue.default",
    "aten.median.dim",
    "aten.median.default",
    "aten.nanmedian.dim",
    "aten.nanmedian.default",
)
def kthvalue(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue | list[SSAValue]:
    """`torch.kthvalue` and `torch.median` (of a dim, with positions, or of the whole
    tensor): the element of rank k - 1 in the ascending order `sort` gives (`ranked`; NaN
    above every number), the median's k being the lower middle, (n + 1) // 2. Equal values
    come in input order, where torch's CPU kernel (a quickselect) leaves them in its own.
    The median of a row that holds NaN is NaN, at its first NaN, as torch has it;
    `nanmedian`'s is the lower middle of the row's m numbers, rank (m - 1) // 2 (NaN at 0
    where the row is all NaN)."""
    x = ir.tensor(a["self"])
    element = t.element_type_of(x)
    name = target_name(node)
    whole = name in ("aten.median.default", "aten.nanmedian.default")
    if whole or not t.shape_of(x):
        x = ir.emit(t.ReshapeOp(x, TensorType(element, (prod(t.shape_of(x)),))))
    rows, _ = rows_to_rank(ir, x, 0 if whole else ir.dim(a["dim"], len(t.shape_of(x))))
    *row_shape, size = t.shape_of(rows)
    median = name != "aten.kthvalue.default"
    floating = element not in t.INTEGER_ELEMENT_TYPES
    if name.startswith("aten.nanmedian") and floating:
        return middle_number(ir, node, rows, whole)
    k = (size + 1) // 2 if median else a["k"]
    values, indices = ranked(ir, rows, 1, False, from_rank=k - 1)
    if median and floating:
        index_type = TensorType(i64, (*row_shape, 1))
        nan_places = ir.emit(
            t.WhereOp(
                nan_mask(ir, rows),
                positions(ir, t.shape_of(rows), len(row_shape)),
                ir.operand(size, i64),
                TensorType(i64, t.shape_of(rows)),
            )
        )
        first_nan = ir.emit(t.AminOp(nan_places, index_type, [len(row_shape)], True))
        has_nan = ir.emit(
            t.LtOp(first_nan, ir.operand(size, i64), TensorType(i1, index_type.shape))
        )
        values = ir.emit(t.WhereOp(has_nan, ir.operand(math.nan, element), values, values.type))
        indices = ir.emit(t.WhereOp(has_nan, first_nan, indices, index_type))
    # The one ranked element of each row, in the result's shape (with or without the dim).
    if whole:
        return ir.emit(t.ReshapeOp(values, ir.result_type(node)))
    return reshaped_results(ir, node, [values, indices])


@handles("aten.mode.default")
def mode(ir: _Importer, node: Node, a: dict[str, Any]) -> list[SSAValue]:
    """`torch.mode` along `dim`: the value that occurs most often (the least of those that tie;
    NaN counted as one value, above every number), and the place of its last occurrence, as
    torch's CPU kernel gives it. Each element counts its equals along the row: n^2 a row, as
    `ranked` compares."""
    x = ir.tensor(a["self"])
    element = t.element_type_of(x)
    if not t.shape_of(x):
        x = ir.emit(t.ReshapeOp(x, TensorType(element, (1,))))
    rows, _ = rows_to_rank(ir, x, ir.dim(a.get("dim", -1), len(t.shape_of(x))), "mode of")
    *row_shape, size = t.shape_of(rows)
    inner = len(row_shape)
    mine, other = unsqueeze_value(ir, rows, inner + 1), unsqueeze_value(ir, rows, inner)
    pairs = TensorType(i1, (*row_shape, size, size))
    same = ir.emit(t.EqOp(other, mine, pairs))
    floating = element not in t.INTEGER_ELEMENT_TYPES
    if floating:
        both_nan = t.BitwiseAndOp(nan_mask(ir, other), nan_mask(ir, mine), pairs)
        same = ir.emit(t.BitwiseOrOp(same, ir.emit(both_nan), pairs))
    counts = ir.emit(
        t.SumOp(ir.convert(same, i64), TensorType(i64, (*row_shape, size)), [inner + 1], False)
    )
    kept, flags = TensorType(i64, (*row_shape, 1)), TensorType(i1, t.shape_of(rows))
    most = ir.emit(t.AmaxOp(counts, kept, [inner], True))
    candidate = ir.emit(t.EqOp(counts, most, flags))
    value_type = TensorType(element, (*row_shape, 1))
    highest = extreme_value(element, largest=True)
    if floating:
        number = ir.emit(t.BitwiseNotOp(nan_mask(ir, rows), flags))
        candidate = ir.emit(t.BitwiseAndOp(candidate, number, flags))
    held = ir.emit(t.WhereOp(candidate, rows, ir.operand(highest, element), rows.type))
    value = ir.emit(t.AminOp(held, value_type, [inner], True))
    matches = ir.emit(t.EqOp(rows, value, flags))
    if floating:  # no number ties for the most: the mode is NaN
        any_number = ir.emit(t.AmaxOp(ir.convert(candidate, i64), kept, [inner], True))
        nan_wins = ir.emit(t.EqOp(any_number, ir.operand(0, i64), TensorType(i1, kept.shape)))
        value = ir.emit(t.WhereOp(nan_wins, ir.operand(math.nan, element), value, value_type))
        matches = ir.emit(t.WhereOp(nan_wins, nan_mask(ir, rows), matches, flags))
    places = ir.emit(
        t.WhereOp(matches, positions(ir, t.shape_of(rows), inner), ir.operand(-1, i64), counts.type)
    )
    last = ir.emit(t.AmaxOp(places, kept, [inner], True))
    return reshaped_results(ir, node, [value, last])


def middle_number(ir: _Importer, node: Node, rows: SSAValue, whole: bool) -> Any:
    """`nanmedian` of each row of `rows` (see `kthvalue`): the numbers' count m is a row's
    own, so the rank `ranked` picks is a tensor."""
    *row_shape, size = t.shape_of(rows)
    element = t.element_type_of(rows)
    kept = TensorType(i64, (*row_shape, 1))
    numbers = ir.emit(t.BitwiseNotOp(nan_mask(ir, rows), TensorType(i1, t.shape_of(rows))))
    count = ir.emit(t.SumOp(ir.convert(numbers, i64), kept, [len(row_shape)], True))
    lower_middle = ir.emit(
        t.FloorDivideOp(ir.emit(t.SubOp(count, ir.operand(1, i64), kept)), ir.operand(2, i64), kept)
    )
    values, indices = ranked(ir, rows, 1, False, unsqueeze_value(ir, lower_middle, len(row_shape)))
    none = ir.emit(t.EqOp(count, ir.operand(0, i64), TensorType(i1, kept.shape)))
    values = ir.emit(t.WhereOp(none, ir.operand(math.nan, element), values, values.type))
    indices = ir.emit(t.WhereOp(none, ir.operand(0, i64), indices, indices.type))
    if whole:
        return ir.emit(t.ReshapeOp(values, ir.result_type(node)))
    return reshaped_results(ir, node, [values, indices])


@dataclass(frozen=True)
class Prefixes:
    """A tensor's dim moved last (`rows_to_rank`) and seen in pairs [.., i, j] of each place
    i and every place j of its row, for the running ops that take each place's prefix whole
    (n^2 a row, as `ranked` compares)."""

    x: SSAValue
    """The tensor, the dim last."""
    order: list[int]
    shape: tuple[int, ...]
    """The tensor's shape before the move (a 0-d one as one element)."""
    dim: int
    up_to: SSAValue
    """[n, n]: whether place j is at or before place i."""
    place: SSAValue
    """[1, n]: place j."""
    other: SSAValue
    """[.., 1, n]: the element at place j."""

    @staticmethod
    def of(ir: _Importer, a: dict[str, Any], x: SSAValue, action: str) -> Prefixes:
        shape = t.shape_of(x) or (1,)
        x = ir.emit(t.ReshapeOp(x, TensorType(t.element_type_of(x), shape)))
        dim = ir.dim(a["dim"], len(shape))
        x, order = rows_to_rank(ir, x, dim, action)
        *rows, size = t.shape_of(x)
        place = positions(ir, (1, size), 1)
        up_to = ir.emit(t.LeOp(place, positions(ir, (size, 1), 0), TensorType(i1, (size, size))))
        return Prefixes(x, order, shape, dim, up_to, place, unsqueeze_value(ir, x, len(rows)))

    @property
    def pairs(self) -> tuple[int, ...]:
        *rows, size = t.shape_of(self.x)
        return (*rows, size, size)

    def reduced(self, ir: _Importer, op_class: type[t.ReductionOp], held: SSAValue) -> SSAValue:
        """`held` [.., i, j] reduced over j."""
        result = TensorType(t.element_type_of(held), t.shape_of(self.x))
        return ir.emit(op_class(held, result, [len(self.pairs) - 1], False))

    def restored(self, ir: _Importer, results: list[SSAValue]) -> list[SSAValue]:
        """`results` [.., n] with the dim back in its place."""
        if self.dim == len(self.shape) - 1:
            return results
        back = sorted(range(len(self.order)), key=self.order.__getitem__)
        return [
            ir.emit(t.PermuteOp(value, TensorType(t.element_type_of(value), self.shape), back))
            for value in results
        ]


@handles("aten.cummax.default", "aten.cummin.default")
def running_extreme(ir: _Importer, node: Node, a: dict[str, Any]) -> list[SSAValue]:
    """`torch.cummax` (`cummin`): at each place along `dim`, the largest (smallest) element
    up to it and the last place that holds it; NaN, once met, is the extreme, at the last
    NaN's place, as torch's kernel keeps it."""
    largest = target_name(node) == "aten.cummax.default"
    rows = Prefixes.of(ir, a, ir.tensor(a["self"]), "a running max or min")
    element = t.element_type_of(rows.x)
    beyond = ir.operand(extreme_value(element, largest=not largest), element)
    held = ir.emit(t.WhereOp(rows.up_to, rows.other, beyond, TensorType(element, rows.pairs)))
    values = rows.reduced(ir, t.AmaxOp if largest else t.AminOp, held)
    mine = unsqueeze_value(ir, values, len(rows.pairs) - 1)  # [.., i, 1]
    flags = TensorType(i1, rows.pairs)
    same = ir.emit(t.EqOp(rows.other, mine, flags))
    if element not in t.INTEGER_ELEMENT_TYPES:
        both_nan = ir.emit(t.BitwiseAndOp(nan_mask(ir, rows.other), nan_mask(ir, mine), flags))
        same = ir.emit(t.BitwiseOrOp(same, both_nan, flags))
    holding = ir.emit(t.BitwiseAndOp(same, rows.up_to, flags))
    places = ir.emit(
        t.WhereOp(holding, rows.place, ir.operand(-1, i64), TensorType(i64, rows.pairs))
    )
    return reshaped_results(
        ir, node, rows.restored(ir, [values, rows.reduced(ir, t.AmaxOp, places)])
    )


@handles("aten.logcumsumexp.default")
def running_log_sum_exp(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`torch.logcumsumexp`: log(sum(exp(x))) of each place's elements up to it, their max m
    taken out first (an infinite m as 0: all -inf gives -inf, a +inf gives +inf), in f32 for
    16-bit inputs and rounded once."""
    element = ir.result_element(node)
    x = ir.convert(ir.tensor(a["self"]), widened(element))
    rows = Prefixes.of(ir, a, x, "a running log-sum-exp")
    wide = t.element_type_of(rows.x)
    held = ir.emit(
        t.WhereOp(rows.up_to, rows.other, ir.operand(-math.inf, wide), TensorType(wide, rows.pairs))
    )
    most = rows.reduced(ir, t.AmaxOp, held)
    infinite = ir.emit(
        t.EqOp(
            ir.emit(t.AbsOp(most, most.type)),
            ir.operand(math.inf, wide),
            TensorType(i1, t.shape_of(most)),
        )
    )
    most = ir.emit(t.WhereOp(infinite, ir.operand(0.0, wide), most, most.type))
    shifted = ir.emit(
        t.SubOp(held, unsqueeze_value(ir, most, len(rows.pairs) - 1), TensorType(wide, rows.pairs))
    )
    total = rows.reduced(ir, t.SumOp, ir.emit(t.ExpOp(shifted, shifted.type)))
    result = ir.emit(t.AddOp(ir.emit(t.LogOp(total, total.type)), most, most.type))
    (restored,) = rows.restored(ir, [ir.convert(result, element)])
    return ir.emit(t.ReshapeOp(restored, ir.result_type(node)))


def extreme_value(element: Attribute, largest: bool) -> float | int:
    """The largest value of `element` (or the smallest): +-inf of a float, an integer
    type's bound."""
    dtype = dtypes.torch_dtype(element)
    if dtype.is_floating_point:
        return inf if largest else -inf
    info = torch.iinfo(dtype)
    return info.max if largest else info.min


def reshaped_results(ir: _Importer, node: Node, values: list[SSAValue]) -> list[SSAValue]:
    """`values`, each reshaped to the type of the node's result at its place."""
    return [
        ir.emit(t.ReshapeOp(value, ir.tensor_type(result)))
        for value, result in zip(values, node.meta["val"], strict=True)
    ]


def ranked(
    ir: _Importer, x: SSAValue, count: int, descending: bool, from_rank: int | SSAValue = 0
) -> tuple[SSAValue, SSAValue]:
    """The `count` elements from rank `from_rank` on along the last dim of `x` in order (see
    `sort`), and their positions; `from_rank` may be each row's own ([.., 1, 1] of i64). A
    rank the row lacks gives the element type's lowest value, at -1."""
    *rows, size = t.shape_of(x)
    element = t.element_type_of(x)
    pairs = (*rows, size, size)
    mine = unsqueeze_value(ir, x, len(rows) + 1)  # [.., i, 1]
    other = unsqueeze_value(ir, x, len(rows))  # [.., 1, j]
    flags = TensorType(i1, pairs)
    if element in t.INTEGER_ELEMENT_TYPES:
        after = ir.emit((t.GtOp if descending else t.LtOp)(other, mine, flags))
        same = ir.emit(t.EqOp(other, mine, flags))
    else:
        # NaN orders above every number: before `mine` when descending, after it otherwise.
        other_nan, mine_nan = nan_mask(ir, other), nan_mask(ir, mine)
        first, second = (other_nan, mine_nan) if descending else (mine_nan, other_nan)
        beyond = ir.emit(
            t.BitwiseAndOp(
                first, ir.emit(t.BitwiseNotOp(second, TensorType(i1, t.shape_of(second)))), flags
            )
        )
        after = ir.emit(
            t.BitwiseOrOp(
                ir.emit((t.GtOp if descending else t.LtOp)(other, mine, flags)), beyond, flags
            )
        )
        both_nan = ir.emit(t.BitwiseAndOp(other_nan, mine_nan, flags))
        same = ir.emit(t.BitwiseOrOp(ir.emit(t.EqOp(other, mine, flags)), both_nan, flags))
    earlier = ir.emit(
        t.LtOp(
            positions(ir, (1, size), 1), positions(ir, (size, 1), 0), TensorType(i1, (size, size))
        )
    )
    ties = ir.emit(t.BitwiseAndOp(same, earlier, flags))
    before = ir.convert(ir.emit(t.BitwiseOrOp(after, ties, flags)), i64)
    rank = ir.emit(t.SumOp(before, TensorType(i64, (*rows, size)), [len(rows) + 1], False))
    # The element of rank k, for each of the `count` ks from `from_rank` on: one matches each.
    wanted = positions(ir, (count, 1), 0)
    if isinstance(from_rank, SSAValue):
        shape = torch.broadcast_shapes((count, 1), t.shape_of(from_rank))
        wanted = ir.emit(t.AddOp(wanted, from_rank, TensorType(i64, shape)))
    elif from_rank:
        wanted = ir.emit(t.AddOp(wanted, ir.operand(from_rank, i64), wanted.type))
    matches = ir.emit(
        t.EqOp(unsqueeze_value(ir, rank, len(rows)), wanted, TensorType(i1, (*rows, count, size)))
    )
    held = TensorType(element, (*rows, count, size))
    lowest = extreme_value(element, largest=False)
    picked = ir.emit(t.WhereOp(matches, other, ir.operand(lowest, element), held))
    values = ir.emit(t.AmaxOp(picked, TensorType(element, (*rows, count)), [len(rows) + 1], False))
    places = ir.emit(
        t.WhereOp(
            matches,
            positions(ir, (1, size), 1),
            ir.operand(-1, i64),
            TensorType(i64, (*rows, count, size)),
        )
    )
    indices = ir.emit(t.AmaxOp(places, TensorType(i64, (*rows, count)), [len(rows) + 1], False))
    return values, indices


@handles("aten.cumsum.default", "aten.cumprod.default")
def running_fold(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """cumsum / cumprod in the result's type: integers (bools too) as int64 and `dtype=`
    convert the input first, as torch does."""
    x = ir.operand(a["self"], ir.result_element(node))
    op_class = t.CumsumOp if target_name(node) == "aten.cumsum.default" else t.CumprodOp
    return ir.emit(op_class(x, ir.result_type(node), ir.dim(a["dim"], max(len(t.shape_of(x)), 1))))


def variance_correction(ir: _Importer, a: dict[str, Any]) -> int:
    """aten's `unbiased` or `correction` as the count the variance divides one less by."""
    if "unbiased" in a:
        correction = 1 if a["unbiased"] else 0
    else:
        correction = 1 if a["correction"] is None else a["correction"]
    if correction != int(correction):
        raise ir.error(f"a fractional variance correction ({correction}) is not supported")
    return int(correction)


@handles("aten.var.dim", "aten.var.correction")
def var(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    correction = variance_correction(ir, a)
    x = ir.operand(a["self"], ir.result_element(node))
    dims = reduced_dims(ir, a.get("dim"), len(t.shape_of(x)))
    keepdim = a.get("keepdim", False)
    return ir.emit(t.VarOp(x, ir.result_type(node), dims, keepdim, correction))


@handles("aten.var_mean.correction", "aten.var_mean.dim")
def var_mean(ir: _Importer, node: Node, a: dict[str, Any]) -> list[SSAValue]:
    """The variance and the mean, as `var` and `mean` compute them."""
    correction = variance_correction(ir, a)
    variance_type, mean_type = (ir.tensor_type(v) for v in node.meta["val"])
    x = ir.operand(a["self"], variance_type.get_element_type())
    dims = reduced_dims(ir, a.get("dim"), len(t.shape_of(x)))
    keepdim = a.get("keepdim", False)
    return [
        ir.emit(t.VarOp(x, variance_type, dims, keepdim, correction)),
        ir.emit(t.MeanOp(x, mean_type, dims, keepdim)),
    ]


@handles("aten.linalg_vector_norm.default")
def vector_norm(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """The `ord`-norm along `dim` (`norm_along`)."""
    element = ir.result_element(node)
    if element not in (f16, bf16, f32):
        raise ir.error(f"the norm of {element} values is not supported")
    x = ir.operand(a["self"], element)
    dims = reduced_dims(ir, a.get("dim"), len(t.shape_of(x)))
    return norm_along(ir, x, float(a["ord"]), dims, a.get("keepdim", False), ir.result_type(node))


def norm_along(
    ir: _Importer,
    x: SSAValue,
    order: float,
    dims: list[int],
    keepdim: bool,
    result_type: TensorType,
) -> SSAValue:
    """The largest (smallest) magnitude along `dims` for an `order` of inf (-inf), the count
    of nonzeros for 0, else (sum |x|^order)^(1/order), with sqrt and sum of squares for 2."""
    element = t.element_type_of(x)
    magnitude = ir.emit(t.AbsOp(x, x.type))
    if order in (inf, -inf):
        op_class = t.AmaxOp if order > 0 else t.AminOp
        return ir.emit(op_class(magnitude, result_type, dims, keepdim))
    if order == 0:
        nonzero = ir.emit(t.NeOp(x, ir.operand(0, element), TensorType(i1, t.shape_of(x))))
        return ir.emit(t.SumOp(ir.convert(nonzero, element), result_type, dims, keepdim))
    powered = (
        magnitude if order == 1 else ir.emit(t.PowOp(magnitude, ir.operand(order, element), x.type))
    )
    total = ir.emit(t.SumOp(powered, result_type, dims, keepdim))
    if order == 1:
        return total
    if order == 2:
        return ir.emit(t.SqrtOp(total, result_type))
    return ir.emit(t.PowOp(total, ir.operand(1 / order, element), result_type))


@handles("aten._cdist_forward.default")
def cdist(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`torch.cdist(x1, x2, p)`: the p-norm of each row of `x1` less each row of `x2`, from
    the differences. (For p = 2 and more than 25 rows torch's kernel takes |a|^2 + |b|^2 - 2
    a.b from a matrix product instead, whose cancellation loses the digits of close rows
    that the differences keep.)"""
    result_type = ir.result_type(node)
    element = result_type.get_element_type()
    if element not in (f16, bf16, f32):
        raise ir.error(f"the distances of {element} rows are not supported")
    rows = ir.operand(a["x1"], element)
    rows = unsqueeze_value(ir, rows, len(t.shape_of(rows)) - 1)
    others = ir.operand(a["x2"], element)
    others = unsqueeze_value(ir, others, len(t.shape_of(others)) - 2)
    shape = torch.broadcast_shapes(t.shape_of(rows), t.shape_of(others))
    differences = ir.emit(t.SubOp(rows, others, TensorType(element, shape)))
    return norm_along(ir, differences, float(a["p"]), [len(shape) - 1], False, result_type)


# --- contractions -------------------------------------------------------------------------


@handles("aten.linear.default")
def linear(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    bias = None if a.get("bias") is None else ir.tensor(a["bias"])
    return ir.emit(
        t.LinearOp(ir.tensor(a["input"]), ir.tensor(a["weight"]), bias, ir.result_type(node))
    )


def unsqueeze_value(ir: _Importer, value: SSAValue, dim: int) -> SSAValue:
    shape = t.shape_of(value)
    result = TensorType(t.element_type_of(value), (*shape[:dim], 1, *shape[dim:]))
    return ir.emit(t.UnsqueezeOp(value, result, dim))


@handles("aten._trilinear.default")
def trilinear(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`_trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim)` (`nn.Bilinear`'s
    `x1^T W x2`): each operand unsqueezed at its `expand` dims in turn, the three multiplied
    (broadcast) and summed over `sumdim`; emmy fuses the product into the sum."""
    result_type = ir.result_type(node)
    element = result_type.get_element_type()
    operands = []
    for number in (1, 2, 3):
        value = ir.operand(a[f"i{number}"], element)
        for dim in a[f"expand{number}"]:
            value = unsqueeze_value(ir, value, dim)
        operands.append(value)
    product = operands[0]
    for value in operands[1:]:
        shape = torch.broadcast_shapes(t.shape_of(product), t.shape_of(value))
        product = ir.emit(t.MulOp(product, value, TensorType(element, shape)))
    summed = sorted(d % len(t.shape_of(product)) for d in a["sumdim"])
    return ir.emit(t.SumOp(product, result_type, summed, False))


@handles("aten.matmul.default")
def matmul(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """torch.matmul; a vector operand becomes a one-row (or one-column) matrix whose unit
    dim is squeezed from the product, as torch defines it."""
    lhs, rhs = ir.tensor(a["self"]), ir.tensor(a["other"])
    squeezed = []
    if len(t.shape_of(lhs)) == 1:
        lhs = unsqueeze_value(ir, lhs, 0)
        squeezed.append(-2)
    if len(t.shape_of(rhs)) == 1:
        rhs = unsqueeze_value(ir, rhs, 1)
        squeezed.append(-1)
    lhs_shape, rhs_shape = t.shape_of(lhs), t.shape_of(rhs)
    batch = t.broadcast_shapes(lhs_shape[:-2], rhs_shape[:-2])
    shape = (*batch, lhs_shape[-2], rhs_shape[-1])
    product = ir.emit(t.MatmulOp(lhs, rhs, TensorType(t.element_type_of(lhs), shape)))
    if not squeezed:
        return product
    dims = sorted(len(shape) + d for d in squeezed)
    return ir.emit(t.SqueezeOp(product, ir.result_type(node), dims))


def matrix_product(
    op_class: type[t.MatrixProductOp], ir: _Importer, node: Node, a: dict[str, Any]
) -> SSAValue:
    return ir.emit(op_class(ir.tensor(a["self"]), ir.tensor(a["mat2"]), ir.result_type(node)))


HANDLERS["aten.mm.default"] = partial(matrix_product, t.MatmulOp)
HANDLERS["aten.bmm.default"] = partial(matrix_product, t.BmmOp)


@handles("aten.addmm.default", "aten.addmv.default")
def addmm(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`beta * self + alpha * (mat1 @ mat2)` (AOTAutograd's form of a Linear with a bias), or
    of a matrix and a vector (`addmv`); with `beta` 0, `self` is not read (its NaN and
    infinities do not reach the result), as torch documents."""
    if "vec" in a:
        product = matmul(ir, node, {"self": a["mat"], "other": a["vec"]})
    else:
        product = matrix_product(t.MatmulOp, ir, node, {"self": a["mat1"], "mat2": a["mat2"]})
    result_type = ir.result_type(node)
    scaled = {}
    for name, value in (("alpha", product), ("beta", ir.tensor(a["self"]))):
        if a[name] != 1:
            factor = ir.operand(a[name], result_type.get_element_type())
            value = ir.emit(t.MulOp(value, factor, value.type))
        scaled[name] = value
    if a["beta"] == 0:
        return scaled["alpha"]
    return ir.emit(t.AddOp(scaled["alpha"], scaled["beta"], result_type))


@handles("aten.conv1d.default", "aten.conv2d.default", "aten.convolution.default")
def convolution(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """A convolution as one matrix product per group (im2col): each kernel offset's strided
    slice of the zero-padded input is a column block of `[N, G, O, C/G * K]`, multiplied by
    the group's weight `[C_out/G, C/G * K]` (and a bias, as a row against a column of ones).
    A transposed convolution is the convolution of its input spread out by the stride (zeros
    between its elements) and padded by the kernel's reach less the padding, with the weight
    flipped and its channels swapped within each group."""
    x, weight = ir.tensor(a["input"]), ir.tensor(a["weight"])
    spatial = len(t.shape_of(weight)) - 2
    stride, padding, dilation = (
        [*a[name]] * spatial if len(a[name]) == 1 else list(a[name])
        for name in ("stride", "padding", "dilation")
    )
    groups = a["groups"]
    bias = None if a.get("bias") is None else ir.tensor(a["bias"])
    if a.get("transposed"):
        output_padding = list(a["output_padding"]) or [0] * spatial
        output_padding = output_padding * spatial if len(output_padding) == 1 else output_padding
        x = spread_out(ir, x, stride)
        kernel = t.shape_of(weight)[2:]
        reach = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
        pad = []
        for r, p, extra in reversed(list(zip(reach, padding, output_padding, strict=True))):
            pad += [r - p, r - p + extra]
        x = pad_constant(ir, x, pad, 0.0)
        weight = transposed_weight(ir, weight, groups)
        stride, padding = [1] * spatial, [0] * spatial
    pad = [p for size in reversed(padding) for p in (size, size)]
    if any(pad):
        x = pad_constant(ir, x, pad, 0.0)
    return grouped_im2col(ir, x, weight, bias, stride, dilation, groups)


def spread_out(ir: _Importer, x: SSAValue, stride: Sequence[int]) -> SSAValue:
    """`x` with `stride - 1` zeros between consecutive elements of each spatial dim (the
    dims after the first two)."""
    element = t.element_type_of(x)
    for d, s in enumerate(stride):
        if s == 1:
            continue
        dim = 2 + d
        shape = list(t.shape_of(x))
        size = shape[dim]
        x = unsqueeze_value(ir, x, dim + 1)
        zeros = ir.constant(
            torch.zeros(
                (*shape[: dim + 1], s - 1, *shape[dim + 1 :]), dtype=dtypes.torch_dtype(element)
            )
        )
        x = ir.emit(
            t.CatOp(
                [x, zeros], TensorType(element, (*shape[: dim + 1], s, *shape[dim + 1 :])), dim + 1
            )
        )
        shape[dim] = size * s
        x = ir.emit(t.ReshapeOp(x, TensorType(element, shape)))
        x = slice_value(ir, x, dim, 0, (size - 1) * s + 1, 1)
    return x


def transposed_weight(ir: _Importer, weight: SSAValue, groups: int) -> SSAValue:
    """A transposed convolution's `[C_in, C_out/G, K..]` weight as the `[C_out, C_in/G, K..]`
    weight of the convolution it is: channels swapped within each group, kernel flipped."""
    (channels, group_out, *kernel), element = t.shape_of(weight), t.element_type_of(weight)
    group_in = channels // groups
    split = TensorType(element, (groups, group_in, group_out, *kernel))
    weight = ir.emit(t.ReshapeOp(weight, split))
    order = [0, 2, 1, *range(3, 3 + len(kernel))]
    swapped = TensorType(element, (groups, group_out, group_in, *kernel))
    weight = ir.emit(t.PermuteOp(weight, swapped, order))
    weight = ir.emit(
        t.ReshapeOp(weight, TensorType(element, (groups * group_out, group_in, *kernel)))
    )
    for dim in range(2, 2 + len(kernel)):
        weight = pick_along(ir, weight, dim, descending(ir, t.shape_of(weight)[dim]), weight.type)
    return weight


def grouped_im2col(
    ir: _Importer,
    x: SSAValue,
    weight: SSAValue,
    bias: SSAValue | None,
    stride: Sequence[int],
    dilation: Sequence[int],
    groups: int,
) -> SSAValue:
    """The convolution of the padded `x` by `weight` in `groups`, one batched product of
    its patches (see `convolution`)."""
    element = t.element_type_of(x)
    (batch, channels, *size), (out_channels, group_in, *kernel) = t.shape_of(x), t.shape_of(weight)
    out = [
        (length - d * (k - 1) - 1) // s + 1
        for length, d, k, s in zip(size, dilation, kernel, stride, strict=True)
    ]
    columns = []
    for offsets in itertools.product(*(range(k) for k in kernel)):
        column = x
        for d, offset in enumerate(offsets):
            start = offset * dilation[d]
            end = start + (out[d] - 1) * stride[d] + 1
            column = slice_value(ir, column, 2 + d, start, end, stride[d])
        columns.append(unsqueeze_value(ir, column, 2))
    taps, rows, group_out = prod(kernel), prod(out), out_channels // groups
    depth = group_in * taps
    stacked = ir.emit(t.CatOp(columns, TensorType(element, (batch, channels, taps, *out)), 2))
    patches = ir.emit(t.ReshapeOp(stacked, TensorType(element, (batch, groups, depth, rows))))
    patches = ir.emit(
        t.PermuteOp(patches, TensorType(element, (batch, groups, rows, depth)), [0, 1, 3, 2])
    )
    flat_weight = ir.emit(t.ReshapeOp(weight, TensorType(element, (groups, group_out, depth))))
    flat_weight = ir.emit(
        t.PermuteOp(flat_weight, TensorType(element, (groups, depth, group_out)), [0, 2, 1])
    )
    if bias is not None:
        # The bias joins the product as one more row of weights against a column of ones,
        # so that it is added before the single rounding, as torch's kernel adds it.
        ones = ir.constant(torch.ones((batch, groups, rows, 1), dtype=dtypes.torch_dtype(element)))
        patches = ir.emit(
            t.CatOp([patches, ones], TensorType(element, (batch, groups, rows, depth + 1)), 3)
        )
        bias = ir.emit(t.ReshapeOp(bias, TensorType(element, (groups, 1, group_out))))
        flat_weight = ir.emit(
            t.CatOp([flat_weight, bias], TensorType(element, (groups, depth + 1, group_out)), 1)
        )
        depth += 1
    flat_weight = ir.emit(
        t.ExpandOp(flat_weight, TensorType(element, (batch, groups, depth, group_out)))
    )
    product = ir.emit(
        t.MatmulOp(patches, flat_weight, TensorType(element, (batch, groups, rows, group_out)))
    )
    product = ir.emit(
        t.PermuteOp(product, TensorType(element, (batch, groups, group_out, rows)), [0, 1, 3, 2])
    )
    return ir.emit(t.ReshapeOp(product, TensorType(element, (batch, out_channels, *out))))


# --- normalizations, attention, lookup ----------------------------------------------------


@handles("aten.rms_norm.default")
def rms_norm(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.tensor(a["input"])
    eps = a.get("eps")
    if eps is None:
        # torch's default is the epsilon of the compute type (f32 for f16 and bf16)
        dtype = node.meta["val"].dtype
        eps = torch.finfo(torch.promote_types(dtype, torch.float32)).eps
    weight = None if a.get("weight") is None else ir.tensor(a["weight"])
    return ir.emit(t.RmsNormOp(x, weight, a["normalized_shape"], eps, ir.result_type(node)))


@handles("aten.layer_norm.default", "aten.native_layer_norm.default")
def layer_norm(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue | list[SSAValue]:
    """`native_layer_norm`, AOTAutograd's form (a forward whose parameters take gradients),
    also returns each row's mean and reciprocal standard deviation, with the normalized dims
    kept as 1s, in their own type: computed in f32 for 16-bit inputs (as torch does) where a
    graph uses them."""
    weight, bias = (None if a.get(k) is None else ir.tensor(a[k]) for k in ("weight", "bias"))
    x = ir.tensor(a["input"])
    normalized = ir.emit(
        t.LayerNormOp(x, weight, bias, a["normalized_shape"], a["eps"], ir.first_result_type(node))
    )
    if not isinstance(node.meta["val"], Sequence):
        return normalized
    mean_type, rstd_type = (ir.tensor_type(v) for v in node.meta["val"][1:])
    rank = len(t.shape_of(x))
    dims = list(range(rank - len(a["normalized_shape"]), rank))
    wide = ir.convert(x, widened(t.element_type_of(x)))
    statistics = TensorType(t.element_type_of(wide), mean_type.get_shape())
    mean = ir.emit(t.MeanOp(wide, statistics, dims, True))
    variance = ir.emit(t.VarOp(wide, statistics, dims, True, 0))
    eps = ir.operand(a["eps"], t.element_type_of(wide))
    rstd = ir.emit(t.RsqrtOp(ir.emit(t.AddOp(variance, eps, statistics)), statistics))
    return [
        normalized,
        ir.convert(mean, mean_type.get_element_type()),
        ir.convert(rstd, rstd_type.get_element_type()),
    ]


@handles("aten.group_norm.default", "aten.native_group_norm.default")
def group_norm(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue | list[SSAValue]:
    """Group norm (`normalized_groups`); of `native_group_norm`, the mean and reciprocal
    deviation are not kept."""
    groups = a["num_groups"] if "num_groups" in a else a["group"]
    weight, bias = (a.get(name) for name in ("weight", "bias"))
    y = normalized_groups(ir, ir.tensor(a["input"]), groups, weight, bias, a["eps"])
    return ir.first_result(node, y)


@handles("aten.instance_norm.default")
def instance_norm(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """Instance norm with the input's statistics: each sample's channel normalized over its
    spatial dims, a group norm of one channel a group."""
    if not a["use_input_stats"]:
        raise ir.error("instance norm with running statistics is not supported")
    x = ir.tensor(a["input"])
    channels = t.shape_of(x)[1] if len(t.shape_of(x)) > 1 else 0
    weight, bias = (a.get(name) for name in ("weight", "bias"))
    return normalized_groups(ir, x, channels, weight, bias, a["eps"])


def normalized_groups(
    ir: _Importer, x: SSAValue, groups: int, weight: Any, bias: Any, eps: float
) -> SSAValue:
    """The channels (dim 1) of `x` in `groups` groups, each sample's group normalized whole
    (a layer norm of it seen as one row), then scaled by `weight` and shifted by `bias` per
    channel, where given."""
    shape, result_element = t.shape_of(x), t.element_type_of(x)
    if len(shape) < 2 or not groups or shape[1] % groups:
        raise ir.error(f"a norm of {groups} channel groups needs channels (dim 1) they divide")
    x = ir.convert(x, widened(result_element))
    row = prod(shape[1:]) // groups
    rows_type = TensorType(t.element_type_of(x), (shape[0], groups, row))
    rows = ir.emit(t.ReshapeOp(x, rows_type))
    normalized = ir.emit(t.LayerNormOp(rows, None, None, [row], eps, rows_type))
    y = scaled_per_channel(ir, ir.emit(t.ReshapeOp(normalized, x.type)), weight, bias)
    return ir.convert(y, result_element)


def widened(element: Attribute) -> Attribute:
    """The type a norm of `element` values computes in: f32 for 16-bit floats, rounded once
    at the end, as torch's CPU kernels do."""
    return f32 if element in (f16, bf16) else element


def scaled_per_channel(ir: _Importer, y: SSAValue, weight: Any, bias: Any) -> SSAValue:
    """`y * weight + bias`, a factor of each channel (dim 1), where given."""
    shape, element = t.shape_of(y), t.element_type_of(y)
    channels = TensorType(element, (shape[1], *(1,) * (len(shape) - 2)))
    for factor, op_class in ((weight, t.MulOp), (bias, t.AddOp)):
        if factor is not None:
            per_channel = ir.emit(t.ReshapeOp(ir.operand(factor, element), channels))
            y = ir.emit(op_class(y, per_channel, y.type))
    return y


@handles("aten._native_batch_norm_legit.no_stats")
def batch_statistics_norm(
    ir: _Importer, node: Node, a: dict[str, Any]
) -> SSAValue | list[SSAValue]:
    """Batch norm with the batch's own statistics and no running ones (AOTAutograd's form of
    an instance norm, and of a batch norm that does not track them): each channel (dim 1)
    normalized over the batch and the other dims, as one row of a layer norm, then scaled
    and shifted per channel; of the three results only the normalized one is kept."""
    x = ir.tensor(a["input"])
    shape, result_element = t.shape_of(x), t.element_type_of(x)
    if len(shape) < 2:
        raise ir.error("batch norm needs channels (dim 1)")
    x = ir.convert(x, widened(result_element))
    element = t.element_type_of(x)
    channels_first = [1, 0, *range(2, len(shape))]  # its own inverse
    permuted_type = TensorType(element, tuple(shape[d] for d in channels_first))
    permuted = ir.emit(t.PermuteOp(x, permuted_type, channels_first))
    row = prod(shape) // shape[1]
    rows_type = TensorType(element, (shape[1], row))
    rows = ir.emit(t.ReshapeOp(permuted, rows_type))
    normalized = ir.emit(t.LayerNormOp(rows, None, None, [row], a["eps"], rows_type))
    normalized = ir.emit(t.ReshapeOp(normalized, permuted_type))
    y = ir.emit(t.PermuteOp(normalized, x.type, channels_first))
    y = scaled_per_channel(ir, y, a.get("weight"), a.get("bias"))
    return ir.first_result(node, ir.convert(y, result_element))


@handles("aten.batch_norm.default", "aten._native_batch_norm_legit_no_training.default")
def batch_norm(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue | list[SSAValue]:
    """Batch norm in eval mode, `(x - mean) / sqrt(var + eps) * weight + bias` with the
    running statistics of each channel (dim 1), in f32 for 16-bit inputs as torch computes
    it (without running statistics, the batch's own: `batch_statistics_norm`); of
    AOTAutograd's form, the other two results (saved for the backward pass) are not kept."""
    if a.get("training"):
        if a.get("running_mean") is None and a.get("running_var") is None:
            return batch_statistics_norm(ir, node, a)
        raise ir.error("batch norm in training mode updates its statistics; call it in eval()")
    x = ir.tensor(a["input"])
    shape, result_element = t.shape_of(x), t.element_type_of(x)
    element = widened(result_element)
    x = ir.convert(x, element)
    channels = TensorType(element, (shape[1], *(1,) * (len(shape) - 2)))

    def per_channel(name: str) -> SSAValue:
        return ir.emit(t.ReshapeOp(ir.operand(a[name], element), channels))

    mean, variance = per_channel("running_mean"), per_channel("running_var")
    # As eager's CPU kernel: y = x * alpha + beta, alpha = weight / sqrt(var + eps),
    # beta = bias - mean * alpha, so that the results agree to the last bit.
    eps, one = ir.operand(a["eps"], element), ir.operand(1, element)
    deviation = ir.emit(t.SqrtOp(ir.emit(t.AddOp(variance, eps, channels)), channels))
    alpha = ir.emit(t.DivOp(one, deviation, channels))
    if a["weight"] is not None:
        alpha = ir.emit(t.MulOp(alpha, per_channel("weight"), channels))
    beta = ir.emit(t.MulOp(mean, alpha, channels))
    if a["bias"] is not None:
        beta = ir.emit(t.SubOp(per_channel("bias"), beta, channels))
    else:
        beta = ir.emit(t.NegOp(beta, channels))
    y = ir.convert(
        ir.emit(t.AddOp(ir.emit(t.MulOp(x, alpha, x.type)), beta, x.type)), result_element
    )
    return ir.first_result(node, y)


def softmax(
    op_class: type[t.SoftmaxFamilyOp], ir: _Importer, node: Node, a: dict[str, Any]
) -> SSAValue:
    """`dtype=` (and `_softmax`'s half_to_float) convert the input first, as torch does."""
    x = ir.operand(a["self"], ir.result_element(node))
    dim = ir.dim(a["dim"], len(t.shape_of(x)))
    return ir.emit(op_class(x, ir.result_type(node), dim))


for _target, _op in {
    "aten.softmax.int": t.SoftmaxOp,
    "aten._softmax.default": t.SoftmaxOp,
    "aten.log_softmax.int": t.LogSoftmaxOp,
    "aten._log_softmax.default": t.LogSoftmaxOp,
}.items():
    HANDLERS[_target] = partial(softmax, _op)


def repeat_heads(ir: _Importer, value: SSAValue, groups: int) -> SSAValue:
    """`value.repeat_interleave(groups, dim=-3)`: each key/value head serves `groups`
    consecutive query heads."""
    shape = t.shape_of(value)
    element = t.element_type_of(value)
    head_dim = len(shape) - 3
    unsqueezed = unsqueeze_value(ir, value, head_dim + 1)
    expanded_shape = (*shape[: head_dim + 1], groups, *shape[head_dim + 1 :])
    expanded = ir.emit(t.ExpandOp(unsqueezed, TensorType(element, expanded_shape)))
    repeated = (*shape[:head_dim], shape[head_dim] * groups, *shape[head_dim + 1 :])
    return ir.emit(t.ReshapeOp(expanded, TensorType(element, repeated)))


@handles(
    "aten.scaled_dot_product_attention.default",
    "aten._scaled_dot_product_flash_attention_for_cpu.default",
    "aten._scaled_dot_product_flash_attention.default",
    "aten._scaled_dot_product_efficient_attention.default",
    "aten._scaled_dot_product_cudnn_attention.default",
    "emmy.sdpa_boolean_mask.default",
)
def sdpa(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue | list[SSAValue]:
    """`F.scaled_dot_product_attention`, the device-specific forms that AOTAutograd leaves
    (whose other results, the log-sum-exp and random state for the backward pass, are not
    kept) and `emmy::sdpa_boolean_mask` (`boolean_mask_sdpa`)."""
    if a["dropout_p"] != 0:
        raise ir.error(
            f"attention dropout (dropout_p={a['dropout_p']}) is random; "
            "only dropout_p=0 is supported"
        )
    query, key, value = (ir.tensor(a[k]) for k in ("query", "key", "value"))
    query_heads, key_heads = t.shape_of(query)[-3:-2], t.shape_of(key)[-3:-2]
    # Without enable_gqa eager refuses unequal heads, so unequal heads mean grouped-query
    # attention (the device-specific forms do not say it).
    if query_heads != key_heads and key_heads and query_heads[0] % key_heads[0] == 0:
        groups = query_heads[0] // key_heads[0]
        key, value = repeat_heads(ir, key, groups), repeat_heads(ir, value, groups)
    mask = a.get("attn_mask", a.get("attn_bias"))
    mask = None if mask is None else ir.tensor(mask)
    scale = a["scale"]
    if scale is None:
        scale = t.default_sdpa_scale(t.shape_of(query)[-1])
    result_type = ir.first_result_type(node)
    attention = ir.emit(t.SdpaOp(query, key, value, mask, a["is_causal"], scale, result_type))
    return ir.first_result(node, attention)


@handles("aten.index.Tensor", "aten._unsafe_index.Tensor")
def index(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x[.., i, .., j, ..]`: integer index tensors on some dims (whole dims where the list
    has `None` or ends), broadcast together, as one row lookup (`lookup_rows`): `x` with its
    indexed dims first is a table of their `prod` rows, and an element's row is the sum of
    its indices (negative ones from the end) times those dims' strides. As in NumPy, the
    broadcast index dims take the place of the indexed dims where these are adjacent, else
    come first. Bool masks are not supported."""
    x = ir.tensor(a["self"])
    shape, element = t.shape_of(x), t.element_type_of(x)
    indexed = {d: ir.tensor(i) for d, i in enumerate(a["indices"]) if i is not None}
    if any(t.element_type_of(i) == i1 for i in indexed.values()):
        raise ir.error("indexing with a bool mask is not supported")
    dims = sorted(indexed)
    others = [d for d in range(len(shape)) if d not in indexed]
    if len(indexed) > 1:
        for i in indexed.values():
            ir.static_shape(i, "indexing by several tensors")
    index_shape = tuple(torch.broadcast_shapes(*(t.shape_of(i) for i in indexed.values())))
    rows_type = TensorType(i64, index_shape)
    rows = None
    wrapped = [from_the_end(ir, indexed[d], shape[d]) for d in dims]
    for position, (d, index) in enumerate(zip(dims, wrapped, strict=True)):
        stride = prod(shape[e] for e in dims[position + 1 :])
        if stride != 1:
            index = ir.emit(t.MulOp(index, ir.operand(stride, i64), index.type))
        if rows is None:
            rows = index
        else:
            both = tuple(torch.broadcast_shapes(t.shape_of(rows), t.shape_of(index)))
            rows = ir.emit(t.AddOp(rows, index, TensorType(i64, both)))
    if t.shape_of(rows) != index_shape:
        rows = ir.emit(t.ExpandOp(rows, rows_type))
    if len(dims) > 1:
        rows = outside_as_negative(ir, rows, [(i, shape[d]) for d, i in zip(dims, wrapped)])
    order = [*dims, *others]
    if order != list(range(len(shape))):
        permuted = TensorType(element, tuple(shape[d] for d in order))
        x = ir.emit(t.PermuteOp(x, permuted, order))
    rest = tuple(shape[d] for d in others)
    picked_type = TensorType(element, (*index_shape, *rest))
    picked = lookup_rows(ir, x, prod(shape[d] for d in dims), rows, picked_type)
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    if adjacent and dims[0] > 0:
        # The index dims go back where the indexed dims were, after the whole dims before.
        count, before = len(index_shape), dims[0]
        back = [
            *range(count, count + before),
            *range(count),
            *range(count + before, len(picked_type.shape)),
        ]
        picked = ir.emit(t.PermuteOp(picked, ir.result_type(node), back))
    return picked


@handles("aten.embedding.default")
def embedding(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    # padding_idx, scale_grad_by_freq and sparse only change the gradient
    return ir.emit(
        t.EmbeddingOp(ir.tensor(a["weight"]), ir.tensor(a["indices"]), ir.result_type(node))
    )


@handles("aten._embedding_bag.default", "aten._embedding_bag_forward_only.default")
def embedding_bag(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue | list[SSAValue]:
    """`nn.EmbeddingBag`: the rows of `weight` at `indices`, summed (mode 0; each times its
    `per_sample_weights`), averaged (1) or their max taken (2) in bags: bag b holds the
    indices from `offsets[b]` to the next offset (the last offset ends the last bag with
    `include_last_offset`); `padding_idx`'s rows are left out, and an empty bag is zeros.
    Each bag takes its indices as `summed_at` does (no atomics); of the four results only
    the bags are kept. Without gradients PyTorch calls the same op `_forward_only`."""
    weight, indices, offsets = (ir.tensor(a[name]) for name in ("weight", "indices", "offsets"))
    element = t.element_type_of(weight)
    (count,), width = t.shape_of(indices), t.shape_of(weight)[1]
    if len(t.shape_of(offsets)) != 1 or DYNAMIC_INDEX in (count, *t.shape_of(offsets)):
        raise ir.error("an embedding bag takes static 1-d indices and offsets")
    bags = t.shape_of(offsets)[0] - (1 if a.get("include_last_offset") else 0)
    starts = ir.emit(t.SliceOp(ir.convert(offsets, i64), TensorType(i64, (bags,)), 0, 0, bags, 1))
    # The bag of index i: the count of bags that start at or before i, less one.
    started = ir.emit(
        t.LeOp(
            ir.emit(t.ReshapeOp(starts, TensorType(i64, (1, bags)))),
            positions(ir, (count, 1), 0),
            TensorType(i1, (count, bags)),
        )
    )
    bag = ir.emit(t.SumOp(ir.convert(started, i64), TensorType(i64, (count,)), [1], False))
    bag = ir.emit(t.SubOp(bag, ir.operand(1, i64), bag.type))
    kept = ir.emit(
        t.NeOp(
            indices,
            ir.operand(a.get("padding_idx", -1), t.element_type_of(indices)),
            TensorType(i1, (count,)),
        )
    )
    # Left-out indices go to no bag (-1).
    bag = ir.emit(t.WhereOp(kept, bag, ir.operand(-1, i64), bag.type))
    bag_at = ir.emit(t.ReshapeOp(bag, TensorType(i64, (1, count, 1))))
    rows = ir.emit(t.EmbeddingOp(weight, indices, TensorType(element, (count, width))))
    mode = a.get("mode", 0)
    if a.get("per_sample_weights") is not None:
        if mode != 0:
            raise ir.error("per_sample_weights are only taken by an embedding bag's sum")
        sample = ir.emit(
            t.ReshapeOp(
                ir.operand(a["per_sample_weights"], element), TensorType(element, (count, 1))
            )
        )
        rows = ir.emit(t.MulOp(rows, sample, rows.type))
    rows_at = ir.emit(t.ReshapeOp(rows, TensorType(element, (1, count, width))))
    if mode == 2:
        result = summed_at(ir, bag_at, rows_at, 0, bags, t.AmaxOp, -math.inf)
    else:
        result = summed_at(ir, bag_at, rows_at, 0, bags)
    if mode != 0:
        ones = ir.emit(t.ReshapeOp(ir.convert(kept, element), TensorType(element, (1, count, 1))))
        sizes = summed_at(ir, bag_at, ones, 0, bags)  # [bags, 1]
        empty = ir.emit(t.EqOp(sizes, ir.operand(0, element), TensorType(i1, (bags, 1))))
        if mode == 1:
            divisor = ir.emit(t.WhereOp(empty, ir.operand(1, element), sizes, sizes.type))
            result = ir.emit(t.DivOp(result, divisor, result.type))
        else:
            result = ir.emit(t.WhereOp(empty, ir.operand(0, element), result, result.type))
    return ir.first_result(node, result)


@handles("aten.searchsorted.Tensor", "aten.searchsorted.Scalar")
def searchsorted(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`torch.searchsorted(sorted_sequence, x)`: for each x the count of the sequence's
    elements below it (at or below it, `right`), NaN after all of them, as torch's; a
    sequence of several dims is searched row by row, each x in the row of its leading
    places."""
    if a.get("sorter") is not None:
        raise ir.error("searchsorted with a sorter is not supported")
    sequence = ir.tensor(a["sorted_sequence"])
    element = t.element_type_of(sequence)
    x = ir.operand(a["self"], element)
    *rows, size = t.shape_of(sequence)
    shape = t.shape_of(x)
    pairs = (*shape, size)
    if rows:
        sequence = unsqueeze_value(ir, sequence, len(rows))  # [.., 1, M]
    right = a.get("right") or a.get("side") == "right"
    below = ir.emit(
        (t.LeOp if right else t.LtOp)(
            sequence, unsqueeze_value(ir, x, len(shape)), TensorType(i1, pairs)
        )
    )
    count = ir.emit(t.SumOp(ir.convert(below, i64), TensorType(i64, shape), [len(shape)], False))
    if element not in t.INTEGER_ELEMENT_TYPES:
        count = ir.emit(t.WhereOp(nan_mask(ir, x), ir.operand(size, i64), count, count.type))
    return ir.convert(count, ir.result_element(node))


@handles("aten.gather.default")
def gather(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`torch.gather`: `out[i, j] = x[i, index[i, j]]` (along `dim`)."""
    x = ir.tensor(a["self"])
    dim = ir.dim(a["dim"], max(len(t.shape_of(x)), 1))
    return gathered_along(ir, x, dim, ir.tensor(a["index"]), ir.result_type(node))


def gathered_along(
    ir: _Importer, x: SSAValue, dim: int, index: SSAValue, result_type: TensorType
) -> SSAValue:
    """`x.gather(dim, index)` as a row lookup in `x` flattened to a column: the row of
    `out[i, j]` is `index[i, j] * stride(dim)` plus each other coordinate times its stride,
    added from one small `arange` per dim."""
    shape, index_shape = ir.static_shape(x, "gather"), ir.static_shape(index, "gather")
    strides = [prod(shape[d + 1 :]) for d in range(len(shape))]
    index_type = TensorType(t.element_type_of(index), index_shape)
    rows = ir.emit(t.MulOp(index, ir.operand(strides[dim], index_type.element_type), index_type))
    for d, size in enumerate(index_shape):
        if d == dim or size == 1:
            continue
        view = (1,) * d + (size,) + (1,) * (len(index_shape) - d - 1)
        offsets = ir.emit(
            t.MulOp(positions(ir, view, d), ir.operand(strides[d], i64), TensorType(i64, view))
        )
        offsets = ir.convert(offsets, index_type.element_type)
        rows = ir.emit(t.AddOp(rows, offsets, index_type))
    if len(shape) > 1:
        rows = outside_as_negative(ir, rows, [(index, shape[dim])])
    return lookup_rows(ir, x, prod(shape), rows, result_type)


@handles("aten.index_put.default", "aten.index_copy.default")
def index_put(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x[.., index, ..] = values` (index_put: index tensors on adjacent dims after `None`s
    for whole dims, several taken as one on the dims merged, `linear_index`) and
    `x.index_copy(dim, index, values)`, functionally: a copy of `x` with the slices at
    `index` along the dim replaced, as AOTAutograd writes an in-place KV-cache update. Where
    `index` repeats a position, which torch leaves undefined, the last occurrence wins. With
    `accumulate=True` (`index_add`, `x[i] += v` with repeats) the slices are added instead,
    all of each position's (`summed_at`).

    No kernel writes to a computed address: each slice of the result looks its replacement
    up instead, in `values` at the last occurrence of its position (`last_occurrences`),
    and is `x`'s where there is none."""
    x = ir.tensor(a["self"])
    shape, element = t.shape_of(x), t.element_type_of(x)
    if "indices" in a:
        indices = list(a["indices"])
        while indices and indices[-1] is None:
            indices.pop()
        dim = next((d for d, i in enumerate(indices) if i is not None), None)
        if dim is None or any(i is None for i in indices[dim:]):
            raise ir.error(
                "index tensors must be on adjacent dims after whole ones (x[:, i, j]); "
                "others are not supported"
            )
        tensors = [ir.tensor(i) for i in indices[dim:]]
        if any(t.element_type_of(i) == i1 for i in tensors):
            raise ir.error("indexing with a bool mask is not supported")
        index = linear_index(ir, tensors, shape[dim : dim + len(tensors)])
        merged = (*shape[:dim], prod(shape[dim : dim + len(tensors)]), *shape[dim + len(tensors) :])
        x = ir.emit(t.ReshapeOp(x, TensorType(element, merged)))
        shape = merged
    else:
        dim = ir.dim(a["dim"], max(len(shape), 1))
        index = checked_index(ir, ir.tensor(a["index"]), shape[dim])
    count, size = prod(t.shape_of(index)), shape[dim]
    values = ir.operand(a["values"] if "values" in a else a["source"], element)
    # index_put broadcasts the values to the indexed shape; index_copy's already have it.
    indexed = (*shape[:dim], *t.shape_of(index), *shape[dim + 1 :])
    if t.shape_of(values) != indexed:
        values = ir.emit(t.ExpandOp(values, TensorType(element, indexed)))
    # The slices of `values` as rows (the indexed dim first), looked up at the last places.
    others = (*shape[:dim], *shape[dim + 1 :])
    to_front = [dim, *(d for d in range(len(shape)) if d != dim)]
    rows = ir.emit(t.ReshapeOp(values, TensorType(element, (*shape[:dim], count, *others[dim:]))))
    rows = ir.emit(t.PermuteOp(rows, TensorType(element, (count, *others)), to_front))
    back = sorted(range(len(shape)), key=to_front.__getitem__)
    if a.get("accumulate"):
        at = (count, *(1,) * len(others))
        index_at = ir.emit(t.ReshapeOp(index, TensorType(i64, (1, *at))))
        rows_at = ir.emit(t.UnsqueezeOp(rows, TensorType(element, (1, count, *others)), 0))
        summed = summed_at(ir, index_at, rows_at, 0, size)
        summed = ir.emit(t.PermuteOp(summed, TensorType(element, shape), back))
        return ir.emit(t.ReshapeOp(ir.emit(t.AddOp(x, summed, x.type)), ir.result_type(node)))
    last = last_occurrences(ir, index, size)
    row = ir.emit(t.MaximumOp(last, ir.operand(0, i64), last.type))
    picked = lookup_rows(ir, rows, count, row, TensorType(element, (size, *others)))
    picked = ir.emit(t.PermuteOp(picked, TensorType(element, shape), back))
    found = ir.emit(t.GeOp(last, ir.operand(0, i64), TensorType(i1, (size,))))
    found = ir.emit(t.ReshapeOp(found, TensorType(i1, (size,) + (1,) * (len(shape) - dim - 1))))
    put = ir.emit(t.WhereOp(found, picked, x, x.type))
    return ir.emit(t.ReshapeOp(put, ir.result_type(node)))


def linear_index(ir: _Importer, tensors: list[SSAValue], sizes: Sequence[int]) -> SSAValue:
    """The index tensors of adjacent dims of `sizes` (broadcast together) as one index into
    those dims merged, row-major; each one's negative entries count from its dim's end, and
    each is checked against its own dim (`checked_index`), where one past its end would
    land on the next position of the merged dim."""
    linear = None
    for number, (index, size) in enumerate(zip(tensors, sizes, strict=True)):
        term = checked_index(ir, index, size, negative_from_end=True)
        stride = prod(sizes[number + 1 :])
        if stride != 1:
            term = ir.emit(t.MulOp(term, ir.operand(stride, i64), term.type))
        if linear is not None:
            shape = torch.broadcast_shapes(t.shape_of(linear), t.shape_of(term))
            term = ir.emit(t.AddOp(linear, term, TensorType(i64, shape)))
        linear = term
    return linear


def summed_at(
    ir: _Importer,
    index: SSAValue,
    values: SSAValue,
    dim: int,
    size: int,
    reduction: type[t.ReductionOp] = t.SumOp,
    absent: float = 0.0,
) -> SSAValue:
    """For each position `s` below `size` along `dim`, the sum (or another `reduction`,
    for which the values of other positions count as `absent`) of the `values` whose `index`
    is `s`. `index` and `values` have a dim of 1 at `dim` and the places they scatter from
    after it (`index` broadcasts to `values`); the result has `size` at `dim` and not the
    places' dim. No kernel adds into a computed address (no atomics: the same sums on every
    run): each position sums the values its index matches, `size` times the values' work."""
    shape = list(ir.static_shape(values, "a scatter"))
    ir.static_shape(index, "a scatter")
    shape[dim] = size
    element = t.element_type_of(values)
    at = [1] * len(shape)
    at[dim] = size
    matched = tuple(max(pair) for pair in zip(at, t.shape_of(index), strict=True))
    matches = ir.emit(t.EqOp(positions(ir, at, dim), index, TensorType(i1, matched)))
    other = ir.operand(absent, element)
    held = ir.emit(t.WhereOp(matches, values, other, TensorType(element, tuple(shape))))
    summed_type = TensorType(element, (*shape[: dim + 1], *shape[dim + 2 :]))
    return ir.emit(reduction(held, summed_type, [dim + 1], False))


SCATTER_REDUCTIONS: dict[str, tuple[type[t.ReductionOp], type[t.BinaryOp]]] = {
    "sum": (t.SumOp, t.AddOp),
    "prod": (t.ProdOp, t.MulOp),
    "amax": (t.AmaxOp, t.MaximumOp),
    "amin": (t.AminOp, t.MinimumOp),
}
"""`scatter_reduce`'s reductions but "mean": the reduction of each position's values, and how
one combines with `self`'s element."""


@handles("aten.scatter_add.default", "aten.scatter_reduce.two")
def scatter_reduce(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x.scatter_add(dim, index, src)` and `x.scatter_reduce(dim, index, src, reduce,
    include_self=...)`: the elements of `src` reduced into `x` at their `index` along `dim`
    (`summed_at`), their places along the other dims their own. Without `include_self`, a
    position that no index names keeps `x`'s element, and the others are their values'
    reduction alone."""
    x = ir.tensor(a["self"])
    dim = ir.dim(a["dim"], max(len(t.shape_of(x)), 1))
    index, src = ir.tensor(a["index"]), ir.operand(a["src"], t.element_type_of(x))
    reduce, include_self = a.get("reduce", "sum"), a.get("include_self", True)
    return reduced_into(ir, node, x, dim, index, src, reduce, include_self)


@handles("aten.index_reduce.default")
def index_reduce(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x.index_reduce(dim, index, source, reduce, include_self=...)`: the slices of `source`
    along `dim` reduced into `x`'s slices at `index`, as `scatter_reduce` with the index
    broadcast along the other dims."""
    x = ir.tensor(a["self"])
    dim = ir.dim(a["dim"], max(len(t.shape_of(x)), 1))
    source = ir.operand(a["source"], t.element_type_of(x))
    shape = t.shape_of(source)
    index = ir.convert(ir.tensor(a["index"]), i64)
    along = [1] * len(shape)
    along[dim] = shape[dim]
    index = ir.emit(t.ReshapeOp(index, TensorType(i64, tuple(along))))
    index = ir.emit(t.ExpandOp(index, TensorType(i64, shape)))
    return reduced_into(ir, node, x, dim, index, source, a["reduce"], a.get("include_self", True))


def reduced_into(
    ir: _Importer,
    node: Node,
    x: SSAValue,
    dim: int,
    index: SSAValue,
    src: SSAValue,
    reduce: str,
    include_self: bool,
) -> SSAValue:
    """The elements of `src` reduced (`reduce`: a `scatter_reduce` reduction) into `x` at
    their `index` along `dim` (`summed_at`)."""
    shape, element = t.shape_of(x), t.element_type_of(x)
    index_shape = t.shape_of(index)
    if t.shape_of(src) != index_shape or any(
        index_shape[d] != shape[d] for d in range(len(shape)) if d != dim
    ):
        raise ir.error(
            f"{target_name(node).split('.')[1]} whose index is not the source's shape and the"
            " input's along the other dims is not supported"
        )
    floating = dtypes.torch_dtype(element).is_floating_point
    if reduce == "mean" and not floating:
        raise ir.error(f"scatter_reduce's mean of {element} (a floor division) is not supported")
    scattered = (*index_shape[:dim], 1, *index_shape[dim:])
    index = unsqueeze_value(ir, checked_index(ir, index, shape[dim]), dim)
    src = unsqueeze_value(ir, src, dim)
    result_type = ir.result_type(node)
    # How many values each position takes: a mean divides by it, and without self a position
    # that no index names keeps x's element.
    counts = None
    if reduce == "mean" or not include_self:
        ones = ir.emit(t.ExpandOp(ir.operand(1, i64), TensorType(i64, scattered)))
        counts = summed_at(ir, index, ones, dim, shape[dim])
    if reduce == "mean":
        summed = summed_at(ir, index, src, dim, shape[dim])
        if include_self:
            summed = ir.emit(t.AddOp(x, summed, result_type))
            counts = ir.emit(t.AddOp(counts, ir.operand(1, i64), counts.type))
        reduced = ir.emit(t.DivOp(summed, ir.convert(counts, element), result_type))
        if include_self:
            return reduced
    else:
        reduction, combine = SCATTER_REDUCTIONS[reduce]
        absent = {"sum": 0, "prod": 1}.get(reduce)
        if absent is None:  # the values no position takes in a max (min)
            lowest = reduce == "amax"
            if floating:
                absent = -inf if lowest else inf
            else:
                bounds = torch.iinfo(dtypes.torch_dtype(element))
                absent = bounds.min if lowest else bounds.max
        reduced = summed_at(ir, index, src, dim, shape[dim], reduction, absent)
        if include_self:
            return ir.emit(combine(x, reduced, result_type))
    named = ir.emit(t.GtOp(counts, ir.operand(0, i64), TensorType(i1, shape)))
    return ir.emit(t.WhereOp(named, reduced, x, result_type))


@handles("aten.scatter.src", "aten.scatter.value")
def scatter(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x.scatter(dim, index, src)` (or a scalar `value`): a copy of `x` whose element at
    each `index` along `dim` is the source's at that index's place. Where several places
    name one position, torch leaves which one wins unspecified; here, as on torch's CPU, the
    last: each position takes the greatest place naming it (`summed_at` by max), then the
    source's element there (`gathered_along`)."""
    x = ir.tensor(a["self"])
    shape, element = t.shape_of(x), t.element_type_of(x)
    dim, index = ir.dim(a["dim"], max(len(shape), 1)), ir.tensor(a["index"])
    index_shape = t.shape_of(index)
    if len(index_shape) != len(shape) or any(
        index_shape[d] != shape[d] for d in range(len(shape)) if d != dim
    ):
        raise ir.error(
            "scatter whose index is not the input's shape along the other dims is not supported"
        )
    index = checked_index(ir, index, shape[dim])
    scattered = (*index_shape[:dim], 1, *index_shape[dim:])
    places = positions(ir, [1 if d != dim + 1 else n for d, n in enumerate(scattered)], dim + 1)
    places = ir.emit(t.ExpandOp(places, TensorType(i64, scattered)))
    last = summed_at(ir, unsqueeze_value(ir, index, dim), places, dim, shape[dim], t.AmaxOp, -1)
    result_type = ir.result_type(node)
    if "value" in a:
        written = ir.operand(a["value"], element)
    else:
        src = ir.operand(a["src"], element)
        if any(have < need for have, need in zip(t.shape_of(src), index_shape, strict=True)):
            raise ir.error("scatter's src is smaller than its index")
        for d, size in enumerate(index_shape):
            if t.shape_of(src)[d] != size:
                src = slice_value(ir, src, d, 0, size, 1)
        place = ir.emit(t.ClampOp(last, last.type, 0.0, None))
        written = gathered_along(ir, src, dim, place, result_type)
    named = ir.emit(t.GeOp(last, ir.operand(0, i64), TensorType(i1, shape)))
    return ir.emit(t.WhereOp(named, written, x, result_type))


@handles("aten.histc.default")
def histc(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`torch.histc(x, bins, min, max)`: how many elements fall in each of `bins` equal bins
    between min and max (with both 0, the elements' own least and greatest; with those
    equal, one either side), an element at max in the last bin, those outside (and NaN) in
    none. An element's bin is `(x - min) / (max - min) * bins` truncated, as torch's CPU
    kernel computes it; the counts are `summed_at` over the bins."""
    result_type = ir.result_type(node)
    element = result_type.get_element_type()
    x = ir.operand(a["self"], element)
    count, bins = prod(t.shape_of(x)), a.get("bins", 100)
    flat = ir.emit(t.ReshapeOp(x, TensorType(element, (1, count))))
    scalar = TensorType(element, ())
    low, high = a.get("min", 0), a.get("max", 0)
    if isinstance(low, Node) or isinstance(high, Node):
        raise ir.error("histc's min and max must be numbers")
    if low == high == 0:
        least = ir.emit(t.AminOp(flat, scalar, [0, 1], False))
        greatest = ir.emit(t.AmaxOp(flat, scalar, [0, 1], False))
        same = ir.emit(t.EqOp(least, greatest, TensorType(i1, ())))

        def apart(bound: SSAValue, step: int) -> SSAValue:
            moved = ir.emit(t.AddOp(bound, ir.operand(step, element), scalar))
            return ir.emit(t.WhereOp(same, moved, bound, scalar))

        low, high = apart(least, -1), apart(greatest, 1)
    elif low == high:
        low, high = low - 1, high + 1
    low, high = (v if isinstance(v, SSAValue) else ir.operand(v, element) for v in (low, high))
    matrix = flat.type
    where = ir.emit(
        t.DivOp(ir.emit(t.SubOp(flat, low, matrix)), ir.emit(t.SubOp(high, low, scalar)), matrix)
    )
    scaled = ir.emit(t.MulOp(where, ir.operand(bins, element), matrix))
    position = ir.emit(
        t.MinimumOp(ir.convert(scaled, i64), ir.operand(bins - 1, i64), TensorType(i64, (1, count)))
    )
    mask = TensorType(i1, (1, count))
    inside = ir.emit(
        t.BitwiseAndOp(ir.emit(t.GeOp(flat, low, mask)), ir.emit(t.LeOp(flat, high, mask)), mask)
    )
    position = ir.emit(t.WhereOp(inside, position, ir.operand(-1, i64), position.type))
    ones = ir.emit(t.ExpandOp(ir.operand(1, element), matrix))
    return summed_at(ir, position, ones, 0, bins)


def positions(ir: _Importer, shape: Sequence[int], dim: int) -> SSAValue:
    """Each element's i64 position along `dim` of `shape` (`torch.iota`)."""
    return ir.emit(t.IotaOp(dim, TensorType(i64, tuple(shape))))


def descending(ir: _Importer, size: int) -> SSAValue:
    """`size - 1` down to 0: the positions that read a dim in reverse."""
    return ir.emit(
        t.SubOp(ir.operand(size - 1, i64), positions(ir, (size,), 0), TensorType(i64, (size,)))
    )


def from_the_end(ir: _Importer, index: SSAValue, size: int) -> SSAValue:
    """`index` as i64, its negative entries counted from the end of a dim of `size`."""
    index = ir.convert(index, i64)
    index_type = TensorType(i64, t.shape_of(index))
    wrapped = ir.emit(t.AddOp(index, ir.operand(size, i64), index_type))
    negative = ir.emit(t.LtOp(index, ir.operand(0, i64), TensorType(i1, index_type.shape)))
    return ir.emit(t.WhereOp(negative, wrapped, index, index_type))


def checked_index(
    ir: _Importer, index: SSAValue, size: int, negative_from_end: bool = False
) -> SSAValue:
    """`index` as i64, each entry looked up in `index` itself so that one outside `[0, size)`
    stops the program as torch's kernels stop it: the lookup's row is negative there
    (`outside_as_negative`), which the interpreters refuse with an IndexError and CUDA with
    the gathered-index device assert. A scatter compares positions with its indices instead
    of addressing by them, where an index outside would write nothing (or, merged with
    another dim's, write a neighbour) without it. With `negative_from_end`, negative entries count
    from the dim's end first (`index_put`'s indices; scatters' and `index_copy`'s refuse
    them, as torch's do)."""
    shape = ir.static_shape(index, "a scatter")
    # An expanded index is checked before its expand: a lookup through the broadcast would
    # read its one row at any row, the negative one too.
    while isinstance(index.owner, t.ExpandOp):
        index = index.owner.input
    index = from_the_end(ir, index, size) if negative_from_end else ir.convert(index, i64)
    held = t.shape_of(index)
    count = prod(held)
    places = ir.emit(t.ReshapeOp(positions(ir, (count,), 0), TensorType(i64, held)))
    rows = outside_as_negative(ir, places, [(index, size)])
    checked = lookup_rows(ir, index, count, rows, TensorType(i64, held))
    if held != shape:
        checked = ir.emit(t.ExpandOp(checked, TensorType(i64, shape)))
    return checked


def last_occurrences(ir: _Importer, index: SSAValue, size: int) -> SSAValue:
    """For each position `s` below `size`, the last place in `index` (i64, flattened) that
    holds `s`, or -1: the max over `index` of its places where it equals `s`."""
    count = prod(t.shape_of(index))
    flat = ir.emit(t.ReshapeOp(index, TensorType(i64, (count,))))
    matches = ir.emit(t.EqOp(positions(ir, (size, 1), 0), flat, TensorType(i1, (size, count))))
    places = positions(ir, (count,), 0)
    held = TensorType(i64, (size, count))
    occurrences = ir.emit(t.WhereOp(matches, places, ir.operand(-1, i64), held))
    return ir.emit(t.AmaxOp(occurrences, TensorType(i64, (size,)), [1], False))


def outside_as_negative(
    ir: _Importer, rows: SSAValue, indices: Sequence[tuple[SSAValue, int]]
) -> SSAValue:
    """`rows`, negative wherever one of the `(index, size)` pairs has its index outside
    `[0, size)`. A row lookup adds several dims' indices into one row, where one dim's index
    past its end lands in range on a neighbouring row; a negative row is outside every table,
    so the lookup refuses it as it refuses any row outside (an IndexError in the interpreters,
    a device assert on CUDA), as torch's kernels refuse the index. The row is made negative
    by setting its sign bit, which keeps it unknown to the verifiers' interval analysis
    (`access_bounds`): a constant would be a known row outside, refused at compile time
    wherever the analysis cannot prove the indices in range."""
    inside = None
    for index, size in indices:
        mask = TensorType(i1, t.shape_of(index))
        above = ir.emit(t.GeOp(index, ir.operand(0, t.element_type_of(index)), mask))
        below = ir.emit(t.LtOp(index, ir.operand(size, t.element_type_of(index)), mask))
        both = ir.emit(t.BitwiseAndOp(above, below, mask))
        if inside is not None:
            joint = tuple(torch.broadcast_shapes(t.shape_of(inside), t.shape_of(both)))
            both = ir.emit(t.BitwiseAndOp(inside, both, TensorType(i1, joint)))
        inside = both
    assert inside is not None
    element = t.element_type_of(rows)
    sign = ir.operand(-(2 ** (element.bitwidth - 1)), element)
    negative = ir.emit(t.BitwiseOrOp(rows, sign, rows.type))
    return ir.emit(t.WhereOp(inside, rows, negative, rows.type))


def lookup_rows(
    ir: _Importer, x: SSAValue, count: int, rows: SSAValue, result_type: TensorType
) -> SSAValue:
    """The rows `rows` of `x` seen as `count` rows (an embedding lookup), shaped as
    `result_type`."""
    shape, element = ir.static_shape(x, "a row lookup"), t.element_type_of(x)
    width = prod(shape) // count
    table = ir.emit(t.ReshapeOp(x, TensorType(element, (count, width))))
    picked = ir.emit(t.EmbeddingOp(table, rows, TensorType(element, (*t.shape_of(rows), width))))
    return ir.emit(t.ReshapeOp(picked, result_type))


# --- views and data movement --------------------------------------------------------------


@handles("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default")
def reshape(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    return ir.emit(t.ReshapeOp(ir.tensor(a["self"]), ir.result_type(node)))


@handles("aten.expand.default")
def expand(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.tensor(a["self"])
    if x.type == ir.result_type(node):
        return x
    return ir.emit(t.ExpandOp(x, ir.result_type(node)))


@handles("aten.permute.default")
def permute(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.tensor(a["self"])
    dims = [ir.dim(d, len(t.shape_of(x))) for d in a["dims"]]
    return ir.emit(t.PermuteOp(x, ir.result_type(node), dims))


def transpose_value(ir: _Importer, node: Node, x: SSAValue, dim0: int, dim1: int) -> SSAValue:
    rank = len(t.shape_of(x))
    return ir.emit(t.TransposeOp(x, ir.result_type(node), ir.dim(dim0, rank), ir.dim(dim1, rank)))


@handles("aten.transpose.int")
def transpose(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    return transpose_value(ir, node, ir.tensor(a["self"]), a["dim0"], a["dim1"])


@handles("aten.t.default")
def matrix_transpose(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.tensor(a["self"])
    if len(t.shape_of(x)) < 2:
        return x  # torch defines t() of a vector or scalar as itself
    return transpose_value(ir, node, x, 0, 1)


@handles("aten.unsqueeze.default")
def unsqueeze(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.tensor(a["self"])
    return unsqueeze_value(ir, x, ir.dim(a["dim"], len(t.shape_of(x)) + 1))


@handles("aten.squeeze.default", "aten.squeeze.dim", "aten.squeeze.dims")
def squeeze(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """torch skips named dims whose size is not 1, so only the size-1 ones are kept."""
    x = ir.tensor(a["self"])
    shape = t.shape_of(x)
    dims = [d for d in reduced_dims(ir, a.get("dim"), len(shape)) if shape[d] == 1]
    if not dims:
        return x
    return ir.emit(t.SqueezeOp(x, ir.result_type(node), dims))


def slice_value(ir: _Importer, x: SSAValue, dim: int, start: int, end: int, step: int) -> SSAValue:
    shape = list(t.shape_of(x))
    shape[dim] = -(-(end - start) // step)
    return ir.emit(t.SliceOp(x, TensorType(t.element_type_of(x), shape), dim, start, end, step))


def clamp_index(index: int | None, size: int, default: int) -> int:
    """aten.slice's bounds: negative counts from the end, then clamps to [0, size]."""
    if index is None:
        return default
    if index < 0:
        index += size
    return min(max(index, 0), size)


@handles("aten.slice.Tensor")
def slice_(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.tensor(a["self"])
    shape = t.shape_of(x)
    dim = ir.dim(a["dim"], len(shape))
    if a["step"] < 1:
        raise ir.error(f"slice step must be positive, got {a['step']}")
    if isinstance(a["end"], Node):
        return slice_to_dynamic_size(ir, node, x, dim, a)
    if shape[dim] == DYNAMIC_INDEX:
        return part_of_dynamic_dim(ir, node, x, dim, a)
    start = clamp_index(a["start"], shape[dim], 0)
    end = max(clamp_index(a["end"], shape[dim], shape[dim]), start)
    return slice_value(ir, x, dim, start, end, a["step"])


PICKED_ON_DYNAMIC_DIM = 16
"""The most entries of the dynamic dim a slice may keep (each is a pass over the dim)."""


def part_of_dynamic_dim(
    ir: _Importer, node: Node, x: SSAValue, dim: int, a: dict[str, Any]
) -> SSAValue:
    """A slice of the dynamic dim: all of it, or a few entries counted from either end
    (`x[:, -4:]`, `x[:, :2]`: a static size torch guarded), each `picked_on_dynamic_dim`.
    Any other part's size is an expression of the size, which the result's type refuses."""
    result_type = ir.result_type(node)
    if result_type == x.type:
        return x
    count, start = result_type.get_shape()[dim], a["start"] or 0
    if a["step"] != 1 or count > PICKED_ON_DYNAMIC_DIM:
        raise ir.error(
            f"a part of the dynamic dim is supported only as its whole or at most "
            f"{PICKED_ON_DYNAMIC_DIM} entries from either end, step 1"
        )
    first = start if start >= 0 else -count
    rows_type = TensorType(
        result_type.get_element_type(), [*t.shape_of(x)[:dim], *t.shape_of(x)[dim + 1 :]]
    )
    rows = [
        unsqueeze_value(ir, picked_on_dynamic_dim(ir, x, dim, first + i, rows_type), dim)
        for i in range(count)
    ]
    return rows[0] if count == 1 else ir.emit(t.CatOp(rows, result_type, dim))


def picked_on_dynamic_dim(
    ir: _Importer, x: SSAValue, dim: int, index: int, result_type: TensorType
) -> SSAValue:
    """`x`'s entries at `index` of the dynamic dim (negative: from its end, the last
    position being the largest): the max over the dim of `x` where the position is `index`
    and the lowest value elsewhere, which is exactly the entry (NaN and -0.0 included)."""
    shape, element = t.shape_of(x), t.element_type_of(x)
    if element == i1:
        raise ir.error("an entry of the dynamic dim of a bool tensor is not supported")
    place = positions(ir, [size if d == dim else 1 for d, size in enumerate(shape)], dim)
    target = ir.operand(index, i64)
    if index < 0:
        unit = TensorType(i64, [1] * len(shape))
        last = ir.emit(t.AmaxOp(place, unit, [dim], True))
        target = ir.emit(t.AddOp(last, ir.operand(index + 1, i64), unit))
    here = ir.emit(t.EqOp(place, target, TensorType(i1, t.shape_of(place))))
    lowest = ir.operand(extreme_value(element, largest=False), element)
    kept = ir.emit(t.WhereOp(here, x, lowest, x.type))
    return ir.emit(t.AmaxOp(kept, result_type, [dim], False))


def slice_to_dynamic_size(
    ir: _Importer, node: Node, x: SSAValue, dim: int, a: dict[str, Any]
) -> SSAValue:
    """`table[start : start + n]` of a static dim, `n` the program's dynamic size (a rotary
    table or a causal mask sliced to the sequence length): the elements from `start`, as
    many as the size (see `t.SliceOp`), where every size of its range fits the dim."""
    result_type = ir.result_type(node)
    size = t.shape_of(x)[dim]
    if result_type.get_shape()[dim] != DYNAMIC_INDEX or a["step"] != 1 or size == DYNAMIC_INDEX:
        raise ir.error("a slice to a computed bound is supported only to the dynamic size, step 1")
    assert ir.dynamic_size is not None  # the result's `?` recorded it
    start, upper = clamp_index(a["start"], size, 0), ir.dynamic_size.max
    if upper is None or start + upper > size:
        raise ir.error(
            f"slicing dim {dim} ({size} elements) from {start} to the dynamic size "
            f"{ir.dynamic_size.symbol}, which may reach {upper if upper else 'any size'}: "
            "emmy takes such a slice where every size of the range fits"
        )
    return ir.emit(t.SliceOp(x, result_type, dim, start, DYNAMIC_INDEX, 1))


@handles("aten.select.int")
def select_index(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    x = ir.tensor(a["self"])
    shape = t.shape_of(x)
    dim = ir.dim(a["dim"], len(shape))
    if shape[dim] == DYNAMIC_INDEX:
        return picked_on_dynamic_dim(ir, x, dim, a["index"], ir.result_type(node))
    index = a["index"] + shape[dim] if a["index"] < 0 else a["index"]
    row = slice_value(ir, x, dim, index, index + 1, 1)
    return ir.emit(t.SqueezeOp(row, ir.result_type(node), [dim]))


@handles("aten.slice_scatter.default", "aten.select_scatter.default")
def slice_scatter(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x` with a slice (`x[..., start:end, ...] = src`) or an entry (`x[..., i, ...] = src`)
    of a dim taken from `src`: how AOTAutograd makes such in-place writes functional (a cache
    written a block at a time, `cache[:, :, :n] = k`). A cat of `x`'s part before, `src` and
    `x`'s part after, along the dim; a slice of step 1 of a static dim."""
    x = ir.tensor(a["self"])
    shape, element = t.shape_of(x), t.element_type_of(x)
    dim = ir.dim(a["dim"], len(shape))
    size = shape[dim]
    if size == DYNAMIC_INDEX:
        raise ir.error("a write to a slice of the dynamic dim is not supported")
    src = ir.operand(a["src"], element)
    if "index" in a:
        start = a["index"] + size if a["index"] < 0 else a["index"]
        end, src = start + 1, unsqueeze_value(ir, src, dim)
    else:
        if a["step"] != 1:
            raise ir.error(f"a write to a slice of step {a['step']} is not supported (only 1)")
        start = clamp_index(a["start"], size, 0)
        end = max(clamp_index(a["end"], size, size), start)
    parts = [
        *([slice_value(ir, x, dim, 0, start, 1)] if start > 0 else []),
        *([src] if end > start else []),
        *([slice_value(ir, x, dim, end, size, 1)] if end < size else []),
    ]
    return parts[0] if len(parts) == 1 else ir.emit(t.CatOp(parts, x.type, dim))


@handles("aten.copy.default")
def copy(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """AOTAutograd's functional `x.copy_(src)`: `src` in `x`'s dtype, broadcast to its shape."""
    result_type = ir.result_type(node)
    src = ir.operand(a["src"], result_type.get_element_type())
    return src if src.type == result_type else ir.emit(t.ExpandOp(src, result_type))


@handles("aten.diagonal.default")
def diagonal(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`torch.diagonal` (and `diag` of a matrix, `trace`): the entries (i, i + offset) of
    dims `dim1` and `dim2` (i - offset and i where the offset is negative), as a last dim.
    With those two dims moved last and flattened, the diagonal is a strided slice of them:
    each entry is a row and a column, `columns + 1` places, past the one before."""
    x = ir.tensor(a["self"])
    shape, element = t.shape_of(x), t.element_type_of(x)
    dim1, dim2 = ir.dim(a["dim1"], len(shape)), ir.dim(a["dim2"], len(shape))
    rows, columns = shape[dim1], shape[dim2]
    if DYNAMIC_INDEX in (rows, columns):
        raise ir.error("the diagonal of a dynamic dim is not supported")
    order = [*(d for d in range(len(shape)) if d not in (dim1, dim2)), dim1, dim2]
    others = tuple(shape[d] for d in order[:-2])
    if order != list(range(len(shape))):
        x = ir.emit(t.PermuteOp(x, TensorType(element, tuple(shape[d] for d in order)), order))
    x = ir.emit(t.ReshapeOp(x, TensorType(element, (*others, rows * columns))))
    first_row, first_column = max(-a["offset"], 0), max(a["offset"], 0)
    length = max(min(rows - first_row, columns - first_column), 0)
    start = min(first_row * columns + first_column, rows * columns)
    end = start + (length - 1) * (columns + 1) + 1 if length else start
    return slice_value(ir, x, len(others), start, end, columns + 1)


UNFOLDED_WINDOW = 64
"""The longest window `unfold` takes (each of its places is a strided slice)."""


@handles("aten.unfold.default")
def unfold(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x.unfold(dim, size, step)`: the windows of `size` elements `step` apart along `dim`,
    the window's elements as a new last dim; the k-th place of every window is the strided
    slice from k, and the places are concatenated along the new dim."""
    x = ir.tensor(a["self"])
    shape, result_type = t.shape_of(x), ir.result_type(node)
    dim = ir.dim(a["dimension"], max(len(shape), 1))
    size, step = a["size"], a["step"]
    if not shape or shape[dim] == DYNAMIC_INDEX:
        raise ir.error("unfold of a scalar or of the dynamic dim is not supported")
    if size > UNFOLDED_WINDOW:
        raise ir.error(f"unfold windows of more than {UNFOLDED_WINDOW} elements are not supported")
    windows = result_type.get_shape()[dim]
    places = [
        unsqueeze_value(
            ir, slice_value(ir, x, dim, k, k + step * (windows - 1) + 1, step), len(shape)
        )
        for k in range(size)
    ]
    return places[0] if size == 1 else ir.emit(t.CatOp(places, result_type, len(shape)))


@handles("aten.split.Tensor", "aten.split_with_sizes.default", "aten.chunk.default")
def split(ir: _Importer, node: Node, a: dict[str, Any]) -> list[SSAValue]:
    """The pieces, as consecutive slices whose sizes torch.export recorded."""
    x = ir.tensor(a["self"])
    dim = ir.dim(a["dim"], len(t.shape_of(x)))
    pieces, start = [], 0
    for piece in node.meta["val"]:
        size = piece.shape[dim]
        pieces.append(slice_value(ir, x, dim, start, start + size, 1))
        start += size
    return pieces


@handles("aten.cat.default")
def cat(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    element = ir.result_element(node)
    inputs = [ir.operand(arg, element) for arg in a["tensors"]]
    rank = len(ir.result_type(node).get_shape())
    if any(len(t.shape_of(v)) != rank for v in inputs):
        raise ir.error("cat of tensors of different ranks (legacy empty inputs) is not supported")
    return ir.emit(t.CatOp(inputs, ir.result_type(node), ir.dim(a["dim"], rank)))


@handles("aten.constant_pad_nd.default")
def constant_pad(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`F.pad` with a constant (`pad_constant`)."""
    return pad_constant(ir, ir.tensor(a["self"]), list(a["pad"]), a["value"])


def pad_constant(ir: _Importer, x: SSAValue, pad: list[int], value: float) -> SSAValue:
    """`x` padded with `value`: `pad` holds (before, after) for the last dims, the last dim
    first; a negative count crops. Each dim is cropped (a slice), then padded (a cat with
    tensors of the value)."""
    element = t.element_type_of(x)
    rank = len(t.shape_of(x))
    for position in range(len(pad) // 2):
        dim = rank - 1 - position
        before, after = pad[2 * position], pad[2 * position + 1]
        size = t.shape_of(x)[dim]
        if before < 0 or after < 0:
            x = slice_value(ir, x, dim, max(-before, 0), size - max(-after, 0), 1)
        pieces = []
        for count in (before, after):
            shape = list(t.shape_of(x))
            shape[dim] = max(count, 0)
            fill = torch.full(shape, value, dtype=dtypes.torch_dtype(element))
            pieces.append(ir.constant(fill) if count > 0 else None)
        parts = [v for v in (pieces[0], x, pieces[1]) if v is not None]
        if len(parts) > 1:
            shape = list(t.shape_of(x))
            shape[dim] = sum(t.shape_of(v)[dim] for v in parts)
            x = ir.emit(t.CatOp(parts, TensorType(element, shape), dim))
    return x


@handles("aten.repeat.default")
def repeat(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x.repeat(r...)`: each dim d of size n becomes r_d copies of it, as a broadcast of x
    seen with a unit dim before each of its dims, then a reshape (leading repeats add dims)."""
    x = ir.tensor(a["self"])
    repeats, element = list(a["repeats"]), t.element_type_of(x)
    shape = [1] * (len(repeats) - len(t.shape_of(x))) + list(t.shape_of(x))
    spread = [d for size in shape for d in (1, size)]
    x = ir.emit(t.ReshapeOp(x, TensorType(element, spread)))
    copies = [d for r, size in zip(repeats, shape, strict=True) for d in (r, size)]
    if copies != spread:
        x = ir.emit(t.ExpandOp(x, TensorType(element, copies)))
    return ir.emit(t.ReshapeOp(x, ir.result_type(node)))


@handles("aten.flip.default")
def flip(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`x.flip(dims)`: each dim's entries in reverse, picked by a descending index
    (`index_select`'s lookup)."""
    x = ir.tensor(a["self"])
    rank = len(t.shape_of(x))
    for dim in sorted({ir.dim(d, max(rank, 1)) for d in a["dims"]}):
        if rank == 0:
            break
        x = pick_along(ir, x, dim, descending(ir, t.shape_of(x)[dim]), x.type)
    return x


@handles("aten.roll.default")
def roll(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """`torch.roll`: along each dim, the last `shift` entries moved to the front (a cat of
    two slices); without dims, of the flattened input."""
    x = ir.tensor(a["self"])
    shape, element = t.shape_of(x), t.element_type_of(x)
    shifts, dims = list(a["shifts"]), list(a["dims"])
    if not dims:
        x = ir.emit(t.ReshapeOp(x, TensorType(element, (prod(shape),))))
        dims = [0]
    for shift, d in zip(shifts, dims, strict=True):
        dim = ir.dim(d, len(t.shape_of(x)))
        size = t.shape_of(x)[dim]
        start = -shift % size if size else 0
        if start:
            parts = [slice_value(ir, x, dim, start, size, 1), slice_value(ir, x, dim, 0, start, 1)]
            x = ir.emit(t.CatOp(parts, x.type, dim))
    return ir.emit(t.ReshapeOp(x, ir.result_type(node))) if x.type != ir.result_type(node) else x


def adaptive_windows(size: int, out: int) -> list[list[int]]:
    """The places of each of `out` adaptive windows over `size` (window i from floor(i size /
    out) to ceil((i + 1) size / out)), as many for every window: a shorter one repeats its
    last place, which changes neither its max nor the max's first place."""
    bounds = [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]
    longest = max(end - start for start, end in bounds)
    return [[min(start + k, end - 1) for k in range(longest)] for start, end in bounds]


@handles("aten.adaptive_max_pool2d.default")
def adaptive_max_pool2d(ir: _Importer, node: Node, a: dict[str, Any]) -> list[SSAValue]:
    """`F.adaptive_max_pool2d(x, out, return_indices=True)` of any sizes: each output's
    window of the last two dims (`adaptive_windows`) gathered as rows and columns
    (`pick_along`), its max, and the place in the plane (h W + w) of the window's first max,
    in the row-major order torch's kernel scans it."""
    x = ir.tensor(a["self"])
    element, shape = t.element_type_of(x), t.shape_of(x)
    *lead, height, width = shape
    out_h, out_w = a["output_size"]
    rows, columns = adaptive_windows(height, out_h), adaptive_windows(width, out_w)
    k_h, k_w = len(rows[0]), len(columns[0])
    picked = x
    for dim, places in ((len(lead), rows), (len(lead) + 1, columns)):
        flat = [p for window in places for p in window]
        index = ir.constant(torch.tensor(flat, dtype=torch.int64))
        sizes = list(t.shape_of(picked))
        sizes[dim] = len(flat)
        picked = pick_along(ir, picked, dim, index, TensorType(element, sizes))
    # [.., out_h * k_h, out_w * k_w] -> [.., out_h, out_w, k_h * k_w]
    split = TensorType(element, (*lead, out_h, k_h, out_w, k_w))
    picked = ir.emit(t.ReshapeOp(picked, split))
    n = len(lead)
    order = [*range(n), n, n + 2, n + 1, n + 3]
    grouped = TensorType(element, (*lead, out_h, out_w, k_h, k_w))
    picked = ir.emit(t.PermuteOp(picked, grouped, order))
    windows = ir.emit(t.ReshapeOp(picked, TensorType(element, (*lead, out_h, out_w, k_h * k_w))))
    values_type, indices_type = (ir.tensor_type(v) for v in node.meta["val"])
    values = ir.emit(t.AmaxOp(windows, values_type, [n + 2], False))
    first = ir.emit(t.ArgmaxOp(windows, TensorType(i64, (*lead, out_h, out_w, 1)), [n + 2], True))
    planes = torch.tensor(
        [[[r * width + c for r in row for c in column] for column in columns] for row in rows]
    )
    choices = TensorType(i1, (*lead, out_h, out_w, k_h * k_w))
    chosen = ir.emit(t.EqOp(positions(ir, (k_h * k_w,), 0), first, choices))
    held = ir.emit(
        t.WhereOp(chosen, ir.constant(planes), ir.operand(0, i64), TensorType(i64, choices.shape))
    )
    return [values, ir.emit(t.SumOp(held, indices_type, [n + 2], False))]


def pick_along(
    ir: _Importer, x: SSAValue, dim: int, index: SSAValue, result_type: TensorType
) -> SSAValue:
    """The entries `index` of `x` along `dim`: its rows picked with that dim moved first
    (an embedding lookup), and moved back."""
    rank, element = len(t.shape_of(x)), t.element_type_of(x)
    order = [dim, *(d for d in range(rank) if d != dim)]
    moved_shape = [t.shape_of(x)[d] for d in order]
    if dim:
        x = ir.emit(t.PermuteOp(x, TensorType(element, moved_shape), order))
    count = len(t.shape_of(index)) and t.shape_of(index)[0]
    picked_type = TensorType(element, [count, *moved_shape[1:]])
    picked = lookup_rows(ir, x, moved_shape[0], index, picked_type)
    if not dim:
        return ir.emit(t.ReshapeOp(picked, result_type)) if picked_type != result_type else picked
    back = [order.index(d) for d in range(rank)]
    return ir.emit(t.PermuteOp(picked, result_type, back))


def _windows(
    ir: _Importer,
    x: SSAValue,
    kernel: list[int],
    stride: list[int],
    padding: list[int],
    out: list[int],
    fill: float,
) -> list[SSAValue]:
    """For each offset of a pooling window over the last len(kernel) dims, the strided slice
    of `x` (padded with `fill`) that each window's element at that offset comes from."""
    spatial = len(kernel)
    rank = len(t.shape_of(x))
    pad: list[int] = []
    for d in reversed(range(spatial)):
        size = t.shape_of(x)[rank - spatial + d]
        needed = stride[d] * (out[d] - 1) + kernel[d]
        pad += [padding[d], max(needed - size - padding[d], 0)]
    if any(pad):
        x = pad_constant(ir, x, pad, fill)
    slices = []
    for offsets in itertools.product(*(range(k) for k in kernel)):
        window = x
        for d, offset in enumerate(offsets):
            dim = rank - spatial + d
            end = offset + stride[d] * (out[d] - 1) + 1
            window = slice_value(ir, window, dim, offset, end, stride[d])
        slices.append(window)
    return slices


def _spatial_dims(node: Node) -> int:
    """The spatial dims of a pooling or upsampling op: its name's 1d, 2d or 3d."""
    match = re.search(r"(\d)d\.", target_name(node))
    assert match is not None
    return int(match.group(1))


def _pool_arguments(a: dict[str, Any], spatial: int) -> tuple[list[int], list[int], list[int]]:
    def expanded(value: Any, default: list[int]) -> list[int]:
        value = list(value) if value else default
        return value * spatial if len(value) == 1 else value

    kernel = expanded(a["kernel_size"], [])
    return kernel, expanded(a.get("stride"), kernel), expanded(a.get("padding"), [0])


@handles("aten.max_pool2d.default", "aten.max_pool1d.default", "aten.max_pool3d.default")
def max_pool(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """The largest element of each window: the maximum of the window's strided slices, one
    for each offset in it (padding is -inf; ceil_mode's partial last windows are padded so)."""
    x = ir.tensor(a["self"])
    result_type = ir.result_type(node)
    spatial = _spatial_dims(node)
    kernel, stride, padding = _pool_arguments(a, spatial)
    if any(d != 1 for d in a.get("dilation") or ()):
        raise ir.error("max pooling with dilation is not supported")
    out = list(result_type.get_shape()[-spatial:])
    lowest = extreme_value(ir.result_element(node), largest=False)
    windows = _windows(ir, x, kernel, stride, padding, out, lowest)
    largest = windows[0]
    for window in windows[1:]:
        largest = ir.emit(t.MaximumOp(largest, window, result_type))
    return largest


@handles("aten.avg_pool2d.default", "aten.avg_pool1d.default", "aten.avg_pool3d.default")
def avg_pool(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """The mean of each window: the sum of its strided slices (zeros as padding) over the
    window's size, or over the count of its elements inside the input (count_include_pad
    False), or over divisor_override."""
    result_type, element = ir.result_type(node), ir.result_element(node)
    if element in (f16, bf16):
        # As torch: the sums of 16-bit floats in f32, rounded once at the end.
        wide = TensorType(f32, result_type.get_shape())
        return ir.convert(pooled_mean(ir, ir.operand(a["self"], f32), a, node, wide), element)
    return pooled_mean(ir, ir.tensor(a["self"]), a, node, result_type)


def pooled_mean(
    ir: _Importer, x: SSAValue, a: dict[str, Any], node: Node, result_type: TensorType
) -> SSAValue:
    element = result_type.get_element_type()
    spatial = _spatial_dims(node)
    kernel, stride, padding = _pool_arguments(a, spatial)
    out = list(result_type.get_shape()[-spatial:])
    windows = _windows(ir, x, kernel, stride, padding, out, 0.0)
    total = windows[0]
    for window in windows[1:]:
        total = ir.emit(t.AddOp(total, window, result_type))
    if a.get("divisor_override"):
        divisor = ir.operand(float(a["divisor_override"]), element)
        return ir.emit(t.DivOp(total, divisor, result_type))
    # Each window's count: of its elements inside the input, or inside the input and its
    # padding (count_include_pad); ceil_mode's last windows may reach past both.
    sizes = t.shape_of(x)[-spatial:]
    counted = torch.ones(sizes, dtype=torch.float64)
    pad = [p for d in reversed(padding) for p in (d, d)]
    counted = torch.nn.functional.pad(counted, pad, value=float(a.get("count_include_pad", True)))
    past = [stride[d] * (out[d] - 1) + kernel[d] - counted.shape[d] for d in range(spatial)]
    counted = torch.nn.functional.pad(counted, [p for d in reversed(past) for p in (0, max(d, 0))])
    for d in range(spatial):
        counted = counted.unfold(d, kernel[d], stride[d])
    counts = counted.sum(tuple(range(spatial, 2 * spatial)))
    if bool((counts == prod(kernel)).all()):
        divisor = ir.operand(float(prod(kernel)), element)
    else:
        divisor = ir.constant(counts.to(dtypes.torch_dtype(element)))
    return ir.emit(t.DivOp(total, divisor, result_type))


@handles(
    "aten.upsample_nearest2d.vec", "aten.upsample_nearest1d.vec", "aten.upsample_nearest3d.vec"
)
def upsample_nearest(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """Nearest upsampling: output position i of a spatial dim reads input position
    floor(i * scale), scale being 1 / the scale factor where given, else in / out (torch's
    "nearest"), picked along each dim in turn."""
    x = ir.tensor(a["input"])
    result_type, element = ir.result_type(node), ir.result_element(node)
    out_shape = list(result_type.get_shape())
    factors = a.get("scale_factors")
    spatial = len(out_shape) - 2
    for d in range(spatial):
        dim = 2 + d
        size, out = t.shape_of(x)[dim], out_shape[dim]
        scale = 1 / factors[d] if factors else size / out
        index = torch.clamp((torch.arange(out, dtype=torch.float64) * scale).floor(), max=size - 1)
        shape = list(t.shape_of(x))
        shape[dim] = out
        x = pick_along(ir, x, dim, ir.constant(index.to(torch.int64)), TensorType(element, shape))
    return x


@handles("aten.index_select.default")
def index_select(ir: _Importer, node: Node, a: dict[str, Any]) -> SSAValue:
    """The entries `index` of `x` along `dim` (`pick_along`)."""
    x = ir.tensor(a["self"])
    rank = len(t.shape_of(x))
    if rank == 0:
        return ir.emit(t.ReshapeOp(x, ir.result_type(node)))
    dim = ir.dim(a["dim"], rank)
    return pick_along(ir, x, dim, ir.tensor(a["index"]), ir.result_type(node))


def supported_ops_table() -> str:
    """The Markdown table of the aten ops the importer takes, by the handler that takes
    them, and last those `complex_as_real_pairs` takes on complex operands: the README's
    list (`python -m emmy.tools.frontend.importer` prints it)."""
    by_handler: dict[str, list[str]] = {}
    for name, handler in HANDLERS.items():
        function = handler.func if isinstance(handler, partial) else handler
        by_handler.setdefault(function.__name__.replace("_", " ").strip(), []).append(name)
    rows = [
        f"| {kind} | {', '.join(f'`{n}`' for n in sorted(names))} |"
        for kind, names in sorted(by_handler.items())
    ]
    rows.append(
        "| on complex tensors, as pairs of reals | "
        + ", ".join(f"`{name}`" for name in COMPLEX_OPS)
        + " |"
    )
    return "\n".join(["| imported as | aten ops |", "|---|---|", *rows]) + "\n"


if __name__ == "__main__":
    print(supported_ops_table(), end="")
