"""Times emmy's kernels for suite cases under several `lower-loop-to-tile` option sets, against
eager, in one process: the data behind the schedule heuristic's choices.

    python3 benchmarks/schedule_sweep.py --only 'rms_norm 8192x4096' \
        --options '' 'stage=none' 'block-size=256 stage=sync' --json sweep.json

Each option set is written as inside `lower-loop-to-tile{...}`; an empty one is the
heuristic's own schedule. Timing as `emmy bench` (`emmy.tools.bench.timing`).
"""

from __future__ import annotations

import argparse
import re
import sys

from xdsl.utils.arg_spec import parse_spec

from emmy.dialects import make_context
from emmy.passes.lower_loop_to_tile import LowerLoopToTilePass
from emmy.passes.pipelines import STAGES
from emmy.tools.bench.differential import lower
from emmy.tools.bench.suites import suite_cases
from emmy.tools.bench.timing import bench_program, device_copy_bandwidth, to_json
from emmy.tools.cli import case_name, torch_ir_of
from emmy.tools.frontend.program import load_program
from emmy.tools.runtime.host import GraphedHostProgram, HostProgram


def kernels(torch_ir, options: str) -> HostProgram:
    """The program at the kernel level with `lower-loop-to-tile{options}` as its schedule."""
    schedule = LowerLoopToTilePass.from_pass_spec(parse_spec(f"lower-loop-to-tile{{{options}}}"))
    module = lower(torch_ir, "loop")
    ctx = make_context()
    for stage in (schedule, *STAGES["kernel"]):
        stage.apply(ctx, module)
    module.verify()
    return HostProgram(module)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="memory-bound")
    parser.add_argument("--only", required=True, metavar="REGEX")
    parser.add_argument("--options", nargs="+", default=[""], metavar="'K=V K=V'")
    parser.add_argument("--json")
    args = parser.parse_args()
    copy = device_copy_bandwidth()
    results, failed = [], False
    for case in suite_cases(args.suite):
        if not re.search(args.only, case_name(case)):
            continue
        name, shape, dtype, source = case
        text = source.replace("DT", f"torch.{dtype}")
        torch_ir = torch_ir_of(load_program(text, f"<{name}>"))
        for options in args.options:
            result = bench_program(
                text,
                dtype,
                emmy_fn=GraphedHostProgram(kernels(torch_ir, options)),
                backends=("eager", "emmy"),
                copy_bandwidth_gbps=copy,
            )
            result.update(program=name, shape=shape, tile_options=options)
            eager, emmy = result["backends"]
            failed |= not emmy["correct"]
            results.append(result)
            figure = (
                f"{emmy['median_us']:8.2f} µs {100 * emmy['copy_fraction']:5.1f}% of copy"
                if emmy["correct"]
                else f"FAIL: {emmy['error']}"
            )
            print(
                f"{case_name(case):32} {options or '(heuristic)':28} {figure}  "
                f"eager {eager['median_us']:.2f} µs",
                flush=True,
            )
            if args.json:
                to_json(results, args.json)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
