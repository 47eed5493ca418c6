"""The `emmy` command.

    emmy compile (-c SOURCE | FILE.py) [--ir LEVEL] [-o FILE]
    emmy run (-c SOURCE | FILE.py) [--device cpu|cuda] [--seed N] [--bench] [--json FILE]
    emmy bench --suite memory-bound|gemm [--only REGEX] [--json FILE] [--copy-bandwidth GBPS]
               [--peak-tflops TFLOPS]
    emmy exec FILE.mlir [--function NAME] [--inputs in.npz] [--seed N] [-o out.npz]

`compile` prints a PyTorch program at one level; `run` checks every level against PyTorch
eager on the CPU interpreter (see `emmy.tools.bench.differential`), or, with `--device cuda`,
the compiled kernels on the GPU, timed with `--bench` (see `emmy.tools.bench.timing`); `bench`
times a suite; `exec` runs a host function of an IR file at any level on the CPU interpreter,
on the inputs of an .npz file (arrays `arr_0`, `arr_1`, ... as `numpy.savez(path, *arrays)`
writes them) or on fresh random ones, prints a summary of each result and writes the results
to `-o` in the same layout, so one run's outputs can be another's inputs.

Bad input never shows a Python traceback: parse, verify and execution errors print
`file:line:col: error: message` with the offending source line, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import torch
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from emmy.dialects import make_context
from emmy.passes.pipelines import LEVELS
from emmy.tools.bench.differential import (
    EXECUTABLE_LEVELS,
    TF32_TOLERANCE,
    TOLERANCES,
    check_levels,
    lower,
)
from emmy.tools.bench.suites import SUITES, Case
from emmy.tools.diagnostics import (
    CompileError,
    Source,
    internal_error,
    op_diagnostic,
    parse,
    verify,
)
from emmy.tools.frontend.program import FrontendError, Program, load_program
from emmy.tools.interpreter.run import ExecutionError, find_function, random_inputs, run_module


class CommandError(Exception):
    """A user-facing error; its message is printed as is and the command exits with 1."""


def read_source(path: str) -> Source:
    try:
        return Source(path, Path(path).read_text())
    except OSError as error:
        raise CommandError(f"error: cannot read {path}: {error.strerror}") from error


@contextmanager
def rendered_for(source: Source) -> Iterator[None]:
    """Reports the CompileErrors raised inside as `source`'s located diagnostics."""
    try:
        yield
    except CompileError as error:
        raise CommandError("".join(map(source.render, error.diagnostics)).rstrip("\n")) from error


def read_module(source: Source) -> ModuleOp:
    """Parses and verifies an IR file; raises CompileError with the location of a problem."""
    module = parse(make_context(), source, 1, source.text)
    verify(module)
    return module


def load_inputs(path: str, count: int) -> list[np.ndarray]:
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
    source = read_source(args.file)
    with rendered_for(source):
        module = read_module(source)
        try:
            function = find_function(module, args.function)
        except ValueError as error:
            raise CompileError(op_diagnostic(module, str(error))) from error
        if args.inputs is not None:
            inputs = load_inputs(args.inputs, len(function.function_type.inputs.data))
            origin = f"inputs from {args.inputs}"
        else:
            inputs = random_inputs(function, args.seed)
            origin = f"random inputs (seed {args.seed})"
        try:
            outputs = run_module(module, inputs, args.function)
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
            with open(args.output, "wb") as file:
                np.savez(file, *outputs)
        except OSError as error:
            raise CommandError(f"error: cannot write {args.output}: {error}") from error
        print(f"wrote {args.output}")
    return 0


def read_program(args: argparse.Namespace) -> Program:
    """The PyTorch program named on the command line: `-c SOURCE` or a Python file."""
    if args.source is not None:
        text, filename = args.source, "<source>"
    elif args.file is not None:
        text, filename = read_source(args.file).text, args.file
    else:
        raise CommandError("error: give a program, as -c SOURCE or as a Python file")
    try:
        return load_program(text, filename)
    except FrontendError as error:
        raise CommandError(str(error)) from error


def torch_ir_of(program: Program) -> ModuleOp:
    try:
        return program.to_torch_ir()
    except FrontendError as error:
        raise CommandError(str(error)) from error


def program_source(program: Program) -> Source:
    return Source(program.filename, "\n".join(program.source_lines))


def run_compile(args: argparse.Namespace) -> int:
    program = read_program(args)
    module = torch_ir_of(program)
    with rendered_for(program_source(program)):
        module = lower_with_diagnostics(module, "kernel" if args.ir == "cuda" else args.ir)
        if args.ir == "cuda":
            text = cuda_text(module)
        else:
            text = StringIO()
            Printer(stream=text).print_op(module)
            text = f"{text.getvalue()}\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text)
    except OSError as error:
        raise CommandError(f"error: cannot write {args.output}: {error.strerror}") from error
    return 0


