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
    """Keys and values of 3 heads written into caches of 40 rows at their positions (by one
    kernel); returns the keys doubled, so that nothing after the update reads the caches."""

    def __init__(self, dtype: torch.dtype):
        super().__init__()
        for name in ("k_cache", "v_cache"):
            cache = torch.randn(1, 3, 40, 64, dtype=dtype)
            self.register_buffer(name, cache, persistent=False)

    def forward(self, k, v, positions):
        self.k_cache.index_copy_(2, positions, k)
        self.v_cache.index_copy_(2, positions, v)
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
    eager.k_cache.copy_(compiled_model.k_cache)
    eager.v_cache.copy_(compiled_model.v_cache)
    k, v = torch.randn(2, 1, 3, rows, 64, dtype=dtype)
    positions = torch.randperm(40)[:rows]
    compiled = emmy.compile(compiled_model, k, v, positions, cpu_level="kernel")
    module = Parser(make_context(), compiled.ir("kernel")).parse_module()
    for cache in ("b_k_cache", "b_v_cache"):
        reads, writes = _cache_accesses(module, cache)
        assert not reads and writes, compiled.ir("kernel")
        assert all(isinstance(store.parent_op(), scf.IfOp) for store in writes)
    with torch.no_grad():
        for _ in range(2):
            k, v = torch.randn(2, 1, 3, rows, 64, dtype=dtype)
            positions = torch.randperm(40)[:rows]
            torch.testing.assert_close(compiled(k, v, positions), eager(k, v, positions))
            for name in ("k_cache", "v_cache"):
                want = getattr(eager, name)
                torch.testing.assert_close(getattr(compiled_model, name), want, rtol=0, atol=0)
    if NVCC is not None:
        nvcc_compile(compiled.ir("cuda"), tmp_path)
