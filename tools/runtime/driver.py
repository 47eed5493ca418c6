"""Running cubins on PyTorch tensors through cuda.core: load, launch, wait.

    module = load_module(compile_cuda(source, device_target().arch))
    module.launch("vadd", grid=(n // 256,), block=(256,), args=[x, y, out, n])
    synchronize(timeout_s=10)                     # an error, not a hang, if a kernel spins

Modules load into the CUDA context PyTorch uses, so kernels run on `tensor.data_ptr()` memory
and, by default, on `torch.cuda.current_stream()`. Every CUresult is checked: a failed launch
raises `CudaLaunchError` naming the kernel and the driver's error; an error that surfaces later
(an illegal address, found at the next synchronisation) names every kernel launched since the
last `synchronize`. The loaded modules and the pending-launch table are per process and not
thread-safe; one GPU is used, torch's current device when a module loads.

cuda.core (NVIDIA's Pythonic layer over the driver) loads the cubin (`ObjectCode`), finds kernels
and their parameter sizes (`Kernel`), launches them (`launch`, `LaunchConfig`), encodes tensor
maps (`TensorMapDescriptor`), records and queries events and reads the device's properties. What
it lacks is kept here: scalars sized by the kernel's own parameter table and range-checked (it
passes every Python int as a pointer-sized value), bounded waits that name the pending kernels,
and errors that name the kernel.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from emmy.dialects.target import TARGETS, GpuTarget
from emmy.tools.runtime.compile import CudaError

DEFAULT_TIMEOUT_S = 60.0
"""How long a run waits for its kernels by default."""


class CudaLaunchError(CudaError):
    """A launch failed, or a launched kernel failed: `kernels` names them, `error` is the
    driver's error name (e.g. `CUDA_ERROR_INVALID_VALUE`), or None for a check made before the
    launch."""

    def __init__(self, message: str, kernels: Sequence[str], error: str | None = None):
        super().__init__(message)
        self.kernels = list(kernels)
        self.error = error


class CudaTimeoutError(CudaError):
    """Kernels still ran after the time allowed; see `synchronize` for what that leaves."""

    def __init__(self, message: str, kernels: Sequence[str], timeout_s: float):
        super().__init__(message)
        self.kernels = list(kernels)
        self.timeout_s = timeout_s


# --- the driver ----------------------------------------------------------------------------


def _driver():
    from cuda.bindings import driver

    return driver


def _core():
    import cuda.core

    return cuda.core


def _error_text(error: Any) -> tuple[str, str]:
    """The driver's name and description of a CUresult."""
    driver = _driver()
    try:
        name = driver.cuGetErrorName(error)[1].decode()
        text = driver.cuGetErrorString(error)[1].decode()
    except Exception:
        return str(error), "unknown error"
    return name, text


def _core_error_text(error: Exception) -> tuple[str, str]:
    """The driver's name and description of the CUresult that a cuda.core `CUDAError` reports
    ("CUDA_ERROR_X: " and cuda.core's longer explanation, which stands in where the driver
    cannot describe it)."""
    name, _, explanation = str(error).partition(": ")
    result = getattr(_driver().CUresult, name, None)
    if result is None:
        return type(error).__name__, str(error)
    found, text = _error_text(result)
    return (name, text) if found == name else (name, explanation)


def _cuda_error_type() -> type[Exception]:
    from cuda.core._utils.cuda_utils import CUDAError

    return CUDAError


def _check(result: tuple, what: str) -> tuple:
    """The values after a driver call's CUresult, or a CudaError saying what failed."""
    if result[0] != _driver().CUresult.CUDA_SUCCESS:
        name, text = _error_text(result[0])
        raise CudaError(f"{what} failed: {name}: {text}")
    return result[1:]


