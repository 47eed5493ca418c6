"""The `emmy` command.

    emmy compile (-c SOURCE | FILE.py) [--ir LEVEL] [-o FILE] [--timeout SECONDS]
    emmy run (-c SOURCE | FILE.py) [--device cpu|cuda] [--seed N] [--bench] [--json FILE]
             [--timeout SECONDS]
    emmy bench --suite memory-bound|gemm [--only REGEX] [--json FILE] [--copy-bandwidth GBPS]
               [--peak-tflops TFLOPS]
    emmy exec FILE.mlir [--function NAME] [--inputs in.npz] [--seed N] [-o out.npz]
              [--timeout SECONDS]
    emmy --version

`compile` prints a PyTorch program at one level, exporting it once: its Torch IR is cached on
disk (see `emmy.tools.frontend.program_cache`); `run` checks every level against PyTorch
eager on the CPU interpreter (see `emmy.tools.bench.differential`), or, with `--device cuda`,
the compiled kernels on the GPU, timed with `--bench` (see `emmy.tools.bench.timing`); `bench`
times a suite; `exec` runs a host function of an IR file at any level on the CPU interpreter,
on the inputs of an .npz file (arrays `arr_0`, `arr_1`, ... as `numpy.savez(path, *arrays)`
writes them) or on fresh random ones, prints a summary of each result and writes the results
to `-o` in the same layout, so one run's outputs can be another's inputs.

Each command imports what it uses when it runs, and the parser holds the options of the
command given only (`build_parser`): `--help` answers at once, and PyTorch (seconds to load)
is loaded only to export or run a program, not for a cached `compile` nor for `exec` below
Torch IR.

Bad input never shows a Python traceback: parse, verify and execution errors print
`file:line:col: error: message` with the offending source line, and the exit status is 1. So
does a program that runs past `--timeout` (or `EMMY_TIMEOUT_S`): its own Python for `compile`
and `run`, the interpreter for `exec`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from emmy.tools.files import PendingFile
from emmy.tools.version import ShowVersion

if TYPE_CHECKING:
    import numpy as np
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Operation

    from emmy.tools.bench.suites import Case
    from emmy.tools.diagnostics import Source
    from emmy.tools.frontend.program import Program


class CommandError(Exception):
    """A user-facing error; its message is printed as is and the command exits with 1."""


def read_source(path: str) -> Source:
    from emmy.tools.diagnostics import Source

    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise CommandError(f"error: cannot read {path}: {error.strerror}") from error
    try:
        return Source(path, data.decode("utf-8"))
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line = before.count(b"\n") + 1
        column = error.start - (before.rfind(b"\n") + 1) + 1
        raise CommandError(
            f"{path}:{line}:{column}: error: not UTF-8 text (byte 0x{data[error.start]:02x})"
        ) from None


@contextmanager
def rendered_for(source: Source) -> Iterator[None]:
    """Reports the CompileErrors raised inside as `source`'s located diagnostics."""
    from emmy.tools.diagnostics import CompileError

    try:
        yield
    except CompileError as error:
        raise CommandError("".join(map(source.render, error.diagnostics)).rstrip("\n")) from error


def read_module(source: Source) -> ModuleOp:
    """Parses and verifies an IR file; raises CompileError with the location of a problem."""
    from emmy.dialects import make_context
    from emmy.tools.diagnostics import parse, verify

    module = parse(make_context(), source, 1, source.text)
    verify(module)
    return module


def load_inputs(path: str, count: int) -> list[np.ndarray]:
    import numpy as np

    try:
        archive = np.load(path)
    except (OSError, ValueError) as error:
        raise CommandError(f"error: cannot read inputs from {path}: {error}") from error
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise CommandError(f"error: {path} is not an .npz archive")
    with archive:
        arrays = dict(archive)
    expected = [f"arr_{index}" for index in range(count)]
    if set(arrays) != set(expected):
        raise CommandError(
            f"error: {path} holds {', '.join(sorted(arrays)) or 'no arrays'}, but the function "
            f"takes {count} inputs, expected as {', '.join(expected) or 'no arrays'} "
            "(the names numpy.savez(path, *arrays) gives)"
        )
    return [arrays[name] for name in expected]


