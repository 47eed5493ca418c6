"""The cubin cache (`emmy.tools.runtime.cubin_cache`) and the compile timeouts, without a GPU.

Most tests compile through a stub `nvcc` (a shell script on PATH that logs each compile and
"compiles" a source into its own bytes), so that they run where there is no CUDA toolkit and
take milliseconds; the few that need a real compiler are marked and skipped where it is
missing. What they check: the cache directory is private and anything another user could have
written (a directory or entry writable by others or owned by someone else, a symbolic link) is
refused; a truncated or corrupt entry is deleted and compiled again; an entry deleted under a
reader is a miss; a failed write leaves no temporary file; the least recently used entries go
under a size cap; concurrent processes compile one source once; the key covers the compiler's
path and full version; a hung compile times out with an error naming its kernels."""

from __future__ import annotations

import errno
import multiprocessing
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from emmy.tools.runtime import compile as compiling
from emmy.tools.runtime import cubin_cache
from emmy.tools.runtime.compile import (
    CudaCompileTimeoutError,
    CudaError,
    compile_cuda,
)
from emmy.tools.runtime.cubin_cache import CubinCacheError, entry_cubin

needs_nvcc = pytest.mark.skipif(compiling.nvcc_version() is None, reason="needs nvcc on PATH")
needs_nvrtc = pytest.mark.skipif(
    compiling.nvrtc_version() is None, reason="the NVRTC library (libnvrtc) does not load here"
)
needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="making a file another user's takes root (chown)"
)

SOURCE = 'extern "C" __global__ void scale(float* x, float k) { x[threadIdx.x] *= k; }\n'
STUB_NVCC = """#!/bin/sh
if [ "$1" = --version ]; then
  echo "nvcc: NVIDIA (R) Cuda compiler driver"
  echo "Cuda compilation tools, release 13.0, V13.0.88"
  echo "Build cuda_13.0.r13.0/compiler.BUILD_0"
  exit 0
fi
echo "$$" >> "$STUB_NVCC_LOG"
sleep "${STUB_NVCC_SECONDS:-0}"
{ printf 'stub cubin\\n'; cat emmy.cu; } > emmy.cubin
"""


def write_stub(directory: Path, build: str = "1") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    nvcc = directory / "nvcc"
    nvcc.write_text(STUB_NVCC.replace("BUILD", build))
    nvcc.chmod(0o755)
    return nvcc


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMMY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("EMMY_CACHE_MAX_BYTES", raising=False)
    monkeypatch.delenv("EMMY_COMPILE_TIMEOUT_S", raising=False)


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "cache" / "cubin"