def _ensure_context() -> int:
    """Makes torch's CUDA context current on this thread (the primary context of torch's
    current device) unless a context is; returns torch's device index. Kernels then run on
    `tensor.data_ptr()` memory, ordered with torch's own work on the same stream."""
    if not torch.cuda.is_available():
        raise CudaError("no CUDA GPU is available (torch.cuda.is_available() is False)")
    torch.cuda.init()
    device = torch.cuda.current_device()
    core_device = _core().Device(device)  # initialises the driver
    (current,) = _check(_driver().cuCtxGetCurrent(), "cuCtxGetCurrent")
    if int(current) == 0:
        core_device.set_current()  # retains and sets the primary context, torch's
    return device


def _stream_handle(stream: Any) -> int:
    if stream is None:
        # What torch.cuda.current_stream().cuda_stream says, without making a Stream object
        # (Inductor's generated code reads it the same way).
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return raw(torch.cuda.current_device())
        return torch.cuda.current_stream().cuda_stream
    if isinstance(stream, torch.cuda.Stream):
        return stream.cuda_stream
    return int(stream)  # a handle, or a cuda.bindings CUstream (int() is its handle)


STREAMS_KEPT = 64
"""How many cuda.core `Stream`s wrapping foreign stream handles `_core_stream` keeps."""

_core_streams: dict[int, Any] = {}


def _core_stream(handle: int) -> Any:
    """The cuda.core `Stream` borrowing a stream handle (torch's, or a driver handle); made
    once per handle, since launching takes one each time. It neither owns nor synchronises
    the stream."""
    stream = _core_streams.get(handle)
    if stream is None:
        if len(_core_streams) >= STREAMS_KEPT:
            _core_streams.pop(next(iter(_core_streams)))
        stream = _core_streams[handle] = _core().Stream.from_handle(handle)
    return stream


PENDING_NAMES_KEPT = 64
"""How many of the kernels launched on a stream since the last `synchronize` are named in
errors (a benchmark may launch thousands between synchronisations)."""

_pending: dict[int, list[str]] = {}
"""Stream handle -> the kernels launched on it since the last `synchronize` (the last
PENDING_NAMES_KEPT of them)."""
_pending_dropped: dict[int, int] = {}
"""Stream handle -> how many earlier launches were not kept."""


def _record_launch(handle: int, kernel: str) -> None:
    names = _pending.setdefault(handle, [])
    names.append(kernel)
    if len(names) > PENDING_NAMES_KEPT:
        del names[0]
        _pending_dropped[handle] = _pending_dropped.get(handle, 0) + 1


def pending_kernels() -> list[str]:
    """The kernels launched since the last successful `synchronize`, in launch order per stream
    (the last PENDING_NAMES_KEPT per stream)."""
    return [name for names in _pending.values() for name in names]


def _pending_text() -> str:
    dropped = sum(_pending_dropped.values())
    names = ", ".join(pending_kernels()) or "none"
    return f"{dropped} earlier launches and {names}" if dropped else names


def synchronize(timeout_s: float | None = DEFAULT_TIMEOUT_S, stream: Any = None) -> None:
    """Waits for the kernels launched since the last call (and everything before them on their
    streams, or on `stream` / torch's current stream when none are pending) to finish.

    Polls an event recorded after them; after `timeout_s` seconds raises `CudaTimeoutError`
    naming the kernels (they stay pending). A kernel that failed (e.g. an illegal address)
    raises `CudaLaunchError` naming them. With `timeout_s=None` it waits without a bound.

    The GPU cannot stop a running kernel on request: after a timeout the kernel goes on
    running, and anything that waits for its stream (`torch.cuda.synchronize()`, `.cpu()`,
    another `synchronize`) waits for it too. Unless something makes the kernel end (the tests
    clear the flag a spinning kernel reads), the process should report the error and exit
    (`os._exit`): tearing down the process's context is what stops the kernel."""
    _ensure_context()
    core = _core()
    cuda_error = _cuda_error_type()
    streams = list(_pending) or [_stream_handle(stream)]
    names = pending_kernels()
    described = _pending_text()
    untimed = core.EventOptions(timing_enabled=False)
    events = [_core_stream(handle).record(options=untimed) for handle in streams]
    try:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        pause = 20e-6
        waiting = events
        while waiting:
            try:
                waiting = [event for event in waiting if not event.is_done]
            except cuda_error as error:
                name, text = _core_error_text(error)
                raise CudaLaunchError(
                    f"a kernel failed with {name} ({text}); launched since the last "
                    f"synchronize: {described}. The CUDA context is "
                    "unusable after such an error: the process should exit",
                    names,
                    name,
                ) from None
            if not waiting:
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise CudaTimeoutError(
                    f"kernels still running after {timeout_s:g} s: {described}. "
                    "They keep running, and anything that waits for their stream waits too: "
                    "unless they can be made to finish, exit the process",
                    names,
                    timeout_s,
                )
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)
        for handle in streams:
            _pending.pop(handle, None)
            _pending_dropped.pop(handle, None)
    finally:
        for event in events:
            event.close()  # released once the event completes, if it has not yet


