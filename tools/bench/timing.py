"""Timing programs on the GPU: eager PyTorch, torch.compile and emmy, checked, then timed.

    copy = device_copy_bandwidth()                                  # GB/s, read + write
    peak = tensor_core_peak_tflops()                                # best cuBLAS bf16 8192³
    source = "nn.RMSNorm(2048).to(DT)(torch.randn(8192, 2048, dtype=DT))"
    result = bench_program(source, torch.bfloat16, emmy_fn=HostProgram(kernel_ir),
                           copy_bandwidth_gbps=copy)
    print(format_table(result))
    to_json(result, "rmsnorm.json")

    $ python -m emmy.tools.bench.timing -c SOURCE --dtype bfloat16  # eager vs torch.compile

`measure` says how a run is timed, `bench_program` what is checked and reported.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import logging
import math
import re
import shlex
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

Timer = Callable[[Callable[[], Any], int, int, bool], list[float]]
"""`timer(fn, warmup, reps, flush_l2)` -> the time of each timed run, in microseconds."""

L2_FLUSH_BYTES = 256 << 20
SPIN_CYCLES_PER_US = (
    2000  # an H200's top SM clock is 1980 MHz: a spin that is long enough there is elsewhere too
)

# --- statistics ----------------------------------------------------------------------------


def quantile(samples: Sequence[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) with linear interpolation between order statistics."""
    if not samples:
        raise ValueError("no samples")
    if not 0 <= q <= 1:
        raise ValueError(f"q must be within [0, 1], got {q}")
    ordered = sorted(samples)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(samples: Sequence[float]) -> float:
    return quantile(samples, 0.5)


def summarize(samples: Sequence[float]) -> dict[str, float]:
    """n, median, mean, min, max, the 20th and 80th percentiles and the standard deviation."""
    return {
        "n": len(samples),
        "median_us": median(samples),
        "mean_us": statistics.fmean(samples),
        "min_us": min(samples),
        "max_us": max(samples),
        "p20_us": quantile(samples, 0.2),
        "p80_us": quantile(samples, 0.8),
        "stdev_us": statistics.stdev(samples) if len(samples) > 1 else 0.0,
    }


# --- timing --------------------------------------------------------------------------------

_flush_buffer: torch.Tensor | None = None


def flush_l2() -> None:
    """Evicts the L2 cache by zeroing a buffer several times its size."""
    global _flush_buffer
    if _flush_buffer is None:
        l2 = getattr(
            torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0
        )
        _flush_buffer = torch.empty(max(L2_FLUSH_BYTES, 4 * l2), dtype=torch.int8, device="cuda")
    _flush_buffer.zero_()


def host_call_us(fn: Callable[[], Any], reps: int = 20) -> float:
    """The median time the host spends in one call of `fn`, in microseconds: what a call costs
    before its GPU work can start (launches, guards, graph bookkeeping)."""
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e6)
    torch.cuda.synchronize()
    return median(samples)


def event_timer(fn: Callable[[], Any], warmup: int, reps: int, flush: bool) -> list[float]:
    """Times `reps` runs of `fn` after `warmup` untimed ones, each between CUDA events, with the
    GPU kept busy (a spin kernel after the L2 flush) until the host has queued the whole run:
    the events then time the GPU's work alone, not a host that is slower to issue it than the
    GPU is to do it (torch.compile's calls cost about 60 µs of host time on an H200 host)."""
    for _ in range(warmup):
        fn()
    spin_cycles = int((2 * host_call_us(fn, 5) + 50) * SPIN_CYCLES_PER_US)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        if flush:
            flush_l2()
        torch.cuda._sleep(spin_cycles)
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) * 1e3 for start, end in zip(starts, ends)]


