"""The disk cache of what `torch.compile(backend="emmy")` made of a Dynamo graph: a later compile
of the same graph (after `torch._dynamo.reset()`, or in a new process) skips AOTAutograd and
emmy's compile and gives eager's results, buffer mutations included; a graph the cache cannot
serve is compiled every time, and a broken or stale entry is a miss."""

import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F

from emmy.tools import dynamo_cache
from emmy.tools.compiled_graph import CompileOptions
from emmy.tools.dynamo_backend import FallbackWarning


@pytest.fixture(autouse=True)
def entries(tmp_path, monkeypatch):
    """The cache's folder of entries, empty at the start of each test."""
    monkeypatch.setenv("EMMY_CACHE_DIR", str(tmp_path))
    torch._dynamo.reset()
    yield tmp_path / dynamo_cache.KIND
    torch._dynamo.reset()


class Cached(nn.Module):
    """Layers and a buffer updated in place (a KV cache's write)."""

    def __init__(self):
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 16)
        self.register_buffer("cache", torch.zeros(8, 16))

    def forward(self, x, positions):
        h = self.down(F.silu(self.up(x)))
        self.cache.index_copy_(0, positions, h)
        return F.layer_norm(h, (16,)) + self.cache.sum(0)


def twins():
    """A model and an equal copy, one for emmy and one for eager."""
    model = Cached().eval()
    twin = Cached().eval()
    twin.load_state_dict(model.state_dict())
    return model, twin


def run_both(model, twin, compiled):
    x, positions = torch.randn(4, 16), torch.randperm(8)[:4]
    with torch.no_grad():
        got, want = compiled(x, positions), twin(x, positions)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(model.cache, twin.cache, rtol=1e-4, atol=1e-4)


def test_a_graph_compiled_again_is_read_back_and_matches_eager(entries, backend_compiles):
    model, twin = twins()
    run_both(model, twin, torch.compile(model, backend="emmy"))
    assert len(backend_compiles) == 1 and len(list(entries.iterdir())) == 1
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="emmy")
    for _ in range(2):
        run_both(model, twin, compiled)
    assert len(backend_compiles) == 1, "the second compile went through AOTAutograd"