def _dims(value: int | Sequence[int], what: str, kernel: str) -> tuple[int, int, int]:
    values = (value,) if isinstance(value, int) else tuple(int(v) for v in value)
    if not 1 <= len(values) <= 3 or any(v < 1 for v in values):
        raise CudaLaunchError(
            f"launching kernel '{kernel}': {what} must be 1 to 3 positive sizes, got {value}",
            [kernel],
        )
    return (*values, *(1,) * (3 - len(values)))  # type: ignore[return-value]


_INT_TYPES = {1: ctypes.c_int8, 2: ctypes.c_int16, 4: ctypes.c_int32, 8: ctypes.c_int64}
_UINT_TYPES = {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32, 8: ctypes.c_uint64}


def _scalar_parameter(value: Any, size: int | None, index: int, kernel: str) -> ctypes._SimpleCData:
    def fail(message: str) -> CudaLaunchError:
        return CudaLaunchError(f"launching kernel '{kernel}': argument {index} {message}", [kernel])

    if isinstance(value, ctypes._SimpleCData):
        if size is not None and ctypes.sizeof(value) != size:
            raise fail(
                f"is a {type(value).__name__} of {ctypes.sizeof(value)} bytes, "
                f"but the parameter has {size}"
            )
        if ctypes.sizeof(value) not in _UINT_TYPES:
            raise fail(f"is a {type(value).__name__} of {ctypes.sizeof(value)} bytes")
        # cuda.core's launch takes the fixed-width ctypes types alone (not c_longlong, c_char,
        # ...): the same bytes, as the unsigned type of their size.
        return _UINT_TYPES[ctypes.sizeof(value)].from_buffer_copy(value)
    if hasattr(value, "dtype") and hasattr(value, "item") and not isinstance(value, torch.Tensor):
        value = value.item()  # a numpy scalar
    if isinstance(value, bool | int):
        width = size or 8
        if width not in _INT_TYPES:
            raise fail(f"is an int, but the parameter has {width} bytes")
        bits = 8 * width
        if -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            return _INT_TYPES[width](int(value))
        if 0 <= value < (1 << bits):
            return _UINT_TYPES[width](int(value))
        raise fail(f"= {value} does not fit the parameter's {width} bytes")
    if isinstance(value, float):
        width = size or 4
        if width == 4:
            return ctypes.c_float(value)
        if width == 8:
            return ctypes.c_double(value)
        raise fail(
            f"is a float, but the parameter has {width} bytes: pass a ctypes value "
            "holding the exact bits (e.g. ctypes.c_uint16 for a half)"
        )
    raise fail(
        f"has unsupported type {type(value).__name__}: pass a tensor, int, float or ctypes scalar"
    )


TENSOR_MAP_BYTES = 128
"""The size of a `CUtensorMap` (64-byte aligned), the kernel parameter a tensor map is."""

_TENSOR_MAP_TYPES = {
    torch.bfloat16: "BFLOAT16",
    torch.float16: "FLOAT16",
    torch.float32: "FLOAT32",
}