@pytest.fixture
def stub_nvcc(tmp_path, monkeypatch):
    """A stub nvcc first on PATH; returns the log of its compiles (one line each)."""
    write_stub(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "nvcc.log"
    log.touch()
    monkeypatch.setenv("STUB_NVCC_LOG", str(log))
    return log


def stub_cubin(source: str) -> bytes:
    return b"stub cubin\n" + source.encode()


def compiles(log: Path) -> int:
    return len(log.read_text().splitlines())


def compile_stub(source: str = SOURCE) -> bytes:
    return compile_cuda(source, "sm_90a", compiler="nvcc")


def only_entry(cache: Path) -> Path:
    (entry,) = cache.glob("*.entry")
    return entry


# --- what is stored -------------------------------------------------------------------------


def test_the_cache_is_private_and_entries_carry_a_checksum(stub_nvcc, cache):
    assert compile_stub() == stub_cubin(SOURCE)
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    entry = only_entry(cache)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    data = entry.read_bytes()
    assert data.startswith(b"emmy-cubin-v1 sha256:") and entry_cubin(data) == stub_cubin(SOURCE)
    assert entry.with_suffix(".cu").read_text() == SOURCE
    assert compile_stub() == stub_cubin(SOURCE) and compiles(stub_nvcc) == 1


# --- what is refused ------------------------------------------------------------------------


@pytest.mark.parametrize("mode, writers", [(0o777, "its group and others"), (0o720, "its group")])
def test_a_cache_directory_others_can_write_is_refused(stub_nvcc, cache, mode, writers):
    cache.mkdir(parents=True)
    cache.chmod(mode)
    with pytest.raises(CubinCacheError) as caught:
        compile_stub()
    message = str(caught.value)
    assert message.startswith(f"{cache}: the cache directory is writable by {writers}")
    assert f"chmod 700 {cache}" in message and "EMMY_CACHE_DIR" in message
    assert compiles(stub_nvcc) == 0


def test_an_entry_others_can_write_is_refused(stub_nvcc, cache):
    compile_stub()
    entry = only_entry(cache)
    entry.chmod(0o666)
    with pytest.raises(CubinCacheError) as caught:
        compile_stub()
    assert str(caught.value).startswith(
        f"{entry}: the cache entry is writable by its group and others (mode 666)"
    )
    assert f"rm {entry}" in str(caught.value) and compiles(stub_nvcc) == 1


@needs_root
def test_a_cache_directory_of_another_user_is_refused(stub_nvcc, cache):
    cache.mkdir(parents=True, mode=0o700)
    os.chown(cache, 65534, 65534)
    with pytest.raises(CubinCacheError, match=r"is owned by .*uid 65534.*not by you") as caught:
        compile_stub()
    assert str(cache) in str(caught.value) and "EMMY_CACHE_DIR" in str(caught.value)
    assert compiles(stub_nvcc) == 0


@needs_root
def test_an_entry_of_another_user_is_refused(stub_nvcc, cache):
    compile_stub()
    entry = only_entry(cache)
    os.chown(entry, 65534, 65534)
    with pytest.raises(CubinCacheError, match=r"the cache entry is owned by .*uid 65534"):
        compile_stub()


def test_a_symlinked_entry_is_refused(stub_nvcc, cache, tmp_path):
    # Even a link to a well-formed entry: a link is how another user's file gets in.
    compile_stub()
    entry = only_entry(cache)
    planted = tmp_path / "planted.entry"
    entry.rename(planted)
    entry.symlink_to(planted)
    with pytest.raises(CubinCacheError, match="the cache entry is a symbolic link") as caught:
        compile_stub()
    assert str(entry) in str(caught.value)
    assert compiles(stub_nvcc) == 1


def test_a_symlinked_cache_directory_is_refused(stub_nvcc, cache, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    cache.parent.mkdir()
    cache.symlink_to(elsewhere)
    with pytest.raises(CubinCacheError, match="the cache directory is a symbolic link"):
        compile_stub()
    assert not list(elsewhere.iterdir())


def test_an_entry_that_is_not_a_file_is_refused_without_blocking(stub_nvcc, cache):
    compile_stub()
    entry = only_entry(cache)
    entry.unlink()
    os.mkfifo(entry, 0o600)
    with pytest.raises(CubinCacheError, match="the cache entry is not a regular file"):
        compile_stub()


# --- damaged, vanishing and unwritable entries --------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: data[:-1] + bytes([data[-1] ^ 1]), id="bit-flipped"),
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: data[30:], id="no-header"),
    ],
)
def test_a_corrupt_entry_is_deleted_and_compiled_again(stub_nvcc, cache, damage):
    compile_stub()
    entry = only_entry(cache)
    entry.write_bytes(damage(entry.read_bytes()))
    assert compile_stub() == stub_cubin(SOURCE)
    assert compiles(stub_nvcc) == 2
    assert entry_cubin(entry.read_bytes()) == stub_cubin(SOURCE)
    assert compile_stub() == stub_cubin(SOURCE) and compiles(stub_nvcc) == 2


