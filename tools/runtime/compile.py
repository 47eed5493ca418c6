"""Compiling CUDA C++ to a cubin, with NVRTC or nvcc, cached on disk; needs no GPU.

    cubin = compile_cuda(source, "sm_90a")        # NVRTC (nvcc where it is missing)

    $ python -m emmy.tools.runtime.compile        # which compiler, headers and cache are used

A failed compile raises `CudaCompileError`, naming the `__global__` functions its errors lie in;
one that runs past `EMMY_COMPILE_TIMEOUT_S` (default 300 s) raises `CudaCompileTimeoutError`.
The cache (`cubin_cache`) raises `CubinCacheError` when its directory or an entry could have
been written by another user.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import suppress
from pathlib import Path

from emmy.dialects.target import DEFAULT_TARGET
from emmy.tools.runtime.cubin_cache import CubinCache, cache_dir, cache_max_bytes
from emmy.tools.settings import seconds

DEFAULT_COMPILE_TIMEOUT_S = 300.0
"""How long one compile may run, unless `EMMY_COMPILE_TIMEOUT_S` says otherwise."""


class CudaError(RuntimeError):
    """Something in compiling, loading or running CUDA code failed."""


class CudaCompileError(CudaError):
    """The CUDA compiler rejected a source: `log` is its output, `kernels` the `__global__`
    functions its errors lie in (from the log's line numbers, or ptxas's "Entry function"
    lines; empty when they are outside every kernel)."""

    def __init__(self, message: str, log: str, kernels: Sequence[str], arch: str, compiler: str):
        super().__init__(message)
        self.log = log
        self.kernels = list(kernels)
        self.arch = arch
        self.compiler = compiler


class CudaCompileTimeoutError(CudaError):
    """A compile ran longer than `timeout_s`; `kernels` are the source's `__global__`
    functions."""

    def __init__(self, source: str, arch: str, compiler: str, timeout_s: float):
        self.kernels = [name for _, name in kernel_definitions(source)]
        self.arch = arch
        self.compiler = compiler
        self.timeout_s = timeout_s
        shown = ", ".join(self.kernels[:5]) + (
            f" and {len(self.kernels) - 5} more" if len(self.kernels) > 5 else ""
        )
        lines = source.count("\n") + 1
        super().__init__(
            f"{compiler} did not finish compiling CUDA for {arch} within {timeout_s:g} s "
            f"(a source of {lines} lines, kernel{'s' * (len(self.kernels) != 1)} "
            f"{shown or 'none'}); EMMY_COMPILE_TIMEOUT_S sets the limit"
        )


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
    found; None when there is none. The first hit wins, looking in: `$CUDA_HOME`, `$CUDA_PATH`,
    cuda.pathfinder's header directory for `cudart` (a CUDA toolkit or the
    `nvidia-cuda-runtime` wheel's `nvidia/cu13/include`), the toolkit of the `nvcc` on PATH (its
    `../include` or `../targets/*/include`, following wrapper scripts through `nvcc --dryrun`),
    and `/usr/local/cuda/include`."""
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
def _nvrtc_library() -> str:
    """The NVRTC library loaded, as where it lies (following links) and its size and mtime:
    `nvrtcVersion` stops at major.minor, and two patch releases must not share cubins."""
    try:
        from cuda import pathfinder

        path = pathfinder.load_nvidia_dynamic_lib("nvrtc").abs_path
        info = os.stat(path)
    except Exception:  # found some other way (or not at all): major.minor is what is known
        return "library not located"
    return f"{os.path.realpath(path)} ({info.st_size} bytes, mtime {info.st_mtime_ns})"


def nvcc_path() -> str | None:
    """The `nvcc` on PATH."""
    return shutil.which("nvcc")


