"""A disk cache of IR, so that work done once (exporting a program, lowering it) is read back
in milliseconds by a later process; `cached_text` keeps text made from IR (a program's CUDA)
the same way.

    module = cached_module("torch-ir", [text, filename], ("emmy.tools.frontend",), export)

    ~/.cache/emmy/torch-ir/<key>.mlir:
    // emmy torch-ir 1 <the sha256 of what follows>
    builtin.module attributes {torch.float32_matmul_precision = "highest"} {
      func.func @forward(...) -> tensor<4x2xf32> { ... } loc("model.py":4:1)
    } loc(unknown)

An entry is the module printed with its locations, so that a later error points where it
would have; it is keyed by its kind, the caller's key parts, the versions of emmy, PyTorch,
xDSL and Python, and the source of the packages whose code decides the IR (always the
dialects), so an edit to any of them misses. Entries of a kind live in `<cache root>/<kind>`
(`emmy.tools.settings.cache_root`); `EMMY_NO_CACHE=1` turns the cache off. Writes are atomic
(a rename), so processes may share the directory, and an entry that is not exactly what was
written (its first line holds its body's sha256) or does not parse is ignored and written
again: the cache only ever costs the work it saves.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from io import StringIO
from pathlib import Path
from typing import TypeVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer

from emmy.dialects import make_context
from emmy.tools.files import PendingFile
from emmy.tools.settings import cache_root

FORMAT_VERSION = 1
"""A change to what an entry holds changes it (and so every key)."""

T = TypeVar("T")


def cached_module(
    kind: str, key_parts: Sequence[str], code_packages: Sequence[str], make: Callable[[], ModuleOp]
) -> ModuleOp:
    """The module of kind `kind` for `key_parts`: from the cache, or made by `make` and then
    cached. Errors of `make` pass through and are not cached."""
    return _cached(kind, key_parts, code_packages, make, "mlir", _parsed, _printed)


def cached_text(
    kind: str, key_parts: Sequence[str], code_packages: Sequence[str], make: Callable[[], str]
) -> str:
    """`cached_module` for text that is not IR (the CUDA a program's kernels print as)."""
    return _cached(kind, key_parts, code_packages, make, "txt", lambda text, _: text, str)


def _cached(
    kind: str,
    key_parts: Sequence[str],
    code_packages: Sequence[str],
    make: Callable[[], T],
    suffix: str,
    load: Callable[[str, Path], T | None],
    dump: Callable[[T], str],
) -> T:
    if os.environ.get("EMMY_NO_CACHE") == "1":
        return make()
    path = cache_root() / kind / f"{entry_key(kind, key_parts, code_packages)}.{suffix}"
    body = _read_text(path, kind)
    value = None if body is None else load(body, path)
    if value is None:
        value = make()
        _write_text(path, kind, dump(value))
    return value


def entry_key(kind: str, key_parts: Sequence[str], code_packages: Sequence[str]) -> str:
    identity = hashlib.sha256()
    for part in (
        _header(kind),
        *key_parts,
        *map(package_version, ("emmy", "torch", "xdsl")),
        sys.version,
        *_code_digests(("emmy.dialects", *code_packages)),
    ):
        identity.update(part.encode())
        identity.update(b"\0")
    return identity.hexdigest()


def _header(kind: str) -> str:
    return f"emmy {kind} {FORMAT_VERSION}"


@cache
def package_version(package: str) -> str:
    """The installed version of `package`, for keys."""
    try:
        return version(package)
    except PackageNotFoundError:  # run from a source tree: the code digests still key it
        return "not installed"


def unnamed_text(op: Operation, print_debuginfo: bool = False) -> str:
    """`op` printed with its values unnamed: the same text for two programs that differ only
    in what their values are called (two layers of a model, whose graphs name their nodes
    apart), for keys."""
    unnamed = op.clone()
    for inner in unnamed.walk():
        for value in (
            *inner.results,
            *(a for r in inner.regions for b in r.blocks for a in b.args),
        ):
            value.name_hint = None
    text = StringIO()
    Printer(stream=text, print_debuginfo=print_debuginfo).print_op(unnamed)
    return text.getvalue()


@cache
def _code_digests(packages: tuple[str, ...]) -> tuple[str, ...]:
    """The sha256 of each module of `packages`, read once per process: the code a process
    runs does not change under it."""
    digests = []
    for package in packages:
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.submodule_search_locations is not None
        for folder in spec.submodule_search_locations:
            for path in sorted(Path(folder).glob("*.py")):
                digests.append(hashlib.sha256(path.read_bytes()).hexdigest())
    return tuple(digests)


def _read_text(path: Path, kind: str) -> str | None:
    """The body of an entry, or None if there is none or it is not exactly what was written."""
    try:
        header, body = path.read_text().split("\n", 1)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if header != f"// {_header(kind)} {hashlib.sha256(body.encode()).hexdigest()}":
        return None
    return body


def _write_text(path: Path, kind: str, text: str) -> None:
    """Writes the entry whole or not at all (a reader never sees part of it, and a failed write
    leaves no temporary file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with PendingFile(path, mode=0o600) as entry:
            entry.write(f"// {_header(kind)} {hashlib.sha256(text.encode()).hexdigest()}\n{text}")
    except OSError:
        pass  # the cache is an optimisation: an unwritable cache directory only costs time


def _parsed(body: str, path: Path) -> ModuleOp | None:
    """The module of an entry's body, or None if it does not parse."""
    try:
        return Parser(make_context(), body, str(path)).parse_module()
    except Exception:  # the cache never fails a compile: what does not parse is made again
        return None


def _printed(module: ModuleOp) -> str:
    """A module's entry text, with its locations."""
    body = StringIO()
    Printer(stream=body, print_debuginfo=True).print_op(module)
    return f"{body.getvalue()}\n"
