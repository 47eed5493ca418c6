"""emmy: an MLIR-style compiler from PyTorch programs to CUDA, written on xDSL.

    compiled = emmy.compile(model, torch.randn(8, 64))   # see emmy.tools.api

`compile` and `CompileOptions` are loaded on first use, so that `import emmy` (and the `emmy`
command's start-up) does not import PyTorch.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emmy.tools.api import compile
    from emmy.tools.compiled_graph import CompileOptions

__all__ = ["CompileOptions", "compile"]


def __getattr__(name: str) -> Any:
    if name == "compile":
        from emmy.tools.api import compile

        return compile
    if name == "CompileOptions":
        from emmy.tools.compiled_graph import CompileOptions

        return CompileOptions
    raise AttributeError(f"module 'emmy' has no attribute {name!r}")
