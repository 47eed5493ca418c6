"""`torch.compile(model, backend="emmy")` on the CPU (the interpreters run emmy's programs):
results as eager's on fresh inputs, mutations and aliases as PyTorch's, ops emmy cannot compile
left to PyTorch with one located warning, or one error listing them all."""

import copy
import traceback
import warnings

import pytest
import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F
from corpus import PROGRAMS, source

from emmy.tools import dynamo_backend, dynamo_cache
from emmy.tools.bench.differential import random_inputs
from emmy.tools.dynamo_backend import FallbackWarning
from emmy.tools.frontend.program import load_program


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def compiled_graphs(backend_compiles, monkeypatch):
    """The graph modules the backend returned, to see what emmy compiled (compiled afresh:
    the disk cache of Dynamo's graphs is not read)."""
    monkeypatch.setattr(dynamo_cache, "load", lambda key: None)
    return backend_compiles


def emmy_partitions(graphs):
    return [m for g in graphs for n, m in g.named_children() if n.startswith("emmy_")]


def lines_of(marker: str) -> int:
    with open(__file__) as source:
        return next(n for n, text in enumerate(source.read().splitlines(), 1) if marker in text)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm = nn.RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q, k, v = (t.view(b, s, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.out(a.transpose(1, 2).reshape(b, s, d))


def test_the_backend_is_registered_by_the_package():
    assert "emmy" in torch._dynamo.list_backends()


def test_a_model_matches_eager_and_runs_in_emmy(compiled_graphs):
    model = nn.Sequential(Attention(32, 4), nn.LayerNorm(32), nn.Linear(32, 8)).eval()
    compiled = torch.compile(model, backend="emmy")
    x = torch.randn(2, 16, 32)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        got = compiled(x)
        want = model(x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    graphs = compiled_graphs
    assert emmy_partitions(graphs), "emmy compiled nothing"
    # every op of the graph went to emmy: only views and the partitions' calls remain
    remaining = {
        str(n.target)
        for g in graphs
        for n in g.graph.nodes
        if n.op == "call_function" and "getitem" not in str(n.target)
    }
    assert remaining <= {f"aten.{v}" for v in ("view.default", "t.default", "transpose.int")} | {
        f"aten.{v}" for v in ("_unsafe_view.default", "expand.default", "permute.default")
    }, remaining


def test_mutated_buffers_are_written_back_and_aliases_kept():
    class Counts(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", torch.zeros(3))

        def forward(self, x):
            self.calls.add_(1)
            return torch.tanh(x) * 2, x.view(-1)

    model = Counts()
    compiled = torch.compile(model, backend="emmy")
    x = torch.randn(4, 5)
    with torch.no_grad():
        y, flat = compiled(x)
        compiled(x)
    torch.testing.assert_close(y, torch.tanh(x) * 2)
    torch.testing.assert_close(model.calls, torch.full((3,), 2.0))
    assert flat.data_ptr() == x.data_ptr()


@pytest.mark.parametrize(
    "program",
    [
        lambda a, b: a.add_(b),
        lambda a, b: a.mul_(2).add_(b),
        lambda a, b: (b.copy_(a * 3), a + 1),
    ],
    ids=["add_", "chained", "copy_"],
)
def test_a_returned_in_place_result_is_the_mutated_input(program):
    """A function that returns what it mutates in place returns its input, holding the new
    value, as eager does: emmy makes the copy into it, with no fallback."""
    args = [torch.randn(4, 8), torch.randn(4, 8)]
    mine, theirs = [a.clone() for a in args], [a.clone() for a in args]
    got = torch.compile(program, backend="emmy", options={"fallback": False})(*mine)
    want = program(*theirs)
    got, want = (r if isinstance(r, tuple) else (r,) for r in (got, want))
    for g, w in zip(got, want, strict=True):
        assert torch.equal(g, w)
        aliased = [i for i, a in enumerate(theirs) if a.data_ptr() == w.data_ptr()]
        assert [i for i, a in enumerate(mine) if a.data_ptr() == g.data_ptr()] == aliased
    assert all(torch.equal(m, t) for m, t in zip(mine, theirs))


def test_running_sums_and_products_compile_without_fallback(compiled_graphs):
    def program(x, n):
        return torch.cumsum(x, -1) * torch.cumprod(1 + 0.1 * x, 0), n.cumsum(1)

    compiled = torch.compile(program, backend="emmy", options={"fallback": False})
    x, n = torch.randn(5, 33), torch.randint(-9, 9, (5, 7), dtype=torch.int32)
    got = compiled(x, n)
    want = program(x, n)
    torch.testing.assert_close(got[0], want[0], rtol=1e-4, atol=1e-5)
    assert torch.equal(got[1], want[1])
    assert emmy_partitions(compiled_graphs)


class StaticCache(nn.Module):
    """A static KV cache written in place at the new tokens' positions, as a decoder
    writes it: `index_copy_` for keys, indexing assignment for values."""

    def __init__(self, heads: int = 2, length: int = 16, head_dim: int = 8):
        super().__init__()
        self.register_buffer("keys", torch.zeros(1, heads, length, head_dim))
        self.register_buffer("values", torch.zeros(1, heads, length, head_dim))

    def forward(self, positions, k, v):
        self.keys.index_copy_(2, positions, k)
        self.values[:, :, positions] = v
        return (self.keys * self.values).sum(-1)


def test_a_static_kv_cache_is_updated_in_place_in_emmy(compiled_graphs):
    model, reference = StaticCache(), StaticCache()
    # Static shapes: a step of 1 token and one of 4 are programs of their own.
    compiled = torch.compile(model, backend="emmy", dynamic=False, options={"fallback": False})
    with torch.no_grad():
        for start, count in ((0, 5), (5, 1), (6, 1), (3, 4)):
            positions = torch.arange(start, start + count)
            k, v = torch.randn(1, 2, count, 8), torch.randn(1, 2, count, 8)
            got = compiled(positions, k, v)
            want = reference(positions, k, v)
            torch.testing.assert_close(got, want)
            torch.testing.assert_close(model.keys, reference.keys, rtol=0, atol=0)
            torch.testing.assert_close(model.values, reference.values, rtol=0, atol=0)
    assert emmy_partitions(compiled_graphs)


def test_writes_to_a_buffers_slices_and_entries_compile_without_fallback(compiled_graphs):
    class Cache(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("cache", torch.zeros(2, 6, 4))

        def forward(self, k, row):
            self.cache[:, 1:4] = k  # slice_scatter
            self.cache[1, -1] = row  # select_scatter of a select_scatter
            return self.cache.sum(1) + 1

    model, twin = Cache(), Cache()
    compiled = torch.compile(model, backend="emmy")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        for _ in range(2):
            k, row = torch.randn(2, 3, 4), torch.randn(4)
            torch.testing.assert_close(compiled(k, row), twin(k, row))
            torch.testing.assert_close(model.cache, twin.cache)
    assert emmy_partitions(compiled_graphs)


def test_a_repeated_index_writes_its_last_slice():
    """torch leaves the result undefined where an index repeats; emmy takes the last
    occurrence, for index_copy and index_put alike. index_put's negative indices count from
    the end; index_copy refuses them, as eager does."""

    def program(base, index, source):
        return base.index_copy(0, index, source), torch.ops.aten.index_put(base, [index], source)

    def put_only(base, index, source):
        return torch.ops.aten.index_put(base, [index], source)

    compiled = torch.compile(program, backend="emmy", options={"fallback": False})
    base, source = torch.randn(6, 3), torch.randn(40, 3)
    index = torch.randint(0, 6, (40,))
    want = base.clone()
    for position, row in zip(index.tolist(), source):
        want[position] = row
    copied, put = compiled(base, index, source)
    assert torch.equal(copied, want) and torch.equal(put, want)
    negative = index - 6
    put = torch.compile(put_only, backend="emmy", options={"fallback": False})
    assert torch.equal(put(base, negative, source), want)
    with pytest.raises(IndexError):
        program(base, negative, source)
    with pytest.raises(IndexError):
        compiled(base, negative, source)


def test_a_scatter_whose_index_repeats_writes_its_last_source_element():
    """As with index_copy, torch leaves which write wins undefined; emmy takes the last
    place along the dim, as torch's CPU kernel does, for a source and for a value."""

    def program(base, index, source):
        return base.scatter(1, index, source), base.scatter(1, index[:, :5], -1.5)

    compiled = torch.compile(program, backend="emmy", options={"fallback": False})
    base, source = torch.randn(3, 6), torch.randn(3, 40)
    index = torch.randint(0, 6, (3, 40))
    want, filled = base.clone(), base.clone()
    for row in range(3):
        for place, position in enumerate(index[row].tolist()):
            want[row, position] = source[row, place]
            filled[row, position] = -1.5 if place < 5 else filled[row, position]
    scattered, valued = compiled(base, index, source)
    assert torch.equal(scattered, want) and torch.equal(valued, filled)


def test_one_hots_checks_run_in_pytorch_and_its_work_in_emmy(compiled_graphs):
    """F.one_hot asserts that its classes are in range (`_assert_async`): the check is
    PyTorch's, raising as eager does, not an op that fell back; the rest compiles."""

    def program(classes):
        return F.one_hot(classes, 8) * 3

    compiled = torch.compile(program, backend="emmy", options={"fallback": False})
    classes = torch.randint(0, 8, (5, 7))
    assert torch.equal(compiled(classes), program(classes))
    assert emmy_partitions(compiled_graphs)
    for wrong, message in ((classes + 8, "smaller than num_classes"), (-classes - 1, "non-neg")):
        with pytest.raises(RuntimeError, match=message):
            compiled(wrong)


@pytest.mark.parametrize("padding", ["border", "reflection"])
def test_bicubic_grid_sampling_compiles_without_fallback(padding):
    """grid_sample reaches emmy through PyTorch's decomposition (index lookups and
    arithmetic), bicubic included, within f32 rounding of eager's kernel; reflection padding
    too, which the decomposition computes in int8."""

    def warp(image, grid):
        return F.grid_sample(image, grid, mode="bicubic", padding_mode=padding, align_corners=False)

    image, grid = torch.randn(2, 3, 8, 8), torch.rand(2, 4, 5, 2) * 2.2 - 1.1
    got = torch.compile(warp, backend="emmy", options={"fallback": False})(image, grid)
    torch.testing.assert_close(got, warp(image, grid), rtol=1e-4, atol=1e-5)


def test_narrow_integer_inputs_that_are_only_converted_compile(compiled_graphs):
    """A uint8 image normalised in the model: PyTorch reads it as int32 at the partition's
    edge and emmy converts it; int8 and int16 values are emmy's own types; uint8
    arithmetic, which wraps at 256, stays PyTorch's, named in the warning."""

    def normalise(image, small, medium):
        return image.float() / 255 - 0.5, small.to(torch.bfloat16) * 2, medium.long() * 3

    image = torch.randint(0, 256, (2, 3, 8), dtype=torch.uint8)
    small = torch.randint(-128, 128, (7,), dtype=torch.int8)
    medium = torch.randint(-(2**15), 2**15, (5,), dtype=torch.int16)
    compiled = torch.compile(normalise, backend="emmy", options={"fallback": False})
    for got, want in zip(compiled(image, small, medium), normalise(image, small, medium)):
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want)
    assert emmy_partitions(compiled_graphs)
    with pytest.warns(FallbackWarning, match="dtype torch.uint8 is not supported"):
        wrapped = torch.compile(lambda x: (x + 200).float(), backend="emmy")(image)
    torch.testing.assert_close(wrapped, (image + 200).float())


def test_embedding_bags_without_gradients_compile_without_fallback(compiled_graphs):
    """Under no_grad an EmbeddingBag is `_embedding_bag_forward_only`, the same op."""
    bags = nn.EmbeddingBag(20, 6, mode="max")
    indices, offsets = torch.randint(0, 20, (9,)), torch.tensor([0, 4, 4, 7])
    compiled = torch.compile(bags, backend="emmy", options={"fallback": False})
    with torch.no_grad():
        torch.testing.assert_close(compiled(indices, offsets), bags(indices, offsets))
        functional = torch.compile(F.embedding_bag, backend="emmy", options={"fallback": False})
        rows = torch.randint(0, 20, (3, 5))
        torch.testing.assert_close(
            functional(rows, bags.weight), F.embedding_bag(rows, bags.weight)
        )
    assert emmy_partitions(compiled_graphs)


@pytest.mark.parametrize("level", ["loop", "kernel"])
def test_an_id_past_the_table_is_an_index_error_as_in_eager(level):
    """An embedding's id past its table is refused by the interpreter (the SIMT emulator at
    Kernel IR) as an IndexError, which code that catches eager's catches too."""
    table = nn.Embedding(10, 4)
    compiled = torch.compile(
        lambda ids: table(ids) * 2, backend="emmy", options={"cpu_level": level}
    )
    with torch.no_grad():
        torch.testing.assert_close(compiled(torch.tensor([1, 9])), table(torch.tensor([1, 9])) * 2)
        with pytest.raises(IndexError, match="out of bounds for a dimension of size 10"):
            compiled(torch.tensor([1, 2, 30]))


@pytest.mark.parametrize(
    ("program", "outside"),
    [
        (lambda x, i, j: x.gather(1, i), -1),  # gather takes no index from the end
        (lambda x, i, j: x[j, i[:, 0]], -7),
        (lambda x, i, j: x[:, None][j, :, i[:, :1]], -7),
    ],
    ids=["gather", "two-indices", "two-indices-apart"],
)
@pytest.mark.parametrize("level", ["loop", "kernel"])
def test_an_index_outside_its_dim_is_refused_where_other_dims_would_hide_it(
    program, outside, level
):
    """gather and indexing by several tensors look up one row of the input flattened, where
    one dim's index outside it would land on a neighbouring row: it is refused, with the
    exception class eager raises (IndexError from indexing, RuntimeError from gather), and
    indices in range give eager's result."""
    compiled = torch.compile(program, backend="emmy", options={"cpu_level": level})
    x, j = torch.randn(4, 6), torch.tensor([3, 0, 2, 1])
    inside = torch.randint(0, 6, (4, 2))
    torch.testing.assert_close(compiled(x, inside, j), program(x, inside, j))
    for wrong in (6, outside):
        past = inside.clone()
        past[2, 0] = wrong
        with pytest.raises((IndexError, RuntimeError)) as eager:
            program(x, past, j)
        with pytest.raises(type(eager.value), match="out of bounds"):
            compiled(x, past, j)


SCATTERS_BY_INDEX = {
    "index_put": (lambda x, i: x.index_put((i[:, 0], i[:, 1]), torch.ones(len(i))), [1, 2]),
    "index_put-negative": (lambda x, i: x.index_put((i[:, 0],), torch.ones(2)), [-6, 0]),
    "index_copy": (lambda x, i: x.index_copy(0, i[:, 0], torch.ones(len(i), 2)), [5, 0]),
    "index_copy-negative": (lambda x, i: x.index_copy(0, i[:, 0], torch.ones(len(i), 2)), [-1, 0]),
    "index_add": (lambda x, i: x.index_add(0, i[:, 1], torch.ones(len(i), 2)), [0, 7]),
    "scatter": (lambda x, i: x.scatter(0, i, 2.0), [1, 5]),
    "scatter_add": (lambda x, i: x.scatter_add(0, i, torch.ones(i.shape)), [-1, 0]),
    "index_reduce": (
        lambda x, i: x.index_reduce(0, i[:, 0], torch.ones(len(i), 2), "amax"),
        [5, 0],
    ),
}
"""A scatter of each kind and an index outside its dim for it (a row of its [rows, 2] index,
for [5, 2] inputs): past the end, negative where torch refuses negatives, and, for index_put's two
indices, one past its dim that would land on the next row of the merged dims."""


@pytest.mark.parametrize("rows", [1, 3], ids=["one-index", "three-indices"])
@pytest.mark.parametrize("name", sorted(SCATTERS_BY_INDEX))
@pytest.mark.parametrize("level", ["loop", "kernel"])
def test_a_scatters_index_outside_its_dim_is_refused_as_in_eager(name, level, rows):
    """Scatters compare positions with their indices instead of addressing by them, where an
    index outside its dim would write nothing (or a neighbour): each index is looked up in
    itself first (`checked_index`), and one outside is refused with the exception class eager
    raises. A single index (a decode step's position) is checked too: a reshape's run of one
    element passes the row on to the load (`one_element`)."""
    program, outside = SCATTERS_BY_INDEX[name]
    options = {"cpu_level": level, "fallback": False}
    compiled = torch.compile(program, backend="emmy", options=options)
    x, inside = torch.randn(5, 2), torch.tensor([[2, 1], [0, 1], [4, 0]][:rows])
    torch.testing.assert_close(compiled(x, inside), program(x, inside))
    past = inside.clone()
    past[-1] = torch.tensor(outside)
    with pytest.raises((IndexError, RuntimeError)) as eager:
        program(x, past)
    with pytest.raises(
        type(eager.value), match="an index is outside its dim.*out of bounds"
    ) as got:
        compiled(x, past)
    # The error is the one line that says so, not chained to xDSL's dumps of the module.
    assert "builtin.module" not in "".join(traceback.format_exception(got.value))


def test_a_lookup_of_a_one_element_table_is_checked():
    """A gather from a one-element tensor: the row lookup's table is a reshape of one element,
    whose index still reaches the load, so an index past it is refused as eager refuses it."""
    compiled = torch.compile(lambda x, i: x.gather(0, i), backend="emmy")
    x = torch.randn(1)
    torch.testing.assert_close(compiled(x, torch.tensor([0, 0])), x.gather(0, torch.tensor([0, 0])))
    with pytest.raises(RuntimeError, match="out of bounds"):
        compiled(x, torch.tensor([0, 3]))


def test_accumulating_index_puts_add_every_repeat_in_emmy():
    """index_put with accumulate=True, index_add and scatter_add add each repeated
    position's values (no fallback); a scatter_add whose index is narrower than the input
    falls back with its reason."""

    def program(base, index, source, spots):
        put = torch.ops.aten.index_put(base, [index], source, accumulate=True) * 2
        scattered = base.scatter_add(0, spots, source[:, :1].expand(3, 3).T.contiguous())
        return put, base.index_add(0, index[:2], source[:2], alpha=0.5), scattered

    base, index, source = torch.randn(6, 3), torch.tensor([1, 1, 4]), torch.randn(3, 3)
    spots = torch.tensor([[0, 5, 5], [2, 2, 0], [5, 5, 5]])
    compiled = torch.compile(program, backend="emmy", options={"fallback": False})
    got = compiled(base, index, source, spots)
    torch.testing.assert_close(got, program(base, index, source, spots))

    def narrow(base, spots, source):
        return base.scatter_add(0, spots, source)

    narrow_spots, narrow_source = torch.tensor([[0, 5]]), torch.randn(1, 2)
    with pytest.warns(FallbackWarning, match="scatter_add whose index is not"):
        got = torch.compile(narrow, backend="emmy")(base, narrow_spots, narrow_source)
    torch.testing.assert_close(got, narrow(base, narrow_spots, narrow_source))


def test_unsupported_ops_run_in_eager_with_one_located_warning(compiled_graphs):
    def program(x):
        y = torch.relu(x) * 3
        middle = torch.special.ndtri(y.sigmoid())[..., :1]  # ndtri line
        return torch.exp(middle) + torch.special.i0(y)[..., :1]  # i0 line

    x = torch.randn(5, 7)
    with pytest.warns(FallbackWarning) as caught:
        got = torch.compile(program, backend="emmy")(x)
    torch.testing.assert_close(got, program(x))
    assert len(caught) == 1
    message = str(caught[0].message)
    assert f"{__file__}:{lines_of('# ndtri line')}:" in message
    assert "'aten.special_ndtri.default'" in message
    assert f"{__file__}:{lines_of('# i0 line')}:" in message
    assert "'aten.i0.default'" in message
    assert len(emmy_partitions(compiled_graphs)) >= 2
    # The warning itself is at the first op's line, where Python's display shows the source.
    assert (caught[0].filename, caught[0].lineno) == (__file__, lines_of("# ndtri line"))


def test_without_fallback_every_unsupported_op_is_one_error():
    def program(x):
        return torch.special.ndtri(x.sigmoid()).sum() + torch.special.i0(x)

    compiled = torch.compile(program, backend="emmy", options={"fallback": False})
    with pytest.raises(Exception, match="emmy cannot compile 2 op") as caught:
        compiled(torch.randn(4, 6))
    assert "aten.special_ndtri.default" in str(caught.value)
    assert "aten.i0.default" in str(caught.value)


def test_unknown_options_are_refused():
    compiled = torch.compile(nn.ReLU(), backend="emmy", options={"tile": 3})
    with pytest.raises(Exception, match="unknown emmy option 'tile'"):
        compiled(torch.randn(3))


def test_graph_breaks_and_recompiles_give_eager_results():
    def program(x):
        y = torch.sigmoid(x) + 1
        if y.sum() > 0:  # data-dependent: a graph break
            y = y * 2
        return F.softmax(y, dim=-1)

    compiled = torch.compile(program, backend="emmy", dynamic=False)
    for shape in [(3, 8), (5, 8), (2, 4, 8)]:
        x = torch.randn(shape)
        torch.testing.assert_close(compiled(x), program(x))


def test_identical_layers_share_one_compiled_program(compiled_graphs):
    """Each layer is its own partition (an i0e, left to PyTorch, separates them): the four
    partitions are one program, lowered once."""

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(16, 16)

        def forward(self, x):
            return F.gelu(self.linear(torch.special.i0e(x).mean(-1, keepdim=True) * x)) + x

    model = nn.Sequential(*[Layer() for _ in range(4)]).eval()
    x = torch.randn(3, 16)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        got = torch.compile(model, backend="emmy")(x)
    torch.testing.assert_close(got, model(x), rtol=1e-5, atol=1e-5)
    partitions = emmy_partitions(compiled_graphs)
    assert len(partitions) == 4
    assert len({id(p.graph) for p in partitions}) == 1


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_corpus_program_matches_eager(name, compiled_graphs):
    program = load_program(source(name, "float32"), "<source>")
    inputs = random_inputs(program, program.to_torch_ir(), seed=3)
    compiled = torch.compile(program.module, backend="emmy", dynamic=False)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        got = compiled(*inputs)
        want = program.module(*inputs)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4, equal_nan=True)
    assert emmy_partitions(compiled_graphs), "emmy compiled nothing"


EVERYDAY_PROGRAMS = {
    "cross_entropy": (
        lambda x, t: F.cross_entropy(x, t),
        lambda: (torch.randn(6, 5), torch.randint(0, 5, (6,))),
    ),
    "stack_unbind": (
        lambda x: torch.stack([r * 2 for r in x.unbind(0)], dim=1),
        lambda: (torch.randn(3, 4),),
    ),
    "triu": (lambda x: torch.triu(x) + 1, lambda: (torch.randn(5, 5),)),
    "integer_division": (lambda n: (n % 7) + (n // 3), lambda: (torch.randint(-50, 50, (10,)),)),
    "conv1d": (nn.Conv1d(4, 6, 3), lambda: (torch.randn(2, 4, 12),)),
    "flatten": (lambda x: torch.relu(torch.flatten(x, 1)), lambda: (torch.randn(2, 3, 4),)),
    "batch_norm_eval": (nn.BatchNorm1d(8).eval(), lambda: (torch.randn(5, 8),)),
    # AOTAutograd's batch norm of the batch's statistics (`_native_batch_norm_legit.no_stats`)
    "instance_norm": (nn.InstanceNorm2d(3, affine=True), lambda: (torch.randn(2, 3, 5, 6),)),
    "bool_arithmetic": (
        lambda a, b: (a * b, a + b, torch.maximum(a, b)),
        lambda: (torch.rand(4, 5) > 0.5, torch.rand(4, 5) > 0.5),
    ),
    "argmax_gather": (
        lambda x: torch.gather(x, 1, x.argmax(dim=1, keepdim=True)),
        lambda: (torch.randn(4, 9),),
    ),
}
"""Issue 14's everyday programs (and forms PyTorch traces differently from torch.export):
emmy compiles what it can of each, PyTorch runs the rest."""


@pytest.mark.parametrize("name", sorted(EVERYDAY_PROGRAMS))
def test_everyday_programs_match_eager(name):
    function, make_inputs = EVERYDAY_PROGRAMS[name]
    inputs = make_inputs()
    compiled = torch.compile(function, backend="emmy", dynamic=False)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        got = compiled(*inputs)
        want = function(*inputs)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(EVERYDAY_PROGRAMS))
def test_everyday_programs_compile_without_fallback(name):
    """Directly or through PyTorch's core decompositions (stack, unbind, triu and
    cross-entropy have no Torch IR op), every op goes to emmy: nothing falls back."""
    function, make_inputs = EVERYDAY_PROGRAMS[name]
    inputs = make_inputs()
    compiled = torch.compile(function, backend="emmy", options={"fallback": False})
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), function(*inputs))


def test_a_partition_emmy_fails_to_lower_runs_in_pytorch_with_the_error_named(monkeypatch):
    def failing_lower(torch_ir, level):
        raise RuntimeError("a lowering bug")

    monkeypatch.setattr(
        dynamo_backend.CompiledGraph, "module", lambda self, level: failing_lower(None, level)
    )
    x = torch.randn(3, 4)
    with pytest.warns(
        FallbackWarning, match="internal error compiling the partition of aten.*a lowering bug"
    ):
        got = torch.compile(lambda t: torch.sigmoid(t) * 2, backend="emmy")(x)
    torch.testing.assert_close(got, torch.sigmoid(x) * 2)


def test_gradients_through_the_backend_match_eager():
    """With gradients enabled AOTAutograd hands the backend a forward and a backward graph:
    both are compiled the same way, the layer norm's statistics that the backward pass reads
    among the forward's results."""
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4))
    reference = copy.deepcopy(model)
    x = torch.randn(5, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        torch.compile(model, backend="emmy")(x).square().sum().backward()
    reference(x).square().sum().backward()
    for (name, got), want in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-5, atol=1e-5, msg=name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_layer_norms_mean_and_reciprocal_deviation_match_eager(dtype):
    """`native_layer_norm`'s three results, over two normalized dims: the statistics in
    their own type (bf16 on the CPU for bf16 rows), computed in f32."""
    weight, bias = torch.randn(3, 8, dtype=dtype), torch.randn(3, 8, dtype=dtype)

    def norm(x):
        return torch.ops.aten.native_layer_norm(x, [3, 8], weight, bias, 1e-5)

    x = 3 * torch.randn(4, 3, 8, dtype=dtype) + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        got = torch.compile(norm, backend="emmy")(x)
    for result, want in zip(got, norm(x), strict=True):
        assert result.dtype == want.dtype and result.shape == want.shape
        torch.testing.assert_close(result, want)


class ScaledLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 16)
        self.register_buffer("scale", torch.randn(1, 16))

    def forward(self, x):
        return self.linear(x) * self.scale