def cuda_text(module: ModuleOp) -> str:
    """The CUDA C++ of a Kernel IR module; an op the target cannot print is reported at the
    program's source."""
    from emmy.tools.cuda.target import CudaTargetError, print_cuda

    try:
        return print_cuda(module)
    except CudaTargetError as error:
        raise CompileError(op_diagnostic(error.op, str(error.args[0]), module)) from error


def lower_with_diagnostics(module: ModuleOp, level: str) -> ModuleOp:
    """`module` taken to `level`; a pass failure is reported at the program's source."""
    try:
        return lower(module, level)
    except PassFailedException as error:
        raise CompileError(op_diagnostic(module, f"lowering to {level} failed: {error}")) from error


def gpu_results(source: str, program: Program, module: ModuleOp, bench: bool, **case: Any) -> dict:
    """Checks the program's kernels on the GPU against eager and, with `bench`, times them
    against eager and torch.compile (see `emmy.tools.bench.timing`). `case` holds
    `bench_program`'s keywords for what a suite's case counts and checks: copy_bandwidth_gbps,
    nbytes, flops, peak_tflops, tolerance."""
    from emmy.tools.bench.timing import bench_program
    from emmy.tools.runtime.host import GraphedHostProgram, HostProgram

    with rendered_for(program_source(program)):
        kernels = HostProgram(lower_with_diagnostics(module, "kernel"))
    leaves = torch.utils._pytree.tree_leaves((program.example_args, program.example_kwargs))
    dtype = next((t.dtype for t in leaves if torch.is_tensor(t) and t.is_floating_point()), None)
    backends = ("eager", "torch.compile", "emmy") if bench else ("eager", "emmy")

    # Timed, emmy's launches replay as one CUDA graph (checked against eager first), as
    # torch.compile's max-autotune replays its own: the Python launch path costs more than a
    # small kernel runs.
    result = bench_program(
        source,
        dtype or torch.float32,
        emmy_fn=GraphedHostProgram(kernels) if bench else kernels,
        backends=backends,
        warmup=10 if bench else 0,
        reps=100 if bench else 1,
        **case,
    )
    result["emmy_launch"] = "cuda-graph" if bench else "direct"
    return result


def require_gpu(command: str) -> None:
    if not torch.cuda.is_available():
        raise CommandError(f"error: {command} runs on a CUDA GPU, and torch sees none here")


def run_on_gpu(args: argparse.Namespace) -> int:
    from emmy.tools.bench.timing import format_table, to_json

    program = read_program(args)
    require_gpu("emmy run --device cuda")
    source = args.source if args.source is not None else read_source(args.file).text
    result = gpu_results(source, program, torch_ir_of(program), args.bench)
    print(format_table(result))
    if args.json:
        to_json(result, args.json)
    return 0 if all(row["correct"] for row in result["backends"]) else 1


def run_bench(args: argparse.Namespace) -> int:
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
    step's weights only, and the whole case runs under its float32 matmul precision."""
    from emmy.tools.bench.timing import float32_matmul_precision, format_table

    text = case.source.replace("DT", f"torch.{case.dtype}")
    with float32_matmul_precision(case.float32_matmul_precision):
        program = load_program(text, f"<{case.program}>")
        result = gpu_results(
            text,
            program,
            torch_ir_of(program),
            bench=True,
            copy_bandwidth_gbps=copy if case.copy_bound else None,
            nbytes=case.weight_bytes,
            flops=case.flops,
            peak_tflops=peak,
            tolerance=case.tolerance,
        )
    result.update(program=case.program, shape=case.shape)
    if case.float32_matmul_precision:
        result["float32_matmul_precision"] = case.float32_matmul_precision
    print(format_table(result), flush=True)
    return result


def run_run(args: argparse.Namespace) -> int:
    if args.device == "cuda":
        return run_on_gpu(args)
    if args.bench or args.json:
        raise CommandError("error: --bench and --json time the GPU kernels: add --device cuda")
    program = read_program(args)
    module = torch_ir_of(program)
    with rendered_for(program_source(program)):
        for level in EXECUTABLE_LEVELS:
            lower_with_diagnostics(module, level)
        try:
            reports = check_levels(program, module, EXECUTABLE_LEVELS, args.seed)
        except ExecutionError as error:
            raise CompileError(op_diagnostic(error.op, str(error), module)) from error
    print(f"{'level':<8}{'max abs error':>16}{'max rel error':>16}  result")
    for report in reports:
        verdict = "pass" if report.passed else "FAIL"
        print(
            f"{report.level:<8}{report.max_abs_error:>16.3e}{report.max_rel_error:>16.3e}"
            f"  {verdict}"
        )
    return 0 if all(r.passed for r in reports) else 1


