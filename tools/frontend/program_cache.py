"""The Torch IR of programs cached on disk (`emmy.tools.ir_cache`), so that `emmy compile`
exports a program once.

    module = cached_torch_ir(text, "model.py", export=lambda: compile_source(text, "model.py"))

Exporting a program costs seconds (loading PyTorch and torch.export); parsing its Torch IR
back costs milliseconds and loads neither. An entry (`<cache root>/torch-ir/<key>.mlir`) is
keyed by the program's text and file name, and the code that writes Torch IR (the frontend
and the dialects). A program that reads files or the environment while it builds its module
is keyed by its text alone: compile it with `EMMY_NO_CACHE=1`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp

from emmy.tools.ir_cache import cached_module


def cached_torch_ir(text: str, filename: str, export: Callable[[], ModuleOp]) -> ModuleOp:
    """The Torch IR of the program `text` (read from `filename`): from the cache, or made by
    `export` and then cached. Errors of `export` pass through and are not cached."""
    return cached_module("torch-ir", [text, filename], ("emmy.tools.frontend",), export)