def test_parameters_and_buffers_are_a_partitions_static_inputs(compiled_graphs):
    """On CUDA a partition's CUDA graphs read its static inputs in place and copy the others
    in: the parameters and buffers are static, the activations not."""
    model = ScaledLinear()
    compiled = torch.compile(model, backend="emmy", dynamic=False)
    x = torch.randn(3, 8)
    torch.testing.assert_close(compiled(x), model(x))
    (graph,) = compiled_graphs
    (call,) = [n for n in graph.graph.nodes if n.op == "call_module"]
    partition = graph.get_submodule(call.target)
    shapes = [tuple(a.meta["val"].shape) for a in call.args]
    assert dict(zip(shapes, partition.static)) == {
        (16, 8): True,
        (16,): True,
        (1, 16): True,
        (3, 8): False,
    }


class Accumulator(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(2, 5))

    def forward(self, x):
        self.total.add_(x)
        return self.total.sum(-1)


def test_a_partitions_outputs_are_copied_out_of_its_graphs_unless_only_written_back(
    compiled_graphs,
):
    """The buffer's new value, which AOTAutograd only copies into the buffer, is handed out as
    the graph's own (copied into the buffer by the graph itself); the returned sum, which the
    caller may keep, as a copy."""
    model, expected = Accumulator(), Accumulator()
    compiled = torch.compile(model, backend="emmy", dynamic=False)
    x = torch.randn(2, 5)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), expected(x))
    torch.testing.assert_close(model.total, expected.total)
    (graph,) = compiled_graphs
    (call,) = [n for n in graph.graph.nodes if n.op == "call_module"]
    partition = graph.get_submodule(call.target)
    pieces = sorted(call.users, key=lambda piece: piece.args[1])
    shapes = [tuple(piece.meta["val"].shape) for piece in pieces]
    assert dict(zip(shapes, partition.copied)) == {(2, 5): False, (2,): True}
    # On CUDA the graph copies the buffer's new value into the buffer itself.
    (buffer,) = [i for i, a in enumerate(call.args) if partition.static[i]]
    assert dict(zip(shapes, partition.written_into)) == {(2, 5): buffer, (2,): None}
    # The partition made AOTAutograd's copy into the buffer: none is left to PyTorch.
    assert not [n for n in graph.graph.nodes if n.target is torch.ops.aten.copy_.default]


class KeyValueCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, 2, 16, 8))
        self.register_buffer("v_cache", torch.zeros(1, 2, 16, 8))

    def forward(self, q, k, v, positions):
        self.k_cache.index_copy_(2, positions, k * 2)
        self.v_cache.index_copy_(2, positions, v + 1)
        return F.scaled_dot_product_attention(q, self.k_cache, self.v_cache)


@pytest.mark.parametrize("level", ["loop", "kernel"])
def test_a_kv_caches_update_is_computed_in_the_cache(compiled_graphs, level):
    """The caches' new values, which the partition copies into the caches, are computed in
    the caches' own buffers (`place-results-in-arguments`): the program allocates none, and
    each step matches eager's, the caches included, run by the Loop IR interpreter and by the
    SIMT emulator."""
    model = KeyValueCache()
    expected = copy.deepcopy(model)
    options = {"fallback": False, "cpu_level": level}
    compiled = torch.compile(model, backend="emmy", dynamic=False, options=options)
    with torch.no_grad():
        for step in range(3):
            q, k, v = torch.randn(1, 2, 2, 8), torch.randn(1, 2, 2, 8), torch.randn(1, 2, 2, 8)
            positions = torch.tensor([2 * step, 2 * step + 1])
            torch.testing.assert_close(compiled(q, k, v, positions), expected(q, k, v, positions))
            torch.testing.assert_close(model.k_cache, expected.k_cache)
            torch.testing.assert_close(model.v_cache, expected.v_cache)
    (graph,) = compiled_graphs
    (partition,) = emmy_partitions([graph])
    assert [i is not None for i in partition.written_into] == [True, True, False]
    loop_ir = partition.graph.ir("loop")
    assert "emmy.results_in_arguments" in loop_ir
    assert "memref.alloc() : memref<1x2x16x8xf32>" not in loop_ir, loop_ir


