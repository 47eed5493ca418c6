"""A disk cache of what the `torch.compile` backend made of a Dynamo graph, so that a later
process compiling the same graph skips AOTAutograd, the importer and lowering: it reads back
the graph the backend handed AOTAutograd, whose partitions are emmy's programs.

    Dynamo's graph + its inputs' layouts + options       ──key──▶
    ~/.cache/emmy/dynamo-graph/<key>.pickle:
        placeholder arg0_1, arg1_1, arg2_1
        call_module emmy_0(arg0_1, arg1_1, arg2_1)   {"structure": <its Torch IR>, "static": ...}
        call_function aten.view.default(getitem, [2, 3])
        output (view,)

A partition comes back as its Torch IR text (`CompiledGraph.structure`), whose lowered
programs, CUDA and cubins the caches of `emmy.tools.compiled_graph` hold. An entry is kept
only where AOTAutograd's own work at run time is to call that graph with the graph's inputs
and no gradients (`identity_wrapped`): an inference graph of static shapes whose inputs are
distinct tensors, whose outputs alias nothing and whose input mutations are kept in the graph
(`keep_inference_input_mutations`), with no effect tokens; anything else takes AOTAutograd's
path every time, as does a graph that reads a tensor constant other than a parameter or a
buffer. The key holds the graph's printed code with its source lines, the inputs' shapes,
strides, dtypes, devices and kinds (parameter, static), grad mode, the float32 matmul
precision, the options, the state of the tuning database and what `ir_cache.entry_key` adds
(versions, emmy's code). Entries are pickles of plain data, written as `ir_cache` writes
(private, atomic, checked by a digest): a broken entry is a miss, never a failure.
`EMMY_NO_CACHE=1`, and `EMMY_DUMP_DIR` (the passes are to be seen running), bypass it.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import pickle
import stat
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.fx import Graph, GraphModule, Node

from emmy.passes.pipelines import DUMP_DIR_VARIABLE
from emmy.tools.compiled_graph import CompileOptions, compiled_graph_of_text
from emmy.tools.files import PendingFile
from emmy.tools.ir_cache import entry_key
from emmy.tools.settings import cache_root
from emmy.tools.tuning_database import fingerprint as tuning_fingerprint

KIND = "dynamo-graph"
CODE_PACKAGES = ("emmy.tools", "emmy.tools.frontend")
"""The code that decides what the backend makes of a graph (lowering is keyed apart)."""

_LEAVES = (
    type(None),
    bool,
    int,
    float,
    str,
    torch.dtype,
    torch.device,
    torch.layout,
    torch.memory_format,
)


class NotCacheable(Exception):
    """What the backend made holds something an entry cannot describe."""


@dataclass(frozen=True)
class _Value:
    """A node's value among another node's arguments."""

    name: str


@dataclass
class Entry:
    """What a later process needs to run the graph without compiling it."""

    nodes: list[tuple[str, str, Any, tuple, dict]]
    """(op, name, target, args, kwargs) in order; targets described by `_described_target`."""
    partitions: dict[str, dict[str, Any]]
    """A partition's call_module target -> its Torch IR text and `_Partition`'s other fields."""
    constants: dict[str, torch.Tensor]
    """The graph's get_attr tensors."""
    fallback_warning: tuple[str, tuple[str, int] | None] | None
    """The warning of the ops left to PyTorch and where it is given (`warn_fallback`), given
    again on each load."""


def graph_key(gm: GraphModule, example_inputs: list[Any], options: CompileOptions) -> str | None:
    """The key of Dynamo's graph `gm` on `example_inputs`, or None where no entry may serve it
    (see the module docstring)."""
    if (
        os.environ.get("EMMY_NO_CACHE") == "1"
        or os.environ.get(DUMP_DIR_VARIABLE)  # the passes are to be seen running
        or torch.is_autocast_enabled()
    ):
        return None
    grad = torch.is_grad_enabled()
    parts = [
        gm.print_readable(print_output=False, include_stride=True, include_device=True),
        f"grad {grad}",
        torch.get_float32_matmul_precision(),
        repr(options),
        tuning_fingerprint(),
    ]
    storages = set()
    for value in [*lifted(gm), *example_inputs]:
        if not isinstance(value, torch.Tensor) or type(value) not in (
            torch.Tensor,
            torch.nn.Parameter,
        ):
            return None  # a size, a scalar or a tensor subclass: AOTAutograd's every time
        if any(isinstance(d, torch.SymInt) for d in (*value.shape, *value.stride())):
            return None
        if grad and value.requires_grad:
            return None  # AOTAutograd may trace a backward graph
        storage = value.untyped_storage().data_ptr()
        if storage in storages and value.numel():
            return None  # inputs sharing memory: AOTAutograd may give them one base
        storages.add(storage)
        device = value.device
        if device.type == "cuda":
            device = f"{device} {torch.cuda.get_device_name(device)}"
        parts.append(
            f"{type(value).__name__} {tuple(value.shape)} {value.stride()} "
            f"{value.storage_offset()} {value.dtype} {device} {value.requires_grad} "
            f"{getattr(value, '_dynamo_static_input_type', None)}"
        )
    if _constants(gm):
        return None  # tensors the compiled program may hold as values
    return entry_key(KIND, parts, CODE_PACKAGES)