def summarize(array: np.ndarray, shown: int = 6) -> str:
    """Shape, dtype, range and the first few values of a result."""
    import numpy as np

    parts = [f"{'x'.join(map(str, array.shape)) or 'scalar'} {array.dtype}"]
    if array.size and array.dtype.kind in "fiub":
        values = array.astype(np.float64)
        finite = values[np.isfinite(values)]
        if finite.size:
            parts.append(f"min {finite.min():.6g} max {finite.max():.6g} mean {finite.mean():.6g}")
        if nan_count := int(np.isnan(values).sum()):
            parts.append(f"{nan_count} NaN")
    first = ", ".join(f"{value:.6g}" for value in array.reshape(-1)[:shown].tolist())
    parts.append(f"[{first}{', ...' if array.size > shown else ''}]")
    return "  ".join(parts)


def run_exec(args: argparse.Namespace) -> int:
    import numpy as np

    from emmy.tools.diagnostics import CompileError, op_diagnostic
    from emmy.tools.frontend.program import TimeLimitExceeded, time_limit
    from emmy.tools.interpreter.run import (
        ExecutionError,
        find_function,
        random_inputs,
        run_module,
    )

    source = read_source(args.file)
    with rendered_for(source):
        module = read_module(source)
        try:
            function = find_function(module, args.function)
        except ValueError as error:
            raise CompileError(op_diagnostic(module, str(error))) from error
        check_interpreter_memory(function)
        if args.inputs is not None:
            inputs = load_inputs(args.inputs, len(function.function_type.inputs.data))
            origin = f"inputs from {args.inputs}"
        else:
            inputs = random_inputs(function, args.seed)
            origin = f"random inputs (seed {args.seed})"
        timeout = timeout_of(args)
        try:
            with time_limit(timeout):
                outputs = run_module(module, inputs, args.function)
        except TimeLimitExceeded:
            raise CommandError(
                f"error: the interpreter ran past the {timeout:g} s limit (--timeout)"
            ) from None
        except ValueError as error:
            raise CompileError(op_diagnostic(function, str(error))) from error
        except ExecutionError as error:
            raise CompileError(op_diagnostic(error.op, str(error))) from error
    print(f"@{args.function} on {origin}: {len(outputs)} result{'s' * (len(outputs) != 1)}")
    for index, (output, output_type) in enumerate(zip(outputs, function.function_type.outputs)):
        print(f"  #{index} {output_type}: {summarize(output)}")
    if args.output is not None:
        try:
            # Through a file object, so that numpy writes the path as given rather than
            # appending `.npz`.
            with PendingFile(Path(args.output)) as file:
                np.savez(file.buffer, *outputs)
        except OSError as error:
            raise CommandError(f"error: cannot write {args.output}: {error}") from error
        print(f"wrote {args.output}")
    return 0


DEFAULT_INTERPRETER_MAX_BYTES = 1 << 30
"""The most memory the tensors of a program the CPU interpreter runs may take, unless
`EMMY_INTERPRETER_MAX_BYTES` says otherwise."""
INTERPRETER_LIMIT = (
    "A program whose tensors would take more than EMMY_INTERPRETER_MAX_BYTES (default 1 GiB) "
    "is refused before it runs."
)


def check_interpreter_memory(function: Operation) -> None:
    """Refuses, before any work, a host function whose tensors (arguments and every value it
    computes) take more than the interpreter's limit: each is a numpy array there, and a level
    may hold several copies."""
    from math import prod

    from xdsl.dialects.builtin import MemRefType, TensorType

    from emmy.dialects.dtypes import element_bytes
    from emmy.tools.settings import setting

    limit = setting(
        "EMMY_INTERPRETER_MAX_BYTES",
        int,
        DEFAULT_INTERPRETER_MAX_BYTES,
        lambda value: value > 0,
        CommandError("error: EMMY_INTERPRETER_MAX_BYTES must be a positive number of bytes"),
    )
    values = [*function.body.block.args, *(r for op in function.walk() for r in op.results)]
    total = sum(
        prod(value.type.get_shape()) * element_bytes(value.type.get_element_type())
        for value in values
        if isinstance(value.type, TensorType | MemRefType)
    )
    if total > limit:
        raise CommandError(
            f"error: the CPU interpreter would hold {_bytes(total)} of tensors for "
            f"@{function.sym_name.data}, over its limit of {_bytes(limit)} "
            "(EMMY_INTERPRETER_MAX_BYTES): run it at a smaller size, or on a GPU with "
            "--device cuda"
        )


def _bytes(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} bytes"


