"""`torch.compile(model, backend="emmy")`: Dynamo's graphs compiled by emmy, with what emmy
cannot compile left to eager PyTorch.

    compiled = torch.compile(model, backend="emmy", options={"fallback": False})

The package registers `emmy_backend` under the `torch_dynamo_backends` entry point. It takes
Dynamo's graph through AOTAutograd, so each graph it compiles is functional ATen (AOTAutograd
writes input mutations back, regenerates outputs that alias inputs, and compiles the backward
graph the same way when gradients are needed), with PyTorch's core decompositions applied to
the ops the importer has no handler for (`decompositions`). In that graph:

    addmm = aten.addmm(bias, x, t)          ┐
    relu = aten.relu(addmm)                 ┘ emmy_0: one Torch IR program, emmy's kernels
    mid = aten.median(relu, 1)                eager: emmy has no median
    out = aten.mul(mid[0], 2.0)               emmy_1

the ops the importer can represent (`importer.HANDLERS`) are grouped into partitions with
torch.fx's `CapabilityBasedPartitioner`, each compiled as one program (`CompiledGraph`;
identical partitions, such as the layers of a model, share one) and called in place of its
nodes. With Dynamo's dynamic shapes (`dynamic=True`, `torch._dynamo.mark_dynamic`) a
partition whose tensors have one symbolic size is compiled once for every size in its range
(`emmy.dialects.sizes`); one with more symbols, or sizes computed from them, runs in
PyTorch. Partitions of views alone stay in PyTorch. An op the importer refuses in a form it
cannot take is moved out, and the graph partitioned again, until every partition compiles.
The ops left to PyTorch are named once, in one warning, each at the user's line; with
`options={"fallback": False}` they are one `UnsupportedOpsError` instead.

uint8 inputs that the graph only converts are read as int32 (`widen_narrow_integers`), a
conversion PyTorch makes at the partition's edge.

Complex tensors are pairs of reals to emmy (`complex_as_real_pairs`, first): a complex
input reaches a partition as its `view_as_real`, a complex result leaves as `view_as_complex`
of its pair, views that stay in PyTorch unreported; any other op of complex tensors is
refused.

A product of rows AOTAutograd flattened ([b*s, k] for an `nn.Linear` of [b, s, k]) is
taken unflattened where s is a dynamic size (`unflatten_products`), which emmy types.

On CUDA a partition replays CUDA graphs of its launches (`cuda_graphs`, `GraphedHostProgram`),
told by AOTAutograd's metadata which inputs keep their addresses (`_static_inputs`: read in
place). AOTAutograd keeps an inference graph's input mutations in it, as copies of the new
values into the inputs at its end (`keep_inference_input_mutations`, as Inductor has it);
the partition that computes such a value makes the copy itself (`_kept_mutations`), within
its CUDA graph where it reads the input in place: a KV cache's update costs no launch of the
CPU's time.
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.fx import GraphModule, Node
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase
from torch.fx.passes.tools_common import stable_topological_sort
from torch.fx.passes.utils.fuser_utils import erase_nodes, fuse_as_graphmodule, topo_sort

from emmy.passes.place_results_in_arguments import RESULTS_IN_ARGUMENTS, results_in_arguments
from emmy.tools import dynamo_cache
from emmy.tools.compiled_graph import CompiledGraph, CompileOptions, compiled_graph
from emmy.tools.diagnostics import file_location, internal_error
from emmy.tools.frontend.boolean_mask_sdpa import keep_boolean_mask_sdpa
from emmy.tools.frontend.complex_pairs import (
    BOUNDARY,
    COMPLEX_REFUSAL,
    complex_as_real_pairs,
    is_complex,
)
from emmy.tools.frontend.corrected_decompositions import use_corrected_functions
from emmy.tools.frontend.importer import (
    HANDLERS,
    UnsupportedNodes,
    decompositions,
    import_graph,
    target_name,
    unsupported_op,
    user_location,
)
from emmy.tools.frontend.narrow_integers import widen_narrow_integers
from emmy.tools.frontend.program import FrontendError
from emmy.tools.frontend.unflattened_products import unflatten_products
from emmy.tools.runtime.host import GraphedHostProgram

VIEW_OPS = [
    "aten.view.default",
    "aten.reshape.default",
    "aten._unsafe_view.default",
    "aten.expand.default",
    "aten.permute.default",
    "aten.transpose.int",
    "aten.t.default",
    "aten.unsqueeze.default",
    "aten.squeeze.dim",
    "aten.squeeze.dims",
    "aten.slice.Tensor",
    "aten.select.int",
    "aten.alias.default",
    "aten.detach.default",
    "_operator.getitem",
]
"""Ops that only view their input: a partition of nothing else stays in PyTorch, where it
copies nothing."""


FALLBACK_WARNING = "emmy_fallback_warning"
"""The key in a compiled graph's `meta` of the warning that named its ops left to PyTorch:
(its text, the user's file and line it is given at or None), as `warn_fallback` takes them."""


class UnsupportedOpsError(Exception):
    """Ops of a graph that emmy cannot compile, under `options={"fallback": False}`."""


class FallbackWarning(UserWarning):
    """Ops of a graph that emmy leaves to eager PyTorch, each at the user's line."""


CHECKS = ("aten._assert_async.msg", "aten._assert_async.default")
"""Asserts of a value the graph computes (`F.one_hot`'s that its classes are in range):
PyTorch runs them on the value an emmy partition hands it (on CUDA without waiting for it),
raising as eager does; they are not ops that fell back."""


class _Supported(OperatorSupportBase):
    """The nodes a partition may hold: those not refused, and the pieces of a result of
    several values whose op is not refused; never a copy into a mutated input, which the
    partition of its value makes (`_kept_mutations`)."""

    def __init__(self, refused: dict[Node, str | None], copies: set[Node]):
        self.refused = refused
        self.copies = copies

    def is_node_supported(self, submodules: Any, node: Node) -> bool:
        if node.op != "call_function" or node in self.refused or node in self.copies:
            return False
        if node.target is operator.getitem:
            return isinstance(node.args[0], Node) and self.is_node_supported(
                submodules, node.args[0]
            )
        return True


def _refusals(gm: GraphModule, copies: set[Node]) -> dict[Node, str | None]:
    """The nodes no partition can hold, with why: an op the importer has no handler for, or
    one that reads or makes a complex tensor (as `complex_as_real_pairs` left it); with no
    reason, as it is not reported, a view between a complex tensor and its pair of reals,
    which PyTorch makes for free, arithmetic of symbolic sizes (an op that reads one is
    refused with its reason, if it is), and the checks of `CHECKS`. (Ops on tensors of
    symbolic sizes are the importer's to take or refuse: see `emmy.dialects.sizes`.)"""
    refused: dict[Node, str | None] = {}
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is operator.getitem or node in copies:
            continue
        if (
            BOUNDARY in node.meta
            or isinstance(node.meta.get("val"), torch.SymInt)
            or target_name(node) in CHECKS
        ):
            refused[node] = None
        elif any(is_complex(n) for n in (node, *node.all_input_nodes)):
            refused[node] = _refusal(unsupported_op(node, COMPLEX_REFUSAL))
        elif target_name(node) not in HANDLERS:
            refused[node] = _refusal(unsupported_op(node))
    return refused


class _Partition(torch.nn.Module):
    """Runs one compiled partition in place of its nodes: on CUDA, with `cuda_graphs`,
    through CUDA graphs that read the inputs at `static` positions (the model's parameters
    and buffers) in place."""

    def __init__(
        self,
        graph: CompiledGraph,
        static: list[bool],
        copied: list[bool],
        written_into: list[int | None],
    ):
        super().__init__()
        self.graph = graph
        self.static = static
        self.copied = copied
        """Which outputs a replay hands out as copies: all but those only copied into a
        mutated input (`written_into`), before anything could replay the graph again."""
        self.written_into = written_into
        """For each output that is the new value of a mutated input the partition alone
        reads, that input's position: each call copies it there (a CUDA graph within its
        replay, `GraphedHostProgram`'s `write_back`) and returns the input in its place."""
        self._graphed: GraphedHostProgram | None = None
        self._kept: list[int] | None = None
        """The positions of the inputs that are not sizes (found at the first call)."""
        self._replays = False
        """Whether calls replay CUDA graphs: all tensor inputs are on the GPU."""

    def forward(self, *inputs: Any) -> tuple[torch.Tensor, ...]:
        if self._kept is None:
            # A symbolic size Dynamo passes as an input is also the size of a tensor input.
            # Dynamo's guards keep each position's kind and device from call to call.
            self._kept = [i for i, v in enumerate(inputs) if not isinstance(v, torch.SymInt | int)]
            tensors = [v for v in inputs if isinstance(v, torch.Tensor)]
            # A CPU tensor among CUDA ones is copied to the GPU by each call, which no graph
            # can capture (a copy from pageable memory): such calls run as they are.
            self._replays = (
                self.graph.options.cuda_graphs and bool(tensors) and all(t.is_cuda for t in tensors)
            )
        values = [inputs[i] for i in self._kept]
        outputs = list(self._graphed_call(values) if self._replays else self.graph(values))
        for number, position in enumerate(self.written_into):
            if position is not None and outputs[number] is not inputs[position]:
                inputs[position].copy_(outputs[number])
                outputs[number] = inputs[position]
        return tuple(outputs)

    def described(self) -> dict[str, Any]:
        """What `emmy.tools.dynamo_cache` keeps of the partition: its program's Torch IR text
        and the arguments above."""
        return {
            "structure": self.graph.structure,
            "static": self.static,
            "copied": self.copied,
            "written_into": self.written_into,
        }

    def _graphed_call(self, values: list[Any]) -> list[torch.Tensor]:
        if self._graphed is None:
            static = [self.static[i] for i in self._kept]
            # Positions among the values, without the sizes dropped above.
            position = {i: n for n, i in enumerate(self._kept)}
            write_back = [None if i is None else position.get(i) for i in self.written_into]
            self._graphed = GraphedHostProgram(
                self.graph.prepare_cuda(),
                static,
                copy_outputs=self.copied,
                capture_at_second=True,
                write_back=write_back,
                guarded=True,
            )
        return self._graphed(values)


def warn_fallback(message: str, where: tuple[str, int] | None) -> None:
    """The warning of ops left to PyTorch, at the user's line of the first (`where`), not at
    the backend's, which the compile's stack would show."""
    if where is None:
        warnings.warn(message, FallbackWarning, stacklevel=3)
    else:
        warnings.warn_explicit(message, FallbackWarning, *where)


def _user_line(node: Node) -> tuple[str, int] | None:
    """The file and line of the user's source a node came from, if its stack shows one."""
    where = file_location(user_location(node))
    return None if where is None else (where.filename.data, where.line.data)


def _on_cuda(example_inputs: list[Any]) -> bool:
    """Whether a graph runs on the GPU: any of its inputs is a CUDA tensor."""
    return any(isinstance(v, torch.Tensor) and v.is_cuda for v in example_inputs)


def _refusal(error: Exception) -> str:
    return str(error).splitlines()[0]


def _compile_partition(
    gm: GraphModule,
    nodes: list[Node],
    name: str,
    options: CompileOptions,
    on_cuda: bool,
    copies: dict[Node, Node],
    static: set[Node],
) -> tuple[CompiledGraph, dict[int, int]]:
    """The partition's nodes as one program, lowered (and on CUDA, compiled and loaded) now,
    and the copies into inputs it makes (`_made_copies`), whose outputs the program may
    compute in those inputs' buffers (`place-results-in-arguments`); raises
    `UnsupportedNodes` for the nodes the importer refuses."""
    sub, inputs, outputs = fuse_as_graphmodule(gm, nodes, name, always_return_tuple=True)
    made = _made_copies(nodes, inputs, outputs, copies, static)
    placeholders = [n for n in sub.graph.nodes if n.op == "placeholder"]
    for placeholder, value in zip(placeholders, inputs, strict=True):
        placeholder.meta["val"] = value.meta.get("val")
    originals = {node.name: node for node in nodes}
    try:
        module = import_graph(sub.graph)
        if made:
            module.attributes[RESULTS_IN_ARGUMENTS] = results_in_arguments(made)
        graph = compiled_graph(module, options)
    except UnsupportedNodes as error:
        for each in error.errors:
            each.node = originals.get(each.node.name, each.node)
        raise
    graph.prepare(on_cuda)
    return graph, made


def _made_copies(
    nodes: list[Node],
    inputs: list[Node],
    outputs: list[Node],
    copies: dict[Node, Node],
    static: set[Node],
) -> dict[int, int]:
    """The copies into mutated inputs that the partition of `nodes` makes itself, as {output:
    input} positions: of an input that only it reads, so that no other node reads the old
    value after the partition wrote the new."""
    inside = set(nodes)
    return {
        number: inputs.index(copies[node].args[0])
        for number, node in enumerate(outputs)
        if node in copies
        and copies[node].args[0] in inputs
        and _read_only_by(copies[node].args[0], inside | {copies[node]}, static)
    }


def _replace(
    gm: GraphModule,
    nodes: list[Node],
    name: str,
    graph: CompiledGraph,
    static: set[Node],
    copies: dict[Node, Node],
    made: dict[int, int],
) -> None:
    """Calls the partition in place of its nodes; `made` as `_compile_partition` gave it."""
    # The partition's inputs are found again: an earlier replacement may have given them.
    _, inputs, outputs = fuse_as_graphmodule(gm, nodes, name, always_return_tuple=True)
    inside = set(nodes)
    copied = [
        any(u not in inside and not (number in made and u is copies[node]) for u in node.users)
        for number, node in enumerate(outputs)
    ]
    written_into = [made.get(number) for number in range(len(outputs))]
    partition = _Partition(graph, [node in static for node in inputs], copied, written_into)
    gm.add_submodule(name, partition)
    with gm.graph.inserting_after(nodes[-1]):
        call = gm.graph.call_module(name, args=inputs)
    with gm.graph.inserting_after(call):
        for number, output in reversed(list(enumerate(outputs))):
            piece = gm.graph.call_function(operator.getitem, (call, number))
            output.replace_all_uses_with(piece, propagate_meta=True)
    for number in made:
        gm.graph.erase_node(copies[outputs[number]])
    erase_nodes(gm, nodes)


def _read_only_by(placeholder: Node, nodes: set[Node], static: set[Node]) -> bool:
    """Whether a static input is read, and by `nodes` alone: only then is it an input of their
    partition that its graph may overwrite with the new value, which no other node's read of
    the old one may follow."""
    users = placeholder.users
    return placeholder in static and bool(users) and all(user in nodes for user in users)


def _forward_metadata() -> Any:
    """AOTAutograd's metadata of the graph it is compiling (None outside its compile)."""
    context = torch._guards.TracingContext.try_get()
    return None if context is None else context.fw_metadata


def _static_inputs(gm: GraphModule) -> set[Node]:
    """The placeholders of `gm` that AOTAutograd calls static (the parameters and buffers,
    which keep their addresses from call to call), as Inductor's CUDA graphs take them, and
    the pairs of reals of the complex ones (views of the same memory: `complex_pairs`)."""
    metadata = _forward_metadata()
    if metadata is None:
        return set()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    static = {placeholders[i] for i in metadata.static_input_indices}
    return static | {user for node in static for user in node.users if BOUNDARY in user.meta}


def _kept_mutations(gm: GraphModule) -> dict[Node, Node]:
    """AOTAutograd's copies of the new values of an inference graph's mutated inputs into
    them (`keep_inference_input_mutations`: `copy_(input, value)`, the last nodes), by value.
    The partition that computes a value copies it into its input itself where it can
    (`_replace`): within its CUDA graph, and with no launch of the CPU's time."""
    copies = {}
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is not torch.ops.aten.copy_.default:
            continue
        target, value = node.args[:2]
        if (
            not node.users
            and target.op == "placeholder"
            and isinstance(value, Node)
            and value.op == "call_function"
            and value not in copies
            and _same_layout(target, value)
        ):
            copies[value] = node
    return copies


def _return_mutated_inputs(gm: GraphModule) -> None:
    """A function that returns what it mutated (`return x.add_(1)`) returns AOTAutograd's
    copy into the input: the input itself, whose new value the copy has made by the time the
    graph returns. Returning the input leaves the copy unused, one `_kept_mutations` takes."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.aten.copy_.default:
            target = node.args[0]
            if target.op == "placeholder" and all(user.op == "output" for user in node.users):
                node.replace_all_uses_with(target)


def _same_layout(a: Node, b: Node) -> bool:
    """Whether the two nodes' tensors have one shape and dtype (a copy_ between them neither
    broadcasts nor converts)."""
    values = [n.meta.get("val") for n in (a, b)]
    if not all(isinstance(v, torch.Tensor) for v in values):
        return False
    return values[0].shape == values[1].shape and values[0].dtype == values[1].dtype


def compile_graph(
    gm: GraphModule, example_inputs: list[Any], options: CompileOptions, forward: bool = True
) -> GraphModule:
    """`gm` (functional ATen) with each partition emmy compiles called in place of its nodes
    (see the module docstring). AOTAutograd's metadata (`_static_inputs`) and its copies into
    mutated inputs (`_kept_mutations`) are a `forward` graph's; a backward graph's partitions
    read none of their inputs in place across calls and copy every output out of their CUDA
    graphs (a gradient may become a parameter's `.grad` as it is)."""
    on_cuda = _on_cuda(example_inputs)
    complex_as_real_pairs(gm.graph)
    widen_narrow_integers(gm.graph)
    unflatten_products(gm.graph)
    if forward:
        _return_mutated_inputs(gm)
    copies = _kept_mutations(gm) if forward else {}
    static = _static_inputs(gm) if forward else set()
    refused = _refusals(gm, set(copies.values()))
    while True:
        partitioner = CapabilityBasedPartitioner(
            gm,
            _Supported(refused, set(copies.values())),
            allows_single_node_partition=True,
            non_compute_ops=VIEW_OPS,
        )
        partitions = [topo_sort(list(p.nodes)) for p in partitioner.propose_partitions()]
        compiled, before = [], len(refused)
        for number, nodes in enumerate(partitions):
            try:
                name = f"emmy_{number}"
                compiled.append(
                    _compile_partition(gm, nodes, name, options, on_cuda, copies, static)
                )
            except UnsupportedNodes as error:
                reasons = {each.node: _refusal(each) for each in error.errors}
                if not reasons.keys() & set(nodes):
                    # Nothing to move out of the partition: it all goes, or this never ends.
                    reasons = dict.fromkeys(nodes, _refusal(error))
                refused.update(reasons)
            except FrontendError as error:
                refused.update(dict.fromkeys(nodes, _refusal(error)))
            except Exception as error:
                # A failure to lower or compile is emmy's bug, not the user's: the partition
                # runs in PyTorch and the warning says so (EMMY_DEBUG=1 for the traceback).
                where = f"compiling the partition of {target_name(nodes[0])}"
                refused.update(dict.fromkeys(nodes, internal_error(where, error)))
        if len(refused) == before:
            break
    reported = [why for why in refused.values() if why is not None]
    if reported:
        listed = "\n".join(f"  {why}" for why in reported)
        if not options.fallback:
            raise UnsupportedOpsError(f"emmy cannot compile {len(reported)} op(s):\n{listed}")
        first = next(node for node, why in refused.items() if why is not None)
        gm.meta[FALLBACK_WARNING] = (
            f"emmy runs {len(reported)} op(s) in eager PyTorch:\n{listed}",
            _user_line(first),
        )
        warn_fallback(*gm.meta[FALLBACK_WARNING])
    for number, (nodes, (graph, made)) in enumerate(zip(partitions, compiled, strict=True)):
        _replace(gm, nodes, f"emmy_{number}", graph, static, copies, made)
    stable_topological_sort(gm)
    gm.graph.lint()
    gm.recompile()
    return gm


def emmy_backend(
    gm: GraphModule, example_inputs: list[Any], mode: str | None = None, options: Any = None
) -> Any:
    """The `torch.compile` backend (see the module docstring); `options` are the fields of
    `CompileOptions`. `mode` is accepted for `torch.compile`'s sake and changes nothing.
    What it makes of an inference graph is cached on disk (`emmy.tools.dynamo_cache`): a
    later process that meets the same graph skips AOTAutograd and emmy's compile."""
    chosen = CompileOptions.from_mapping(options or {})
    key = dynamo_cache.graph_key(gm, example_inputs, chosen)
    entry = None if key is None else dynamo_cache.load(key)
    if entry is not None:
        try:
            return dynamo_cache.runnable(entry, gm, chosen, _on_cuda(example_inputs))
        except Exception:  # a stale entry (its programs gone or changed) is a miss
            pass
    keep_boolean_mask_sdpa(gm)
    use_corrected_functions(gm)
    made: dict[bool, tuple[GraphModule, Any]] = {}

    def compiler(forward: bool) -> Any:
        def compile_one(graph: GraphModule, inputs: list[Any]) -> Any:
            # AOTAutograd compiles under its fake tensor mode; the importer computes constants
            # (a torch.arange in the graph) with real tensors.
            with unset_fake_temporarily():
                compiled = compile_graph(graph, inputs, chosen, forward)
            made[forward] = (compiled, _forward_metadata())
            return make_boxed_func(compiled)

        return compile_one

    runnable = aot_autograd(
        fw_compiler=compiler(True),
        bw_compiler=compiler(False),
        decompositions=decompositions(),
        keep_inference_input_mutations=True,
    )(gm, example_inputs)
    if key is not None and set(made) == {True} and dynamo_cache.identity_wrapped(made[True][1]):
        compiled = made[True][0]
        arguments = len(dynamo_cache.lifted(gm)) + len(example_inputs)
        try:
            entry = dynamo_cache.entry_of(compiled, arguments, compiled.meta.get(FALLBACK_WARNING))
        except dynamo_cache.NotCacheable:
            return runnable
        dynamo_cache.save(key, entry)
    return runnable
