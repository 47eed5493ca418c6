"""Running CUDA kernels on PyTorch tensors through cuda-python: compile, load, launch, wait.

    from emmy.tools.runtime.gpu import compile_cuda, CudaModule, synchronize

    cubin = compile_cuda(source)                  # NVRTC (or nvcc), cached on disk
    module = CudaModule(cubin)                    # cuModuleLoadData in torch's context
    module.launch("vadd", grid=(n // 256,), block=(256,), args=[x, y, out, n])
    synchronize(timeout_s=10)                     # an error, not a hang, if a kernel spins

and, for a whole Kernel-IR program:

    outputs = run_host_function(kernel_ir_module, [x, w])

Compiling (`compile_cuda`, needs no GPU)
- NVRTC through `cuda.bindings.nvrtc` with `--gpu-architecture=<arch> -std=c++17 -I<CUDA include
  dir>`; when the NVRTC library cannot be loaded, `nvcc -cubin -gencode=arch=compute_XX,code=sm_XX`.
  Either way the result is a cubin (machine code for exactly that architecture; `sm_90a` is
  needed for wgmma and setmaxnreg).
- CUDA headers (`cuda_fp16.h`, `cuda_bf16.h`) are looked up, first hit wins, in: `$CUDA_HOME`,
  `$CUDA_PATH`, cuda.pathfinder's header directory for `cudart` (a CUDA toolkit or the
  `nvidia-cuda-runtime` wheel's `nvidia/cu13/include`), the toolkit of the `nvcc` on PATH (its
  `../include` or `../targets/*/include`, following wrapper scripts through `nvcc --dryrun`), and
  `/usr/local/cuda/include`. `cuda_include_dir()` says which was used.
- The cubin is cached on disk under `$EMMY_CACHE_DIR/cubin/`, or `~/.cache/emmy/cubin/` when the
  variable is unset, keyed by the sha256 of (source, arch, compiler and its version, options);
  the source is kept beside it as `<key>.cu` for reading. Writes are atomic (rename), so
  concurrent processes may share the directory.
- A failed compile raises `CudaCompileError`: its `log` is the compiler's output and `kernels` the
  `__global__` functions the errors lie in (from the log's line numbers, or ptxas's "Entry
  function" lines).

Running (`CudaModule`, needs a GPU)
- Modules load into the CUDA context PyTorch uses (the primary context of torch's current device,
  made current on this thread when it is not), so kernels run on `tensor.data_ptr()` memory and,
  by default, on `torch.cuda.current_stream()`: they are ordered with torch's own work.
- Arguments: a tensor passes its data pointer (it must be a contiguous CUDA tensor); an int or
  float passes a scalar sized by the kernel's own parameter table (`cuFuncGetParamInfo`): an int
  into a 1-, 2-, 4- or 8-byte parameter (range-checked), a float into a 4-byte `float` or 8-byte
  `double`; a ctypes scalar passes its bytes as they are. The argument count is checked against
  the kernel's parameters. (Drivers without `cuFuncGetParamInfo` get ints as 8 bytes and floats
  as 4 — right for `long long`/`int` and `float` parameters on little-endian machines.)
- Dynamic shared memory over 48 KiB raises the kernel's
  `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` first.
- Every CUresult is checked. A failed launch raises `CudaLaunchError` naming the kernel and the
  driver's error name and string; an error that surfaces later (an illegal address, found at the
  next synchronisation) names every kernel launched since the last `synchronize`.

Waiting (`synchronize`)
- Launches are asynchronous. `synchronize(timeout_s)` records an event on each stream launched on
  since the last call and polls it (`cuEventQuery`) until it completes or `timeout_s` passes,
  which raises `CudaTimeoutError` naming the kernels launched since the last synchronisation.
- The GPU cannot stop a running kernel on request: after a timeout the kernel goes on running, and
  anything that waits for its stream (`torch.cuda.synchronize()`, `.cpu()`, another
  `synchronize`) waits for it too. Unless something makes the kernel end (the tests clear the flag
  a spinning kernel reads), the process should report the error and exit (`os._exit`): tearing
  down the process's context is what stops the kernel.

Host functions (`run_host_function`, `HostProgram`)
- A Kernel-IR host `func.func @forward` runs op by op: `memref.alloc` is `torch.empty` of the
  memref's shape and dtype on the GPU (`poison=True` fills floats with NaN and integers with -1,
  so that an element no kernel writes shows up), `memref.get_global` of a constant
  `memref.global` is a GPU tensor of its dense value (made once per `HostProgram`),
  `arith.constant` a Python scalar, `kernel.launch @k(%args) grid [..] block [..] smem N` a launch
  of `k` from the module's CUDA, `memref.dealloc` nothing, and `func.return` gives the results.
  Ops are recognised by name and read through their `kernel`, `grid`, `block` and `smem`
  properties (or attributes), so registered and unregistered (generic-syntax) ops both work.
- The CUDA comes from the `cuda` target (`emmy.tools.cuda.target`, imported on first use) unless
  `cuda_source` is given.
- Inputs are checked against the function's signature (count, shape, dtype) before anything runs
  on the GPU; CPU tensors are copied to the GPU and non-contiguous ones made contiguous (so a
  kernel that writes into an argument writes into that copy).
- After the launches, `run_host_function` waits for them with `synchronize(timeout_s)`;
  `timeout_s=None` returns at once, leaving the work queued on the stream (as torch does).

The loaded module, compiled functions and pending-launch table are per process and not
thread-safe. Only one GPU is used: torch's current device when a module loads.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import torch
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnregisteredOp,
)
from xdsl.ir import Attribute, Operation, SSAValue

DEFAULT_ARCH = "sm_90a"
DEFAULT_TIMEOUT_S = 60.0
"""How long `run_host_function` waits for its kernels by default."""

STATIC_SMEM_LIMIT = 48 * 1024
"""Dynamic shared memory above this needs the kernel's limit raised before launch."""

