"""Times the split decode cases of the attention suite with their parts combined in the same
launch (this tree) against a separate combining kernel (an earlier tree's program, loaded
from its plan and CUDA), in one process, each against eager SDPA, alternating.

    cd /tmp/base && PYTHONPATH=/tmp/base/src python3 \
        .../combine_probe.py dump 'sdpa (16x32x1x4096|1x32x1x32768)x128 ' /tmp/plans
    python3 benchmarks/h100/2026-12-07-seventh/combine_probe.py \
        time 'sdpa (16x32x1x4096|1x32x1x32768)x128 ' /tmp/plans out.json
"""

import json
import pathlib
import re
import sys

from emmy.tools.bench.suites import SUITES
from emmy.tools.bench.timing import bench_program
from emmy.tools.cli import load, lower_with_diagnostics, torch_ir_of
from emmy.tools.runtime.host import GraphedHostProgram, HostProgram


def cases(pattern: str):
    return [c for c in SUITES["attention"] if re.search(pattern, c.name)]


def source(case) -> str:
    return case.source.replace("DT", f"torch.{case.dtype}")


def program(case) -> HostProgram:
    text = source(case)
    return HostProgram(
        lower_with_diagnostics(torch_ir_of(load(text, f"<{case.program}>")), "kernel")
    )


def dump(pattern: str, directory: str) -> None:
    for number, case in enumerate(cases(pattern)):
        kernels = program(case)
        path = pathlib.Path(directory) / str(number)
        path.mkdir(parents=True, exist_ok=True)
        (path / "plan.json").write_text(kernels.plan_text())
        (path / "kernels.cu").write_text(kernels.cuda_source())


def timed(case, kernels: HostProgram) -> dict:
    result = bench_program(
        source(case),
        case.dtype,
        emmy_fn=GraphedHostProgram(kernels),
        backends=("eager", "emmy"),
        flops=case.flops,
        tolerance=case.tolerance,
    )
    eager, emmy = result["backends"]
    return {
        "eager_us": eager.get("median_us"),
        "emmy_us": emmy.get("median_us"),
        "correct": emmy["correct"],
        "error": emmy.get("error"),
    }


def time(pattern: str, directory: str, out: str) -> None:
    rows = []
    for number, case in enumerate(cases(pattern)):
        path = pathlib.Path(directory) / str(number)
        separate = HostProgram.from_plan_text(
            (path / "plan.json").read_text(), (path / "kernels.cu").read_text()
        )
        same_launch = program(case)
        row = {"case": case.name}
        for round_ in (1, 2):
            row[f"same_launch_{round_}"] = timed(case, same_launch)
            row[f"separate_{round_}"] = timed(case, separate)
        print(json.dumps(row), flush=True)
        rows.append(row)
        with open(out, "w") as f:
            json.dump({"command": " ".join(sys.argv), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(*sys.argv[2:])
    else:
        time(*sys.argv[2:])
