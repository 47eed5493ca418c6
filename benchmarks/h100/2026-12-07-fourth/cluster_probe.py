"""Probe: how many clusters of the cluster-2 wgmma GEMM kernel can run at once
(cuOccupancyMaxActiveClusters), and the kernel's time (its launches capped to those) against
the cluster-1 kernel and eager, for an NxN bf16 matmul (N from argv, 4096 by default)."""

import sys
from dataclasses import replace

import torch

from emmy.dialects import kernel, loop
from emmy.dialects.target import target_of
from emmy.passes.choose_tile_schedule import choose_schedule
from emmy.tools.bench.differential import lower
from emmy.tools.cli import torch_ir_of
from emmy.tools.frontend.program import load_program
from emmy.tools.tune import scheduled

SIZE = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
SOURCE = f"""
import torch
class M(torch.nn.Module):
    def forward(self, a, b):
        return a @ b.t()
M()(torch.randn({SIZE}, {SIZE}, dtype=torch.bfloat16),
    torch.randn({SIZE}, {SIZE}, dtype=torch.bfloat16))
"""


def timed(fn, reps=7, calls=10):
    """The median over `reps` of the mean GPU time of `calls` back-to-back calls (their host
    work overlaps the kernels before), in microseconds."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000 / calls)
    return sorted(times)[len(times) // 2]


def main() -> None:
    loop_ir = lower(torch_ir_of(load_program(SOURCE, "<probe>")), "loop")
    (k,) = [op for op in loop_ir.body.block.ops if isinstance(op, loop.KernelOp)]
    base = choose_schedule(k, target_of(k))
    a = torch.randn(SIZE, SIZE, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(SIZE, SIZE, dtype=torch.bfloat16, device="cuda")
    expected = (a @ b.t()).float()
    print("eager", round(timed(lambda: a @ b.t()), 1), "us", flush=True)
    for cluster in (1, 2):
        program = scheduled(loop_ir, k.sym_name.data, replace(base, cluster=cluster))
        (launch,) = [op for op in program.module.walk() if isinstance(op, kernel.LaunchOp)]
        (result,) = program([a, b])
        error = (result.float() - expected).abs().max().item()
        active = (
            program.cuda_module().max_active_clusters(
                launch.kernel.root_reference.data, cluster, launch.block_shape, launch.smem_bytes
            )
            if cluster > 1
            else None
        )
        print(
            f"cluster {cluster}: grid {launch.grid_shape[0]}, max active clusters {active}: "
            f"{timed(lambda: program([a, b])):.1f} us (max error {error:.3g})",
            flush=True,
        )


if __name__ == "__main__":
    main()