def program_text(args: argparse.Namespace) -> tuple[str, str]:
    """The PyTorch program named on the command line, `-c SOURCE` or a Python file, and the
    file name its diagnostics give."""
    if args.source is not None:
        return args.source, "<source>"
    if args.file is not None:
        return read_source(args.file).text, args.file
    raise CommandError("error: give a program, as -c SOURCE or as a Python file")


def program_source(text: str, filename: str) -> Source:
    """The program as its diagnostics quote it."""
    from emmy.tools.diagnostics import Source

    return Source(filename, "\n".join(text.splitlines()))


def positive_seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"a positive number of seconds, got {text!r}")
    return seconds


def timeout_of(args: argparse.Namespace) -> float | None:
    """The time limit of the program: `--timeout`, else `EMMY_TIMEOUT_S`, else none."""
    from emmy.tools.settings import seconds

    if args.timeout is not None:
        return args.timeout
    error = CommandError("error: EMMY_TIMEOUT_S must be a positive number of seconds")
    return seconds("EMMY_TIMEOUT_S", None, error)


def load(text: str, filename: str, timeout: float | None = None) -> Program:
    from emmy.tools.frontend.program import FrontendError, ProgramTimeout, load_program

    try:
        return load_program(text, filename, timeout)
    except ProgramTimeout as error:
        raise CommandError(f"{error} (--timeout)") from error
    except FrontendError as error:
        raise CommandError(str(error)) from error


def torch_ir_of(program: Program) -> ModuleOp:
    from emmy.tools.frontend.program import FrontendError

    try:
        return program.to_torch_ir()
    except FrontendError as error:
        raise CommandError(str(error)) from error


def run_compile(args: argparse.Namespace) -> int:
    from io import StringIO

    from xdsl.printer import Printer

    from emmy.tools.frontend.program_cache import cached_torch_ir

    text, filename = program_text(args)
    timeout = timeout_of(args)
    module = cached_torch_ir(text, filename, lambda: torch_ir_of(load(text, filename, timeout)))
    with rendered_for(program_source(text, filename)):
        module = lower_with_diagnostics(module, "kernel" if args.ir == "cuda" else args.ir)
        if args.ir == "cuda":
            output = cuda_text(module)
        else:
            printed = StringIO()
            Printer(stream=printed).print_op(module)
            output = f"{printed.getvalue()}\n"
    if args.output is None:
        sys.stdout.write(output)
        return 0
    try:
        with PendingFile(Path(args.output)) as file:
            file.write(output)
    except OSError as error:
        raise CommandError(f"error: cannot write {args.output}: {error.strerror}") from error
    return 0


def cuda_text(module: ModuleOp) -> str:
    """The CUDA C++ of a Kernel IR module; an op the target cannot print is reported at the
    program's source."""
    from emmy.tools.cuda.target import CudaTargetError, print_cuda
    from emmy.tools.diagnostics import CompileError, op_diagnostic

    try:
        return print_cuda(module)
    except CudaTargetError as error:
        raise CompileError(op_diagnostic(error.op, str(error.args[0]), module)) from error


@contextmanager
def lowering(torch_ir: ModuleOp, level: str) -> Iterator[None]:
    """Reports a pass that fails while `torch_ir` is taken to `level` at the program's
    source."""
    from xdsl.utils.exceptions import PassFailedException

    from emmy.tools.diagnostics import CompileError, failure_diagnostic

    try:
        yield
    except PassFailedException as error:
        raise CompileError(failure_diagnostic(error, f"lowering to {level}", torch_ir)) from error


def lower_with_diagnostics(module: ModuleOp, level: str) -> ModuleOp:
    """`module` taken to `level`; a pass failure is reported at the program's source."""
    from emmy.tools.bench.differential import lower

    with lowering(module, level):
        return lower(module, level)


def gpu_results(source: str, program: Program, module: ModuleOp, bench: bool, **case: Any) -> dict:
    """Checks the program's kernels on the GPU against eager and, with `bench`, times them
    against eager and torch.compile (see `emmy.tools.bench.timing`). `case` holds
    `bench_program`'s keywords for what a suite's case counts and checks: copy_bandwidth_gbps,
    nbytes, flops, peak_tflops, tolerance."""

    from emmy.tools.bench.timing import bench_program
    from emmy.tools.runtime.host import GraphedHostProgram, HostProgram

    with rendered_for(program_source(source, program.filename)):
        kernels = HostProgram(lower_with_diagnostics(module, "kernel"))
    backends = ("eager", "torch.compile", "emmy") if bench else ("eager", "emmy")

    # Timed, emmy's launches replay as one CUDA graph (checked against eager first), as
    # torch.compile's max-autotune replays its own: the Python launch path costs more than a
    # small kernel runs.
    result = bench_program(
        source,
        program_dtype(program),
        emmy_fn=GraphedHostProgram(kernels) if bench else kernels,
        backends=backends,
        warmup=10 if bench else 0,
        reps=100 if bench else 1,
        **case,
    )
    result["emmy_launch"] = "cuda-graph" if bench else "direct"
    return result


