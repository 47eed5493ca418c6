"""A Torch IR program compiled once and run on the device of its inputs: what `emmy.compile`
and the `torch.compile` backend hand back.

    graph = compiled_graph(torch_ir, CompileOptions())
    graph.ir("loop")               # the program's Loop IR, lowered on first use
    graph.ir("cuda")               # its kernels' CUDA C++
    graph([x, w])                  # CUDA tensors: emmy's kernels; CPU tensors: the interpreter

On CUDA tensors the Kernel IR host function runs on the current stream, its buffers from
PyTorch's caching allocator, with no synchronisation (`HostProgram`); the kernels are compiled
and loaded by `prepare_cuda`, which a caller runs before any CUDA graph capture. On CPU tensors
the host function at `options.cpu_level` (Loop IR by default) runs in the CPU interpreter.

Identical programs share one `CompiledGraph` (`compiled_graph` keys them by their Torch IR),
so a model of N identical layers lowers and compiles each distinct kernel once in a process;
across processes, the lowered programs are cached on disk (`emmy.tools.ir_cache`, keyed by the
Torch IR and the state of the tuning database their schedules may come from), and so are, for
CUDA, the kernels' CUDA C++, what the runtime runs of the host function (`host_plan`: plain
data, read back in a moment where the whole Kernel IR of a model's tensor-core kernels takes
seconds to parse) and the compiled kernels (`emmy.tools.runtime.cubin_cache`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeVar

from xdsl.dialects.builtin import ModuleOp

from emmy.passes.pipelines import DUMP_DIR_VARIABLE, LEVELS, printed
from emmy.tools.ir_cache import cached_module, cached_text, unnamed_text
from emmy.tools.tuning_database import fingerprint as tuning_fingerprint

if TYPE_CHECKING:
    import torch

    from emmy.tools.runtime.host import HostProgram


T = TypeVar("T")


@dataclass(frozen=True)
class CompileOptions:
    """What a user may choose when compiling through the Python API or `torch.compile(...,
    backend="emmy", options={...})`."""

    fallback: bool = True
    """`torch.compile` only: ops emmy cannot compile run in eager PyTorch, with one warning
    that lists them; False makes them one error that lists every one."""
    cpu_level: str = "loop"
    """The level the CPU interpreter runs on CPU tensors."""
    cuda_graphs: bool = True
    """`torch.compile` only: on CUDA, each compiled partition replays a CUDA graph of its
    launches (`GraphedHostProgram`: the weights and buffers read in place, other inputs copied
    in, the outputs copied out), so that a call costs one launch of host time however many
    kernels it has (a decode step's 100 or so); False launches each kernel from Python."""

    def __post_init__(self) -> None:
        if self.cpu_level not in LEVELS:
            raise ValueError(
                f"cpu_level must be one of {', '.join(LEVELS)}, not {self.cpu_level!r}"
            )
        for name in ("fallback", "cuda_graphs"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, not {getattr(self, name)!r}")

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any]) -> CompileOptions:
        """The options a user gave by name; an unknown name is an error that lists the
        known ones."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(
                f"unknown emmy option{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(map(repr, unknown))}; the options are {', '.join(sorted(known))}"
            )
        return cls(**options)


class CompiledGraph:
    """One Torch IR program with `@forward`, lowered on demand and run on its inputs' device
    (see the module docstring)."""

    def __init__(self, torch_ir: ModuleOp | None, options: CompileOptions, structure: str):
        """`torch_ir` None: parsed from `structure` when a level is first lowered from it."""
        self.options = options
        self.structure = structure
        """The Torch IR's text with its values unnamed (`unnamed_text`): what identifies it."""
        self._levels: dict[str, ModuleOp] = {} if torch_ir is None else {"torch": torch_ir}
        self._cuda_source: str | None = None
        self._host_program: HostProgram | None = None

    def module(self, level: str) -> ModuleOp:
        """The program at `level`, lowered from Torch IR the first time it is asked for, or
        read from the disk cache of lowered programs (`emmy.tools.ir_cache`; not while
        EMMY_DUMP_DIR asks to see the passes run)."""
        from emmy.tools.bench.differential import lower

        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}; the levels are {', '.join(LEVELS)}")
        if level == "torch":
            return self._torch_ir()
        if level not in self._levels:
            # Schedules come from the tuning database too (`emmy tune`): it keys the cache.
            self._levels[level] = self._cached(
                f"{level}-ir", (), lambda: lower(self._torch_ir(), level), cached_module
            )
        return self._levels[level]

    def _torch_ir(self) -> ModuleOp:
        if "torch" not in self._levels:
            from xdsl.parser import Parser

            from emmy.dialects import make_context

            self._levels["torch"] = Parser(make_context(), self.structure).parse_module()
        return self._levels["torch"]

    def ir(self, level: str) -> str:
        """The program's text at `level`, or with "cuda" the CUDA C++ of its kernels."""
        if level == "cuda":
            return self.cuda_source()
        return printed(self.module(level))

    def _cached(
        self,
        kind: str,
        code_packages: tuple[str, ...],
        make: Callable[[], T],
        cache: Callable[[str, list[str], tuple[str, ...], Callable[[], T]], T],
    ) -> T:
        """What `make` gives, through the disk cache `cache` (`cached_module` or `cached_text`)
        under the key of the program's levels (not while EMMY_DUMP_DIR asks to see the
        passes run)."""
        if os.environ.get(DUMP_DIR_VARIABLE):
            return make()
        key = [self.structure, tuning_fingerprint()]
        return cache(kind, key, ("emmy.passes", *code_packages), make)

    def cuda_source(self) -> str:
        """The CUDA C++ of the program's kernels, cached on disk as it is: a later process
        reads it back instead of parsing the Kernel IR it is printed from (for a model's
        unrolled tensor-core kernels, longer than lowering them again)."""
        from emmy.tools.cuda.target import print_cuda

        if self._cuda_source is None:
            self._cuda_source = self._cached(
                "cuda",
                ("emmy.tools.cuda",),
                lambda: print_cuda(self._kernel_module()),
                cached_text,
            )
        return self._cuda_source

    def host_plan(self) -> str:
        """What the GPU runtime runs of the Kernel IR: the host function with the kernels'
        launch shapes and tensor maps, as plain data (`HostProgram.plan_text`), cached on disk
        so that a later process runs the program without parsing any IR."""
        from emmy.tools.runtime.host import HostProgram

        return self._cached(
            "host-plan",
            ("emmy.tools.runtime",),
            lambda: HostProgram(self._kernel_module()).plan_text(),
            cached_text,
        )

    def _kernel_module(self) -> ModuleOp:
        """The Kernel IR that the CUDA source and the host plan are made of, not cached
        whole on disk as `module` caches a level: a later process reads those two, and
        printing a model's unrolled kernels takes seconds (2 of a Llama prefill's 14)."""
        from emmy.tools.bench.differential import lower

        if "kernel" not in self._levels:
            self._levels["kernel"] = lower(self._torch_ir(), "kernel")
        return self._levels["kernel"]

    def prepare(self, on_cuda: bool) -> None:
        """Everything a call will need, made now: on CUDA the kernels compiled and loaded
        (`prepare_cuda`), on the CPU the level the interpreter runs."""
        if on_cuda:
            self.prepare_cuda()
        else:
            self.module(self.options.cpu_level)

    def prepare_cuda(self) -> HostProgram:
        """Compiles and loads the kernels for the current GPU, once: after this, a call on
        CUDA tensors compiles, loads and synchronises nothing (safe under graph capture)."""
        from emmy.tools.runtime.host import HostProgram

        if self._host_program is None:
            program = HostProgram.from_plan_text(self.host_plan(), self.cuda_source())
            program.load()
            self._host_program = program
        return self._host_program

    def __call__(self, inputs: Sequence[Any]) -> list[torch.Tensor]:
        """The program's results on `inputs` (@forward's arguments, in order)."""
        import torch

        if any(isinstance(v, torch.Tensor) and v.is_cuda for v in inputs):
            # on the current stream (the runtime's default), without waiting for the kernels
            return self.prepare_cuda()(inputs, timeout_s=None)
        return self._run_on_cpu(inputs)

    def _run_on_cpu(self, inputs: Sequence[Any]) -> list[torch.Tensor]:
        import torch

        from emmy.tools.bench.differential import to_numpy
        from emmy.tools.interpreter.run import find_function, run_module
        from emmy.tools.runtime.host import torch_dtype

        arrays = [to_numpy(v) if isinstance(v, torch.Tensor) else v for v in inputs]
        outputs = run_module(self.module(self.options.cpu_level), arrays)
        forward = find_function(self._torch_ir(), "forward")
        return [
            torch.from_numpy(output).to(torch_dtype(result_type.get_element_type()))
            for output, result_type in zip(outputs, forward.function_type.outputs.data)
        ]


_COMPILED: dict[tuple[str, CompileOptions], CompiledGraph] = {}


def compiled_graph(torch_ir: ModuleOp, options: CompileOptions) -> CompiledGraph:
    """The `CompiledGraph` of `torch_ir`, shared with any identical program compiled before
    in this process (same Torch IR text and options)."""
    # With its locations, so that errors point at each program's own lines.
    return _shared(unnamed_text(torch_ir, print_debuginfo=True), options, torch_ir)


def compiled_graph_of_text(structure: str, options: CompileOptions) -> CompiledGraph:
    """`compiled_graph` of the Torch IR whose `CompiledGraph.structure` is `structure` (what
    `emmy.tools.dynamo_cache` keeps of a partition), parsed only if a level is lowered."""
    return _shared(structure, options, None)


def _shared(structure: str, options: CompileOptions, torch_ir: ModuleOp | None) -> CompiledGraph:
    key = (structure, options)
    if key not in _COMPILED:
        _COMPILED[key] = CompiledGraph(torch_ir, options, structure)
    return _COMPILED[key]