def identity_wrapped(metadata: Any) -> bool:
    """Whether AOTAutograd's run-time wrapping of a forward graph with this metadata
    (`ViewAndMutationMeta`) only calls it: no output aliases an input or an intermediate, every
    input mutation is in the graph, no effect tokens, no functionalized random state."""
    if metadata is None:
        return False
    from torch._functorch._aot_autograd.schemas import MutationType, OutputType

    return (
        all(o.output_type == OutputType.non_alias for o in metadata.output_info)
        and all(i.mutation_type != MutationType.MUTATED_OUT_GRAPH for i in metadata.input_info)
        and metadata.num_intermediate_bases == 0
        and not metadata.tokens
        and not metadata.is_rng_op_functionalized
    )


def entry_of(
    gm: GraphModule, arguments: int, fallback_warning: tuple[str, tuple[str, int] | None] | None
) -> Entry:
    """The entry of the graph the backend made (raises `NotCacheable`)."""
    from emmy.tools.dynamo_backend import _Partition

    def described_leaf(value: Any) -> Any:
        if isinstance(value, Node):
            return _Value(value.name)
        if not isinstance(value, _LEAVES):
            raise NotCacheable(f"an argument of type {type(value).__name__}")
        return value

    def described(value: Any) -> Any:
        return _mapped(value, described_leaf)

    nodes, partitions, constants = [], {}, {}
    for node in gm.graph.nodes:
        target = node.target
        if node.op == "call_module":
            partition = gm.get_submodule(target)
            if not isinstance(partition, _Partition):
                raise NotCacheable(f"a module {type(partition).__name__}")
            partitions[target] = partition.described()
        elif node.op == "get_attr":
            constant = getattr(gm, target)
            if not isinstance(constant, torch.Tensor):
                raise NotCacheable(f"an attribute of type {type(constant).__name__}")
            constants[target] = constant
        elif node.op == "call_function":
            target = _described_target(target)
        nodes.append((node.op, node.name, target, described(node.args), described(node.kwargs)))
    placeholders = sum(1 for node in nodes if node[0] == "placeholder")
    if placeholders != arguments:
        raise NotCacheable(f"{placeholders} graph inputs for {arguments} arguments")
    return Entry(nodes, partitions, constants, fallback_warning)