# --- errors --------------------------------------------------------------------------------


class CudaError(RuntimeError):
    """Something in compiling, loading or running CUDA code failed."""


class CudaCompileError(CudaError):
    """The CUDA compiler rejected a source: `log` is its output, `kernels` the `__global__`
    functions its errors lie in (empty when they are outside every kernel)."""

    def __init__(self, message: str, log: str, kernels: Sequence[str], arch: str, compiler: str):
        super().__init__(message)
        self.log = log
        self.kernels = list(kernels)
        self.arch = arch
        self.compiler = compiler


class CudaLaunchError(CudaError):
    """A launch failed, or a launched kernel failed: `kernels` names them, `error` is the
    driver's error name (e.g. `CUDA_ERROR_INVALID_VALUE`), or None for a check made before the
    launch."""

    def __init__(self, message: str, kernels: Sequence[str], error: str | None = None):
        super().__init__(message)
        self.kernels = list(kernels)
        self.error = error


class CudaTimeoutError(CudaError):
    """Kernels still ran after the time allowed; see the module doc for what that leaves."""

    def __init__(self, message: str, kernels: Sequence[str], timeout_s: float):
        super().__init__(message)
        self.kernels = list(kernels)
        self.timeout_s = timeout_s


class HostFunctionError(ValueError):
    """A host function the GPU runtime cannot run, or inputs that do not match its signature."""


# --- compiling -----------------------------------------------------------------------------

_KERNEL_DEFINITION = re.compile(
    r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:void\s+)"
    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\("
)
_ERROR_LINE = re.compile(r"\((\d+)\): (?:catastrophic )?error")
_PTXAS_ENTRY = re.compile(r"[Ee]ntry function '(\w+)'")
_HEADERS = ("cuda_fp16.h", "cuda_bf16.h")


def kernel_definitions(source: str) -> list[tuple[int, str]]:
    """The `__global__` functions of a CUDA source: (line of the definition, name), in order."""
    return [
        (source.count("\n", 0, match.start()) + 1, match.group(1))
        for match in _KERNEL_DEFINITION.finditer(source)
    ]


def kernels_in_log(source: str, log: str) -> list[str]:
    """The kernels that a compiler log's errors lie in: each error line belongs to the last
    kernel defined at or above it; ptxas names its kernel ("Entry function 'k'")."""
    definitions = kernel_definitions(source)
    names: list[str] = []

    def add(name: str) -> None:
        if name not in names:
            names.append(name)

    for match in _ERROR_LINE.finditer(log):
        line = int(match.group(1))
        above = [name for start, name in definitions if start <= line]
        if above:
            add(above[-1])
    for match in _PTXAS_ENTRY.finditer(log):
        add(match.group(1))
    return names