def program_dtype(program: Program) -> Any:
    """The dtype of the program's first floating example input (float32 if it has none): the
    dtype its results are reported under (and what `DT` would stand for in its source)."""
    import torch

    leaves = torch.utils._pytree.tree_leaves((program.example_args, program.example_kwargs))
    dtype = next((t.dtype for t in leaves if torch.is_tensor(t) and t.is_floating_point()), None)
    return dtype or torch.float32


def require_gpu(command: str) -> None:
    import torch

    if not torch.cuda.is_available():
        raise CommandError(f"error: {command} runs on a CUDA GPU, and torch sees none here")


def run_on_gpu(args: argparse.Namespace) -> int:
    from emmy.tools.bench.timing import format_table, to_json

    text, filename = program_text(args)
    program = load(text, filename, timeout_of(args))
    require_gpu("emmy run --device cuda")
    result = gpu_results(text, program, torch_ir_of(program), args.bench)
    print(format_table(result))
    if args.json:
        to_json(result, args.json)
    return 0 if all(row["correct"] for row in result["backends"]) else 1


def run_bench(args: argparse.Namespace) -> int:
    from emmy.tools.bench.suites import SUITES
    from emmy.tools.bench.timing import device_copy_bandwidth, tensor_core_peak_tflops, to_json

    cases = [
        case for case in SUITES[args.suite] if args.only is None or re.search(args.only, case.name)
    ]
    if not cases:
        raise CommandError(f"error: no case of suite {args.suite} matches --only {args.only!r}")
    require_gpu("emmy bench")
    copy = peak = None
    if any(case.copy_bound for case in cases):
        copy = args.copy_bandwidth or device_copy_bandwidth()
        print(f"device copy bandwidth: {copy:.0f} GB/s", flush=True)
    if any(case.flops for case in cases):
        peak = args.peak_tflops or tensor_core_peak_tflops()
        print(f"bf16 tensor-core peak (best cuBLAS 8192³): {peak:.0f} TFLOP/s", flush=True)
    header = {"suite": args.suite, "copy_bandwidth_gbps": copy, "tensor_core_peak_tflops": peak}
    results = []
    for index, case in enumerate(cases, 1):
        print(f"[{index}/{len(cases)}] {case.name}", flush=True)
        results.append(bench_case(case, copy, peak))
        if args.json:
            to_json(results, args.json, header)
    return 0 if all(r["correct"] for result in results for r in result["backends"]) else 1


def bench_case(case: Case, copy: float | None, peak: float | None) -> dict:
    """One case checked and timed; the copy fraction of a copy-bound case counts a decode
    step's weights (or KV cache) only, and the whole case runs under its float32 matmul
    precision."""
    from emmy.tools.bench.timing import float32_matmul_precision, format_table

    text = case.source.replace("DT", f"torch.{case.dtype}")
    with float32_matmul_precision(case.float32_matmul_precision):
        program = load(text, f"<{case.program}>")
        result = gpu_results(
            text,
            program,
            torch_ir_of(program),
            bench=True,
            copy_bandwidth_gbps=copy if case.copy_bound else None,
            nbytes=case.streamed_bytes,
            flops=case.flops,
            peak_tflops=peak,
            tolerance=case.tolerance,
        )
    result.update(program=case.program, shape=case.shape)
    if case.float32_matmul_precision:
        result["float32_matmul_precision"] = case.float32_matmul_precision
    print(format_table(result), flush=True)
    return result