class PyTorchsThenAccumulates(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.randn(2, 5))

    def forward(self, x):
        before = torch.special.i0(self.total)
        self.total.add_(x)
        return before * 2, self.total.sum(-1)


def test_a_mutated_input_that_pytorch_also_reads_is_copied_into_last(compiled_graphs):
    """emmy has no i0: PyTorch takes the buffer's old value's, so the partition that
    computes the new one must not write it into the buffer; the copy stays at the end of the
    graph. The fallback warning names the i0 alone."""
    model = PyTorchsThenAccumulates()
    expected = copy.deepcopy(model)
    compiled = torch.compile(model, backend="emmy", dynamic=False)
    with pytest.warns(FallbackWarning) as caught:
        for _ in range(2):
            x = torch.randn(2, 5)
            for got, want in zip(compiled(x), expected(x), strict=True):
                torch.testing.assert_close(got, want)
    torch.testing.assert_close(model.total, expected.total)
    (warning,) = [w for w in caught if issubclass(w.category, FallbackWarning)]
    assert "aten.i0" in str(warning.message) and "copy_" not in str(warning.message)
    (graph,) = compiled_graphs
    assert all(i is None for p in emmy_partitions([graph]) for i in p.written_into)
    (copy_node,) = [n for n in graph.graph.nodes if n.target is torch.ops.aten.copy_.default]
    assert copy_node.next is graph.graph.output_node()