@dataclass(frozen=True)
class _DeviceArray:
    """The `__cuda_array_interface__` of a dense array at an address: what cuda.core's
    `StridedMemoryView` reads a tensor map's tensor from, without holding the tensor (a tensor
    map is found again by address, like the allocation it describes) and without exchanging
    streams (encoding a map only reads the address and shape)."""

    address: int
    shape: tuple[int, ...]
    itemsize: int

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        # The element type is given to the encoding separately: bfloat16 has no typestr.
        return {
            "shape": self.shape,
            "typestr": f"<u{self.itemsize}",
            "data": (self.address, False),
            "strides": None,
            "version": 3,
        }


@dataclass(frozen=True)
class TensorMap:
    """A `CUtensorMap` for TMA copies of boxes of `box` elements (row-major order, the last
    dimension contiguous) out of the dense tensor of `shape` and `dtype` at `address`, with a
    `swizzle` of 0, 32, 64 or 128 bytes; it passes by value into a kernel's
    `const __grid_constant__` tensor-map parameter. Elements out of the tensor's bounds read
    as zeros. Make one with `tensor_map`."""

    address: int
    shape: tuple[int, ...]
    dtype: torch.dtype
    box: tuple[int, ...]
    swizzle: int

    @functools.cached_property
    def encoded(self) -> Any:
        """cuda.core's `TensorMapDescriptor` (`cuTensorMapEncodeTiled`), encoded once."""
        from cuda.core._tensor_map import (
            TensorMapDataType,
            TensorMapL2Promotion,
            TensorMapSwizzle,
        )
        from cuda.core.utils import StridedMemoryView

        size = torch.empty((), dtype=self.dtype).element_size()
        array = _DeviceArray(self.address, self.shape, size)
        swizzle = {
            0: TensorMapSwizzle.NONE,
            32: TensorMapSwizzle.SWIZZLE_32B,
            64: TensorMapSwizzle.SWIZZLE_64B,
            128: TensorMapSwizzle.SWIZZLE_128B,
        }[self.swizzle]
        try:
            view = StridedMemoryView.from_cuda_array_interface(array, stream_ptr=-1)
            return view.as_tensor_map(
                self.box,
                data_type=getattr(TensorMapDataType, _TENSOR_MAP_TYPES[self.dtype]),
                swizzle=swizzle,
                l2_promotion=TensorMapL2Promotion.L2_256B,
            )
        except Exception as error:
            raise CudaError(
                f"encoding a tensor map (tensor {self.shape} {self.dtype}, box {self.box}, "
                f"swizzle {self.swizzle}) failed: {error}"
            ) from error


TENSOR_MAPS_KEPT = 256
"""How many encoded tensor maps `tensor_map` keeps for reuse."""

_tensor_maps: dict[TensorMap, TensorMap] = {}


def tensor_map(tensor: torch.Tensor, box: Sequence[int], swizzle: int) -> TensorMap:
    """The `TensorMap` of a contiguous CUDA tensor, encoded once for its address, shape, type,
    box and swizzle (all the map depends on), so that running a program again reuses it."""
    if tensor.dtype not in _TENSOR_MAP_TYPES:
        raise CudaError(f"no tensor map for {tensor.dtype} tensors")
    if not (tensor.is_cuda and tensor.is_contiguous()):
        raise CudaError("a tensor map describes a contiguous CUDA tensor")
    key = TensorMap(tensor.data_ptr(), tuple(tensor.shape), tensor.dtype, tuple(box), swizzle)
    if key not in _tensor_maps:
        if len(_tensor_maps) >= TENSOR_MAPS_KEPT:
            _tensor_maps.pop(next(iter(_tensor_maps)))
        _tensor_maps[key] = key
    return _tensor_maps[key]


@dataclass
class _Kernel:
    name: str
    kernel: Any
    """cuda.core's `Kernel`."""
    parameter_sizes: list[int] | None
    smem_limit: int
    """The dynamic shared memory the kernel may use now: above it, launches raise it first."""


