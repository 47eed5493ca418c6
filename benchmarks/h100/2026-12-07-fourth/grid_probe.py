"""Times the cluster-2 wgmma GEMM kernel (4096^3 bf16) at grids of 2 x N blocks."""

from dataclasses import replace

import torch
from xdsl.dialects.builtin import DenseArrayBase, i64

from emmy.dialects import kernel, loop
from emmy.dialects.target import target_of
from emmy.passes.choose_tile_schedule import choose_schedule
from emmy.tools.bench.differential import lower
from emmy.tools.cli import torch_ir_of
from emmy.tools.frontend.program import load_program
from emmy.tools.runtime.host import HostProgram
from emmy.tools.tune import scheduled

SOURCE = """
import torch
class M(torch.nn.Module):
    def forward(self, a, b):
        return a @ b.t()
M()(torch.randn(4096, 4096, dtype=torch.bfloat16), torch.randn(4096, 4096, dtype=torch.bfloat16))
"""
loop_ir = lower(torch_ir_of(load_program(SOURCE, "<probe>")), "loop")
(k,) = [op for op in loop_ir.body.block.ops if isinstance(op, loop.KernelOp)]
base = choose_schedule(k, target_of(k))
a = torch.randn(4096, 4096, dtype=torch.bfloat16, device="cuda")
b = torch.randn(4096, 4096, dtype=torch.bfloat16, device="cuda")
for cluster, grids in ((1, (132, 120)), (2, (132, 120, 64, 32))):
    module = scheduled(loop_ir, k.sym_name.data, replace(base, cluster=cluster)).module
    (launch,) = [op for op in module.walk() if isinstance(op, kernel.LaunchOp)]
    for grid in grids:
        launch.properties["grid"] = DenseArrayBase.from_list(i64, [grid, 1, 1])
        program = HostProgram(module)
        program([a, b])
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(20):
            program([a, b])
        end.record()
        torch.cuda.synchronize()
        print(f"cluster {cluster} grid {grid}: {start.elapsed_time(end) * 50:.1f} us", flush=True)