def measure(
    fn: Callable[[], Any],
    warmup: int = 10,
    reps: int = 100,
    *,
    flush_l2: bool = True,
    timer: Timer | None = None,
) -> dict[str, Any]:
    """`summarize` of the run times of `fn`, plus "method": the timer used ("cuda-events", or
    "custom" for a `timer` argument).

    `fn` runs `warmup` times untimed, then `reps` times, each between two CUDA events, with the
    L2 cache flushed before each run (a 256 MiB buffer, or four times the device's L2, is
    zeroed: more than the H200's 60 MB L2); the statistics are in microseconds. Each timed run
    is the GPU's time for one call: after the flush a spin kernel keeps the GPU busy for twice
    the host's time per call (`host_call_us`) until the host has queued the start event, the
    call and the end event, so the events do not time a host slower at issuing the work than
    the GPU is at doing it. A `timer` argument replaces the GPU timing altogether
    (`timer(fn, warmup, reps, flush_l2)` -> samples in µs): the statistics and reports can be
    tested without a GPU."""
    if warmup < 0 or reps < 1:
        raise ValueError(f"need warmup >= 0 and reps >= 1, got {warmup} and {reps}")
    name = "cuda-events" if timer is None else "custom"
    samples = (timer or event_timer)(fn, warmup, reps, flush_l2)
    return {**summarize(samples), "method": name}


def time_cuda(
    fn: Callable[[], Any],
    warmup: int = 10,
    reps: int = 100,
    *,
    flush_l2: bool = True,
    timer: Timer | None = None,
) -> float:
    """The median time of `fn` in microseconds (see `measure`)."""
    return measure(fn, warmup, reps, flush_l2=flush_l2, timer=timer)["median_us"]


def device_copy_bandwidth(
    nbytes: int = 2 << 30,
    warmup: int = 3,
    reps: int = 20,
    *,
    timer: Timer | None = None,
) -> float:
    """The measured device-to-device copy bandwidth in GB/s (1e9 bytes/s), counting the bytes
    read and the bytes written, over the median of `reps` copies of `nbytes` random bytes."""
    source = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, device="cuda")
    target = torch.empty_like(source)
    microseconds = time_cuda(
        lambda: target.copy_(source), warmup, reps, flush_l2=False, timer=timer
    )
    return 2 * nbytes / (microseconds * 1e-6) / 1e9


def tensor_core_peak_tflops(
    size: int = 8192,
    warmup: int = 3,
    reps: int = 20,
    *,
    device: str = "cuda",
    timer: Timer | None = None,
) -> float:
    """The measured bf16 tensor-core peak in TFLOP/s: 2·size³ over the fastest of `reps`
    cuBLAS (torch.mm) products of two random size×size bf16 matrices."""
    a, b = (torch.randn(size, size, dtype=torch.bfloat16, device=device) for _ in range(2))
    best = measure(lambda: torch.mm(a, b), warmup, reps, flush_l2=False, timer=timer)["min_us"]
    return 2 * size**3 / (best * 1e-6) / 1e12


@contextlib.contextmanager
def quiet_autotuning() -> Iterator[None]:
    """torch.compile's max-autotune without its reports on stderr, noise between a benchmark's
    tables: the choices it timed, its own TypedStorage deprecation warning, and the errors
    (with tracebacks) of the candidate kernels it drops, such as Triton configs that need more
    shared memory than the GPU has."""
    dropped_candidates = logging.getLogger("torch._inductor.select_algorithm")
    level = dropped_candidates.level
    dropped_candidates.setLevel(logging.CRITICAL)
    options = {"autotune_num_choices_displayed": 0, "max_autotune_report_choices_stats": False}
    try:
        with torch._inductor.config.patch(options), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="TypedStorage is deprecated")
            yield
    finally:
        dropped_candidates.setLevel(level)


@contextlib.contextmanager
def float32_matmul_precision(precision: str | None) -> Iterator[None]:
    """Runs the body under `torch.set_float32_matmul_precision(precision)` (None: as it is),
    then restores the previous precision."""
    previous = torch.get_float32_matmul_precision()
    if precision is not None:
        torch.set_float32_matmul_precision(precision)
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(previous)


# --- programs ------------------------------------------------------------------------------


def _dtype(dtype: torch.dtype | str) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    aliases = {
        "fp32": "float32",
        "f32": "float32",
        "bf16": "bfloat16",
        "fp16": "float16",
        "f16": "float16",
        "half": "float16",
        "float": "float32",
    }
    value = getattr(torch, aliases.get(dtype, dtype), None)
    if not isinstance(value, torch.dtype):
        raise ValueError(f"unknown dtype {dtype!r}")
    return value