@functools.lru_cache(maxsize=1024)
def _launch_config(grid: tuple[int, ...], block: tuple[int, ...], smem: int) -> Any:
    return _core().LaunchConfig(grid=grid, block=block, shmem_size=smem)


class CudaModule:
    """A cubin loaded into torch's CUDA context (cuda.core's `ObjectCode.from_cubin`)."""

    def __init__(self, cubin: bytes):
        self.device = _ensure_context()
        self.target = device_target(self.device)
        try:
            self.code = _core().ObjectCode.from_cubin(cubin)
        except _cuda_error_type() as error:
            raise CudaError(f"loading the cubin failed: {error}") from None
        self._kernels: dict[str, _Kernel] = {}
        self._active_clusters: dict[tuple, int] = {}

    def kernel_names(self) -> list[str] | None:
        """The module's kernels (None where the driver cannot list them)."""
        driver = _driver()
        try:
            library = self.code.handle
            (count,) = _check(driver.cuLibraryGetKernelCount(library), "count")
            (kernels,) = _check(driver.cuLibraryEnumerateKernels(count, library), "list")
            return sorted(_check(driver.cuKernelGetName(k), "name")[0].decode() for k in kernels)
        except Exception:
            return None

    def kernel(self, name: str) -> Any:
        """cuda.core's `Kernel` of an `extern "C"` kernel."""
        return self._kernel(name).kernel

    def _kernel(self, name: str) -> _Kernel:
        if name in self._kernels:
            return self._kernels[name]
        try:
            kernel = self.code.get_kernel(name)
            # Without opting in, a block's static and dynamic shared memory share the default.
            static_bytes = kernel.attributes[self.device].shared_size_bytes
        except _cuda_error_type() as error:
            error_name, text = _core_error_text(error)
            if error_name != "CUDA_ERROR_NOT_FOUND":  # cuda.core loads the cubin on first use
                raise CudaLaunchError(
                    f"loading the module for kernel '{name}' failed: {error_name}: {text}",
                    [name],
                    error_name,
                ) from None
            known = self.kernel_names()
            listing = (
                f"; the module has {', '.join(known) or 'no kernels'}" if known is not None else ""
            )
            raise CudaLaunchError(
                f"no kernel '{name}' in the module ({error_name}: {text}){listing}. Kernels are "
                'found by their unmangled names: declare them extern "C"',
                [name],
                error_name,
            ) from None
        found = _Kernel(
            name,
            kernel,
            _parameter_sizes(kernel),
            self.target.static_shared_bytes_per_block - static_bytes,
        )
        self._kernels[name] = found
        return found

    def launch(
        self,
        kernel_name: str,
        grid: int | Sequence[int],
        block: int | Sequence[int],
        args: Sequence[Any],
        smem: int = 0,
        stream: Any = None,
    ) -> None:
        """Queues the kernel on `stream` (torch's current stream by default): `grid` and `block`
        are 1 to 3 sizes, `smem` the bytes of dynamic shared memory (above the static limit,
        the kernel's `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` is raised first), `args`
        its arguments. Returns without waiting; `synchronize` waits.

        A tensor passes its data pointer (it must be a contiguous CUDA tensor), a `TensorMap`
        its encoded `CUtensorMap` by value; an int or float
        passes a scalar sized by the kernel's own parameter table (`cuKernelGetParamInfo`): an
        int into a 1-, 2-, 4- or 8-byte parameter (range-checked), a float into a 4-byte
        `float` or 8-byte `double`; a ctypes scalar passes its bytes as they are. (Drivers
        without `cuKernelGetParamInfo` get ints as 8 bytes and floats as 4 — right for
        `long long`/`int` and `float` parameters on little-endian machines.)"""
        kernel = self._kernel(kernel_name)
        grid3, block3 = _dims(grid, "grid", kernel_name), _dims(block, "block", kernel_name)
        sizes = kernel.parameter_sizes
        if sizes is not None and len(sizes) != len(args):
            raise CudaLaunchError(
                f"launching kernel '{kernel_name}': it takes {len(sizes)} parameters, "
                f"got {len(args)} arguments",
                [kernel_name],
            )
        values = []
        for index, value in enumerate(args):
            size = sizes[index] if sizes is not None else None
            if isinstance(value, TensorMap):
                if size not in (TENSOR_MAP_BYTES, None):
                    raise CudaLaunchError(
                        f"launching kernel '{kernel_name}': argument {index} is a tensor map, "
                        f"but the parameter has {size} bytes",
                        [kernel_name],
                    )
                values.append(value.encoded)
            elif isinstance(value, torch.Tensor):
                values.append(self._pointer(value, size, index, kernel_name))
            else:
                values.append(_scalar_parameter(value, size, index, kernel_name))
        self._allow_smem(kernel, smem)
        handle = _stream_handle(stream)
        config = _launch_config(grid3, block3, smem)
        cuda_error = _cuda_error_type()
        launch = _core().launch
        try:
            try:
                launch(_core_stream(handle), config, kernel.kernel, *values)
            except cuda_error as error:
                if not str(error).startswith("CUDA_ERROR_INVALID_CONTEXT"):
                    raise
                _ensure_context()  # a thread on which torch has not made its context current
                launch(_core_stream(handle), config, kernel.kernel, *values)
        except cuda_error as error:
            name, text = _core_error_text(error)
            raise CudaLaunchError(
                f"launching kernel '{kernel_name}' (grid {grid3}, block {block3}, smem {smem}) "
                f"failed: {name}: {text}",
                [kernel_name],
                name,
            ) from None
        _record_launch(handle, kernel_name)

    def _pointer(
        self, tensor: torch.Tensor, size: int | None, index: int, kernel: str
    ) -> ctypes.c_uint64:
        if (
            tensor.is_cuda
            and tensor.get_device() == self.device
            and tensor.is_contiguous()
            and size in (8, None)
        ):
            return ctypes.c_uint64(tensor.data_ptr())
        if not tensor.is_cuda:
            problem = f"is a tensor on {tensor.device}, not on the GPU"
        elif tensor.get_device() != self.device:
            problem = f"is on {tensor.device}, but the module is loaded on cuda:{self.device}"
        elif not tensor.is_contiguous():
            problem = f"is a non-contiguous tensor (strides {tensor.stride()}); pass .contiguous()"
        else:
            problem = f"is a tensor (a pointer), but the parameter has {size} bytes"
        raise CudaLaunchError(f"launching kernel '{kernel}': argument {index} {problem}", [kernel])

    def max_active_clusters(
        self, kernel_name: str, cluster: int, block: int | Sequence[int], smem: int
    ) -> int:
        """How many clusters of `cluster` blocks of the kernel (of `block` threads and `smem`
        bytes of dynamic shared memory) the GPU runs at once (`cuOccupancyMaxActiveClusters`,
        at least 1), asked once per shape."""
        key = (kernel_name, cluster, _dims(block, "block", kernel_name), smem)
        if key not in self._active_clusters:
            kernel = self._kernel(kernel_name)
            self._allow_smem(kernel, smem)
            core = _core()
            config = core.LaunchConfig(
                grid=(1, 1, 1), cluster=(cluster, 1, 1), block=key[2], shmem_size=smem
            )
            stream = core.Device(self.device).default_stream
            try:
                active = kernel.kernel.occupancy.max_active_clusters(config, stream=stream)
            except _cuda_error_type() as error:
                error_name, text = _core_error_text(error)
                raise CudaLaunchError(
                    f"launching kernel '{kernel_name}': cannot count the clusters of "
                    f"{cluster} blocks that run at once: {error_name}: {text}",
                    [kernel_name],
                    error_name,
                ) from None
            self._active_clusters[key] = max(1, active)
        return self._active_clusters[key]

    def _allow_smem(self, kernel: _Kernel, smem: int) -> None:
        """Raises the kernel's dynamic shared memory limit to `smem` where it is below."""
        if smem <= kernel.smem_limit:
            return
        # cuda.core's kernel attributes are read-only.
        driver = _driver()
        attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        (error,) = driver.cuKernelSetAttribute(
            attribute, smem, kernel.kernel.handle, driver.CUdevice(self.device)
        )
        if error != driver.CUresult.CUDA_SUCCESS:
            name, text = _error_text(error)
            raise CudaLaunchError(
                f"launching kernel '{kernel.name}': cannot allow {smem} bytes of dynamic shared "
                f"memory: {name}: {text}",
                [kernel.name],
                name,
            )
        kernel.smem_limit = smem

    def synchronize(self, timeout_s: float | None = DEFAULT_TIMEOUT_S) -> None:
        """`synchronize(timeout_s)`: waits for every pending launch, this module's and others'."""
        synchronize(timeout_s)

    def close(self) -> None:
        """Lets the module go: cuda.core unloads it once nothing holds it or its kernels (they
        must have finished)."""
        self._kernels.clear()
        self.code = None