@functools.cache
def _nvcc_version_output(nvcc: str) -> str | None:
    try:
        done = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def nvcc_version() -> str | None:
    """The `nvcc` on PATH's version ("V13.0.88"), or None when there is no nvcc."""
    nvcc = nvcc_path()
    output = _nvcc_version_output(nvcc) if nvcc else None
    if output is None:
        return None
    match = re.search(r"\bV(\d+\.\d+\.\d+)", output)
    if match:
        return f"V{match.group(1)}"
    lines = output.splitlines()
    return lines[-1] if lines else None


def compiler_identity(compiler: str) -> str:
    """What the cache key records of a compiler: for nvcc its path, the file that path leads
    to, and its whole `--version` output (release, build); for NVRTC its version and the
    library file loaded."""
    if compiler == "nvrtc":
        major, minor = nvrtc_version() or (None, None)
        return f"nvrtc {major}.{minor} {_nvrtc_library()}"
    nvcc = nvcc_path()
    if nvcc is None:
        return "nvcc missing"
    return f"nvcc {nvcc} -> {os.path.realpath(nvcc)}\n{_nvcc_version_output(nvcc)}"


def compile_timeout_s() -> float:
    """How long one compile may run: `$EMMY_COMPILE_TIMEOUT_S`, else 300 s."""
    error = CudaError("EMMY_COMPILE_TIMEOUT_S must be a positive number of seconds")
    return seconds("EMMY_COMPILE_TIMEOUT_S", DEFAULT_COMPILE_TIMEOUT_S, error)


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
    # `-gencode` names the one architecture; nvcc 13's `-arch=sm_90a` shorthand also runs a
    # plain sm_90 pass, which rejects wgmma and setmaxnreg.
    compute = "compute_" + arch.removeprefix("sm_")
    return ["-cubin", f"-gencode=arch={compute},code={arch}", "-std=c++17", *options]


