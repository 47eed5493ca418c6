"""Test-only passes that fail in each way a pass can fail, and a pipeline of them; tests load
them with `emmy-opt --load-pass-plugin %S/Inputs/test_passes.py`."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.utils.exceptions import PassFailedException

from emmy.passes.pipelines import NamedPipeline
from emmy.passes.registry import register_pass


@dataclass(frozen=True)
class RejectOpPass(ModulePass):
    """Rejects the first op named `op`, as a lowering rejects input it cannot handle."""

    name = "test-reject-op"

    op: str = "arith.addf"
    """The name of the op to reject."""

    reason: str = "cannot handle"
    """What the error says the pass does with the op."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if inner.name == self.op:
                raise PassFailedException(f"{self.reason} '{inner.name}'", inner)
        raise PassFailedException(f"found no '{self.op}' that it {self.reason}")


@dataclass(frozen=True)
class CrashPass(ModulePass):
    """Raises a KeyError, as a pass with a bug does."""

    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        {}["missing-key"]


@dataclass(frozen=True)
class DropReturnValuesPass(ModulePass):
    """Replaces each func.return by one without operands, leaving IR that does not verify."""

    name = "test-drop-return-values"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for ret in [o for o in op.walk() if isinstance(o, func.ReturnOp)]:
            Rewriter.replace_op(ret, func.ReturnOp())


@dataclass(frozen=True)
class DropReturnValuesThenCsePipeline(NamedPipeline):
    """Pipeline: test-drop-return-values, which leaves IR that does not verify, then cse."""

    name = "test-drop-then-cse"

    @classmethod
    def passes(cls) -> tuple[ModulePass, ...]:
        return (DropReturnValuesPass(), CommonSubexpressionElimination())


for pass_class in (RejectOpPass, CrashPass, DropReturnValuesPass, DropReturnValuesThenCsePipeline):
    register_pass(pass_class)