def _parameter_sizes(kernel: Any) -> list[int] | None:
    """The byte size of each kernel parameter, from cuda.core's `Kernel.arguments_info`
    (`cuKernelGetParamInfo`; None where the driver has no such call)."""
    try:
        return [int(info.size) for info in kernel.arguments_info]
    except Exception:
        return None


_loaded: dict[tuple[str, int], CudaModule] = {}


def load_module(cubin: bytes) -> CudaModule:
    """A `CudaModule` for the cubin, loaded once per process and device."""
    key = (hashlib.sha256(cubin).hexdigest(), _ensure_context())
    if key not in _loaded:
        _loaded[key] = CudaModule(cubin)
    return _loaded[key]


# --- the device's target -------------------------------------------------------------------


def target_from_attributes(attribute: Callable[[str], int], name: str) -> GpuTarget:
    """The `GpuTarget` of a device, from its attributes: `attribute("MULTIPROCESSOR_COUNT")`
    is the device's `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`. The compute capability picks
    the known target (its arch and features, 9.0 -> sm_90a); the limits are the device's own.
    A CudaError when emmy has no target for the compute capability."""
    capability = (
        attribute("COMPUTE_CAPABILITY_MAJOR"),
        attribute("COMPUTE_CAPABILITY_MINOR"),
    )
    known = [target for target in TARGETS.values() if target.compute_capability == capability]
    if not known:
        listing = ", ".join(f"{t.arch} ({t.name})" for t in TARGETS.values())
        raise CudaError(
            f"the GPU {name} has compute capability {capability[0]}.{capability[1]}, which emmy "
            f"has no target for; it compiles for {listing}"
        )
    return dataclasses.replace(
        known[0],
        name=name,
        sm_count=attribute("MULTIPROCESSOR_COUNT"),
        warp_size=attribute("WARP_SIZE"),
        max_threads_per_block=attribute("MAX_THREADS_PER_BLOCK"),
        max_block_shape=tuple(attribute(f"MAX_BLOCK_DIM_{axis}") for axis in "XYZ"),
        max_grid_shape=tuple(attribute(f"MAX_GRID_DIM_{axis}") for axis in "XYZ"),
        static_shared_bytes_per_block=attribute("MAX_SHARED_MEMORY_PER_BLOCK"),
        shared_bytes_per_block=attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        shared_bytes_per_sm=attribute("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
        registers_per_sm=attribute("MAX_REGISTERS_PER_MULTIPROCESSOR"),
        l2_bytes=attribute("L2_CACHE_SIZE"),
    )


def device_target(device: int | None = None) -> GpuTarget:
    """The `GpuTarget` of a GPU (torch's current device by default), read through cuda.core's
    `Device.properties` once per device."""
    return _device_target(_ensure_context() if device is None else device)


@functools.cache
def _device_target(device: int) -> GpuTarget:
    found = _core().Device(device)
    properties = found.properties
    return target_from_attributes(lambda name: int(getattr(properties, name.lower())), found.name)
