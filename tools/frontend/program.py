"""The PyTorch frontend: a Python program in, Torch IR out.

    from emmy.tools.frontend.program import compile_source
    module = compile_source("nn.RMSNorm(2048)(torch.randn(1, 32, 2048))", "<string>")

A program is Python source with `torch`, `nn` (torch.nn) and `F` (torch.nn.functional)
already imported. It may define classes and functions; its last statement must be an
expression that calls an `nn.Module` instance on example inputs, e.g.
`Block(64)(torch.randn(2, 8, 64))`. The module runs in eval mode, and `torch.manual_seed(0)`
precedes the program, so its parameters and example inputs are the same on every run.

Every problem with the program (a syntax error, a last statement that is not such a call, an
exception in the user's code, an op emmy cannot represent exactly) is a `FrontendError` that
prints as `file:line:col: error: message` followed by the offending source line. A time limit
on the program's own Python (building its module and inputs, and tracing it) ends one that runs
too long with a `ProgramTimeout`.
"""

from __future__ import annotations

import ast
import contextlib
import linecache
import logging
import signal
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr

if TYPE_CHECKING:
    import torch
    import torch.nn as nn

LAST_STATEMENT_RULE = (
    "the last statement must call an nn.Module on example inputs, "
    "e.g. `nn.Linear(3, 2)(torch.randn(4, 3))`"
)


class FrontendError(Exception):
    """A problem with the user's PyTorch program, at a place in its source when one is known."""

    def __init__(
        self, message: str, location: FileLineColLoc | None, source_line: str | None = None
    ):
        super().__init__(message)
        self.message = message
        self.location = location
        self.source_line = source_line

    def __str__(self) -> str:
        if self.location is None:
            return f"error: {self.message}"
        column = self.location.column.data
        text = (
            f"{self.location.filename.data}:{self.location.line.data}:{column}: "
            f"error: {self.message}"
        )
        if self.source_line is None:
            return text
        return f"{text}\n{self.source_line}\n{' ' * (column - 1)}^"


class ProgramTimeout(FrontendError):
    """The program's Python ran past the time limit `load_program` was given."""

    def __init__(self, seconds: float):
        super().__init__(f"the program's Python ran past the {seconds:g} s limit", None)


class TimeLimitExceeded(BaseException):
    """What `time_limit` raises when its time runs out: a BaseException, as KeyboardInterrupt
    is, so that a program's `except Exception:` does not take it."""


@dataclass
class Deadline:
    """What `time_limit` yields: whether its time ran out. A library that cleans up while
    TimeLimitExceeded unwinds through it may raise an error of its own in its place (torch.export's
    mode stack: "Trying to pop empty mode stack"); that error is then the timeout too."""

    expired: bool = False


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[Deadline]:
    """Raises TimeLimitExceeded in what runs inside once `seconds` have passed (None: never),
    from a SIGALRM timer, so in the main thread only: Python code stops at its next bytecode,
    a long call into C (an op on a large tensor) when it returns."""
    deadline = Deadline()
    if seconds is None:
        yield deadline
        return

    def expire(signum: int, frame: Any) -> None:
        deadline.expired = True
        raise TimeLimitExceeded

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield deadline
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def location(filename: str, line: int, column: int) -> FileLineColLoc:
    return FileLineColLoc(StringAttr(filename), IntAttr(line), IntAttr(column))


@dataclass
class Program:
    """A user's program: the module it calls, the example inputs it calls it on, and the
    exported graph of that call. `module(*example_args, **example_kwargs)` is the eager
    reference every compiled level is compared against."""

    module: nn.Module
    example_args: tuple[Any, ...]
    example_kwargs: dict[str, Any]
    exported: torch.export.ExportedProgram
    filename: str
    source_lines: list[str]
    call_location: FileLineColLoc
    """Where the last statement calls the module."""

    def to_torch_ir(self) -> ModuleOp:
        # imported here because the importer imports FrontendError from this module
        from emmy.tools.frontend.importer import import_exported_program

        return import_exported_program(
            self.exported, self.filename, self.source_lines, self.call_location
        )

    def forward_arguments(self) -> list[torch.Tensor]:
        """The values of `@forward`'s arguments (parameters, buffers, constants and the
        example inputs, in the function's order), to run the compiled program on."""
        import torch

        from emmy.tools.frontend.importer import forward_arguments  # see to_torch_ir

        user_inputs = torch.utils._pytree.tree_leaves((self.example_args, self.example_kwargs))
        return forward_arguments(self.exported, user_inputs)