def _leaves(value: Any) -> list[torch.Tensor]:
    return [v for v in torch.utils._pytree.tree_leaves(value) if isinstance(v, torch.Tensor)]


def check_outputs(
    actual: Sequence[torch.Tensor],
    expected: Sequence[torch.Tensor],
    tolerance: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Compares outputs with the reference's, elementwise within `tolerance` (rtol, atol), by
    default that of the reference's dtype (`tolerances.tolerance`: tf32's for f32 where the
    process's float32 matmul precision, which eager ran under too, allows tf32; NaN never
    passes): "correct", "max_abs_error", "rel_error" (‖actual − expected‖ / ‖expected‖, in
    float64) and "error" (why not, or None)."""
    from emmy.tools.bench.tolerances import tolerance as dtype_tolerance

    allows_tf32 = torch.get_float32_matmul_precision() != "highest"

    report: dict[str, Any] = {
        "correct": True,
        "max_abs_error": 0.0,
        "rel_error": 0.0,
        "error": None,
    }
    if len(actual) != len(expected):
        return {
            **report,
            "correct": False,
            "error": f"{len(actual)} outputs, the reference has {len(expected)}",
        }
    for index, (got, want) in enumerate(zip(actual, expected)):
        if tuple(got.shape) != tuple(want.shape):
            return {
                **report,
                "correct": False,
                "error": f"output {index} has shape {list(got.shape)}, expected {list(want.shape)}",
            }
        got64 = got.detach().to("cpu", torch.float64)
        want64 = want.detach().to("cpu", torch.float64)
        # An infinity equal to the reference's differs by NaN, not at all.
        difference = torch.where(got64 == want64, 0.0, (got64 - want64).abs())
        if got64.numel():
            report["max_abs_error"] = max(
                report["max_abs_error"], float(difference.nan_to_num(math.inf).max())
            )
        norm = float(want64.norm())
        relative = float((got64 - want64).norm()) / norm if norm else float(difference.sum())
        report["rel_error"] = max(report["rel_error"], relative)
        largest = float(want64.abs().nan_to_num(0.0).max()) if want64.numel() else 0.0
        rtol, atol = tolerance or dtype_tolerance(want.dtype, allows_tf32, largest)
        # An infinite reference allows only itself (its relative tolerance would be infinite).
        allowed = torch.where(want64.isinf(), 0.0, atol + rtol * want64.abs())
        bad = ~(difference <= allowed)  # NaN compares false: never passes
        if bool(bad.any()):
            where = tuple(int(i) for i in bad.nonzero()[0])
            report.update(
                correct=False,
                error=f"output {index} differs at {list(where)}: {float(got64[where])} vs "
                f"{float(want64[where])} (rtol {rtol}, atol {atol}); "
                f"{int(bad.sum())} of {bad.numel()} elements",
            )
            return report
    return report


def _forward_arguments(
    program: Any, module: torch.nn.Module, inputs: list[Any], device: str
) -> list[torch.Tensor]:
    """`@forward`'s arguments from the cast module (so they carry the benchmarked dtype), a
    complex one as its pair of reals (`complex_pairs`)."""
    from torch.export.graph_signature import InputKind, TensorArgument

    from emmy.tools.frontend.complex_pairs import as_pairs

    remaining = iter(inputs)
    values = []
    for spec in program.exported.graph_signature.input_specs:
        if spec.kind is InputKind.USER_INPUT:
            value = next(remaining)
            if isinstance(spec.arg, TensorArgument):
                values.append(value)
        elif spec.kind is InputKind.PARAMETER:
            values.append(module.get_parameter(spec.target).detach())
        elif spec.kind is InputKind.BUFFER:
            values.append(module.get_buffer(spec.target))
        else:
            values.append(program.exported.constants[spec.target].to(device))
    return as_pairs(values)


@dataclass
class PreparedProgram:
    """A program loaded for the device: its module cast to the dtype under test, fresh random
    inputs (as `bench_program` describes), and `@forward`'s arguments for emmy."""

    program: Any
    torch_ir: Any
    module: torch.nn.Module
    args: Any
    kwargs: Any
    forward_args: list[torch.Tensor]

    def eager(self) -> list[torch.Tensor]:
        return _leaves(self.module(*self.args, **self.kwargs))


