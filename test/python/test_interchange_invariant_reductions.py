"""`interchange-invariant-reductions` on a prefill's KV cache update: the search of each cache
row's position runs once per row, not once per row and head, and the cache is eager's."""

import pytest
import torch
import torch.nn as nn
from xdsl.parser import Parser

import emmy
from emmy.dialects import loop, make_context


class CachePrefill(nn.Module):
    """A prefill's keys of 3 heads written into a cache of 12 rows at their positions."""

    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(1, 3, 12, 8), persistent=False)

    def forward(self, k, positions):
        self.cache.index_copy_(2, positions, k * 2)
        return self.cache.sum(-1)


@pytest.mark.parametrize("level", ["loop", "kernel"])
def test_a_prefills_cache_update_searches_each_row_once(level):
    k, positions = torch.randn(1, 3, 5, 8), torch.tensor([7, 0, 3, 11, 4])
    compiled_model, eager = CachePrefill(), CachePrefill()
    compiled = emmy.compile(compiled_model, k, positions, cpu_level=level)
    module = Parser(make_context(), compiled.ir("loop")).parse_module()
    searches = [
        op
        for op in module.walk()
        if isinstance(op, loop.ForOp) and op.is_reduction and op.kind.data == "max"
    ]
    assert searches, compiled.ir("loop")
    for search in searches:
        rows = search.parent_op()
        # The row loop is the kernel's outermost; the heads' loop runs inside it, after.
        assert isinstance(rows, loop.ForOp) and rows.trip_count == 12
        assert isinstance(rows.parent_op(), loop.KernelOp)
    with torch.no_grad():
        for new_positions in (positions, torch.tensor([1, 2, 9, 10, 5])):
            k = torch.randn(1, 3, 5, 8)
            got, want = compiled(k, new_positions), eager(k, new_positions)
            torch.testing.assert_close(got, want)
            torch.testing.assert_close(compiled_model.cache, eager.cache)