class _Source:
    """The program's text, compiled under an alias of its file name (torch.export drops
    stack frames of files it deems uninteresting, `<string>` among them) and registered
    with `linecache` so that stack traces can quote it."""

    def __init__(self, text: str, filename: str):
        self.filename = filename
        self.code_name = f"<emmy {filename}>"
        self.lines = text.splitlines()
        linecache.cache[self.code_name] = (len(text), None, text.splitlines(True), self.code_name)

    def compile(self, node: ast.Module | ast.Expression, mode: str) -> Any:
        return compile(node, self.code_name, mode)

    def error(self, message: str, line: int, column: int) -> FrontendError:
        text = self.lines[line - 1] if 1 <= line <= len(self.lines) else None
        return FrontendError(message, location(self.filename, line, column), text)

    def error_at(self, node: ast.AST, message: str) -> FrontendError:
        return self.error(message, node.lineno, node.col_offset + 1)

    def error_from_exception(
        self, error: BaseException, what: str, call: ast.Call
    ) -> FrontendError:
        """An error at the innermost frame of the program that `error` passed through, else
        at the program's last call (e.g. a shape error inside a library module)."""
        frames = [
            f for f in traceback.extract_tb(error.__traceback__) if f.filename == self.code_name
        ]
        message = f"{what}: {type(error).__name__}: {_first_line(str(error))}"
        if not frames:
            return self.error_at(call, message)
        return self.error(message, frames[-1].lineno, (frames[-1].colno or 0) + 1)

    def rename_frames(self, exported: torch.export.ExportedProgram) -> None:
        """Names the program by its file name in the stack traces the importer reads."""
        for node in exported.graph.nodes:
            if trace := node.meta.get("stack_trace"):
                node.meta["stack_trace"] = trace.replace(
                    f'File "{self.code_name}"', f'File "{self.filename}"'
                )


@contextlib.contextmanager
def _stack_traces_through(tree: ast.Module, code_name: str) -> Iterator[None]:
    """Makes torch.export keep the frames of the program's own functions in the stack traces
    it records, which otherwise hold only `forward` methods: an op in a helper such as
    `rotate_half` is then located in the helper, not at its caller."""
    import torch

    anchors = getattr(torch.fx.proxy, "_STACK_TRACE_ANCHORS", None)
    if anchors is None:
        # Older torch (the GPU hosts' 2.11) has no anchors: ops in helpers are then located
        # at the helper's caller.
        yield
        return
    functions = {(code_name, n.name) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    added = (functions | {(code_name, "<lambda>")}) - anchors
    anchors.update(added)
    try:
        yield
    finally:
        anchors.difference_update(added)


@contextlib.contextmanager
def _quiet_fake_tensor_log() -> Iterator[None]:
    """torch logs a traceback when a shape check fails while tracing; the failure reaches
    the user once, as a FrontendError."""
    logger = logging.getLogger("torch._subclasses.fake_tensor")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def load_program(source: str, filename: str, seconds: float | None = None) -> Program:
    """Runs the program's definitions, builds the module and example inputs of its last
    statement, and exports that call with torch.export (keeping high-level aten ops), all
    within `seconds` (None: no limit; loading PyTorch does not count)."""
    text = _Source(source, filename)
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as error:
        raise text.error(
            f"invalid Python: {error.msg}", error.lineno or 1, error.offset or 1
        ) from None
    if not tree.body:
        raise FrontendError(f"empty program: {LAST_STATEMENT_RULE}", location(filename, 1, 1))
    last = tree.body[-1]
    if not isinstance(last, ast.Expr) or not isinstance(last.value, ast.Call):
        raise text.error_at(last, LAST_STATEMENT_RULE)
    call = last.value
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        raise text.error_at(call, "the last call takes plain arguments, not *args or **kwargs")

    # Imported once the program is known to be well formed: a malformed one is reported
    # without the seconds that loading PyTorch takes.
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    from emmy.tools.frontend.importer import decomposed  # see Program.to_torch_ir

    namespace: dict[str, Any] = {"torch": torch, "nn": nn, "F": F, "__name__": "__emmy__"}

    def evaluate(node: ast.expr) -> Any:
        return eval(text.compile(ast.Expression(node), "eval"), namespace)

    torch.manual_seed(0)
    try:
        with time_limit(seconds) as deadline:
            try:
                exec(text.compile(ast.Module(tree.body[:-1], type_ignores=[]), "exec"), namespace)
                module = evaluate(call.func)
                args = tuple(evaluate(a) for a in call.args)
                kwargs = {k.arg: evaluate(k.value) for k in call.keywords}
            except SystemExit as error:
                # The program is run to build a module, not as a script: leaving is not an
                # answer.
                raise text.error_from_exception(
                    error, "the program exited before its last statement", call
                ) from None
            except Exception as error:
                if deadline.expired:
                    raise TimeLimitExceeded from None
                raise text.error_from_exception(error, "the program raised", call) from None
            if not isinstance(module, nn.Module):
                raise text.error_at(
                    call.func,
                    f"the last statement calls a {type(module).__name__}, not an nn.Module "
                    "instance",
                )
            module.eval()
            try:
                with _stack_traces_through(tree, text.code_name), _quiet_fake_tensor_log():
                    exported = decomposed(torch.export.export(module, args, kwargs))
            except Exception as error:
                if deadline.expired:
                    raise TimeLimitExceeded from None
                raise text.error_from_exception(error, "torch.export failed", call) from None
    except TimeLimitExceeded:
        assert seconds is not None
        raise ProgramTimeout(seconds) from None
    text.rename_frames(exported)
    call_location = location(filename, call.lineno, call.col_offset + 1)
    return Program(module, args, kwargs, exported, filename, text.lines, call_location)


def compile_source(source: str, filename: str) -> ModuleOp:
    """The program's Torch IR: one `func.func @forward` (see `emmy.tools.frontend.importer`)."""
    return load_program(source, filename).to_torch_ir()