def run_tune(args: argparse.Namespace) -> int:
    """`emmy tune` (see `emmy.tools.tune`): a program's or a suite's kernels tuned, or the
    tuning database exported or imported."""
    from emmy.tools.tuning_database import TuningDatabase

    database = TuningDatabase()
    if args.export_file:
        count = database.export(Path(args.export_file))
        print(f"{count} tuned schedule{'s' * (count != 1)} written to {args.export_file}")
        return 0
    if args.import_file:
        try:
            count = database.import_file(Path(args.import_file))
        except ValueError as error:
            raise CommandError(f"error: {error}") from None
        print(f"{count} tuned schedule{'s' * (count != 1)} imported into {database.path}")
        return 0
    from emmy.tools.tune import parse_duration, tune_program

    if args.limit < 0:
        raise CommandError(f"error: --limit is a number of candidates (0: all), got {args.limit}")
    try:
        budget = parse_duration(args.budget)
    except ValueError as error:
        raise CommandError(f"error: --budget: {error}") from None
    if args.suite is not None:
        from emmy.tools.bench.suites import SUITES

        if args.suite not in SUITES:
            raise CommandError(
                f"error: no suite {args.suite!r}: one of {', '.join(sorted(SUITES))}"
            )
        cases = [c for c in SUITES[args.suite] if args.only is None or re.search(args.only, c.name)]
        if not cases:
            raise CommandError(f"error: no case of suite {args.suite} matches --only {args.only!r}")
        programs = [(c.name, c.source, c.dtype, c.float32_matmul_precision) for c in cases]
    else:
        text, filename = program_text(args)
        program = load(text, filename, timeout_of(args))
        programs = [(filename, text, program_dtype(program), None)]
    require_gpu("emmy tune")
    from emmy.tools.bench.timing import float32_matmul_precision

    deadline = time.monotonic() + budget
    wrong = False
    for index, (name, source, dtype, precision) in enumerate(programs):
        print(f"{name}:", flush=True)
        share = (deadline - time.monotonic()) / (len(programs) - index)
        with float32_matmul_precision(precision):
            results = tune_program(
                source,
                dtype,
                time.monotonic() + share,
                lambda line: print(line, flush=True),
                args.verbose,
                args.limit,
            )
        wrong |= any(result.best is None for _, result in results)
    return 1 if wrong else 0


def run_run(args: argparse.Namespace) -> int:
    """Checks every level on the CPU, printing to stderr as each level starts (the kernel
    level, emulated thread by thread, may take a while) and the results to stdout."""
    if args.device == "cuda":
        return run_on_gpu(args)
    if args.bench or args.json:
        raise CommandError("error: --bench and --json time the GPU kernels: add --device cuda")
    from emmy.dialects.dtypes import element_type
    from emmy.dialects.torch import float32_matmul_precision
    from emmy.tools.bench.differential import EXECUTABLE_LEVELS, level_reports
    from emmy.tools.bench.tolerances import rule
    from emmy.tools.diagnostics import CompileError, op_diagnostic
    from emmy.tools.interpreter.run import ExecutionError, find_function

    started = time.monotonic()
    text, filename = program_text(args)
    program = load(text, filename, timeout_of(args))
    module = torch_ir_of(program)
    check_interpreter_memory(find_function(module, "forward"))
    reports = []
    with rendered_for(program_source(text, filename)):
        checks = level_reports(program, module, EXECUTABLE_LEVELS, args.seed)
        for level in EXECUTABLE_LEVELS:
            elapsed = time.monotonic() - started
            print(f"{elapsed:6.1f} s  checking {level}", file=sys.stderr, flush=True)
            try:
                with lowering(module, level):
                    reports.append(next(checks))
            except ExecutionError as error:
                raise CompileError(op_diagnostic(error.op, str(error), module)) from error
    print(f"{'level':<8}{'max abs error':>16}{'max rel error':>16}  result")
    for report in reports:
        verdict = "pass" if report.passed else "FAIL"
        print(
            f"{report.level:<8}{report.max_abs_error:>16.3e}{report.max_rel_error:>16.3e}"
            f"  {verdict}"
        )
    outputs = find_function(module, "forward").function_type.outputs.data
    dtypes = [element_type(output.get_element_type()).torch for output in outputs]
    print(rule(dtypes, float32_matmul_precision(module) != "highest"))
    return 0 if all(r.passed for r in reports) else 1


def add_program_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", help="a Python file holding the program")
    parser.add_argument("-c", dest="source", metavar="SOURCE", help="the program as a string")
    add_timeout_argument(
        parser, "own Python (building its module and example inputs, and tracing it)"
    )


def add_timeout_argument(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        metavar="SECONDS",
        help=f"stop, with an error, a program whose {what} runs longer than SECONDS (default: "
        "$EMMY_TIMEOUT_S, else no limit)",
    )


