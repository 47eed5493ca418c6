"""Times emmy's kernels for suite cases under each candidate schedule of each kernel, against
eager, in one process: the data behind the schedule heuristic's choices.

    python3 benchmarks/schedule_sweep.py --only 'rms_norm 8192x4096' --limit 8 --json sweep.json
    python3 benchmarks/schedule_sweep.py --suite gemm --only 'linear 16x4096' --schedules mma_sync

For each kernel of a case, every schedule `candidates` offers whose text matches `--schedules`
(the heuristic's first, at most `--limit`) is written on that kernel as its `#tile.schedule`,
the other kernels keep the heuristic's, and the program is timed. Timing as `emmy bench`
(`emmy.tools.bench.timing`).
"""

from __future__ import annotations

import argparse
import re
import sys

from emmy.dialects import loop, tile
from emmy.dialects.target import target_of
from emmy.passes.choose_tile_schedule import candidates
from emmy.tools.bench.differential import lower
from emmy.tools.bench.suites import SUITES
from emmy.tools.bench.timing import (
    bench_program,
    device_copy_bandwidth,
    float32_matmul_precision,
    to_json,
)
from emmy.tools.cli import torch_ir_of
from emmy.tools.frontend.program import load_program
from emmy.tools.runtime.host import GraphedHostProgram
from emmy.tools.tune import scheduled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="memory-bound")
    parser.add_argument("--only", required=True, metavar="REGEX")
    parser.add_argument("--limit", type=int, default=0, help="candidates per kernel (0: all)")
    parser.add_argument("--schedules", default="", metavar="REGEX", help="only candidates matching")
    parser.add_argument("--json")
    args = parser.parse_args()
    copy = device_copy_bandwidth()
    results: list[dict] = []
    for case in SUITES[args.suite]:
        if not re.search(args.only, case.name):
            continue
        # The case's float32 matmul precision, as `emmy bench` runs it: Torch IR records it at
        # import, and eager's products follow it.
        with float32_matmul_precision(case.float32_matmul_precision):
            sweep_case(case, args, copy, results)
    return 0 if all(result["backends"][1]["correct"] for result in results) else 1


def sweep_case(case, args: argparse.Namespace, copy: float, results: list[dict]) -> None:
    """Checks and times each kernel of `case` under each of its chosen schedules, adding the
    results to `results` (and to the JSON file, after each)."""
    text = case.source.replace("DT", f"torch.{case.dtype}")
    loop_ir = lower(torch_ir_of(load_program(text, f"<{case.program}>")), "loop")
    kernels = [op for op in loop_ir.body.block.ops if isinstance(op, loop.KernelOp)]
    for kernel in kernels:
        offered = [
            (schedule, str(tile.ScheduleAttr(schedule)))
            for schedule in candidates(kernel, target_of(kernel))
        ]
        chosen = [pair for pair in offered if re.search(args.schedules, pair[1])]
        for schedule, attribute in chosen[: args.limit or None]:
            result = bench_program(
                text,
                case.dtype,
                emmy_fn=GraphedHostProgram(scheduled(loop_ir, kernel.sym_name.data, schedule)),
                backends=("eager", "emmy"),
                copy_bandwidth_gbps=copy,
            )
            result.update(
                program=case.program,
                shape=case.shape,
                kernel=kernel.sym_name.data,
                schedule=attribute,
            )
            eager, emmy = result["backends"]
            results.append(result)
            figure = (
                f"{emmy['median_us']:8.2f} µs {100 * emmy['copy_fraction']:5.1f}% of copy"
                if emmy["correct"]
                else f"FAIL: {emmy['error']}"
            )
            print(
                f"{case.name:32} {figure}  eager {eager['median_us']:.2f} µs  "
                f"@{kernel.sym_name.data} {attribute}",
                flush=True,
            )
            if args.json:
                to_json(results, args.json)


if __name__ == "__main__":
    sys.exit(main())