def add_program_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", help="a Python file holding the program")
    parser.add_argument("-c", dest="source", metavar="SOURCE", help="the program as a string")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="emmy",
        description="emmy: an MLIR-style compiler from PyTorch to CUDA.",
        allow_abbrev=False,
    )
    commands = parser.add_subparsers(
        title="commands", dest="command_name", required=True, metavar="COMMAND"
    )
    levels = ", ".join(LEVELS)
    compile_ = commands.add_parser(
        "compile",
        help="print a PyTorch program at one IR level",
        description="Import a PyTorch program with torch.export and print it at one IR level. "
        "SOURCE is Python with torch, nn and F imported; its last statement calls an "
        'nn.Module on example tensors, e.g. "nn.RMSNorm(2048)(torch.randn(1, 32, 2048))".',
        allow_abbrev=False,
    )
    add_program_arguments(compile_)
    compile_.add_argument(
        "--ir",
        choices=(*LEVELS, "cuda"),
        default="torch",
        metavar="LEVEL",
        help=f"the level to print: {levels}, or cuda for the kernels' CUDA C++ (default: torch)",
    )
    compile_.add_argument("-o", "--output", metavar="FILE", help="write the IR to FILE")
    compile_.set_defaults(command=run_compile)

    run = commands.add_parser(
        "run",
        help="check every IR level of a PyTorch program against PyTorch eager",
        description="Run the program at every executable level "
        f"({', '.join(EXECUTABLE_LEVELS)}) on the same fresh random inputs and compare each "
        "with PyTorch eager; exit 1 on any mismatch. Tolerances by dtype (rtol, atol): "
        + "; ".join(
            f"{str(d).removeprefix('torch.')} {r:g}, {a:g}" for d, (r, a) in TOLERANCES.items()
        )
        + f"; integers and booleans exactly; f32 within {TF32_TOLERANCE:g} of the output's "
        "largest magnitude where the program's float32 matmul precision allows tf32.",
        allow_abbrev=False,
    )
    add_program_arguments(run)
    run.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="where the compiled levels run (default: cpu, the interpreter)",
    )
    run.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default: 0)")
    run.add_argument(
        "--bench",
        action="store_true",
        help="with --device cuda: also time eager, torch.compile (max-autotune) and emmy",
    )
    run.add_argument("--json", metavar="FILE", help="with --device cuda: write the results as JSON")
    run.set_defaults(command=run_run)

    bench = commands.add_parser(
        "bench",
        help="time a benchmark suite on the GPU",
        description="Check, then time, every case (a program at a shape and dtype) of a suite "
        "under eager PyTorch, torch.compile (max-autotune) and emmy, on the current CUDA device. "
        "memory-bound: norms, softmax and activations, against the measured copy bandwidth; "
        "gemm: matrix products in TFLOP/s against the measured bf16 tensor-core peak (decode "
        "steps also against the copy bandwidth, for their weights).",
        allow_abbrev=False,
    )
    bench.add_argument("--suite", choices=sorted(SUITES), required=True)
    bench.add_argument(
        "--only",
        metavar="REGEX",
        help="run the cases whose 'program shape dtype' (e.g. 'rms_norm 8192x4096 bfloat16', "
        "'linear 16x4096x4096 bfloat16': gemm shapes read MxNxK; fp32 gemm cases end in their "
        "float32 matmul precision, 'matmul 4096x4096x4096 float32 high') matches REGEX",
    )
    bench.add_argument("--json", metavar="FILE", help="write the results as JSON (after each case)")
    bench.add_argument(
        "--copy-bandwidth",
        type=float,
        metavar="GBPS",
        help="the device copy bandwidth to report fractions of, instead of measuring it",
    )
    bench.add_argument(
        "--peak-tflops",
        type=float,
        metavar="TFLOPS",
        help="the bf16 tensor-core peak to report fractions of, instead of measuring it (the "
        "best of cuBLAS bf16 8192³ products)",
    )
    bench.set_defaults(command=run_bench)

    execute = commands.add_parser(
        "exec",
        help="run an IR file on the CPU interpreter",
        description="Run a host function of an IR file, at any level from torch to kernel, on "
        "the CPU interpreter and print a summary of its results.",
        allow_abbrev=False,
    )
    execute.add_argument("file", help="the .mlir file to run")
    execute.add_argument(
        "--function", default="forward", help="the func.func to run (default: forward)"
    )
    execute.add_argument(
        "--inputs",
        metavar="NPZ",
        help="the inputs, as arr_0, arr_1, ... in an .npz file (default: random inputs)",
    )
    execute.add_argument(
        "--seed", type=int, default=0, help="seed of the random inputs (default: 0)"
    )
    execute.add_argument("-o", "--output", metavar="NPZ", help="write the results to an .npz file")
    execute.set_defaults(command=run_exec)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.command(args)
    except CommandError as error:
        print(error, file=sys.stderr)
    except Exception as error:
        print(internal_error(f"in emmy {args.command_name}", error), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