def add_compile_arguments(parser: argparse.ArgumentParser) -> None:
    from emmy.passes.pipelines import LEVELS

    parser.description = (
        "Import a PyTorch program with torch.export and print it at one IR level. SOURCE is "
        "Python with torch, nn and F imported; its last statement calls an nn.Module on "
        'example tensors, e.g. "nn.RMSNorm(2048)(torch.randn(1, 32, 2048))".'
    )
    parser.epilog = (
        "The Torch IR of each program is cached, keyed by its text and file name and by the "
        "versions of emmy, PyTorch and xDSL, so that compiling it again skips the export: in "
        "$EMMY_CACHE_DIR/torch-ir, else $XDG_CACHE_HOME/emmy/torch-ir, else "
        "~/.cache/emmy/torch-ir. EMMY_NO_CACHE=1 turns the cache off (for a program that reads "
        "files or the environment)."
    )
    add_program_arguments(parser)
    parser.add_argument(
        "--ir",
        choices=(*LEVELS, "cuda"),
        default="torch",
        metavar="LEVEL",
        help=f"the level to print: {', '.join(LEVELS)}, or cuda for the kernels' CUDA C++ "
        "(default: torch)",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write the IR to FILE")
    parser.set_defaults(command=run_compile)


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    from emmy.passes.pipelines import LEVELS
    from emmy.tools.bench.tolerances import summary

    parser.description = (
        f"Run the program at each of its {len(LEVELS)} levels ({', '.join(LEVELS)}) on the CPU "
        "interpreter, on the same fresh random inputs (an integer input that indexes a table, "
        "such as an embedding's indices, below the table's size; other integers within the "
        "example's range), and compare each with PyTorch eager; exit 1 on any mismatch. Each "
        f"level's start is reported on stderr. Tolerances: {summary()}. {INTERPRETER_LIMIT} "
        "With --device cuda, check the compiled kernels on the GPU instead (and with --bench, "
        "time them)."
    )
    add_program_arguments(parser)
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="where the compiled levels run (default: cpu, the interpreter)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random inputs (default: 0)"
    )
    parser.add_argument(
        "--bench",
        action="store_true",
        help="with --device cuda: also time eager, torch.compile (max-autotune) and emmy",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="with --device cuda: write the results as JSON"
    )
    parser.set_defaults(command=run_run)


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    from emmy.tools.bench.suites import SUITES

    parser.description = (
        "Check, then time, every case (a program at a shape and dtype) of a suite under eager "
        "PyTorch, torch.compile (max-autotune) and emmy, on the current CUDA device. "
        "memory-bound: norms, softmax and activations, against the measured copy bandwidth; "
        "gemm: matrix products in TFLOP/s against the measured bf16 tensor-core peak (decode "
        "steps also against the copy bandwidth, for their weights); attention: SDPA and "
        "attention written by hand in TFLOP/s (causal counts half), decode steps against the "
        "copy bandwidth, for their KV cache."
    )
    parser.add_argument("--suite", choices=sorted(SUITES), required=True)
    parser.add_argument(
        "--only",
        metavar="REGEX",
        help="run the cases whose 'program shape dtype' (e.g. 'rms_norm 8192x4096 bfloat16', "
        "'linear 16x4096x4096 bfloat16': gemm shapes read MxNxK; fp32 gemm cases end in their "
        "float32 matmul precision, 'matmul 4096x4096x4096 float32 high') matches REGEX",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="write the results as JSON (after each case)"
    )
    parser.add_argument(
        "--copy-bandwidth",
        type=float,
        metavar="GBPS",
        help="the device copy bandwidth to report fractions of, instead of measuring it",
    )
    parser.add_argument(
        "--peak-tflops",
        type=float,
        metavar="TFLOPS",
        help="the bf16 tensor-core peak to report fractions of, instead of measuring it (the "
        "best of cuBLAS bf16 8192³ products)",
    )
    parser.set_defaults(command=run_bench)


