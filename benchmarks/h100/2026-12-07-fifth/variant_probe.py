"""Times scratch variants of the wgmma GEMM kernel (bf16 M x N x K, b [N, K]) against eager.

python3 .scratch/variant_probe.py 4096 4096 4096 base:1 base:2 nomc:2 noremote:2 noepi:1 stages3:1
"""

import sys
from contextlib import contextmanager
from dataclasses import replace

import torch
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, f32

from emmy.dialects import kernel, loop
from emmy.dialects.target import target_of
from emmy.passes import wgmma_gemm_kernel as W
from emmy.passes.choose_tile_schedule import choose_schedule
from emmy.tools.bench.differential import lower
from emmy.tools.bench.timing import time_cuda
from emmy.tools.cli import torch_ir_of
from emmy.tools.frontend.program import load_program
from emmy.tools.runtime.host import GraphedHostProgram
from emmy.tools.tune import scheduled

B = W._WgmmaGemmBuilder
orig_copy, orig_release, orig_pair, orig_maps = (
    B.copy_slices,
    B.release,
    B.epilogue_pair,
    W.tensor_map_types,
)


def nomc_copy(self, *args):
    saved = self.cluster, self.rank
    self.cluster, self.rank = 1, 0
    try:
        orig_copy(self, *args)
    finally:
        self.cluster, self.rank = saved


def nomc_maps(gemm):
    types = orig_maps(gemm)
    n_dim = gemm.batch_rank + 1
    out = [types[0]]
    for t, rhs in zip(types[1:], gemm.rhs):
        box = list(t.box_shape)
        if not gemm.rhs_n_contiguous:
            box[list(gemm.rhs_dims).index(n_dim)] = gemm.rhs_piece_n
        out.append(kernel.TensorMapType(t.tensor, box, t.swizzle.data))
    return out


def local_release(self, count):
    stage = self.index(self.rem(count, self.stages))

    def arrive():
        for _ in range(self.cluster):
            self.add_op(kernel.MbarrierArriveOp(self.empty, stage))

    self.if_then(self.signals, arrive)


def never_pair(self, batch, row, column, values, staged=None):
    magic = self.add_op(arith.ConstantOp(FloatAttr(12345.678, f32))).results[0]
    cond = self.add_op(arith.CmpfOp(values[0][0], magic, "oeq")).results[0]
    self.if_then(cond, lambda: orig_pair(self, batch, row, column, values, staged))


@contextmanager
def variant(name):
    try:
        if name in ("nomc", "noremote"):
            B.copy_slices = nomc_copy
            W.tensor_map_types = nomc_maps
        if name == "noremote":
            B.release = local_release
        if name == "noepi":
            B.epilogue_pair = never_pair
        yield
    finally:
        B.copy_slices, B.release, B.epilogue_pair, W.tensor_map_types = (
            orig_copy,
            orig_release,
            orig_pair,
            orig_maps,
        )


def main():
    m, n, k = map(int, sys.argv[1:4])
    source = f"""
import torch
class M(torch.nn.Module):
    def forward(self, a, b):
        return a @ b.t()
M()(torch.randn({m}, {k}, dtype=torch.bfloat16), torch.randn({n}, {k}, dtype=torch.bfloat16))
"""
    loop_ir = lower(torch_ir_of(load_program(source, "<probe>")), "loop")
    (kop,) = [op for op in loop_ir.body.block.ops if isinstance(op, loop.KernelOp)]
    base = choose_schedule(kop, target_of(kop))
    a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(n, k, dtype=torch.bfloat16, device="cuda")
    ref = a @ b.t()
    eager = time_cuda(lambda: a @ b.t())
    print(f"{m}x{n}x{k} eager {eager:.1f} us  base {base}", flush=True)
    for spec in sys.argv[4:]:
        name, cluster = spec.split(":")
        schedule = replace(base, cluster=int(cluster))
        if name == "stages3":
            schedule = replace(schedule, pipeline_depth=3)
        try:
            with variant(name):
                program = GraphedHostProgram(scheduled(loop_ir, kop.sym_name.data, schedule))
                (out,) = program([a, b])
            err = (out.float() - ref.float()).abs().max().item()
            t = time_cuda(lambda: program([a, b]))
            print(f"{spec:12} {t:8.1f} us  {eager / t:.3f}x eager  maxerr {err:.3g}", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"{spec:12} FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)


if __name__ == "__main__":
    main()
