"""A disk cache of the Torch IR of programs, so that `emmy compile` exports a program once.

    module = cached_torch_ir(text, "model.py", export=lambda: compile_source(text, "model.py"))

    ~/.cache/emmy/torch-ir/<key>.mlir:
    // emmy torch-ir 1 <the sha256 of what follows>
    builtin.module attributes {torch.float32_matmul_precision = "highest"} {
      func.func @forward(...) -> tensor<4x2xf32> { ... } loc("model.py":4:1)
    } loc(unknown)

Exporting a program costs seconds (loading PyTorch and torch.export); parsing its Torch IR
back costs milliseconds and loads neither. An entry is the Torch IR printed with its
locations, so that a later error points into the program exactly as it would have; it is
keyed by the sha256 of the program's text and file name, the versions of emmy, PyTorch,
xDSL and Python, and the source of the code that writes Torch IR (the frontend and the
dialects), so an edit to any of them misses.

Entries live in `$EMMY_CACHE_DIR/torch-ir`, else `$XDG_CACHE_HOME/emmy/torch-ir`, else
`~/.cache/emmy/torch-ir`; `EMMY_NO_CACHE=1` turns the cache off. Writes are atomic (a rename),
so processes may share the directory, and an entry that is not exactly what was written (its
first line holds its body's sha256) or does not parse is ignored and written again: the
cache only ever costs an export. A program that reads files or the environment while it
builds its module is keyed by its text alone: compile it with `EMMY_NO_CACHE=1`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from io import StringIO
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer

from emmy.dialects import make_context
from emmy.tools.files import PendingFile
from emmy.tools.settings import cache_root

FORMAT = "emmy torch-ir 1"
"""The first words of an entry's first line; a change to what an entry holds changes it."""

CODE_PACKAGES = ("emmy.tools.frontend", "emmy.dialects")
"""The packages whose source decides the Torch IR of a program, and so its key."""


def cached_torch_ir(text: str, filename: str, export: Callable[[], ModuleOp]) -> ModuleOp:
    """The Torch IR of the program `text` (read from `filename`): from the cache, or made by
    `export` and then cached. Errors of `export` pass through and are not cached."""
    if os.environ.get("EMMY_NO_CACHE") == "1":
        return export()
    path = cache_root() / "torch-ir" / f"{entry_key(text, filename)}.mlir"
    module = read_entry(path)
    if module is None:
        module = export()
        write_entry(path, module)
    return module


def entry_key(text: str, filename: str) -> str:
    identity = hashlib.sha256()
    for part in (
        FORMAT,
        text,
        filename,
        *map(_version, ("emmy", "torch", "xdsl")),
        sys.version,
        *_code_digests(),
    ):
        identity.update(part.encode())
        identity.update(b"\0")
    return identity.hexdigest()


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:  # run from a source tree: the code digests still key it
        return "not installed"


def _code_digests() -> list[str]:
    digests = []
    for package in CODE_PACKAGES:
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.submodule_search_locations is not None
        for folder in spec.submodule_search_locations:
            for path in sorted(Path(folder).glob("*.py")):
                digests.append(hashlib.sha256(path.read_bytes()).hexdigest())
    return digests


def read_entry(path: Path) -> ModuleOp | None:
    """The module of an entry, or None if there is none or it is not intact."""
    try:
        header, body = path.read_text().split("\n", 1)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if header != f"// {FORMAT} {hashlib.sha256(body.encode()).hexdigest()}":
        return None
    try:
        return Parser(make_context(), body, str(path)).parse_module()
    except Exception:  # the cache never fails a compile: what does not parse is exported again
        return None


def write_entry(path: Path, module: ModuleOp) -> None:
    """Writes the entry whole or not at all (a reader never sees part of it, and a failed write
    leaves no temporary file)."""
    body = StringIO()
    Printer(stream=body, print_debuginfo=True).print_op(module)
    text = f"{body.getvalue()}\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with PendingFile(path, mode=0o600) as entry:
            entry.write(f"// {FORMAT} {hashlib.sha256(text.encode()).hexdigest()}\n{text}")
    except OSError:
        pass  # the cache is an optimisation: an unwritable cache directory only costs time
