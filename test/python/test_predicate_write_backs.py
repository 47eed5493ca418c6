"""`predicate-write-backs` on KV cache updates (`index_copy_` in place): the update kernel
writes only the rows at the positions and reads nothing of the cache, and the cache is
eager's, in the SIMT emulator and compiled for sm_90a."""

import pytest
import torch
import torch.nn as nn
from test_cuda_target import NVCC, nvcc_compile
from xdsl.dialects import memref, scf
from xdsl.parser import Parser

import emmy
from emmy.dialects import kernel, make_context
from emmy.dialects.effects import read_values, written_values


class CacheUpdate(nn.Module):
    """Keys of 3 heads written into a cache of 40 rows at their positions; returns them
    doubled, so that nothing after the update reads the cache."""

    def __init__(self, dtype: torch.dtype):
        super().__init__()
        self.register_buffer("cache", torch.randn(1, 3, 40, 64, dtype=dtype), persistent=False)

    def forward(self, k, positions):
        self.cache.index_copy_(2, positions, k)
        return k * 2


def _cache_accesses(module, cache_name: str) -> tuple[list, list]:
    """The ops of the kernels that read and that write the kernel parameter `cache_name`."""
    reads, writes = [], []
    for func in module.walk():
        if not isinstance(func, kernel.FuncOp):
            continue
        caches = [a for a in func.body.block.args if a.name_hint == cache_name]
        for op in func.body.walk() if caches else ():
            (cache,) = caches
            if isinstance(op, memref.LoadOp | kernel.VectorLoadOp) and cache in read_values(op):
                reads.append(op)
            if isinstance(op, memref.StoreOp | kernel.VectorStoreOp) and cache in written_values(
                op
            ):
                writes.append(op)
    return reads, writes


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("rows", [1, 5])
def test_a_cache_update_writes_only_its_rows(tmp_path, dtype, rows):
    torch.manual_seed(rows)
    compiled_model, eager = CacheUpdate(dtype), CacheUpdate(dtype)
    eager.cache.copy_(compiled_model.cache)
    k = torch.randn(1, 3, rows, 64, dtype=dtype)
    positions = torch.randperm(40)[:rows]
    compiled = emmy.compile(compiled_model, k, positions, cpu_level="kernel")
    module = Parser(make_context(), compiled.ir("kernel")).parse_module()
    reads, writes = _cache_accesses(module, "b_cache")
    assert not reads and writes, compiled.ir("kernel")
    assert all(isinstance(store.parent_op(), scf.IfOp) for store in writes)
    with torch.no_grad():
        for _ in range(2):
            k = torch.randn(1, 3, rows, 64, dtype=dtype)
            positions = torch.randperm(40)[:rows]
            torch.testing.assert_close(compiled(k, positions), eager(k, positions))
            torch.testing.assert_close(compiled_model.cache, eager.cache, rtol=0, atol=0)
    if NVCC is not None:
        nvcc_compile(compiled.ir("cuda"), tmp_path)