def _mapped(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """`value` with `leaf` applied to all it holds that is not a list, tuple, dict or slice."""
    if isinstance(value, list | tuple):
        return type(value)(_mapped(v, leaf) for v in value)
    if isinstance(value, dict):
        return {k: _mapped(v, leaf) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(*(_mapped(v, leaf) for v in (value.start, value.stop, value.step)))
    return leaf(value)


def _described_target(target: Callable) -> tuple[str, str]:
    """A function as (module, qualified name) or an ATen op as ("torch.ops", "aten.mm.default"),
    found again by `_target`."""
    if isinstance(target, torch._ops.OpOverload):
        described = ("torch.ops", str(target))
    else:  # a higher-order op has no qualified name: it is not found again, not cached
        described = (getattr(target, "__module__", ""), getattr(target, "__qualname__", ""))
    try:
        found = _target(described)
    except (ImportError, AttributeError, ValueError):
        found = None
    if found is not target:
        raise NotCacheable(f"the function {target!r}")
    return described


def _target(described: tuple[str, str]) -> Any:
    module, name = described
    found = torch.ops if module == "torch.ops" else importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def lifted(gm: GraphModule) -> list[torch.Tensor]:
    """The parameters and buffers of Dynamo's graph, which AOTAutograd passes its graph
    before the inputs (as `aot_module_simplified` lists them)."""
    named = {
        **dict(gm.named_parameters(remove_duplicate=False)),
        **dict(gm.named_buffers(remove_duplicate=False)),
    }
    return list(named.values())


def runnable(
    entry: Entry, gm: GraphModule, options: CompileOptions, on_cuda: bool
) -> Callable[..., Any]:
    """The function Dynamo calls in place of its graph `gm`: the graph of `entry` with its
    partitions ready to run (on CUDA, their kernels loaded), given `gm`'s parameters and
    buffers and the inputs, without gradients, as AOTAutograd calls an inference graph; the
    fallback warning is given again."""
    from emmy.tools.dynamo_backend import _Partition

    root = torch.nn.Module()
    for target, fields in entry.partitions.items():
        fields = dict(fields)
        graph = compiled_graph_of_text(fields.pop("structure"), options)
        graph.prepare(on_cuda)
        root.add_module(target, _Partition(graph, **fields))
    for target, constant in entry.constants.items():
        root.register_buffer(target, constant)
    graph = Graph()
    values: dict[str, Node] = {}

    def value(described: Any) -> Any:
        return _mapped(described, lambda v: values[v.name] if isinstance(v, _Value) else v)

    for op, name, target, args, kwargs in entry.nodes:
        if op == "call_function":
            target = _target(target)
        if op == "output":
            graph.output(value(args[0]))
            continue
        node = graph.create_node(op, target, value(args), value(kwargs), name=name)
        values[name] = node
    module = GraphModule(root, graph)
    if entry.fallback_warning is not None:
        from emmy.tools.dynamo_backend import warn_fallback

        warn_fallback(*entry.fallback_warning)

    parameters = lifted(gm)

    def run(*arguments: Any) -> Any:
        with torch.no_grad():
            return module(*parameters, *arguments)

    return run


def load(key: str) -> Entry | None:
    """The entry under `key`, or None if there is none, it is not exactly what was written, or
    it is not private to this user (`_private`)."""
    path = _path(key)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        with os.fdopen(descriptor, "rb") as file:
            if not (_private(os.fstat(file.fileno()), path) and _private(path.parent.lstat())):
                return None
            data = file.read()
        digest, body = data[:64], data[64:]
        if digest.decode() != hashlib.sha256(body).hexdigest():
            return None
        entry = pickle.loads(body)
    except Exception:  # a broken or older entry is a miss
        return None
    return entry if isinstance(entry, Entry) else None


def save(key: str, entry: Entry) -> None:
    """Writes the entry whole or not at all, into a folder private to this user; an unwritable
    cache only costs time."""
    body = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
    path = _path(key)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(path.parent.lstat()):
            return
        path.unlink(missing_ok=True)  # a new entry is 0600, whatever one it replaces was
        with PendingFile(path, mode=0o600) as file:
            file.buffer.write(hashlib.sha256(body).hexdigest().encode() + body)
    except OSError:
        pass


def _private(info: os.stat_result, path: Path | None = None) -> bool:
    """Whether a file or folder of entries is this user's alone (a pickle is code when it is
    read: no one else may have written it); where it is not, a warning says so once."""
    if stat.S_ISLNK(info.st_mode):
        return False
    if info.st_uid == os.geteuid() and not info.st_mode & 0o022:
        return True
    where = path or _path("").parent
    if where not in _REFUSED:
        _REFUSED.add(where)
        warnings.warn(
            f"{where}: not read, as it is not private to you (another owner, or writable by "
            f"others): emmy reads only cache entries of Dynamo graphs that its own user wrote; "
            f"remove it, or make it yours and chmod go-w",
            stacklevel=4,
        )
    return False


_REFUSED: set[Path] = set()


def _path(key: str) -> Path:
    return cache_root() / KIND / f"{key}.pickle"


def _constants(gm: GraphModule) -> list[str]:
    """The tensors the graph reads by get_attr that are not parameters or buffers (which
    AOTAutograd passes in): their values, not only their layouts, may decide the program."""
    kept = {id(t) for t in (*gm.parameters(), *gm.buffers())}
    return [
        node.target
        for node in gm.graph.find_nodes(op="get_attr")
        if isinstance(getattr(gm, node.target, None), torch.Tensor)
        and id(getattr(gm, node.target)) not in kept
    ]
