"""Running cubins on PyTorch tensors through the CUDA driver: load, launch, wait.

    module = load_module(compile_cuda(source, device_target().arch))
    module.launch("vadd", grid=(n // 256,), block=(256,), args=[x, y, out, n])
    synchronize(timeout_s=10)                     # an error, not a hang, if a kernel spins

Modules load into the CUDA context PyTorch uses, so kernels run on `tensor.data_ptr()` memory
and, by default, on `torch.cuda.current_stream()`. Every CUresult is checked: a failed launch
raises `CudaLaunchError` naming the kernel and the driver's error; an error that surfaces later
(an illegal address, found at the next synchronisation) names every kernel launched since the
last `synchronize`. The loaded modules and the pending-launch table are per process and not
thread-safe; one GPU is used, torch's current device when a module loads.
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


def _error_text(error: Any) -> tuple[str, str]:
    """The driver's name and description of a CUresult."""
    driver = _driver()
    try:
        name = driver.cuGetErrorName(error)[1].decode()
        text = driver.cuGetErrorString(error)[1].decode()
    except Exception:
        return str(error), "unknown error"
    return name, text


def _check(result: tuple, what: str) -> tuple:
    """The values after a driver call's CUresult, or a CudaError saying what failed."""
    if result[0] != _driver().CUresult.CUDA_SUCCESS:
        name, text = _error_text(result[0])
        raise CudaError(f"{what} failed: {name}: {text}")
    return result[1:]