@pytest.mark.parametrize(
    "device",
    [
        "cpu",
        pytest.param(
            "cuda",
            marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
        ),
    ],
)
def test_a_new_process_reads_the_entry_a_first_one_wrote(entries, device):
    """On CUDA, calls after the first replay CUDA graphs (the KV cache written within them)."""
    script = textwrap.dedent(
        f"""
        import torch, torch.nn as nn, torch.nn.functional as F
        from emmy.tools import dynamo_backend
        compiled_graphs = []
        compile_graph = dynamo_backend.compile_graph
        dynamo_backend.compile_graph = lambda *a: compiled_graphs.append(1) or compile_graph(*a)

        class Step(nn.Module):
            def __init__(self):
                super().__init__()
                self.up, self.down = nn.Linear(64, 128), nn.Linear(128, 64)
                self.register_buffer("cache", torch.zeros(16, 64))

            def forward(self, x, positions):
                h = self.down(F.silu(self.up(x)))
                self.cache.index_copy_(0, positions, h)
                return F.rms_norm(h, (64,)) + self.cache.mean(0)

        torch.manual_seed(0)
        dtype = torch.bfloat16 if "{device}" == "cuda" else torch.float32
        tolerance = 3e-2 if dtype == torch.bfloat16 else 1e-4  # relative and absolute
        model = Step().to("{device}", dtype).eval()
        twin = Step().to("{device}", dtype).eval()
        twin.load_state_dict(model.state_dict())
        compiled = torch.compile(model, backend="emmy")
        errors = []
        with torch.no_grad():
            for step in range(4):
                x = torch.randn(4, 64, device="{device}", dtype=dtype)
                positions = torch.arange(4 * step, 4 * step + 4, device="{device}")
                got, want = compiled(x, positions), twin(x, positions)
                for a, b in ((got, want), (model.cache, twin.cache)):
                    errors.append(((a - b).abs() - tolerance * b.abs()).max().item())
        print(len(compiled_graphs), max(errors) <= tolerance)
        """
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs == [["1", "True"], ["0", "True"]]


def test_the_fallback_warning_is_given_again_when_the_entry_is_read(entries, backend_compiles):
    def model(x):
        return torch.special.ndtri(torch.sigmoid(x)) * 2

    x = torch.rand(5) - 0.5
    for _ in range(2):
        torch._dynamo.reset()
        with torch.no_grad(), pytest.warns(FallbackWarning, match="ndtri") as caught:
            got = torch.compile(model, backend="emmy")(x)
        torch.testing.assert_close(got, model(x))
        (warning,) = caught
        assert (warning.filename, warning.lineno) == (__file__, model.__code__.co_firstlineno + 1)
    assert len(backend_compiles) == 1


@pytest.mark.parametrize("kind", ["gradients", "dynamic", "aliased output"])
def test_graphs_the_cache_cannot_serve_are_compiled_every_time(kind, entries, backend_compiles):
    layer = nn.Linear(8, 8)

    def model(x):
        y = layer(x)
        return (y, x.t()) if kind == "aliased output" else y

    x = torch.randn(4, 8)
    for _ in range(2):
        torch._dynamo.reset()
        compiled = torch.compile(model, backend="emmy", dynamic=kind == "dynamic")
        with torch.set_grad_enabled(kind == "gradients"), warnings.catch_warnings():
            warnings.simplefilter("ignore", FallbackWarning)
            got, want = compiled(x), model(x)
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert len(backend_compiles) >= 2
    assert not entries.exists() or not list(entries.iterdir())


def test_another_shape_or_dtype_is_another_entry(entries, backend_compiles):
    layer = nn.Linear(8, 8)
    for x in (torch.randn(4, 8), torch.randn(5, 8), torch.randn(4, 8).double()):
        layer = layer.to(x.dtype)
        torch._dynamo.reset()
        with torch.no_grad():
            got = torch.compile(layer, backend="emmy", dynamic=False)(x)
            torch.testing.assert_close(got, layer(x))
    assert len(backend_compiles) == 3 and len(list(entries.iterdir())) == 3


def test_a_broken_entry_is_compiled_again_and_rewritten(entries, backend_compiles):
    model, twin = twins()
    run_both(model, twin, torch.compile(model, backend="emmy"))
    (entry,) = entries.iterdir()
    entry.write_bytes(entry.read_bytes()[:-10])
    torch._dynamo.reset()
    run_both(model, twin, torch.compile(model, backend="emmy"))
    assert len(backend_compiles) == 2
    assert dynamo_cache.load(entry.stem) is not None


def test_an_entry_whose_programs_no_longer_parse_is_compiled_again(entries, backend_compiles):
    model, twin = twins()
    run_both(model, twin, torch.compile(model, backend="emmy"))
    (path,) = entries.iterdir()
    entry = dynamo_cache.load(path.stem)
    for fields in entry.partitions.values():
        fields["structure"] = "builtin.module { not emmy's IR }"
    dynamo_cache.save(path.stem, entry)
    torch._dynamo.reset()
    run_both(model, twin, torch.compile(model, backend="emmy"))
    assert len(backend_compiles) == 2


def test_options_key_a_graph_and_a_tensor_constant_keeps_it_out():
    def graph_with_table():
        root = nn.Module()
        root.register_buffer("table", torch.arange(3.0))
        graph = torch.fx.Graph()
        x = graph.placeholder("x")
        graph.output(graph.call_function(torch.add, (x, graph.get_attr("table"))))
        return torch.fx.GraphModule(root, graph)

    def key(gm, **options):
        return dynamo_cache.graph_key(gm, [torch.ones(3)], CompileOptions(**options))

    # A buffer is passed in by AOTAutograd: only its layout keys the graph.
    assert key(graph_with_table()) == key(graph_with_table()) is not None
    assert key(graph_with_table()) != key(graph_with_table(), fallback=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMMY_DUMP_DIR", "dumps")  # the passes are to be seen: nothing is read
        assert key(graph_with_table()) is None
    constant = graph_with_table()
    constant.__dict__["table"] = constant._buffers.pop("table")  # not a buffer: a value
    assert key(constant) is None


@pytest.mark.parametrize("writable", ["entry", "folder"])
def test_an_entry_others_could_have_written_is_not_read(writable, entries, backend_compiles):
    model, twin = twins()
    run_both(model, twin, torch.compile(model, backend="emmy"))
    (entry,) = entries.iterdir()
    assert entry.stat().st_mode & 0o777 == 0o600 and entries.stat().st_mode & 0o777 == 0o700
    (entry if writable == "entry" else entries).chmod(0o666 if writable == "entry" else 0o777)
    dynamo_cache._REFUSED.clear()
    torch._dynamo.reset()
    with pytest.warns(UserWarning, match="not private to you"):
        run_both(model, twin, torch.compile(model, backend="emmy"))
    assert len(backend_compiles) == 2
    if writable == "entry":
        assert entry.stat().st_mode & 0o777 == 0o600, "the entry written again is private"


def test_a_graph_calling_what_cannot_be_found_again_by_name_is_not_cached():
    """A higher-order op (no qualified name) or a local function: `entry_of` refuses the
    graph, which the backend then compiles each time, rather than failing the compile."""

    def local(x):
        return x + 1

    for target in (torch.ops.higher_order.wrap_with_set_grad_enabled, local):
        graph = torch.fx.Graph()
        graph.output(graph.call_function(target, (graph.placeholder("x"),)))
        gm = torch.fx.GraphModule(nn.Module(), graph)
        with pytest.raises(dynamo_cache.NotCacheable, match="the function"):
            dynamo_cache.entry_of(gm, 1, None)
