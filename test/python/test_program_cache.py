"""`emmy compile`'s cache of Torch IR: a program compiled again prints byte for byte what it
printed the first time and what an uncached compile prints, at every level, without exporting
it again (nor loading PyTorch); entries that are damaged are exported again, and a cache that
cannot be written, or is turned off, only costs the export."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from emmy.tools import cli
from emmy.tools.frontend import program as frontend
from emmy.tools.settings import cache_root

# A helper function, a constant and a buffer: ops located in the helper, a folded scalar, and
# a lifted tensor, which the cached text must all keep exactly.
PROGRAM = """\
def scaled(x, factor):
    return torch.relu(x) * factor

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(64)
        self.register_buffer("shift", torch.linspace(-1.0, 1.0, 64) / 3)

    def forward(self, x):
        return scaled(self.norm(x), 0.123456789) + self.shift

Block()(torch.randn(2, 8, 64))
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EMMY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("EMMY_NO_CACHE", raising=False)
    return tmp_path / "cache" / "torch-ir"


@pytest.fixture
def exports(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The file names of the programs exported from here on."""
    exported = []
    load_program = frontend.load_program

    def counting(text: str, filename: str, seconds: float | None = None) -> frontend.Program:
        exported.append(filename)
        return load_program(text, filename, seconds)

    monkeypatch.setattr(frontend, "load_program", counting)
    return exported


def compile_(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli.main(["compile", *args]) == 0
    return capsys.readouterr().out


def uncached(capsys, monkeypatch, *args: str) -> str:
    with monkeypatch.context() as patch:
        patch.setenv("EMMY_NO_CACHE", "1")
        return compile_(capsys, *args)


@pytest.mark.parametrize("level", ["torch", "prim", "loop", "kernel", "cuda"])
def test_a_second_compile_prints_what_an_uncached_one_does(
    level, cache, exports, capsys, monkeypatch
):
    expected = uncached(capsys, monkeypatch, "-c", PROGRAM, "--ir", level)
    assert exports == ["<source>"] and not cache.exists()
    first = compile_(capsys, "-c", PROGRAM, "--ir", level)
    second = compile_(capsys, "-c", PROGRAM, "--ir", level)
    assert first == second == expected
    assert exports == ["<source>", "<source>"]  # the second compile read the cache
    assert len(list(cache.glob("*.mlir"))) == 1


def test_the_cached_text_keeps_every_location(cache, capsys):
    compile_(capsys, "-c", PROGRAM)
    (entry,) = cache.glob("*.mlir")
    text = entry.read_text()
    assert text.startswith("// emmy torch-ir 1 ")
    assert "torch.relu %" in text and 'loc("<source>":2:' in text  # in the helper
    assert "loc(unknown)" in text  # the module's, kept unknown


def test_a_file_and_a_string_are_different_programs(cache, exports, capsys, tmp_path):
    path = tmp_path / "block.py"
    path.write_text(PROGRAM)
    from_string = compile_(capsys, "-c", PROGRAM, "--ir", "torch")
    from_file = compile_(capsys, str(path), "--ir", "torch")
    assert exports == ["<source>", str(path)]
    assert from_file == from_string  # locations are not printed, but they are kept
    assert len(list(cache.glob("*.mlir"))) == 2
    compile_(capsys, str(path), "--ir", "loop")
    assert exports == ["<source>", str(path)]


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text.replace("torch.relu", "torch.rleu"),
        lambda text: text[: len(text) // 2],
        lambda text: "",
        lambda text: text.split("\n", 1)[0] + "\n",  # the header alone
    ],
    ids=["edited", "truncated", "empty", "header only"],
)
def test_a_damaged_entry_is_exported_again(damage, cache, exports, capsys):
    expected = compile_(capsys, "-c", PROGRAM, "--ir", "loop")
    (entry,) = cache.glob("*.mlir")
    intact = entry.read_text()
    entry.write_text(damage(intact))
    assert compile_(capsys, "-c", PROGRAM, "--ir", "loop") == expected
    assert exports == ["<source>", "<source>"]
    assert entry.read_text() == intact  # written again


def test_an_entry_that_does_not_parse_is_exported_again(cache, exports, capsys):
    import hashlib

    expected = compile_(capsys, "-c", PROGRAM)
    (entry,) = cache.glob("*.mlir")
    body = "builtin.module { no.such_op }\n"
    entry.write_text(f"// emmy torch-ir 1 {hashlib.sha256(body.encode()).hexdigest()}\n{body}")
    assert compile_(capsys, "-c", PROGRAM) == expected
    assert exports == ["<source>", "<source>"]


def test_an_unwritable_cache_only_costs_the_export(tmp_path, monkeypatch, exports, capsys):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("EMMY_CACHE_DIR", str(blocked))
    first = compile_(capsys, "-c", PROGRAM, "--ir", "fused")
    assert compile_(capsys, "-c", PROGRAM, "--ir", "fused") == first
    assert exports == ["<source>", "<source>"]


def test_errors_are_not_cached(cache, exports, capsys):
    program = "nn.Linear(3, 2)(torch.randn(4, 5))"
    for _ in range(2):
        assert cli.main(["compile", "-c", program]) == 1
        assert capsys.readouterr().err.startswith("<source>:1:1: error: torch.export failed")
    assert exports == ["<source>", "<source>"]
    assert not list(cache.glob("*.mlir"))


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("EMMY_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "emmy"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "emmy"
    monkeypatch.setenv("EMMY_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"


def test_a_cached_compile_loads_no_torch(cache, capsys):
    expected = compile_(capsys, "-c", PROGRAM, "--ir", "tile")
    probe = (
        "import sys; from emmy.tools.cli import main; status = main(sys.argv[1:]); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'torch'), file=sys.stderr); "
        "sys.exit(status)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe, "compile", "-c", PROGRAM, "--ir", "tile"],
        capture_output=True,
        text=True,
        env={**os.environ, "EMMY_CACHE_DIR": str(cache.parent)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected
    assert result.stderr == "[]\n"
