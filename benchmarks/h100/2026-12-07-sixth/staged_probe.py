"""Times the attention suite's cases with the output stored from registers and staged
through shared memory and TMA (`output_slots`), in one process, each against eager SDPA.

python3 benchmarks/h100/2026-12-07-sixth/staged_probe.py 'sdpa.*x128$|hand' out.json
"""

import json
import re
import sys

from emmy.passes import wgmma_attention_kernel as W
from emmy.tools.bench.suites import SUITES
from emmy.tools.bench.timing import bench_program
from emmy.tools.cli import load, lower_with_diagnostics, torch_ir_of
from emmy.tools.runtime.host import GraphedHostProgram, HostProgram

staged_slots = W.output_slots


def timed(case, slots) -> dict:
    W.output_slots = slots
    try:
        text = case.source.replace("DT", f"torch.{case.dtype}")
        program = load(text, f"<{case.program}>")
        kernels = HostProgram(lower_with_diagnostics(torch_ir_of(program), "kernel"))
        return bench_program(
            text,
            case.dtype,
            emmy_fn=GraphedHostProgram(kernels),
            backends=("eager", "emmy"),
            flops=case.flops,
            tolerance=case.tolerance,
        )
    finally:
        W.output_slots = staged_slots


def main() -> None:
    pattern, out = sys.argv[1], sys.argv[2]
    rows = []
    for case in SUITES["attention"]:
        if not re.search(pattern, case.name):
            continue
        row = {"case": case.name}
        for variant, slots in (("registers", lambda *_: 0), ("staged", staged_slots)):
            result = timed(case, slots)
            eager, emmy = result["backends"]
            row[variant] = {
                "eager_us": eager.get("median_us"),
                "emmy_us": emmy.get("median_us"),
                "correct": emmy["correct"],
                "error": emmy.get("error"),
            }
        print(json.dumps(row), flush=True)
        rows.append(row)
        with open(out, "w") as f:
            json.dump({"command": " ".join(sys.argv), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