def test_a_corrupt_entry_is_deleted_when_the_compile_then_fails(stub_nvcc, cache, monkeypatch):
    compile_stub()
    entry = only_entry(cache)
    entry.write_bytes(b"garbage")
    monkeypatch.setattr(compiling, "_compile_uncached", lambda *args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        compile_stub()
    assert not entry.exists()


@needs_nvcc
def test_a_truncated_real_cubin_is_compiled_again(cache):
    first = compile_cuda(SOURCE, "sm_90a", compiler="nvcc")
    entry = only_entry(cache)
    entry.write_bytes(entry.read_bytes()[:-100])
    again = compile_cuda(SOURCE, "sm_90a", compiler="nvcc")
    assert again[:4] == b"\x7fELF" and again == first


def test_an_entry_deleted_while_it_is_read_is_a_miss(stub_nvcc, cache, monkeypatch):
    compile_stub()
    real_open, deleted = os.open, []

    def open_after_another_process_deleted_it(path, flags, mode=0o777, *, dir_fd=None):
        if str(path).endswith(".entry") and not deleted:
            os.unlink(path, dir_fd=dir_fd)
            deleted.append(path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", open_after_another_process_deleted_it)
    assert compile_stub() == stub_cubin(SOURCE)
    assert deleted and compiles(stub_nvcc) == 2


def test_a_failed_write_leaves_no_temporary_file(stub_nvcc, cache, monkeypatch):
    def disk_full(fd, data):
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    write_all = cubin_cache._write_all
    monkeypatch.setattr(cubin_cache, "_write_all", disk_full)
    assert compile_stub() == stub_cubin(SOURCE)
    assert sorted(path.suffix for path in cache.iterdir()) == [".lock"]
    monkeypatch.setattr(cubin_cache, "_write_all", write_all)
    assert compile_stub() == stub_cubin(SOURCE) and compiles(stub_nvcc) == 2
    assert entry_cubin(only_entry(cache).read_bytes()) == stub_cubin(SOURCE)


def test_an_uncreatable_cache_directory_only_costs_time(stub_nvcc, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("EMMY_CACHE_DIR", str(blocker / "below"))
    assert compile_stub() == stub_cubin(SOURCE)
    assert compile_stub() == stub_cubin(SOURCE) and compiles(stub_nvcc) == 2


# --- eviction -------------------------------------------------------------------------------


def test_least_recently_used_entries_are_evicted_under_the_cap(stub_nvcc, cache, monkeypatch):
    first, second, third = (SOURCE.replace("scale", f"scale{index}") for index in range(3))
    compile_stub(first)
    per_source = sum(path.stat().st_size for path in cache.iterdir())
    monkeypatch.setenv("EMMY_CACHE_MAX_BYTES", str(2 * per_source + per_source // 2))
    compile_stub(second)
    compile_stub(first)  # a hit: now `second` is the least recently used
    compile_stub(third)
    assert {path.read_text() for path in cache.glob("*.cu")} == {first, third}
    assert len(list(cache.glob("*.entry"))) == 2 and len(list(cache.glob("*.lock"))) == 2
    assert sum(path.stat().st_size for path in cache.iterdir()) <= 2 * per_source + per_source // 2
    assert compiles(stub_nvcc) == 3
    compile_stub(third)
    assert compiles(stub_nvcc) == 3


def test_the_newest_entry_stays_under_a_zero_cap(stub_nvcc, cache, monkeypatch):
    monkeypatch.setenv("EMMY_CACHE_MAX_BYTES", "0")
    compile_stub(SOURCE)
    compile_stub(SOURCE + "// other\n")
    assert [path.read_text() for path in cache.glob("*.cu")] == [SOURCE + "// other\n"]


def test_stale_leftovers_are_removed_and_fresh_ones_kept(stub_nvcc, cache):
    compile_stub()
    old = time.time() - 2 * 3600
    stale_temporary = cache / f".{'a' * 64}.entry.0123.tmp"
    fresh_temporary = cache / f".{'b' * 64}.entry.4567.tmp"
    old_format = cache / f"{'c' * 64}.cubin"  # an entry of an emmy before checksums
    for path in (stale_temporary, fresh_temporary, old_format):
        path.write_bytes(b"x")
    for path in (stale_temporary, old_format):
        os.utime(path, (old, old))
    compile_stub(SOURCE + "// another\n")
    assert not stale_temporary.exists() and not old_format.exists()
    assert fresh_temporary.exists()


def test_a_bad_cap_is_reported(stub_nvcc, monkeypatch):
    monkeypatch.setenv("EMMY_CACHE_MAX_BYTES", "1GB")
    with pytest.raises(CubinCacheError, match="EMMY_CACHE_MAX_BYTES must be a whole number"):
        compile_stub()


# --- concurrency ----------------------------------------------------------------------------

PROCESSES = 12


def test_concurrent_processes_compile_one_source_once(stub_nvcc, monkeypatch):
    monkeypatch.setenv("STUB_NVCC_SECONDS", "0.5")
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(PROCESSES), context.Queue()

    def compile_when_all_are_ready():
        start.wait()
        results.put(compile_stub())

    processes = [context.Process(target=compile_when_all_are_ready) for _ in range(PROCESSES)]
    for process in processes:
        process.start()
    cubins = [results.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    assert [process.exitcode for process in processes] == [0] * PROCESSES
    assert cubins == [stub_cubin(SOURCE)] * PROCESSES
    assert compiles(stub_nvcc) == 1


# --- the key --------------------------------------------------------------------------------


def test_the_key_covers_the_nvcc_path_and_full_version(tmp_path, monkeypatch):
    flags = compiling._compiler_options("nvcc", "sm_90a", ())

    def key_with(nvcc: Path) -> str:
        monkeypatch.setenv("PATH", f"{nvcc.parent}{os.pathsep}{os.environ['PATH']}")
        return compiling.cache_key(SOURCE, "sm_90a", "nvcc", flags)

    one = write_stub(tmp_path / "one")
    same_elsewhere = write_stub(tmp_path / "two")
    other_build = write_stub(tmp_path / "three", build="2")  # same "V13.0.88", another build
    keys = [key_with(one), key_with(same_elsewhere), key_with(other_build)]
    assert "Build cuda_13.0.r13.0/compiler.2_0" in compiling.compiler_identity("nvcc")
    assert len(set(keys)) == 3 and key_with(one) == keys[0]


@needs_nvrtc
def test_the_key_covers_the_nvrtc_library():
    identity = compiling.compiler_identity("nvrtc")
    major, minor = compiling.nvrtc_version()
    assert identity.startswith(f"nvrtc {major}.{minor} /") and "libnvrtc" in identity


# --- timeouts -------------------------------------------------------------------------------


def test_a_hung_nvcc_times_out_naming_its_kernels(stub_nvcc, monkeypatch):
    # The stub's `sleep` is a child of the stub, as cicc and ptxas are of nvcc: were only the
    # stub killed, `sleep` would hold the output pipes open for its 60 s.
    monkeypatch.setenv("STUB_NVCC_SECONDS", "60")
    monkeypatch.setenv("EMMY_COMPILE_TIMEOUT_S", "0.5")
    started = time.monotonic()
    with pytest.raises(CudaCompileTimeoutError) as caught:
        compile_stub(SOURCE + 'extern "C" __global__ void shift(float* x) {}\n')
    assert time.monotonic() - started < 20
    error = caught.value
    assert error.kernels == ["scale", "shift"] and error.timeout_s == 0.5
    assert str(error) == (
        "nvcc did not finish compiling CUDA for sm_90a within 0.5 s (a source of 3 lines, "
        "kernels scale, shift); EMMY_COMPILE_TIMEOUT_S sets the limit"
    )


@needs_nvcc
def test_a_real_nvcc_past_its_time_is_stopped():
    started = time.monotonic()
    with pytest.raises(CudaCompileTimeoutError, match="kernel scale"):
        compile_cuda(SOURCE, "sm_90a", compiler="nvcc", timeout_s=0.05)
    assert time.monotonic() - started < 20


def test_a_hung_nvrtc_compile_returns_at_its_time_and_is_cancelled(monkeypatch):
    # NVRTC cannot be stopped from outside: the caller stops waiting for its thread, and the
    # flow callback's `stop` cancels it at its next checkpoint (here: at once).
    stopped = threading.Event()

    def hung(source, arch, flags, stop):
        stop.wait(60)
        stopped.set()
        raise CudaError("cancelled")

    monkeypatch.setattr(compiling, "_compile_nvrtc", hung)
    started = time.monotonic()
    with pytest.raises(CudaCompileTimeoutError, match="nvrtc did not finish .* within 0.2 s"):
        compiling._compile_uncached(SOURCE, "sm_90a", "nvrtc", [], 0.2)
    assert time.monotonic() - started < 20
    assert stopped.wait(20)


def test_nvrtc_errors_and_results_come_back_from_its_thread(monkeypatch):
    monkeypatch.setattr(compiling, "_compile_nvrtc", lambda *args: b"cubin")
    assert compiling._compile_uncached(SOURCE, "sm_90a", "nvrtc", [], 10) == b"cubin"
    monkeypatch.setattr(compiling, "_compile_nvrtc", lambda *args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        compiling._compile_uncached(SOURCE, "sm_90a", "nvrtc", [], 10)


@needs_nvrtc
def test_nvrtc_flow_callback_cancels_a_compile():
    stop = threading.Event()
    stop.set()
    flags = compiling._compiler_options("nvrtc", "sm_90a", ())
    with pytest.raises(CudaError, match="cancelled"):
        compiling._compile_nvrtc(SOURCE, "sm_90a", flags, stop)


@needs_nvrtc
def test_a_real_nvrtc_past_its_time_raises():
    with pytest.raises(CudaCompileTimeoutError, match="kernel scale"):
        compile_cuda(SOURCE, "sm_90a", compiler="nvrtc", timeout_s=1e-4, use_cache=False)


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf", "nan"])
def test_a_bad_timeout_is_reported(stub_nvcc, monkeypatch, value):
    monkeypatch.setenv("EMMY_COMPILE_TIMEOUT_S", value)
    with pytest.raises(CudaError, match="EMMY_COMPILE_TIMEOUT_S must be a positive number"):
        compile_stub()