def _ensure_context() -> int:
    """Makes torch's CUDA context current on this thread (the primary context of torch's
    current device); returns torch's device index. Kernels then run on `tensor.data_ptr()`
    memory, ordered with torch's own work on the same stream."""
    if not torch.cuda.is_available():
        raise CudaError("no CUDA GPU is available (torch.cuda.is_available() is False)")
    driver = _driver()
    torch.cuda.init()
    device = torch.cuda.current_device()
    _check(driver.cuInit(0), "cuInit")
    (current,) = _check(driver.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if int(current) == 0:
        (handle,) = _check(driver.cuDeviceGet(device), "cuDeviceGet")
        (context,) = _check(driver.cuDevicePrimaryCtxRetain(handle), "cuDevicePrimaryCtxRetain")
        _check(driver.cuCtxSetCurrent(context), "cuCtxSetCurrent")
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
    driver = _driver()
    _ensure_context()
    streams = list(_pending) or [_stream_handle(stream)]
    names = pending_kernels()
    described = _pending_text()
    events = []
    try:
        for handle in streams:
            (event,) = _check(
                driver.cuEventCreate(int(driver.CUevent_flags.CU_EVENT_DISABLE_TIMING)),
                "cuEventCreate",
            )
            events.append(event)
            _check(driver.cuEventRecord(event, handle), "cuEventRecord")
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        pause = 20e-6
        waiting = list(events)
        while waiting:
            still = []
            for event in waiting:
                (status,) = driver.cuEventQuery(event)
                if status == driver.CUresult.CUDA_ERROR_NOT_READY:
                    still.append(event)
                elif status != driver.CUresult.CUDA_SUCCESS:
                    name, text = _error_text(status)
                    raise CudaLaunchError(
                        f"a kernel failed with {name} ({text}); launched since the last "
                        f"synchronize: {described}. The CUDA context is "
                        "unusable after such an error: the process should exit",
                        names,
                        name,
                    )
            waiting = still
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
            driver.cuEventDestroy(event)  # released once the event completes, if it has not yet


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
        return value
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
    torch.bfloat16: "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
    torch.float16: "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
    torch.float32: "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
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
        """The driver's `CUtensorMap` (`cuTensorMapEncodeTiled`), encoded once."""
        driver = _driver()
        size = torch.empty((), dtype=self.dtype).element_size()
        # The driver takes dimensions innermost first, and the byte strides of all but the
        # innermost.
        dims = [driver.cuuint64_t(d) for d in reversed(self.shape)]
        strides, stride = [], size
        for extent in reversed(self.shape[1:]):
            stride *= extent
            strides.append(driver.cuuint64_t(stride))
        swizzle = {
            0: "CU_TENSOR_MAP_SWIZZLE_NONE",
            32: "CU_TENSOR_MAP_SWIZZLE_32B",
            64: "CU_TENSOR_MAP_SWIZZLE_64B",
            128: "CU_TENSOR_MAP_SWIZZLE_128B",
        }[self.swizzle]
        (encoded,) = _check(
            driver.cuTensorMapEncodeTiled(
                getattr(driver.CUtensorMapDataType, _TENSOR_MAP_TYPES[self.dtype]),
                len(self.shape),
                self.address,
                dims,
                strides,
                [driver.cuuint32_t(b) for b in reversed(self.box)],
                [driver.cuuint32_t(1)] * len(self.box),
                driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                getattr(driver.CUtensorMapSwizzle, swizzle),
                driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            ),
            f"cuTensorMapEncodeTiled (tensor {self.shape} {self.dtype}, box {self.box}, "
            f"swizzle {self.swizzle})",
        )
        return encoded

    def parameter_address(self) -> int:
        """Where the encoded map's bytes are, for the launch's parameter array."""
        return int(self.encoded.getPtr())


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
    function: Any
    parameter_sizes: list[int] | None
    smem_limit: int
    """The dynamic shared memory the kernel may use now: above it, launches raise it first."""


class CudaModule:
    """A cubin loaded into torch's CUDA context (`cuModuleLoadData`)."""

    def __init__(self, cubin: bytes):
        self.device = _ensure_context()
        self.target = device_target(self.device)
        (self.handle,) = _check(_driver().cuModuleLoadData(cubin), "cuModuleLoadData")
        self._kernels: dict[str, _Kernel] = {}

    def kernel_names(self) -> list[str] | None:
        """The module's kernels (None where the driver cannot list them)."""
        driver = _driver()
        try:
            (count,) = _check(driver.cuModuleGetFunctionCount(self.handle), "count")
            (functions,) = _check(driver.cuModuleEnumerateFunctions(count, self.handle), "list")
            return sorted(_check(driver.cuFuncGetName(f), "name")[0].decode() for f in functions)
        except Exception:
            return None

    def kernel(self, name: str) -> Any:
        """The `CUfunction` of an `extern "C"` kernel (`cuModuleGetFunction`)."""
        return self._kernel(name).function

    def _kernel(self, name: str) -> _Kernel:
        if name in self._kernels:
            return self._kernels[name]
        driver = _driver()
        error, function = driver.cuModuleGetFunction(self.handle, name.encode())
        if error != driver.CUresult.CUDA_SUCCESS:
            error_name, text = _error_text(error)
            known = self.kernel_names()
            listing = (
                f"; the module has {', '.join(known) or 'no kernels'}" if known is not None else ""
            )
            raise CudaLaunchError(
                f"no kernel '{name}' in the module ({error_name}: {text}){listing}. Kernels are "
                'found by their unmangled names: declare them extern "C"',
                [name],
                error_name,
            )
        # Without opting in, a block's static and dynamic shared memory share the default.
        static = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
        (static_bytes,) = _check(driver.cuFuncGetAttribute(static, function), "cuFuncGetAttribute")
        kernel = _Kernel(
            name,
            function,
            _parameter_sizes(function),
            self.target.static_shared_bytes_per_block - static_bytes,
        )
        self._kernels[name] = kernel
        return kernel

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
        passes a scalar sized by the kernel's own parameter table (`cuFuncGetParamInfo`): an
        int into a 1-, 2-, 4- or 8-byte parameter (range-checked), a float into a 4-byte
        `float` or 8-byte `double`; a ctypes scalar passes its bytes as they are. (Drivers
        without `cuFuncGetParamInfo` get ints as 8 bytes and floats as 4 — right for
        `long long`/`int` and `float` parameters on little-endian machines.)"""
        driver = _driver()
        kernel = self._kernel(kernel_name)
        grid3, block3 = _dims(grid, "grid", kernel_name), _dims(block, "block", kernel_name)
        sizes = kernel.parameter_sizes
        if sizes is not None and len(sizes) != len(args):
            raise CudaLaunchError(
                f"launching kernel '{kernel_name}': it takes {len(sizes)} parameters, "
                f"got {len(args)} arguments",
                [kernel_name],
            )
        holders, addresses = [], []
        for index, value in enumerate(args):
            size = sizes[index] if sizes is not None else None
            if isinstance(value, TensorMap):
                if size not in (TENSOR_MAP_BYTES, None):
                    raise CudaLaunchError(
                        f"launching kernel '{kernel_name}': argument {index} is a tensor map, "
                        f"but the parameter has {size} bytes",
                        [kernel_name],
                    )
                holders.append(value)
                addresses.append(value.parameter_address())
                continue
            if isinstance(value, torch.Tensor):
                holder = self._pointer(value, size, index, kernel_name)
            else:
                holder = _scalar_parameter(value, size, index, kernel_name)
            holders.append(holder)
            addresses.append(ctypes.addressof(holder))
        parameters = (ctypes.c_void_p * max(len(addresses), 1))(*addresses)
        if smem > kernel.smem_limit:
            self._raise_smem_limit(kernel, smem)
        handle = _stream_handle(stream)
        launch = (kernel.function, *grid3, *block3, smem, handle, ctypes.addressof(parameters), 0)
        (error,) = driver.cuLaunchKernel(*launch)
        if error == driver.CUresult.CUDA_ERROR_INVALID_CONTEXT:
            _ensure_context()  # a thread on which torch has not made its context current yet
            (error,) = driver.cuLaunchKernel(*launch)
        if error != driver.CUresult.CUDA_SUCCESS:
            name, text = _error_text(error)
            raise CudaLaunchError(
                f"launching kernel '{kernel_name}' (grid {grid3}, block {block3}, smem {smem}) "
                f"failed: {name}: {text}",
                [kernel_name],
                name,
            )
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

    def _raise_smem_limit(self, kernel: _Kernel, smem: int) -> None:
        driver = _driver()
        attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        (error,) = driver.cuFuncSetAttribute(kernel.function, attribute, smem)
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
        """Unloads the module (its kernels must have finished)."""
        if self.handle is not None:
            _check(_driver().cuModuleUnload(self.handle), "cuModuleUnload")
            self.handle = None


def _parameter_sizes(function: Any) -> list[int] | None:
    """The byte size of each kernel parameter, from `cuFuncGetParamInfo` (None where the
    driver has no such call)."""
    driver = _driver()
    if not hasattr(driver, "cuFuncGetParamInfo"):
        return None
    sizes = []
    while True:
        result = driver.cuFuncGetParamInfo(function, len(sizes))
        if result[0] == driver.CUresult.CUDA_ERROR_INVALID_VALUE:
            return sizes  # past the last parameter
        if result[0] != driver.CUresult.CUDA_SUCCESS:
            return None
        sizes.append(int(result[2]))


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
    """The `GpuTarget` of a GPU (torch's current device by default), read through the driver
    once per device."""
    return _device_target(_ensure_context() if device is None else device)


@functools.cache
def _device_target(device: int) -> GpuTarget:
    driver = _driver()
    _check(driver.cuInit(0), "cuInit")
    (handle,) = _check(driver.cuDeviceGet(device), "cuDeviceGet")

    def attribute(name: str) -> int:
        which = getattr(driver.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
        (value,) = _check(driver.cuDeviceGetAttribute(which, handle), f"reading {name}")
        return int(value)

    (raw_name,) = _check(driver.cuDeviceGetName(256, handle), "cuDeviceGetName")
    return target_from_attributes(attribute, raw_name.split(b"\0", 1)[0].decode())
