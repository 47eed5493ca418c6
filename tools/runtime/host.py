"""Running a Kernel-IR host function on the GPU, op by op or replayed as a CUDA graph.

    func.func @forward(%x: memref<32x2048xf32>) -> memref<32x2048xf32> {
      %y = memref.alloc() : memref<32x2048xf32>                  // torch.empty on the GPU
      kernel.launch @k(%x, %y) grid [32, 1, 1] block [256, 1, 1] smem 0 : ...
      func.return %y : memref<32x2048xf32>
    }

    outputs = HostProgram(module)([x])            # GPU tensors; or run_host_function(module, [x])

A program of a dynamic size (`emmy.dialects.sizes`) reads it off its inputs: `memref.dim` is
the input tensor's size, `memref.alloc(%s)` allocates with it and `kernel.launch` passes it
to the kernels as a scalar; the inputs are checked against the declared range first.

The kernels' CUDA is printed by the cuda target (`emmy.tools.cuda.target`) unless it is given,
and compiled for the GPU the program runs on (`device_target()`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import SymbolTable

from emmy.dialects import dtypes, kernel
from emmy.dialects.kernel import sized_grid
from emmy.dialects.sizes import DynamicSize
from emmy.dialects.target import TARGET_ATTRIBUTE, TargetAttr
from emmy.tools.cuda.target import print_cuda
from emmy.tools.runtime.compile import compile_cuda
from emmy.tools.runtime.driver import (
    DEFAULT_TIMEOUT_S,
    CudaModule,
    device_target,
    load_module,
    synchronize,
    tensor_map,
)

HOST_OPS = (
    memref.AllocOp,
    memref.DimOp,
    memref.GetGlobalOp,
    memref.DeallocOp,
    arith.ConstantOp,
    kernel.LaunchOp,
    func.ReturnOp,
)
"""The ops a host function may hold."""


class HostFunctionError(ValueError):
    """A host function the GPU runtime cannot run, or inputs that do not match its signature."""


def torch_dtype(element_type: Attribute) -> torch.dtype:
    """The torch dtype of an element type (`dtypes.ELEMENT_TYPES`; index is int64)."""
    dtype = dtypes.torch_dtype(element_type)
    if dtype is None:
        raise HostFunctionError(f"no torch dtype for element type {element_type}")
    return dtype


def _describe(op: Operation) -> str:
    location = getattr(op, "location", None)
    return f"'{op.name}'" + (
        f" at {location}" if location is not None and "unknown" not in str(location) else ""
    )


@dataclass
class _Launch:
    kernel: str
    grid: tuple[int, ...]
    """The grid, or for a launch sized by the dynamic size the most blocks it runs: it runs
    `kernel.sized_grid` of the values it passes."""
    block: tuple[int, ...]
    smem: int
    operands: list[int]
    """The numbers of the values it passes (see `HostProgram`)."""
    tensor_maps: dict[int, tuple[tuple[int, ...], int]]
    """The operands the kernel takes as tensor maps: position -> (box, swizzle)."""
    sized: tuple[int, int, int] | None
    resident_cluster: int
    """For a persistent launch of a kernel of clusters, its blocks a cluster: the launch
    runs no more clusters than can run at once (`kernel.LaunchOp`); else 0."""


@dataclass
class _Signature:
    name: str
    shape: tuple[int, ...] | None  # None: a scalar argument
    dtype: torch.dtype
    type_text: str


def shaped_signature(value_type: Attribute, name: str) -> _Signature:
    """The shape and dtype of a memref, tensor or scalar type, for checking and allocating
    (a `?` dim is `DYNAMIC_INDEX`, the program's dynamic size)."""
    if isinstance(value_type, MemRefType | TensorType):
        shape = tuple(value_type.get_shape())
        return _Signature(name, shape, torch_dtype(value_type.get_element_type()), str(value_type))
    return _Signature(name, None, torch_dtype(value_type), str(value_type))


class HostProgram:
    """A Kernel-IR host function ready to run on the GPU: its ops are read and checked now (no
    GPU needed); its CUDA is compiled for `arch` (by default the GPU's, `device_target()`) and
    loaded on the first call, after the inputs are checked. Call it with the inputs:
    `HostProgram(module)(inputs)`.

    `memref.alloc` is `torch.empty` of the memref's shape and dtype on the GPU, `memref.get_global`
    of a constant `memref.global` a GPU tensor of its dense value (made once per program),
    `arith.constant` a Python scalar, `kernel.launch` a launch of the kernel from the module's
    CUDA, `memref.dealloc` nothing, and `func.return` gives the results.

    What it reads of the module is plain data, the values numbered in order (the arguments
    first), which `plan_text` gives as JSON and `from_plan_text` takes back without the module:
    how a later process runs a cached program without parsing its Kernel IR."""

    def __init__(
        self,
        module: ModuleOp,
        cuda_source: str | None = None,
        *,
        function: str = "forward",
        arch: str | None = None,
    ):
        self._start(module, function, arch, cuda_source)
        self._global_ops: dict[str, memref.GlobalOp] = {
            op.sym_name.data: op for op in module.walk() if isinstance(op, memref.GlobalOp)
        }
        self._global_values: dict[str, torch.Tensor] = {}
        """The constants' values on the CPU, by name."""
        declared = module.attributes.get(TARGET_ATTRIBUTE)
        self.declared_target: tuple[str, str] | None = (
            (declared.target.arch, declared.target.name)
            if isinstance(declared, TargetAttr)
            else None
        )
        """The (arch, name) of the GPU the kernels were checked against, if the module says."""
        host = _find_function(module, function)
        arguments = list(host.body.block.args)
        self.parameters = [
            shaped_signature(arg.type, f"argument {i} of @{function}")
            for i, arg in enumerate(arguments)
        ]
        self.dynamic_size = DynamicSize.of(module)
        for parameter in self.parameters:
            if self.dynamic_size is None and DYNAMIC_INDEX in (parameter.shape or ()):
                raise HostFunctionError(
                    f"{parameter.name} has a dynamic shape ({parameter.type_text}), but the "
                    "module declares no dynamic size (emmy.dynamic_size)"
                )
        self.launches: list[_Launch] = []
        self._steps: list[tuple] = []
        """(kind, the number of the value it defines, what running it needs), in order."""
        self._results: list[int] = []
        self._plan(host, arguments)

    def _start(
        self, module: ModuleOp | None, function: str, arch: str | None, cuda_source: str | None
    ) -> None:
        """What a program holds beside its plan, made from a module or from its plan text."""
        self.module = module
        self.function = function
        self.arch = arch
        self._cuda_source = cuda_source
        self._cuda_module: CudaModule | None = None
        self._globals: dict[str, torch.Tensor] = {}
        """The constants on the GPU, by name (made once, by `load` or the first call)."""

    def _error(self, op: Operation, message: str) -> HostFunctionError:
        return HostFunctionError(f"@{self.function}: {_describe(op)} {message}")

    def _plan(self, host: func.FuncOp, arguments: list[SSAValue]) -> None:
        numbers: dict[SSAValue, int] = {value: n for n, value in enumerate(arguments)}

        def number(value: SSAValue) -> int:
            numbers[value] = len(numbers)
            return numbers[value]

        for op in host.body.block.ops:
            if not isinstance(op, HOST_OPS):
                runs = ", ".join(op_type.name for op_type in HOST_OPS)
                raise self._error(op, f"is not a host op the GPU runtime runs (it runs {runs})")
            if any(operand not in numbers for operand in op.operands):
                raise self._error(op, "uses a value not defined before it in the function")
            if isinstance(op, memref.AllocOp):
                signature = shaped_signature(op.memref.type, f"@{self.function}'s buffer")
                if op.dynamic_sizes and self.dynamic_size is None:
                    raise self._error(
                        op, "has dynamic sizes, but the module declares no dynamic size"
                    )
                if len(op.dynamic_sizes) != (signature.shape or ()).count(DYNAMIC_INDEX):
                    raise self._error(op, "does not give one size per dynamic dim")
                sizes = [numbers[size] for size in op.dynamic_sizes]
                shape = signature.shape or ()
                self._steps.append(("alloc", number(op.memref), shape, signature.dtype, sizes))
            elif isinstance(op, memref.DimOp):
                source, index = numbers[op.source], numbers[op.index]
                self._steps.append(("dim", number(op.result), source, index))
            elif isinstance(op, memref.GetGlobalOp):
                self._steps.append(("global", number(op.memref), self._read_global(op)))
            elif isinstance(op, arith.ConstantOp):
                if isinstance(op.value, FloatAttr):
                    value = float(op.value.value.data)
                elif isinstance(op.value, IntegerAttr):
                    value = int(op.value.value.data)
                else:
                    raise self._error(op, "is not a scalar constant")
                self._steps.append(("constant", number(op.result), value))
            elif isinstance(op, kernel.LaunchOp):
                function = SymbolTable.lookup_symbol(self.module, op.kernel)
                parameters = function.argument_types if isinstance(function, kernel.FuncOp) else []
                self._steps.append(("launch", len(self.launches)))
                self.launches.append(
                    _Launch(
                        op.kernel.root_reference.data,
                        op.grid_shape,
                        op.block_shape,
                        op.smem_bytes,
                        [numbers[operand] for operand in op.operands],
                        {
                            position: (t.box_shape, t.swizzle.data)
                            for position, t in enumerate(parameters)
                            if isinstance(t, kernel.TensorMapType)
                        },
                        op.sized_values,
                        _resident_cluster(op, function),
                    )
                )
            elif isinstance(op, func.ReturnOp):
                self._results = [numbers[result] for result in op.operands]
                return
        raise HostFunctionError(f"@{self.function} has no func.return")

    def _read_global(self, op: memref.GetGlobalOp) -> str:
        name = op.name_.root_reference.data
        if name not in self._global_ops:
            raise self._error(op, f"names no memref.global in the module ({op.name_})")
        defined = self._global_ops[name]
        if not isinstance(defined.initial_value, DenseIntOrFPElementsAttr):
            raise self._error(op, f"reads @{name}, which has no dense initial value")
        if name not in self._global_values:
            signature = shaped_signature(defined.type, f"@{name}")
            self._global_values[name] = dense_tensor(
                defined.initial_value, signature.shape or (), signature.dtype
            )
        return name

    def plan_text(self) -> str:
        """What the program runs, as JSON (see the class docstring)."""
        return json.dumps(
            {
                "function": self.function,
                "declared_target": self.declared_target,
                "parameters": [
                    [p.name, p.shape, _dtype_name(p.dtype), p.type_text] for p in self.parameters
                ],
                "dynamic_size": None
                if self.dynamic_size is None
                else [self.dynamic_size.symbol, self.dynamic_size.min, self.dynamic_size.max],
                "steps": [
                    [kind, n, rest[0], _dtype_name(rest[1]), rest[2]]
                    if kind == "alloc"
                    else [kind, n, *rest]
                    for kind, n, *rest in self._steps
                ],
                "launches": [
                    [
                        launch.kernel,
                        launch.grid,
                        launch.block,
                        launch.smem,
                        launch.operands,
                        sorted(launch.tensor_maps.items()),
                        launch.sized,
                        launch.resident_cluster,
                    ]
                    for launch in self.launches
                ],
                "results": self._results,
                "globals": {
                    name: [
                        _dtype_name(value.dtype),
                        list(value.shape),
                        base64.b64encode(
                            value.reshape(-1).view(torch.uint8).numpy().tobytes()
                        ).decode(),
                    ]
                    for name, value in self._global_values.items()
                },
            }
        )

    @classmethod
    def from_plan_text(cls, text: str, cuda_source: str, *, arch: str | None = None) -> HostProgram:
        """The program `plan_text` gave, with its kernels' CUDA."""
        plan = json.loads(text)
        program = cls.__new__(cls)
        program._start(None, plan["function"], arch, cuda_source)
        program._global_values = {
            name: torch.frombuffer(bytearray(base64.b64decode(data)), dtype=torch.uint8)
            .view(_dtype(dtype))
            .reshape(shape)
            for name, (dtype, shape, data) in plan["globals"].items()
        }
        declared = plan["declared_target"]
        program.declared_target = None if declared is None else tuple(declared)
        program.parameters = [
            _Signature(name, None if shape is None else tuple(shape), _dtype(dtype), text)
            for name, shape, dtype, text in plan["parameters"]
        ]
        size = plan["dynamic_size"]
        program.dynamic_size = None if size is None else DynamicSize(*size)
        program._steps = [
            (kind, n, tuple(rest[0]), _dtype(rest[1]), rest[2])
            if kind == "alloc"
            else (kind, n, *rest)
            for kind, n, *rest in plan["steps"]
        ]
        program.launches = [
            _Launch(
                kernel_name,
                tuple(grid),
                tuple(block),
                smem,
                operands,
                {position: (tuple(box), swizzle) for position, (box, swizzle) in maps},
                None if sized is None else tuple(sized),
                resident_cluster,
            )
            for kernel_name, grid, block, smem, operands, maps, sized, resident_cluster in plan[
                "launches"
            ]
        ]
        program._results = plan["results"]
        return program

    def check_inputs(self, inputs: Sequence[Any]) -> None:
        """Raises HostFunctionError unless the inputs match the function's signature."""
        if len(inputs) != len(self.parameters):
            raise HostFunctionError(
                f"@{self.function} takes {len(self.parameters)} arguments "
                f"({', '.join(p.type_text for p in self.parameters)}), got {len(inputs)}"
            )
        if self.dynamic_size is not None:
            tensors = [(p, v) for p, v in zip(self.parameters, inputs) if p.shape is not None]
            try:
                self.dynamic_size.check_inputs(
                    [tuple(getattr(v, "shape", ())) for _, v in tensors],
                    [p.shape for p, _ in tensors],
                    [p.name for p, _ in tensors],
                )
            except ValueError as error:
                raise HostFunctionError(str(error)) from None
        for parameter, value in zip(self.parameters, inputs):
            if parameter.shape is None:
                if isinstance(value, torch.Tensor) or not isinstance(value, int | float):
                    raise HostFunctionError(
                        f"{parameter.name} is a scalar {parameter.type_text}, "
                        f"got {type(value).__name__}"
                    )
                continue
            expected = f"a {_dtype_name(parameter.dtype)} tensor of shape {list(parameter.shape)}"
            if not isinstance(value, torch.Tensor):
                raise HostFunctionError(
                    f"{parameter.name} is {parameter.type_text}: expected {expected}, "
                    f"got {type(value).__name__}"
                )
            fits = all(
                d == DYNAMIC_INDEX or n == d
                for n, d in zip(value.shape, parameter.shape, strict=False)
            ) and len(value.shape) == len(parameter.shape)
            if not fits or value.dtype != parameter.dtype:
                raise HostFunctionError(
                    f"{parameter.name} is {parameter.type_text}: expected {expected}, got a "
                    f"{_dtype_name(value.dtype)} tensor of shape {list(value.shape)}"
                )

    def cuda_source(self) -> str:
        """The CUDA of the module's kernels: given, or printed by the cuda target."""
        if self._cuda_source is None:
            assert self.module is not None, "a program made from its plan is given its CUDA"
            self._cuda_source = print_cuda(self.module)
        return self._cuda_source

    def cuda_module(self) -> CudaModule:
        """The module's kernels, compiled and loaded (once)."""
        if self._cuda_module is None:
            arch = self.arch or self._device_arch()
            module = load_module(compile_cuda(self.cuda_source(), arch))
            for launch in self.launches:
                module._kernel(launch.kernel)  # a missing kernel fails before anything runs
            self._cuda_module = module
        return self._cuda_module

    def load(self) -> None:
        """Compiles and loads the kernels and copies the constants to the GPU now, so that a
        later call only allocates and launches (what a CUDA graph capture allows)."""
        self.cuda_module()
        for name in self._global_values:
            self._global(name)

    def _device_arch(self) -> str:
        """The GPU's arch; a module whose `kernel.target` names another GPU was checked against
        that GPU's limits and features, not this one's, so it does not run here."""
        device = device_target()
        if self.declared_target is not None and self.declared_target[0] != device.arch:
            arch, name = self.declared_target
            raise HostFunctionError(
                f"the module's kernels are for {arch} ({name}, its {TARGET_ATTRIBUTE} "
                f"attribute) but this GPU is {device.arch} ({device.name}): lower the program "
                "again for this GPU"
            )
        return device.arch

    def _global(self, name: str) -> torch.Tensor:
        if name not in self._globals:
            self._globals[name] = self._global_values[name].to("cuda")
        return self._globals[name]

    def __call__(
        self,
        inputs: Sequence[Any],
        *,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        poison: bool = False,
        stream: Any = None,
    ) -> list[torch.Tensor]:
        """Runs the function on the inputs; see `run_host_function`. CPU tensors are copied to
        the GPU and non-contiguous ones made contiguous (so a kernel that writes into an
        argument writes into that copy); `poison=True` fills fresh buffers with NaN (floats)
        or -1 (integers), so that an element no kernel writes shows up."""
        self.check_inputs(inputs)
        module = self.cuda_module()
        values = [_on_device(v) if isinstance(v, torch.Tensor) else v for v in inputs]
        for kind, n, *data in self._steps:
            if kind == "alloc":
                shape, dtype, sizes = data
                given = iter(values[size] for size in sizes)
                shape = tuple(next(given) if d == DYNAMIC_INDEX else d for d in shape)
                values.append(_allocate(shape, dtype, poison))
            elif kind == "dim":
                source, index = data
                values.append(values[source].shape[values[index]])
            elif kind == "global":
                values.append(self._global(data[0]))
            elif kind == "constant":
                values.append(data[0])
            else:
                launch = self.launches[n]
                arguments = [values[operand] for operand in launch.operands]
                grid = sized_grid(launch.grid, launch.sized, arguments)
                if launch.resident_cluster:
                    clusters = module.max_active_clusters(
                        launch.kernel, launch.resident_cluster, launch.block, launch.smem
                    )
                    grid = (min(grid[0], clusters * launch.resident_cluster), *grid[1:])
                for position, (box, swizzle) in launch.tensor_maps.items():
                    arguments[position] = tensor_map(arguments[position], box, swizzle)
                module.launch(launch.kernel, grid, launch.block, arguments, launch.smem, stream)
        if timeout_s is not None:
            synchronize(timeout_s)
        return [values[result] for result in self._results]

    def graphed(
        self,
        inputs: Sequence[Any],
        then: Callable[[list[torch.Tensor]], None] | None = None,
    ) -> tuple[Callable[[], list[torch.Tensor]], list[torch.Tensor]]:
        """Runs the function once on `inputs` (compiling and checking it) and does `then` with
        its outputs (such as copies), then captures its launches and `then` into a CUDA graph:
        returns a callable that replays them on those same inputs and returns the same output
        tensors, refilled, and the outputs of the run. The run is this call's: a function that
        computes a result in an argument's buffer (`place-results-in-arguments`) must not run
        twice for one call. Like torch.compile's CUDA graphs, a replay costs one launch of the
        CPU's time however many kernels the function has."""
        first = self(inputs)
        if then is not None:
            then(first)
        on_device = [_on_device(v) if isinstance(v, torch.Tensor) else v for v in inputs]
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.graph(graph, stream=stream):
            outputs = self(on_device, timeout_s=None)
            if then is not None:
                then(outputs)
        torch.cuda.current_stream().wait_stream(stream)

        def replay() -> list[torch.Tensor]:
            graph.replay()
            return outputs

        return replay, first


GRAPHS_KEPT = 4
"""How many captures a `GraphedHostProgram` keeps (one per set of static input addresses)."""


@dataclass
class _Capture:
    replay: Callable[[], list[torch.Tensor]]
    staged: dict[int, torch.Tensor]
    """The graph's own buffers of the inputs at non-static positions, by position."""
    written: dict[int, torch.Tensor]
    """The static inputs the graph copies outputs into, by output."""


class GraphedHostProgram:
    """Calls a HostProgram through CUDA graphs (`HostProgram.graphed`), one launch of the
    CPU's time however many kernels the program has.

    A call is keyed by its inputs' shapes and scalars and the addresses of those at `static`
    positions (all, by default). The first call of a key runs the program as it is (checking
    it), captures it and returns that run's outputs, later ones replay; with `capture_at_second`
    the first runs the program as it is and the second captures, so that calls of ever new
    shapes (a dynamic size's) or one-off calls run as they are. The last GRAPHS_KEPT
    captures are kept, so that call sites with their own weights each replay theirs.

    The inputs at other positions (a decode step's token and position, new tensors every call)
    are copied into buffers the graph owns before each replay. The outputs for which
    `copy_outputs` is true (all, or each output's flag) are returned as copies, since the next
    replay refills the graph's own: `torch.compile(backend="emmy")` copies those that code may
    keep, not those only copied into a mutated input; the bench harness, which
    times replays, copies none. An output whose `write_back` entry names a static input's
    position is copied into that input by the graph itself, and the input is returned in its
    place: the caller's copy of a mutated input's new value (a KV cache) into the input then
    copies nothing, and costs no launch of the CPU's time. Under another capture (a caller's
    `torch.cuda.graph`), the program runs as it is, its launches captured into the caller's
    graph.

    With `guarded`, the caller promises what Dynamo's guards check before each call: the same
    positions hold tensors, of the same dtypes and devices, the static ones of the same
    shapes. A call is then keyed by the static tensors' addresses and the other inputs'
    shapes and values alone: a fifth of the CPU's time of the whole key (8 µs instead of 40 a
    call for a Llama decode step's 97 inputs, on a 2-core CI machine)."""

    def __init__(
        self,
        program: HostProgram,
        static: Sequence[bool] | None = None,
        copy_outputs: bool | Sequence[bool] = False,
        capture_at_second: bool = False,
        write_back: Sequence[int | None] | None = None,
        guarded: bool = False,
    ):
        self.program = program
        self.static = static
        self.copy_outputs = copy_outputs
        self.capture_at_second = capture_at_second
        self.write_back = write_back
        self.guarded = guarded
        self._captures: dict[tuple, _Capture] = {}
        self._seen: dict[tuple, None] = {}
        self._guarded_positions: tuple[list[int], list[int]] | None = None
        """With `guarded`: the positions of the static tensors, and of the other inputs."""

    def _is_static(self, position: int) -> bool:
        return self.static is None or self.static[position]

    def _key(self, inputs: Sequence[Any]) -> tuple:
        if self.guarded:
            if self._guarded_positions is None:
                static = {
                    i
                    for i, v in enumerate(inputs)
                    if isinstance(v, torch.Tensor) and self._is_static(i)
                }
                others = [i for i in range(len(inputs)) if i not in static]
                self._guarded_positions = (sorted(static), others)
            tensors, others = self._guarded_positions
            return (
                tuple([inputs[i].data_ptr() for i in tensors]),
                tuple([_shape_or_value(inputs[i]) for i in others]),
            )
        return tuple(
            (v.data_ptr() if self._is_static(i) else None, v.shape, v.dtype, v.device)
            if isinstance(v, torch.Tensor)
            else v
            for i, v in enumerate(inputs)
        )

    def __call__(self, inputs: Sequence[Any]) -> list[torch.Tensor]:
        if torch.cuda.is_current_stream_capturing():
            return self.program(inputs, timeout_s=None)
        key = self._key(inputs)
        capture = self._captures.get(key)
        if capture is None and self.capture_at_second and key not in self._seen:
            self._seen[key] = None
            if len(self._seen) > GRAPHS_KEPT:
                self._seen.pop(next(iter(self._seen)))
            return self.program(inputs, timeout_s=None)
        if capture is None:
            staged = {
                i: _on_device(v).clone()
                for i, v in enumerate(inputs)
                if isinstance(v, torch.Tensor) and not self._is_static(i)
            }
            written = self._written(inputs)

            def write_back(outputs: list[torch.Tensor]) -> None:
                for output, target in written.items():
                    if outputs[output] is not target:
                        target.copy_(outputs[output])

            graph_inputs = [staged.get(i, v) for i, v in enumerate(inputs)]
            replay, outputs = self.program.graphed(graph_inputs, write_back)
            if len(self._captures) >= GRAPHS_KEPT:
                self._captures.pop(next(iter(self._captures)))
            capture = self._captures[key] = _Capture(replay, staged, written)
        else:
            for position, buffer in capture.staged.items():
                buffer.copy_(inputs[position])
            outputs = capture.replay()
        copied = self.copy_outputs
        if isinstance(copied, bool):
            copied = [copied] * len(outputs)
        return [
            capture.written[i] if i in capture.written else t.clone() if copy else t
            for i, (t, copy) in enumerate(zip(outputs, copied, strict=True))
        ]

    def _written(self, inputs: Sequence[Any]) -> dict[int, torch.Tensor]:
        """The static inputs the graph copies outputs into (`write_back`), by output: those
        the graph reads in place (contiguous, aligned CUDA tensors; `_on_device` copies
        others, and a copy into that would be lost)."""
        written = {}
        for output, position in enumerate(self.write_back or ()):
            if position is None or not self._is_static(position):
                continue
            target = inputs[position]
            if isinstance(target, torch.Tensor) and _on_device(target) is target:
                written[output] = target
        return written


def _resident_cluster(launch: kernel.LaunchOp, function: Any) -> int:
    """`_Launch.resident_cluster` of a launch of `function`."""
    cluster = function.cluster_blocks if isinstance(function, kernel.FuncOp) else 1
    return cluster if launch.persistent is not None and cluster > 1 else 0


def _shape_or_value(value: Any) -> Any:
    return value.shape if isinstance(value, torch.Tensor) else value


def _on_device(value: torch.Tensor) -> torch.Tensor:
    """The tensor as kernels read it: contiguous, on the GPU, and 16-byte aligned (a view can
    start anywhere, and vector accesses need the alignment)."""
    value = value.to("cuda").contiguous()
    return value if value.data_ptr() % 16 == 0 else value.clone()


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _dtype(name: str) -> torch.dtype:
    dtype = getattr(torch, name)
    assert isinstance(dtype, torch.dtype), name
    return dtype


def _allocate(shape: Sequence[int], dtype: torch.dtype, poison: bool) -> torch.Tensor:
    if not poison:
        return torch.empty(tuple(shape), dtype=dtype, device="cuda")
    fill = float("nan") if dtype.is_floating_point else (True if dtype == torch.bool else -1)
    return torch.full(tuple(shape), fill, dtype=dtype, device="cuda")


def dense_tensor(
    value: DenseIntOrFPElementsAttr, shape: Sequence[int], dtype: torch.dtype
) -> torch.Tensor:
    """A CPU tensor of a dense attribute's values (a splat fills the shape)."""
    values = value.get_values()
    wide = torch.float64 if dtype.is_floating_point else torch.int64
    tensor = torch.tensor(list(values), dtype=wide).to(dtype)
    count = 1
    for size in shape:
        count *= size
    if tensor.numel() == 1 and count != 1:
        return tensor.reshape(()).expand(tuple(shape)).contiguous()
    return tensor.reshape(tuple(shape))


def _find_function(module: ModuleOp, name: str) -> func.FuncOp:
    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for op in functions:
        if op.sym_name.data == name:
            if op.is_declaration:
                raise HostFunctionError(f"@{name} is a declaration, without a body")
            return op
    known = ", ".join(f"@{op.sym_name.data}" for op in functions) or "none"
    raise HostFunctionError(f"no func.func @{name} in the module (functions: {known})")


def run_host_function(
    module: ModuleOp,
    inputs: Sequence[Any],
    cuda_source: str | None = None,
    *,
    function: str = "forward",
    arch: str | None = None,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    poison: bool = False,
) -> list[torch.Tensor]:
    """Runs a Kernel-IR host function on the GPU and returns its results (GPU tensors). Checks
    the inputs first; waits up to `timeout_s` for the kernels (None: does not wait). To run the
    same program many times, build a `HostProgram` once and call it."""
    program = HostProgram(module, cuda_source, function=function, arch=arch)
    return program(inputs, timeout_s=timeout_s, poison=poison)