def prepare_program(
    source: str, dtype: torch.dtype | str, seed: int = 0, device: str = "cuda"
) -> PreparedProgram:
    """`source` (`DT` standing for `dtype`) loaded and given fresh inputs on `device`. The
    source has chosen every tensor's dtype (an f32 weight or input of a bf16 program stays
    f32, as its Torch IR, which emmy's kernels are compiled from, takes it): nothing is cast."""
    from emmy.tools.bench.differential import random_inputs
    from emmy.tools.frontend.program import load_program

    dtype = _dtype(dtype)
    text = re.sub(r"\bDT\b", f"torch.{str(dtype).removeprefix('torch.')}", source)
    program = load_program(text, "<bench>")
    torch_ir = program.to_torch_ir()
    module = program.module.to(device=device).eval()
    leaves, spec = torch.utils._pytree.tree_flatten((program.example_args, program.example_kwargs))
    fresh = [
        v.to(device) if isinstance(v, torch.Tensor) else v
        for v in random_inputs(program, torch_ir, seed)
    ]
    args, kwargs = torch.utils._pytree.tree_unflatten(fresh, spec)
    forward_args = _forward_arguments(program, module, fresh, device)
    return PreparedProgram(program, torch_ir, module, args, kwargs, forward_args)


def bench_program(
    source: str,
    dtype: torch.dtype | str = torch.float32,
    emmy_fn: Callable[[list[torch.Tensor]], Sequence[torch.Tensor]] | None = None,
    *,
    backends: Sequence[str] = ("eager", "torch.compile", "emmy"),
    warmup: int = 10,
    reps: int = 100,
    seed: int = 0,
    device: str = "cuda",
    compile_mode: str = "max-autotune",
    copy_bandwidth_gbps: float | None = None,
    nbytes: int | None = None,
    flops: int | None = None,
    peak_tflops: float | None = None,
    tolerance: tuple[float, float] | None = None,
    timer: Timer | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """Checks, then times, a program's backends; returns a dict with the program, dtype, bytes,
    timer and a "backends" list of per-backend dicts.

    The source is an `emmy compile -c` program (see `emmy.tools.frontend.program`); `DT` in it
    stands for the dtype under test (as in the differential corpus); nothing else is cast
    (`prepare_program`). Everything is moved to the device; inputs are fresh random values shaped
    like the example inputs (`emmy.tools.bench.differential.random_inputs`, seeded: the same
    on every run, never zeros).

    Backends: PyTorch eager (the reference), `torch.compile(mode=compile_mode)`, and emmy when
    `emmy_fn` is given. The inputs are marked static for torch.compile
    (`torch._dynamo.mark_static_address`), so that its CUDA-graph replays read them where they
    are instead of first copying them into the graph's own buffers (which would time a copy of
    every input too). Shapes are static (`dynamic=False`: a second shape of one forward would
    otherwise be compiled for dynamic shapes), and dynamo is reset before each compile, so
    that no program inherits the cache entries of an earlier one. `emmy_fn(args)` receives
    `@forward`'s arguments in its signature's order (parameters, buffers, constants, then the
    inputs; all on the device) and returns the outputs.

    Each backend's outputs are checked against eager's BEFORE it is timed, elementwise within
    `tolerance` (rtol, atol), by default the dtype's (`emmy.tools.bench.tolerances.
    TOLERANCES`; NaN never passes); a backend that fails (wrong values, or an exception) is
    reported with its error and not timed. Reported per backend: median µs (of the GPU, see
    `measure`), the host's µs per call (torch.compile's calls cost about 60 µs on an H200 host:
    dynamo guards, CUDA-graph bookkeeping; eager's about 15 µs), GB/s (`nbytes` over the median
    time; by default the bytes of every `@forward` argument plus every output: the least traffic
    the program needs), `vs_eager` = eager's time over this one's (a speedup: above 1 is faster)
    and `vs_compile` likewise against torch.compile, and, given the measured copy bandwidth,
    `copy_fraction` = GB/s over it (the roofline fraction of a memory-bound program). Given the
    program's `flops` (the caller declares them, e.g. 2·M·N·K per matrix product):
    `tflops`, and, given the measured tensor-core peak, `peak_fraction` = TFLOP/s over it."""
    dtype = _dtype(dtype)
    prepared = prepare_program(source, dtype, seed, device)
    module, args, kwargs = prepared.module, prepared.args, prepared.kwargs
    forward_args = prepared.forward_args

    runners: dict[str, Callable[[], Sequence[torch.Tensor]]] = {}
    for backend in backends:
        if backend == "eager":
            runners[backend] = prepared.eager
        elif backend == "torch.compile":
            for tensor in _leaves((args, kwargs)):
                torch._dynamo.mark_static_address(tensor)
            # No cache entries, nor their recompile limit, from an earlier program.
            torch._dynamo.reset()
            compiled = torch.compile(module, mode=compile_mode, dynamic=False)
            runners[backend] = _compiled_runner(compiled, args, kwargs)
        elif backend == "emmy":
            if emmy_fn is not None:
                runners[backend] = lambda: list(emmy_fn(forward_args))
        else:
            raise ValueError(f"unknown backend {backend!r}: eager, torch.compile or emmy")
    if "eager" not in runners:
        raise ValueError("the eager backend is the reference: it cannot be left out")

    with torch.no_grad(), quiet_autotuning():
        reference = runners["eager"]()
        if nbytes is None:
            nbytes = sum(t.numel() * t.element_size() for t in [*forward_args, *reference])
        rows = []
        for backend, run in runners.items():
            row: dict[str, Any] = {"backend": backend}
            try:
                # A graphed program's first call runs it as it is (and captures): what gets
                # timed, and so checked, is a later call's replay.
                outputs = reference if backend == "eager" else [run(), run()][-1]
                if backend == "eager":
                    nan = any(bool(t.isnan().any()) for t in reference if t.is_floating_point())
                    row.update(
                        correct=not nan,
                        max_abs_error=0.0,
                        rel_error=0.0,
                        error="eager's output has NaN: the program is not checkable"
                        if nan
                        else None,
                    )
                else:
                    row.update(check_outputs(outputs, reference, tolerance))
            except Exception as error:  # a backend that cannot run is reported, not fatal
                row.update(correct=False, error=f"{type(error).__name__}: {error}".strip())
            outputs = None  # a live output of a CUDA-graph replay would make the next one slow
            if row["correct"]:
                stats = measure(run, warmup, reps, timer=timer)
                if timer is None:
                    stats["host_us"] = host_call_us(run)
                row.update(stats, gbps=nbytes / (stats["median_us"] * 1e-6) / 1e9)
                if copy_bandwidth_gbps:
                    row["copy_fraction"] = row["gbps"] / copy_bandwidth_gbps
                if flops:
                    row["tflops"] = flops / (stats["median_us"] * 1e-6) / 1e12
                    if peak_tflops:
                        row["peak_fraction"] = row["tflops"] / peak_tflops
            rows.append(row)

    times = {row["backend"]: row.get("median_us") for row in rows}
    for row in rows:
        mine = row.get("median_us")
        for key, other in (("vs_eager", "eager"), ("vs_compile", "torch.compile")):
            theirs = times.get(other)
            row[key] = theirs / mine if mine and theirs else None
    timed = [row.get("method") for row in rows if row.get("method")]
    return {
        "program": name or _program_name(source),
        "dtype": str(dtype).removeprefix("torch."),
        "device": device,
        "bytes": nbytes,
        "timer": timed[0] if timed else None,
        "warmup": warmup,
        "reps": reps,
        "seed": seed,
        "copy_bandwidth_gbps": copy_bandwidth_gbps,
        "flops": flops,
        "peak_tflops": peak_tflops,
        "tolerance": tolerance,
        "backends": rows,
    }


def _compiled_runner(
    compiled: Callable[..., Any], args: Any, kwargs: Any
) -> Callable[[], list[torch.Tensor]]:
    """Runs a torch.compile'd module. max-autotune replays CUDA graphs (cudagraph trees); each
    call is marked as a new step (`torch.compiler.cudagraph_mark_step_begin`, as PyTorch's own
    benchmarks do), so that a replay may reuse the memory of the previous call's outputs."""
    mark_step = getattr(torch.compiler, "cudagraph_mark_step_begin", None)

    def run() -> list[torch.Tensor]:
        if mark_step is not None:
            mark_step()
        return _leaves(compiled(*args, **kwargs))

    return run


def _program_name(source: str) -> str:
    lines = [line.strip() for line in source.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return last if len(last) <= 80 else last[:77] + "..."


# --- reports -------------------------------------------------------------------------------


def _as_list(results: dict[str, Any] | Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [results] if isinstance(results, dict) else list(results)


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def format_table(results: dict[str, Any] | Sequence[dict[str, Any]]) -> str:
    """A text table per program: backend, median µs, the host's µs per call, GB/s, speedup over
    eager and over torch.compile; with the program's flops, TFLOP/s (and the fraction of the
    tensor-core peak, when measured); the fraction of copy bandwidth, when measured."""
    blocks = []
    for result in _as_list(results):
        copy, flops, peak = (result.get(k) for k in ("copy_bandwidth_gbps", "flops", "peak_tflops"))
        header = (
            f"{result['program']}  [{result['dtype']}, {result['bytes']:,} bytes moved at least"
            + (f", {flops / 1e9:,.1f} GFLOP" if flops else "")
            + (f", copy bandwidth {copy:,.0f} GB/s" if copy is not None else "")
            + (f", tensor-core peak {peak:,.0f} TFLOP/s" if flops and peak else "")
            + (f", timer {result['timer']}" if result.get("timer") else "")
            + "]"
        )
        # (title, key, digits, scale, width) of the columns after the backend's name
        columns = [
            ("median µs", "median_us", 2, 1, 12),
            ("host µs", "host_us", 1, 1, 10),
            ("GB/s", "gbps", 1, 1, 10),
            ("x eager", "vs_eager", 2, 1, 10),
            ("x compile", "vs_compile", 2, 1, 11),
        ]
        if flops:
            columns.append(("TFLOP/s", "tflops", 1, 1, 9))
            if peak:
                columns.append(("% peak", "peak_fraction", 1, 100, 8))
        if copy is not None:
            columns.append(("% copy", "copy_fraction", 1, 100, 8))
        lines = [header, f"{'backend':<15}" + "".join(f"{c[0]:>{c[4]}}" for c in columns)]
        for row in result["backends"]:
            if not row.get("correct"):
                lines.append(f"{row['backend']:<15}  FAIL: {row.get('error')}")
                continue
            line = f"{row['backend']:<15}"
            for _, key, digits, scale, width in columns:
                value = row.get(key)
                line += f"{_number(None if value is None else scale * value, digits):>{width}}"
            lines.append(line)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def environment() -> dict[str, Any]:
    """The GPU, torch version, command line and date that a report is read with."""
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else None
    return {
        "gpu": gpu,
        "torch": torch.__version__,
        "command": shlex.join(sys.argv),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def to_json(
    results: dict[str, Any] | Sequence[dict[str, Any]],
    path: str | Path,
    header: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Writes the results with `environment()` and `header` (what holds for every result, e.g.
    the measured copy bandwidth) to `path` as JSON; returns what was written."""
    document = {**environment(), **(header or {}), "results": _jsonable(_as_list(results))}
    Path(path).write_text(json.dumps(document, indent=2) + "\n")
    return document


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m emmy.tools.bench.timing",
        description="Time a PyTorch program under eager and torch.compile (max-autotune).",
    )
    parser.add_argument(
        "-c", dest="source", required=True, help="the program, as for emmy compile -c"
    )
    parser.add_argument(
        "--dtype", default="float32", help="float32, bfloat16 or float16 (DT in the source)"
    )
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument(
        "--copy-bandwidth", action="store_true", help="measure the 2 GiB copy bandwidth first"
    )
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    copy = device_copy_bandwidth() if args.copy_bandwidth else None
    backends = ("eager",) if args.no_compile else ("eager", "torch.compile")
    result = bench_program(
        args.source,
        args.dtype,
        backends=backends,
        warmup=args.warmup,
        reps=args.reps,
        copy_bandwidth_gbps=copy,
    )
    print(format_table(result))
    if args.json:
        to_json(result, args.json)
    return 0 if all(row["correct"] for row in result["backends"]) else 1


if __name__ == "__main__":
    sys.exit(main())
