"""The suite caches what it compiles in a folder of its own, removed at the end, never in the
user's cache (`EMMY_CACHE_DIR`, which the suite's subprocesses inherit); a test that is about
the cache sets its own."""

import importlib.util
import sys
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def private_cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EMMY_CACHE_DIR", str(tmp_path_factory.mktemp("emmy-cache")))
        yield


@pytest.fixture
def backend_compiles(monkeypatch):
    """The graph modules the `torch.compile` backend compiled through AOTAutograd
    (`compile_graph`'s results; a graph read from the backend's disk cache adds none)."""
    from emmy.tools import dynamo_backend

    compiled = []
    compile_graph = dynamo_backend.compile_graph

    def recording(*args):
        compiled.append(compile_graph(*args))
        return compiled[-1]

    monkeypatch.setattr(dynamo_backend, "compile_graph", recording)
    return compiled


@pytest.fixture
def llama(monkeypatch):
    """`benchmarks/llama.py` as a module (the benchmark is a script, not a package)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "llama.py"
    spec = importlib.util.spec_from_file_location("llama", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "llama", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module