def add_exec_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run a host function of an IR file, at any level from torch to kernel, on the CPU "
        f"interpreter and print a summary of its results. {INTERPRETER_LIMIT}"
    )
    parser.add_argument("file", help="the .mlir file to run")
    parser.add_argument(
        "--function", default="forward", help="the func.func to run (default: forward)"
    )
    parser.add_argument(
        "--inputs",
        metavar="NPZ",
        help="the inputs, as arr_0, arr_1, ... in an .npz file (default: random inputs: "
        "standard normal floats, random booleans, integers from 0 to 15 or, for one that "
        "indexes a dim such as an embedding's indices, below its size)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random inputs (default: 0)"
    )
    parser.add_argument("-o", "--output", metavar="NPZ", help="write the results to an .npz file")
    add_timeout_argument(parser, "interpretation")
    parser.set_defaults(command=run_exec)


def add_tune_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Time the candidate schedules of every kernel of a program (or of each case of a "
        "benchmark suite) on the current CUDA device, each checked against eager PyTorch "
        "first, and record the fastest correct one in the tuning database, which compiling "
        "then takes before the heuristic (`emmy compile --ir tile` marks such a kernel "
        "tile.tuned). The database is $EMMY_CACHE_DIR/tuning.sqlite3, else "
        "$XDG_CACHE_HOME/emmy/tuning.sqlite3, else ~/.cache/emmy/tuning.sqlite3."
    )
    add_program_arguments(parser)
    parser.add_argument("--suite", metavar="NAME", help="tune every case of a benchmark suite")
    parser.add_argument(
        "--only", metavar="REGEX", help="with --suite: the cases whose name matches"
    )
    parser.add_argument(
        "--budget",
        default="10m",
        metavar="DURATION",
        help="the time the whole tuning may take, e.g. 90s, 5m, 1h (default: 10m)",
    )
    parser.add_argument(
        "--limit", type=int, default=0, metavar="N", help="time at most N candidates a kernel"
    )
    parser.add_argument(
        "--verbose", action="store_true", help="print every candidate's time and every drop"
    )
    parser.add_argument(
        "--export", dest="export_file", metavar="FILE", help="write the database to FILE (JSON)"
    )
    parser.add_argument(
        "--import",
        dest="import_file",
        metavar="FILE",
        help="record the tuned schedules of an exported FILE",
    )
    parser.set_defaults(command=run_tune)


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "compile": ("print a PyTorch program at one IR level", add_compile_arguments),
    "run": (
        "check every IR level of a PyTorch program against PyTorch eager",
        add_run_arguments,
    ),
    "bench": ("time a benchmark suite on the GPU", add_bench_arguments),
    "tune": ("tune the schedules of a program's kernels on the GPU", add_tune_arguments),
    "exec": ("run an IR file on the CPU interpreter", add_exec_arguments),
}
"""Each command's summary, for `emmy --help`, and what adds its description and options."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `emmy` parser, with the description and options of `command` only: the others
    are listed with their summaries, and adding their options would import what those list
    (the levels, the suites)."""
    parser = argparse.ArgumentParser(
        prog="emmy",
        description="emmy: an MLIR-style compiler from PyTorch to CUDA.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "--version", action=ShowVersion, program="emmy", libraries=["xdsl", "torch"]
    )
    commands = parser.add_subparsers(
        title="commands", dest="command_name", required=True, metavar="COMMAND"
    )
    for name, (summary, add_arguments) in COMMANDS.items():
        subparser = commands.add_parser(name, help=summary, allow_abbrev=False)
        if name == command:
            add_arguments(subparser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # The top level takes no option with a value: its first other argument is the command.
    command = next((argument for argument in argv if not argument.startswith("-")), None)
    args = build_parser(command).parse_args(argv)
    try:
        return args.command(args)
    except CommandError as error:
        print(error, file=sys.stderr)
    except KeyboardInterrupt:
        print(f"emmy {args.command_name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of the output left (`| head`): nothing to report, as for SIGPIPE; stdout
        # goes to /dev/null so that flushing it at exit does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:
        from emmy.tools.runtime.compile import CudaError
        from emmy.tools.runtime.cubin_cache import CubinCacheError

        if isinstance(error, CudaError | CubinCacheError):
            print(f"error: {error}", file=sys.stderr)
            # Only a run that loaded the driver (and PyTorch with it) can have timed out.
            driver = sys.modules.get("emmy.tools.runtime.driver")
            if driver is not None and isinstance(error, driver.CudaTimeoutError):
                # The GPU cannot stop the kernel; ending the process (its context) does.
                sys.stderr.flush()
                sys.stdout.flush()
                os._exit(1)
            return 1
        from emmy.tools.diagnostics import internal_error

        print(internal_error(f"in emmy {args.command_name}", error), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