def _has_headers(directory: str | os.PathLike[str] | None) -> bool:
    return directory is not None and all(
        os.path.isfile(os.path.join(directory, header)) for header in _HEADERS
    )


def _include_candidates() -> Iterator[tuple[str, str]]:
    """(directory, how it was found), in the order `cuda_include_dir` tries them."""
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if root := os.environ.get(variable):
            yield os.path.join(root, "include"), f"${variable}"
    try:
        from cuda import pathfinder

        found = pathfinder.find_nvidia_header_directory("cudart")
    except Exception:  # an old cuda-pathfinder, or none: the other places still count
        found = None
    if found:
        yield found, "cuda.pathfinder"
    if nvcc := shutil.which("nvcc"):
        for binary in dict.fromkeys((nvcc, os.path.realpath(nvcc))):
            root = Path(binary).parent.parent
            yield str(root / "include"), "nvcc on PATH"
            for directory in sorted(root.glob("targets/*/include")):
                yield str(directory), "nvcc on PATH"
        for directory in _nvcc_include_dirs(nvcc):
            yield directory, "nvcc --dryrun"
    yield "/usr/local/cuda/include", "/usr/local/cuda"


def _nvcc_include_dirs(nvcc: str) -> list[str]:
    """The include directories nvcc itself uses (it may be a wrapper script elsewhere)."""
    try:
        done = subprocess.run(
            [nvcc, "--dryrun", "-cubin", "-x", "cu", "/dev/null", "-o", "/dev/null"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return re.findall(
        r'-I"?([^"\s]+)"?',
        "\n".join(line for line in done.stderr.splitlines() if "INCLUDES=" in line),
    )


@functools.cache
def cuda_include_dir() -> tuple[str, str] | None:
    """The directory holding CUDA's `cuda_fp16.h` and `cuda_bf16.h` for NVRTC, and how it was
    found (see the module doc for the order); None when there is none."""
    for directory, how in _include_candidates():
        if _has_headers(directory):
            return os.path.normpath(directory), how
    return None


@functools.cache
def nvrtc_version() -> tuple[int, int] | None:
    """NVRTC's (major, minor), or None when its library cannot be loaded."""
    try:
        from cuda.bindings import nvrtc

        error, major, minor = nvrtc.nvrtcVersion()
    except Exception:
        return None
    return (major, minor) if error == nvrtc.nvrtcResult.NVRTC_SUCCESS else None


@functools.cache
def nvcc_version() -> str | None:
    """The `nvcc` on PATH's version ("V13.0.88"), or None when there is no nvcc."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    try:
        done = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"\bV(\d+\.\d+\.\d+)", done.stdout)
    if match:
        return f"V{match.group(1)}"
    lines = done.stdout.strip().splitlines()
    return lines[-1] if lines else None


def available_compiler(compiler: str = "auto") -> str:
    """ "nvrtc" or "nvcc": the one `compile_cuda(compiler=...)` would use."""
    if compiler not in ("auto", "nvrtc", "nvcc"):
        raise ValueError(f"compiler must be 'auto', 'nvrtc' or 'nvcc', got {compiler!r}")
    if compiler in ("auto", "nvrtc") and nvrtc_version() is not None:
        return "nvrtc"
    if compiler == "nvrtc":
        raise CudaError("NVRTC is not available: its library (libnvrtc) could not be loaded")
    if nvcc_version() is not None:
        return "nvcc"
    raise CudaError(
        "no CUDA compiler: the NVRTC library could not be loaded and there is no nvcc on PATH"
    )


def _compiler_options(compiler: str, arch: str, options: Sequence[str]) -> list[str]:
    if not re.fullmatch(r"sm_\d+[af]?", arch):
        raise ValueError(f"arch must look like 'sm_90a' or 'sm_90', got {arch!r}")
    if compiler == "nvrtc":
        include = cuda_include_dir()
        return [
            f"--gpu-architecture={arch}",
            "-std=c++17",
            *([f"-I{include[0]}"] if include else []),
            *options,
        ]
    compute = "compute_" + arch.removeprefix("sm_")
    return ["-cubin", f"-gencode=arch={compute},code={arch}", "-std=c++17", *options]


def cache_dir() -> Path:
    """Where cubins are cached: `$EMMY_CACHE_DIR/cubin`, else `~/.cache/emmy/cubin`."""
    root = os.environ.get("EMMY_CACHE_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "emmy") / "cubin"


def cache_key(source: str, arch: str, compiler: str, options: Sequence[str]) -> str:
    version = nvrtc_version() if compiler == "nvrtc" else nvcc_version()
    identity = {
        "source": source,
        "arch": arch,
        "compiler": f"{compiler} {version}",
        "options": list(options),
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def compile_cuda(
    source: str,
    arch: str = DEFAULT_ARCH,
    *,
    compiler: str = "auto",
    options: Sequence[str] = (),
    use_cache: bool = True,
) -> bytes:
    """The cubin of a CUDA C++ source for `arch`, through NVRTC (or nvcc where NVRTC is missing;
    `compiler` picks one), from the disk cache when the same source was compiled before with the
    same arch, compiler version and options. `options` are extra compiler flags."""
    chosen = available_compiler(compiler)
    flags = _compiler_options(chosen, arch, options)
    key = cache_key(source, arch, chosen, flags)
    path = cache_dir() / f"{key}.cubin"
    if use_cache and path.is_file():
        return path.read_bytes()
    cubin = _compile_uncached(source, arch, chosen, flags)
    if use_cache:
        _write_atomically(path, cubin)
        _write_atomically(path.with_suffix(".cu"), source.encode())
    return cubin


def _write_atomically(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except OSError:
        pass  # the cache is an optimisation: an unwritable cache directory only costs time


def _compile_uncached(source: str, arch: str, compiler: str, flags: list[str]) -> bytes:
    """Runs the compiler (the disk cache is `compile_cuda`'s business)."""
    if compiler == "nvrtc":
        return _compile_nvrtc(source, arch, flags)
    return _compile_nvcc(source, arch, flags)


def _compile_error(source: str, arch: str, compiler: str, log: str) -> CudaCompileError:
    kernels = kernels_in_log(source, log)
    where = (
        f"in kernel{'s' if len(kernels) > 1 else ''} {', '.join(kernels)}"
        if kernels
        else "outside any __global__ function"
    )
    return CudaCompileError(
        f"{compiler} failed to compile CUDA for {arch} {where}:\n{log.strip()}",
        log,
        kernels,
        arch,
        compiler,
    )


def _compile_nvrtc(source: str, arch: str, flags: list[str]) -> bytes:
    from cuda.bindings import nvrtc

    def check(result: tuple, what: str) -> tuple:
        if result[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, text = nvrtc.nvrtcGetErrorString(result[0])
            raise CudaError(f"{what} failed: {text.decode()}")
        return result[1:]

    (program,) = check(
        nvrtc.nvrtcCreateProgram(source.encode(), b"emmy.cu", 0, [], []), "nvrtcCreateProgram"
    )
    try:
        encoded = [flag.encode() for flag in flags]
        (compiled,) = nvrtc.nvrtcCompileProgram(program, len(encoded), encoded)
        # NVRTC writes into the buffers it is given: they must be fresh bytearrays. (The usual
        # `b" " * size` hands it CPython's shared one-byte b" " when the log is empty, size 1,
        # and its NUL then turns every b" " of the process into b"\0".)
        (size,) = check(nvrtc.nvrtcGetProgramLogSize(program), "nvrtcGetProgramLogSize")
        buffer = bytearray(size)
        check(nvrtc.nvrtcGetProgramLog(program, buffer), "nvrtcGetProgramLog")
        log = bytes(buffer).rstrip(b"\0").decode(errors="replace")
        if compiled != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise _compile_error(source, arch, "nvrtc", log)
        (size,) = check(nvrtc.nvrtcGetCUBINSize(program), "nvrtcGetCUBINSize")
        cubin = bytearray(size)
        check(nvrtc.nvrtcGetCUBIN(program, cubin), "nvrtcGetCUBIN")
        return bytes(cubin)
    finally:
        nvrtc.nvrtcDestroyProgram(program)


def _compile_nvcc(source: str, arch: str, flags: list[str]) -> bytes:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise CudaError("nvcc is not on PATH")
    with tempfile.TemporaryDirectory(prefix="emmy-nvcc-") as directory:
        Path(directory, "emmy.cu").write_text(source)
        done = subprocess.run(
            [nvcc, *flags, "-o", "emmy.cubin", "emmy.cu"],
            cwd=directory,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise _compile_error(source, arch, "nvcc", done.stderr + done.stdout)
        return Path(directory, "emmy.cubin").read_bytes()


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
    """Makes torch's CUDA context current on this thread; returns torch's device index."""
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
    naming the kernels (they stay pending; see the module doc for what a timeout leaves). A
    kernel that failed (e.g. an illegal address) raises `CudaLaunchError` naming them. With
    `timeout_s=None` it waits without a bound."""
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


# --- modules and launches ------------------------------------------------------------------


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


@dataclass
class _Kernel:
    name: str
    function: Any
    parameter_sizes: list[int] | None
    smem_limit: int = STATIC_SMEM_LIMIT


class CudaModule:
    """A cubin loaded into torch's CUDA context (`cuModuleLoadData`)."""

    def __init__(self, cubin: bytes):
        self.device = _ensure_context()
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
        kernel = _Kernel(name, function, _parameter_sizes(function))
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
        are 1 to 3 sizes, `smem` the bytes of dynamic shared memory, `args` its arguments (see
        the module doc). Returns without waiting; `synchronize` waits."""
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
        holders = []
        for index, value in enumerate(args):
            size = sizes[index] if sizes is not None else None
            if isinstance(value, torch.Tensor):
                holders.append(self._pointer(value, size, index, kernel_name))
            else:
                holders.append(_scalar_parameter(value, size, index, kernel_name))
        parameters = (ctypes.c_void_p * max(len(holders), 1))(
            *(ctypes.addressof(h) for h in holders)
        )
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


# --- host functions ------------------------------------------------------------------------

HOST_OPS = (
    "memref.alloc",
    "memref.get_global",
    "memref.dealloc",
    "arith.constant",
    "kernel.launch",
    "func.return",
)
CUDA_PRINTER_NAMES = (
    "print_cuda",
    "emit_cuda",
    "module_to_cuda",
    "to_cuda",
    "translate_to_cuda",
    "generate_cuda",
    "cuda_source",
)
"""Functions of `emmy.tools.cuda.target` tried, in order, for a module's CUDA; after them, a
`Target` subclass there named "cuda" (the one `emmy-opt -t cuda` uses)."""


def op_name(op: Operation) -> str:
    """An op's name, also for an unregistered op parsed from generic syntax."""
    if isinstance(op, UnregisteredOp):
        return op.op_name.data
    return op.name


def torch_dtype(element_type: Attribute) -> torch.dtype:
    """The torch dtype of a builtin element type (index is int64)."""
    match element_type:
        case Float32Type():
            return torch.float32
        case Float16Type():
            return torch.float16
        case BFloat16Type():
            return torch.bfloat16
        case Float64Type():
            return torch.float64
        case IndexType():
            return torch.int64
        case IntegerType():
            width = element_type.width.data
            unsigned = element_type.signedness.data == Signedness.UNSIGNED
            table = {
                1: torch.bool,
                8: torch.uint8 if unsigned else torch.int8,
                16: torch.int16,
                32: torch.int32,
                64: torch.int64,
            }
            if width in table:
                return table[width]
    raise HostFunctionError(f"no torch dtype for element type {element_type}")


def _describe(op: Operation) -> str:
    location = getattr(op, "location", None)
    return f"'{op_name(op)}'" + (
        f" at {location}" if location is not None and "unknown" not in str(location) else ""
    )


def _property(op: Operation, name: str) -> Attribute | None:
    value = op.properties.get(name)
    return value if value is not None else op.attributes.get(name)


def _ints(attribute: Attribute, what: str, op: Operation) -> tuple[int, ...]:
    match attribute:
        case DenseArrayBase():
            return tuple(int(v) for v in attribute.get_values())
        case ArrayAttr():
            return tuple(v for a in attribute.data for v in _ints(a, what, op))
        case IntegerAttr():
            return (int(attribute.value.data),)
        case IntAttr():
            return (attribute.data,)
    raise HostFunctionError(f"{_describe(op)}: cannot read {what} from {attribute}")


@dataclass
class _Launch:
    kernel: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    smem: int
    operands: list[SSAValue]


@dataclass
class _Signature:
    name: str
    shape: tuple[int, ...] | None  # None: a scalar argument
    dtype: torch.dtype
    type_text: str


def shaped_signature(value_type: Attribute, name: str) -> _Signature:
    """The shape and dtype of a memref, tensor or scalar type, for checking and allocating."""
    if isinstance(value_type, MemRefType | TensorType):
        shape = tuple(value_type.get_shape())
        if any(size < 0 for size in shape):
            raise HostFunctionError(f"{name} has a dynamic shape ({value_type}): not supported")
        return _Signature(name, shape, torch_dtype(value_type.get_element_type()), str(value_type))
    return _Signature(name, None, torch_dtype(value_type), str(value_type))


class HostProgram:
    """A Kernel-IR host function ready to run on the GPU: its ops are read and checked now (no
    GPU needed); its CUDA is compiled and loaded on the first call, after the inputs are
    checked. Call it with the inputs: `HostProgram(module)(inputs)`."""

    def __init__(
        self,
        module: ModuleOp,
        cuda_source: str | None = None,
        *,
        function: str = "forward",
        arch: str = DEFAULT_ARCH,
    ):
        self.module = module
        self.function = function
        self.arch = arch
        self._cuda_source = cuda_source
        self._cuda_module: CudaModule | None = None
        self._globals: dict[str, torch.Tensor] = {}
        self._global_ops: dict[str, Operation] = {
            op.properties["sym_name"].data: op
            for op in module.walk()
            if op_name(op) == "memref.global" and "sym_name" in op.properties
        }
        host = _find_function(module, function)
        self._arguments = list(host.body.block.args)
        self.parameters = [
            shaped_signature(arg.type, f"argument {i} of @{function}")
            for i, arg in enumerate(self._arguments)
        ]
        self.launches: list[_Launch] = []
        self._steps: list[tuple[str, SSAValue | None, Any]] = []
        """(op name, its result, what running it needs), in order."""
        self._results: list[SSAValue] = []
        self._plan(host)

    def _error(self, op: Operation, message: str) -> HostFunctionError:
        return HostFunctionError(f"@{self.function}: {_describe(op)} {message}")

    def _plan(self, host: Operation) -> None:
        defined = set(self._arguments)
        returned = False
        for op in host.body.block.ops:
            name = op_name(op)
            if name not in HOST_OPS:
                raise self._error(
                    op, f"is not a host op the GPU runtime runs (it runs {', '.join(HOST_OPS)})"
                )
            if any(region.blocks for region in op.regions):
                raise self._error(op, "has regions: host ops run straight through")
            if any(operand not in defined for operand in op.operands):
                raise self._error(op, "uses a value not defined before it in the function")
            result = op.results[0] if op.results else None
            if name == "memref.alloc":
                if op.operands:
                    raise self._error(op, "has dynamic sizes: not supported")
                signature = shaped_signature(result.type, f"@{self.function}'s buffer")
                self._steps.append((name, result, (signature.shape or (), signature.dtype)))
            elif name == "memref.get_global":
                self._steps.append((name, result, self._read_global(op)))
            elif name == "arith.constant":
                value = _property(op, "value")
                if isinstance(value, FloatAttr):
                    self._steps.append((name, result, float(value.value.data)))
                elif isinstance(value, IntegerAttr):
                    self._steps.append((name, result, int(value.value.data)))
                else:
                    raise self._error(op, "is not a scalar constant")
            elif name == "kernel.launch":
                launch = self._read_launch(op)
                self.launches.append(launch)
                self._steps.append((name, None, launch))
            elif name == "func.return":
                self._results = list(op.operands)
                returned = True
                break
            defined.update(op.results)
        if not returned:
            raise HostFunctionError(f"@{self.function} has no func.return")

    def _read_global(self, op: Operation) -> str:
        symbol = _property(op, "name")
        if (
            not isinstance(symbol, SymbolRefAttr)
            or symbol.root_reference.data not in self._global_ops
        ):
            raise self._error(op, f"names no memref.global in the module ({symbol})")
        name = symbol.root_reference.data
        initial = self._global_ops[name].properties.get("initial_value")
        if not isinstance(initial, DenseIntOrFPElementsAttr):
            raise self._error(op, f"reads @{name}, which has no dense initial value")
        return name

    def _read_launch(self, op: Operation) -> _Launch:
        kernel = _property(op, "kernel")
        if isinstance(kernel, SymbolRefAttr):
            kernel_name = kernel.root_reference.data
        elif isinstance(kernel, StringAttr):
            kernel_name = kernel.data
        else:
            raise self._error(op, "names no kernel (property 'kernel')")
        sizes = {}
        for what in ("grid", "block"):
            attribute = _property(op, what)
            if attribute is None:
                raise self._error(op, f"has no {what}")
            sizes[what] = _ints(attribute, what, op)
            if not 1 <= len(sizes[what]) <= 3:
                raise self._error(op, f"has a {what} of {len(sizes[what])} sizes, not 1 to 3")
        smem = _property(op, "smem")
        return _Launch(
            kernel_name,
            sizes["grid"],
            sizes["block"],
            _ints(smem, "smem", op)[0] if smem is not None else 0,
            list(op.operands),
        )

    def check_inputs(self, inputs: Sequence[Any]) -> None:
        """Raises HostFunctionError unless the inputs match the function's signature."""
        if len(inputs) != len(self.parameters):
            raise HostFunctionError(
                f"@{self.function} takes {len(self.parameters)} arguments "
                f"({', '.join(p.type_text for p in self.parameters)}), got {len(inputs)}"
            )
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
            if tuple(value.shape) != parameter.shape or value.dtype != parameter.dtype:
                raise HostFunctionError(
                    f"{parameter.name} is {parameter.type_text}: expected {expected}, got a "
                    f"{_dtype_name(value.dtype)} tensor of shape {list(value.shape)}"
                )

    def cuda_source(self) -> str:
        """The CUDA of the module's kernels: given, or printed by the cuda target."""
        if self._cuda_source is None:
            self._cuda_source = cuda_source_of(self.module)
        return self._cuda_source

    def cuda_module(self) -> CudaModule:
        """The module's kernels, compiled and loaded (once)."""
        if self._cuda_module is None:
            module = load_module(compile_cuda(self.cuda_source(), self.arch))
            for launch in self.launches:
                module._kernel(launch.kernel)  # a missing kernel fails before anything runs
            self._cuda_module = module
        return self._cuda_module

    def _global(self, name: str) -> torch.Tensor:
        if name not in self._globals:
            op = self._global_ops[name]
            signature = shaped_signature(op.properties["type"], f"@{name}")
            self._globals[name] = dense_tensor(
                op.properties["initial_value"], signature.shape or (), signature.dtype
            ).to("cuda")
        return self._globals[name]

    def __call__(
        self,
        inputs: Sequence[Any],
        *,
        timeout_s: float | None = DEFAULT_TIMEOUT_S,
        poison: bool = False,
        stream: Any = None,
    ) -> list[torch.Tensor]:
        """Runs the function on the inputs; see `run_host_function`."""
        self.check_inputs(inputs)
        module = self.cuda_module()
        values: dict[SSAValue, Any] = {}
        for argument, value in zip(self._arguments, inputs):
            values[argument] = _on_device(value) if isinstance(value, torch.Tensor) else value
        for name, result, data in self._steps:
            if name == "memref.alloc":
                values[result] = _allocate(*data, poison)
            elif name == "memref.get_global":
                values[result] = self._global(data)
            elif name == "arith.constant":
                values[result] = data
            else:  # kernel.launch
                module.launch(
                    data.kernel,
                    data.grid,
                    data.block,
                    [values[operand] for operand in data.operands],
                    data.smem,
                    stream,
                )
        if timeout_s is not None:
            synchronize(timeout_s)
        return [values[result] for result in self._results]

    def graphed(self, inputs: Sequence[Any]) -> Callable[[], list[torch.Tensor]]:
        """Runs the function once on `inputs` (compiling and checking it), then captures its
        launches into a CUDA graph; the returned callable replays them on those same inputs
        and returns the same output tensors, refilled. Like torch.compile's CUDA graphs, a
        replay costs one launch of the CPU's time however many kernels the function has."""
        self(inputs)
        on_device = [_on_device(v) if isinstance(v, torch.Tensor) else v for v in inputs]
        graph = torch.cuda.CUDAGraph()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.graph(graph, stream=stream):
            outputs = self(on_device, timeout_s=None)
        torch.cuda.current_stream().wait_stream(stream)

        def replay() -> list[torch.Tensor]:
            graph.replay()
            return outputs

        return replay


class GraphedHostProgram:
    """Calls a HostProgram through a CUDA graph (`HostProgram.graphed`) captured on the first
    inputs; a call on tensors at other addresses captures again."""

    def __init__(self, program: HostProgram):
        self.program = program
        self._key: list[Any] | None = None
        self._replay: Callable[[], list[torch.Tensor]] | None = None

    def __call__(self, inputs: Sequence[Any]) -> list[torch.Tensor]:
        key = [(v.data_ptr(), v.device) if isinstance(v, torch.Tensor) else v for v in inputs]
        if self._replay is None or key != self._key:
            self._replay, self._key = self.program.graphed(inputs), key
        return self._replay()


def _on_device(value: torch.Tensor) -> torch.Tensor:
    """The tensor as kernels read it: contiguous, on the GPU, and 16-byte aligned (a view can
    start anywhere, and vector accesses need the alignment)."""
    value = value.to("cuda").contiguous()
    return value if value.data_ptr() % 16 == 0 else value.clone()


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


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


def _find_function(module: ModuleOp, name: str) -> Operation:
    functions = [op for op in module.ops if op_name(op) == "func.func"]
    for op in functions:
        if op.properties["sym_name"].data == name:
            if not op.regions or not op.regions[0].blocks:
                raise HostFunctionError(f"@{name} is a declaration, without a body")
            return op
    known = ", ".join(f"@{op.properties['sym_name'].data}" for op in functions) or "none"
    raise HostFunctionError(f"no func.func @{name} in the module (functions: {known})")


def cuda_source_of(module: ModuleOp) -> str:
    """The module's CUDA C++, printed by the `cuda` target (`emmy.tools.cuda.target`)."""
    try:
        target = importlib.import_module("emmy.tools.cuda.target")
    except ImportError as error:
        raise CudaError(
            f"the cuda target is not available ({error}): pass the CUDA as cuda_source"
        ) from error
    for name in CUDA_PRINTER_NAMES:
        printer = getattr(target, name, None)
        if not callable(printer) or isinstance(printer, type):
            continue
        required = [
            p
            for p in inspect.signature(printer).parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        if len(required) >= 2:
            stream = StringIO()
            printer(module, stream)
            return stream.getvalue()
        text = printer(module)
        if isinstance(text, str):
            return text
    from xdsl.utils.target import Target

    for value in vars(target).values():
        if (
            isinstance(value, type)
            and issubclass(value, Target)
            and getattr(value, "name", None) == "cuda"
        ):
            from emmy.dialects import make_context

            stream = StringIO()
            value().emit(make_context(), module, stream)
            return stream.getvalue()
    raise CudaError(
        "emmy.tools.cuda.target has no function that prints CUDA for a module (tried "
        f"{', '.join(CUDA_PRINTER_NAMES)} and a Target named 'cuda'): pass cuda_source"
    )


def run_host_function(
    module: ModuleOp,
    inputs: Sequence[Any],
    cuda_source: str | None = None,
    *,
    function: str = "forward",
    arch: str = DEFAULT_ARCH,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    poison: bool = False,
) -> list[torch.Tensor]:
    """Runs a Kernel-IR host function on the GPU and returns its results (GPU tensors). Checks
    the inputs first; waits up to `timeout_s` for the kernels (None: does not wait). To run the
    same program many times, build a `HostProgram` once and call it."""
    program = HostProgram(module, cuda_source, function=function, arch=arch)
    return program(inputs, timeout_s=timeout_s, poison=poison)


if __name__ == "__main__":  # pragma: no cover - a quick report of the toolchain
    print("compiler:", available_compiler())
    print("nvrtc:", nvrtc_version(), "nvcc:", nvcc_version())
    print("CUDA headers:", cuda_include_dir())
    print("cache:", cache_dir())
    sys.exit(0)