def cache_key(source: str, arch: str, compiler: str, options: Sequence[str]) -> str:
    identity = {
        "source": source,
        "arch": arch,
        "compiler": compiler_identity(compiler),
        "options": list(options),
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def compile_cuda(
    source: str,
    arch: str = DEFAULT_TARGET.arch,
    *,
    compiler: str = "auto",
    options: Sequence[str] = (),
    use_cache: bool = True,
    timeout_s: float | None = None,
) -> bytes:
    """The cubin of a CUDA C++ source for `arch`, through NVRTC (or nvcc where NVRTC is missing;
    `compiler` picks one), from the disk cache when the same source was compiled before with the
    same arch, compiler and options. `options` are extra compiler flags; a compile that runs
    longer than `timeout_s` (None: `compile_timeout_s()`) raises `CudaCompileTimeoutError`.

    NVRTC compiles with `--gpu-architecture=<arch> -std=c++17 -I<cuda_include_dir()>`, nvcc with
    `-cubin -gencode=arch=compute_XX,code=sm_XX`: either way the result is machine code for
    exactly that architecture. The cache key is the sha256 of (source, arch,
    `compiler_identity`, options); see `cubin_cache` for what the cache stores and trusts. A
    cache directory that cannot be created or opened (read-only, say) only costs time: the
    cubin is compiled and not kept."""
    chosen = available_compiler(compiler)
    flags = _compiler_options(chosen, arch, options)
    limit = compile_timeout_s() if timeout_s is None else timeout_s

    def compile_now() -> bytes:
        return _compile_uncached(source, arch, chosen, flags, limit)

    if not use_cache:
        return compile_now()
    try:
        cache = CubinCache(cache_dir(), cache_max_bytes())
    except OSError:
        return compile_now()
    with cache:
        return cache.cubin(cache_key(source, arch, chosen, flags), compile_now, source)


def _compile_uncached(
    source: str, arch: str, compiler: str, flags: list[str], timeout_s: float
) -> bytes:
    """Runs the compiler (the disk cache is `compile_cuda`'s business)."""
    if compiler == "nvrtc":
        return _compile_nvrtc_within(source, arch, flags, timeout_s)
    return _compile_nvcc(source, arch, flags, timeout_s)


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


_FLOW_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


def _compile_nvrtc_within(source: str, arch: str, flags: list[str], timeout_s: float) -> bytes:
    """NVRTC compiles in this process, where nothing can stop it from outside: it runs on a
    worker thread that the caller waits for at most `timeout_s` (so the caller never hangs,
    Ctrl-C included); then NVRTC's flow callback cancels the compile at its next checkpoint,
    and an abandoned worker that never reaches one runs on until the process exits."""
    stop = threading.Event()
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            outcome["cubin"] = _compile_nvrtc(source, arch, flags, stop)
        except BaseException as error:
            outcome["error"] = error

    worker = threading.Thread(target=work, name="emmy-nvrtc", daemon=True)
    worker.start()
    try:
        worker.join(timeout_s)
        finished = not worker.is_alive()
    finally:
        stop.set()
    if not finished:
        raise CudaCompileTimeoutError(source, arch, "nvrtc", timeout_s)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["cubin"]


def _compile_nvrtc(source: str, arch: str, flags: list[str], stop: threading.Event) -> bytes:
    # NVRTC through cuda.bindings, not cuda.core's Program: `compile_cuda` takes the caller's
    # own compiler flags (and keys its cache on them), and ProgramOptions has a field for each
    # flag it knows and no way to pass others; the flow callback that cancels a compile, and
    # the log on failure, need the program handle and the log buffer in hand as well.
    from cuda.bindings import nvrtc

    def check(result: tuple, what: str) -> tuple:
        if result[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, text = nvrtc.nvrtcGetErrorString(result[0])
            raise CudaError(f"{what} failed: {text.decode()}")
        return result[1:]

    (program,) = check(
        nvrtc.nvrtcCreateProgram(source.encode(), b"emmy.cu", 0, [], []), "nvrtcCreateProgram"
    )
    # NVRTC calls this at its checkpoints; 1 cancels the compile. It must outlive the compile.
    cancel = _FLOW_CALLBACK(lambda payload, reserved: int(stop.is_set()))
    try:
        with suppress(Exception):  # an NVRTC before 12.8 has no flow callback: never cancelled
            nvrtc.nvrtcSetFlowCallback(program, ctypes.cast(cancel, ctypes.c_void_p).value, 0)
        encoded = [flag.encode() for flag in flags]
        (compiled,) = nvrtc.nvrtcCompileProgram(program, len(encoded), encoded)
        if compiled == getattr(nvrtc.nvrtcResult, "NVRTC_ERROR_CANCELLED", None):
            raise CudaError("the NVRTC compile was cancelled (its time ran out)")
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


def _compile_nvcc(source: str, arch: str, flags: list[str], timeout_s: float) -> bytes:
    nvcc = nvcc_path()
    if nvcc is None:
        raise CudaError("nvcc is not on PATH")
    with tempfile.TemporaryDirectory(prefix="emmy-nvcc-") as directory:
        Path(directory, "emmy.cu").write_text(source)
        # nvcc runs cicc and ptxas as its children: in a session of their own, a timeout (or
        # Ctrl-C) kills them all, and no orphan keeps the output pipes open.
        with subprocess.Popen(
            [nvcc, *flags, "-o", "emmy.cubin", "emmy.cu"],
            cwd=directory,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        ) as process:
            try:
                stdout, stderr = process.communicate(timeout=timeout_s)
            except BaseException as error:
                with suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
                if isinstance(error, subprocess.TimeoutExpired):
                    raise CudaCompileTimeoutError(source, arch, "nvcc", timeout_s) from None
                raise
        if process.returncode != 0:
            raise _compile_error(source, arch, "nvcc", stderr + stdout)
        return Path(directory, "emmy.cubin").read_bytes()


if __name__ == "__main__":  # pragma: no cover - a quick report of the toolchain
    print("compiler:", available_compiler())
    print("nvrtc:", nvrtc_version(), "nvcc:", nvcc_version())
    print("CUDA headers:", cuda_include_dir())
    print("cache:", cache_dir(), f"(at most {cache_max_bytes()} bytes)")
    print("compile timeout:", compile_timeout_s(), "s")
    sys.exit(0)
