"""Times the attention suite's cases under variants of the wgmma attention kernel, in one
process, each against eager SDPA: "base" (the tree as it is), "registers" (the output
stored from registers, `output_slots` 0), "tail_every_block" (without causal, the keys
past the end masked in every key block, `tail_mask_branch` off) and "chains" (the softmax's
row maxima and sums as chains, not trees: `KernelEmitter.reduced`).

python3 benchmarks/h100/2026-12-07-sixth/attention_variants.py \
    '^(sdpa|hand_written) 4x32x2048x2048x128 ' out.json base registers
(`staged_probe.json` came from this script's first form, its variants "registers" and
"staged", the latter now "base".)
"""

import json
import re
import sys
from contextlib import contextmanager

from xdsl.ir import SSAValue

from emmy.passes import wgmma_attention_kernel as W
from emmy.passes.gemm_kernel import KernelEmitter
from emmy.tools.bench.suites import SUITES
from emmy.tools.bench.timing import bench_program
from emmy.tools.cli import load, lower_with_diagnostics, torch_ir_of
from emmy.tools.runtime.host import GraphedHostProgram, HostProgram

tree = KernelEmitter.reduced
slots = W.output_slots


def chained(self, values, combine) -> SSAValue:
    result = values[0]
    for value in values[1:]:
        result = self.add_op(combine(result, value)).results[0]
    return result


@contextmanager
def variant(name: str):
    try:
        if name == "registers":
            W.output_slots = lambda *_: 0
        elif name == "tail_every_block":
            W._WgmmaAttentionBuilder.tail_mask_branch = False
        elif name == "chains":
            KernelEmitter.reduced = chained
        elif name != "base":
            raise ValueError(f"no variant {name!r}")
        yield
    finally:
        W.output_slots = slots
        W._WgmmaAttentionBuilder.tail_mask_branch = True
        KernelEmitter.reduced = tree


def timed(case, name: str) -> dict:
    text = case.source.replace("DT", f"torch.{case.dtype}")
    with variant(name):
        program = load(text, f"<{case.program}>")
        kernels = HostProgram(lower_with_diagnostics(torch_ir_of(program), "kernel"))
    result = bench_program(
        text,
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


def main() -> None:
    pattern, out, *names = sys.argv[1:]
    rows = []
    for case in SUITES["attention"]:
        if not re.search(pattern, case.name):
            continue
        row = {"case": case.name, **{name: timed(case, name) for name in names}}
        print(json.dumps(row), flush=True)
        rows.append(row)
        with open(out, "w") as f:
            json.dump({"command": " ".join(sys.argv), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
