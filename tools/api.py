"""emmy's Python API: an `nn.Module` compiled for its example inputs, called like the module.

    import emmy
    compiled = emmy.compile(model, torch.randn(8, 64))
    y = compiled(x)                # emmy's kernels on CUDA tensors, the interpreter on CPU
    print(compiled.ir("loop"))     # any level: torch, prim, fused, loop, tile, kernel, or cuda

The module is exported with `torch.export` (so its shapes are those of the example inputs,
but for a dim `dynamic_shapes` marks dynamic, as `torch.export.export` takes it, which is
compiled for every size in its range: see `emmy.dialects.sizes`) and compiled whole: an op
emmy cannot compile is a `FrontendError` at the user's line. Inside `torch.compile`, where
emmy leaves such ops to PyTorch, use `backend="emmy"` instead (see
`emmy.tools.dynamo_backend`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from emmy.tools.compiled_graph import CompiledGraph, CompileOptions, compiled_graph

if TYPE_CHECKING:
    import torch


class CompiledModule:
    """A module compiled by `emmy.compile`: call it with inputs shaped like the examples."""

    def __init__(self, exported: torch.export.ExportedProgram, graph: CompiledGraph):
        self.exported = exported
        self.graph = graph

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import torch

        from emmy.tools.frontend.importer import forward_arguments, write_back_mutations

        leaves = torch.utils._pytree.tree_leaves((args, kwargs))
        results = self.graph(forward_arguments(self.exported, leaves))
        outputs = write_back_mutations(self.exported, leaves, results)
        return torch.utils._pytree.tree_unflatten(outputs, self.exported.call_spec.out_spec)

    def ir(self, level: str) -> str:
        """The program at `level` (torch, prim, fused, loop, tile, kernel), or with "cuda"
        the CUDA C++ of its kernels."""
        return self.graph.ir(level)


def compile(
    module: torch.nn.Module, *example_inputs: Any, dynamic_shapes: Any = None, **options: Any
) -> CompiledModule:
    """`module` compiled for inputs shaped like `example_inputs` (but for the dims
    `dynamic_shapes` marks, `torch.export.Dim`s as `torch.export.export` takes them); `options`
    are the fields of `CompileOptions` (e.g. `cpu_level="kernel"` runs the SIMT emulator on CPU
    tensors)."""
    import torch

    from emmy.passes.place_results_in_arguments import RESULTS_IN_ARGUMENTS, results_in_arguments
    from emmy.tools.frontend.importer import (
        decomposed,
        import_exported_program,
        mutated_buffer_arguments,
    )
    from emmy.tools.frontend.program import FrontendError

    chosen = CompileOptions.from_mapping(options)
    try:
        exported = decomposed(
            torch.export.export(module, tuple(example_inputs), dynamic_shapes=dynamic_shapes)
        )
    except Exception as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise FrontendError(
            f"torch.export failed: {type(error).__name__}: {message}", None
        ) from error
    torch_ir = import_exported_program(exported, None, (), mutations=True)
    if pairs := mutated_buffer_arguments(exported):
        # The buffers' old values are dead once a call returns (`write_back_mutations`
        # replaces them), so their new values may be computed in place.
        torch_ir.attributes[RESULTS_IN_ARGUMENTS] = results_in_arguments(pairs)
    return CompiledModule(exported, compiled_graph(torch_ir, chosen))