def test_a_backward_graphs_partitions_copy_every_output_and_read_no_input_in_place(
    compiled_graphs,
):
    """AOTAutograd's metadata describes the forward graph: the backward graph's partitions
    take none of it (a gradient handed out as a CUDA graph's own buffer could become a
    parameter's `.grad` and be overwritten by the next backward pass)."""
    model = ScaledLinear()
    x = torch.randn(3, 8)
    torch.compile(model, backend="emmy", dynamic=False)(x).square().sum().backward()
    forward, backward = compiled_graphs
    partitions = [emmy_partitions([graph]) for graph in (forward, backward)]
    assert any(any(p.static) for p in partitions[0])
    assert partitions[1] and all(not any(p.static) and all(p.copied) for p in partitions[1])


def test_a_boolean_mask_made_additive_by_pytorch_is_read_as_the_boolean(compiled_graphs):
    """PyTorch's own decomposition of sdpa turns a boolean mask into `where(mask, 0, -inf)`;
    emmy's attention reads the boolean (fuse-attention) and gives eager's result, a row
    masked whole included."""

    def attend(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    q, k, v = torch.randn(1, 2, 16, 8), torch.randn(1, 2, 20, 8), torch.randn(1, 2, 20, 8)
    mask = torch.rand(16, 20) > 0.4
    mask[3] = False
    compiled = torch.compile(attend, backend="emmy", dynamic=False, options={"fallback": False})
    torch.testing.assert_close(compiled(q, k, v, mask), attend(q, k, v, mask))
    (partition,) = emmy_partitions(compiled_graphs)
    assert "mask tensor<16x20xi1>" in partition.graph.ir("fused")


def test_without_gradients_sdpa_keeps_its_boolean_mask_through_aotautograd(compiled_graphs):
    """Without gradients, sdpa with a boolean mask reaches emmy as `emmy::sdpa_boolean_mask`
    (not PyTorch's dispatch of it, which on CUDA makes the mask additive and finite for
    cuDNN), read as the boolean; with gradients it keeps PyTorch's form."""

    def attend(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)

    q, k, v = torch.randn(1, 4, 16, 8), torch.randn(1, 2, 32, 8), torch.randn(1, 2, 32, 8)
    mask = torch.rand(16, 32) > 0.4
    mask[5] = False
    compiled = torch.compile(attend, backend="emmy", dynamic=False, options={"fallback": False})
    with torch.no_grad():
        torch.testing.assert_close(compiled(q, k, v, mask), attend(q, k, v, mask))
    (graph,) = compiled_graphs
    (partition,) = emmy_partitions([graph])
    (sdpa,) = [line for line in partition.graph.ir("torch").splitlines() if "torch.sdpa" in line]
    assert "%sdpa_boolean_mask = " in sdpa and "mask tensor<16x32xi1>" in sdpa
    torch._dynamo.reset()
    compiled(q, k, v, mask)
    (partition,) = emmy_partitions(compiled_graphs[-1:])
    assert "torch.sdpa" in partition.graph.ir("torch")
    assert "%sdpa_boolean_mask" not in partition.graph.ir("torch")


def test_sdpa_boolean_mask_run_by_pytorch_is_sdpa():
    """Where PyTorch runs the op (a partition left to eager), it is sdpa itself."""
    q, k, v = torch.randn(2, 4, 8, 16), torch.randn(2, 2, 12, 16), torch.randn(2, 2, 12, 16)
    mask = torch.rand(2, 1, 8, 12) > 0.5
    expected = F.scaled_dot_product_attention(q, k, v, mask, scale=0.3, enable_gqa=True)
    kept = torch.ops.emmy.sdpa_boolean_mask(q, k, v, mask, 0.0, False, 0.3, True)
    torch.testing.assert_close(kept, expected)


class AccumulatorReadElsewhere(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(2, 5))

    def forward(self, x):
        top = torch.special.i0(self.total)  # PyTorch's, before the update
        self.total.add_(x)
        return self.total.sum(-1), top


def test_a_buffer_another_node_reads_is_not_overwritten_inside_a_partitions_graph(
    compiled_graphs,
):
    """Where a node outside the partition (here PyTorch's i0) reads the buffer's old
    value, the partition's graph must not write the new one into it: it hands the new value
    out for AOTAutograd to copy after the graph."""
    model, expected = AccumulatorReadElsewhere(), AccumulatorReadElsewhere()
    compiled = torch.compile(model, backend="emmy", dynamic=False)
    x = torch.randn(2, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        for _ in range(2):
            torch.testing.assert_close(compiled(x), expected(x))
    (graph,) = compiled_graphs
    partitions = emmy_partitions([graph])
    assert partitions and all(p.written_into == [None] * len(p.copied) for p in partitions)


def test_an_unfold_window_too_long_runs_in_pytorch_with_its_reason():
    def frames(x):
        return x.unfold(-1, 100, 50) * 2

    x = torch.randn(2, 400)
    with pytest.warns(FallbackWarning, match="unfold windows of more than 64 elements"):
        got = torch.compile(frames, backend="emmy")(x)
    torch.testing.assert_close(got, frames(x))


def test_a_lookup_of_the_dynamic_size_runs_in_pytorch_with_its_reason():
    """gather, scatter and masked_scatter build static row lookups and position matches: with
    the dynamic size in their operands they are refused with that reason and run in
    PyTorch, at every size."""

    def program(x):
        order = x.argsort(1)
        return x.gather(1, order) + x.scatter(1, order, x) + x.masked_scatter(x > 0, x * 3)

    compiled = torch.compile(program, backend="emmy")
    for rows in (5, 9):
        x = torch.randn(rows, 8)
        torch._dynamo.mark_dynamic(x, 0)
        with pytest.warns(FallbackWarning) as caught:
            got = compiled(x)
        torch.testing.assert_close(got, program(x))
        message = str(caught[0].message)
        for what in ("gather", "a scatter", "masked_scatter"):
            assert f"{what} of a tensor with the dynamic size is not supported" in message
        torch._dynamo.reset()


def test_gcd_runs_euclids_longest_pairs_to_the_end():
    """Consecutive Fibonacci numbers take Euclid's algorithm the most steps: the unrolled
    steps of emmy's gcd reach the end of the longest pair of each integer type."""
    fibonacci = [1, 2]
    while fibonacci[-1] < 2**62:
        fibonacci.append(fibonacci[-1] + fibonacci[-2])
    compiled = torch.compile(torch.gcd, backend="emmy", options={"fallback": False})
    for dtype in (torch.int32, torch.int64):
        top = torch.iinfo(dtype).max
        pairs = [(a, b) for a, b in zip(fibonacci, fibonacci[1:]) if b <= top]
        larger = torch.tensor([b for _, b in pairs], dtype=dtype)
        smaller = torch.tensor([a for a, _ in pairs], dtype=dtype)
        assert torch.equal(compiled(larger, smaller), torch.ones_like(larger))
        assert torch.equal(compiled(smaller * 6, larger * 6), torch.gcd(smaller * 6, larger * 6))
