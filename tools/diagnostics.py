"""Source-located errors for emmy's tools: bad input is reported as `file:line:col: error:
message`, the offending line and a caret, never as a Python traceback.

    $ emmy-opt test/Dialect/prim/invalid.mlir
    test/Dialect/prim/invalid.mlir:286:24: error: prim.map input must be a ranked tensor, got f32
      %r = prim.map(%x) : (f32) -> tensor<4xf32> {
                           ^~~

This module parses IR so that every op remembers where it came from,
verifies it so that a failure names the op that broke its invariant, renders diagnostics, and
checks them against MLIR-style `// expected-error {{...}}` annotations.
"""

from __future__ import annotations

import os
import re
import struct
import sys
import traceback
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, NameLoc, StringAttr, UnknownLoc
from xdsl.ir import Attribute, Block, Operation
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import DiagnosticException, MultipleSpansParseError, ParseError
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from emmy.dialects.dominance import verify_dominance
from emmy.dialects.threads import analyses_kept

SPLIT_MARKER = "// -----"


def one_line(message: str) -> str:
    """Diagnostics are single lines, as in MLIR, so that FileCheck and expected-error annotations
    can match them; xDSL's constraint messages sometimes span several."""
    return re.sub(r"\s*\n\s*", " ", message.strip())


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    col: int
    message: str
    severity: str = "error"
    length: int = 1
    """How many columns the caret underlines: a parse error underlines its whole token."""


class CompileError(Exception):
    """Bad input: reported to the user as diagnostics rather than as a traceback."""

    def __init__(self, *diagnostics: Diagnostic):
        super().__init__(diagnostics[0].message)
        self.diagnostics = diagnostics


def internal_error(where: str, error: Exception) -> str:
    """The message for an exception that is a bug in emmy rather than bad input; EMMY_DEBUG=1
    also prints its traceback, for whoever fixes the bug."""
    detail = one_line(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__)
    if os.environ.get("EMMY_DEBUG") != "1":
        return f"internal error {where}: {detail} (EMMY_DEBUG=1 prints the traceback)"
    traceback.print_exception(error, file=sys.stderr)
    return f"internal error {where}: {detail}"


@dataclass(frozen=True)
class Source:
    """An input file; `name` is how diagnostics refer to it (`<stdin>` for standard input)."""

    name: str
    text: str

    @cached_property
    def lines(self) -> list[str]:
        # Split on "\n" only: xDSL's lexer counts lines that way, so line numbers agree.
        return [line.removesuffix("\r") for line in self.text.split("\n")]

    def chunks(self, split: bool) -> list[tuple[int, str]]:
        """The pieces to process on their own, each with the file line it starts on."""
        if not split:
            return [(1, self.text)]
        lines = self.text.split("\n")
        markers = [i for i, line in enumerate(lines) if line.strip() == SPLIT_MARKER]
        bounds = [-1, *markers, len(lines)]
        return [
            (start + 2, "\n".join(lines[start + 1 : end])) for start, end in zip(bounds, bounds[1:])
        ]

    def render(self, diagnostic: Diagnostic) -> str:
        where = f"{diagnostic.file}:{diagnostic.line}:{diagnostic.col}"
        text = f"{where}: {diagnostic.severity}: {diagnostic.message}\n"
        lines = self.lines
        if diagnostic.file != self.name or not 1 <= diagnostic.line <= len(lines):
            return text
        line = lines[diagnostic.line - 1]
        # Keep tabs in the indent so the caret lines up however the terminal expands them.
        indent = "".join(c if c == "\t" else " " for c in line[: diagnostic.col - 1])
        width = max(1, min(diagnostic.length, len(line) - diagnostic.col + 1))
        return f"{text}{line}\n{indent}^{'~' * (width - 1)}\n"


class _LinearTimeLexer(MLIRLexer):
    # xDSL's pattern nests `+` inside `*`, which backtracks exponentially on a string literal
    # left open (emmy-opt hung on a stray `"`); this one accepts the same strings in linear time.
    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


def _out_of_range_literal(error: Exception) -> bool:
    """Whether xDSL refused a number of the input as out of its type's range while building an
    attribute (a dense array, a dense literal) from it: `IntegerType.get_normalized_value`
    raises a ValueError for an integer, and packing the bytes of a number too large for its
    type (`pack`) an OverflowError or a struct.error."""
    frames = traceback.extract_tb(error.__traceback__)
    last = frames[-1].name if frames else None
    return (isinstance(error, ValueError) and last == "get_normalized_value") or (
        isinstance(error, OverflowError | struct.error) and last == "pack"
    )


class LocatingParser(Parser):
    """A parser that gives each op the `FileLineColLoc` of its first token (the stock parser
    leaves locations unknown), so that verifier and pass errors can point at the source.

    `first_line` is the file line the text starts on, for a piece of a split input file."""

    def __init__(self, ctx: Context, text: str, name: str, first_line: int = 1):
        # Leading newlines make every position report its line in the whole file.
        text = "\n" * (first_line - 1) + text
        # An integer literal of any length is read, so that the type it is given judges it
        # (Python refuses to convert more than 4300 digits by default).
        sys.set_int_max_str_digits(0)
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(_LinearTimeLexer(Input(text, name)))
        self.line_starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def location_at(self, pos: int) -> FileLineColLoc:
        line = bisect_right(self.line_starts, pos)
        column = pos - self.line_starts[line - 1] + 1
        return FileLineColLoc(StringAttr(self.lexer.input.name), IntAttr(line), IntAttr(column))

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except ParseError:
            raise
        except DiagnosticException as error:
            # e.g. an attribute that rejects its value while the op is built: xDSL would
            # report it after the op, at whatever comes next.
            self.raise_error(str(error), start)
        except RecursionError:
            # The parser descends one Python call chain per region level.
            self.raise_error(
                "ops nested too deeply: regions nest at most about "
                f"{sys.getrecursionlimit() // 10} levels deep",
                start,
            )
        except Exception as error:
            if _out_of_range_literal(error):
                self.raise_error(f"a literal out of its type's range: {error}", start)
            self.raise_error(internal_error("while parsing this op", error), start)
        if isinstance(op.location, UnknownLoc):  # an explicit `loc(...)` wins
            op.location = self.location_at(start)
        return op

    def _consume_token(self, expected_kind=None):
        # xDSL asserts the kind of a token it only consumes after checking it, but not always
        # (an unclosed complex literal `(1.0, 0.0]` in a dense one): a parse error there.
        token = self._current_token
        if expected_kind is not None and token.kind != expected_kind:
            value = expected_kind.value
            what = f"'{value}'" if isinstance(value, str) else expected_kind.name.lower()
            self.raise_error(
                f"expected {what}, got '{token.text}'", token.span.start, token.span.end
            )
        return super()._consume_token(expected_kind)

    def _parse_block(self) -> Block:
        # MLIR takes a label of digits (`^0`), which xDSL's block names cannot hold: it would
        # raise a ValueError naming the block.
        token = self._current_token
        if token.kind is MLIRTokenKind.CARET_IDENT and token.text[1:].isdigit():
            self.raise_error(
                f"a block label starts with a letter, as ^bb{token.text[1:]}, got {token.text}",
                token.span.start,
                token.span.end,
            )
        return super()._parse_block()

    def _get_op_by_name(self, name: str) -> type[Operation]:
        # xDSL reports an unknown op at the token after its name; point at the name.
        if self.ctx.get_optional_op(name, dialect_stack=self._parser_state.dialect_stack) is None:
            start = self.lexer.input.content.rfind(name, 0, self.pos)
            dialect, dot, _ = name.partition(".")
            if dot and self.ctx.get_optional_dialect(dialect) is None:
                self.raise_error(
                    f"unknown dialect '{dialect}' in op '{name}'", start, start + len(name)
                )
            self.raise_error(f"unknown op '{name}'", start, start + len(name))
        return super()._get_op_by_name(name)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        start = self.pos
        if self._current_token.kind is MLIRTokenKind.EOF:
            # xDSL rejects an input without ops; MLIR reads it as an empty module, which a
            # split input file ending in `// -----` needs.
            module = ModuleOp([])
        else:
            try:
                module = super().parse_module(allow_implicit_module)
            except ParseError as error:
                if error.msg.startswith("values used but not defined"):
                    self._raise_at_undefined_use()
                raise
        if isinstance(module.location, UnknownLoc):
            module.location = self.location_at(start)
        return module

    def _raise_at_undefined_use(self) -> None:
        """xDSL reports values used but never defined at the end of the input; point at the
        first use instead."""
        uses = []
        for name, references in self.forward_ssa_references.items():
            for value in references.values():
                for use in value.uses:
                    location = use.operation.location
                    if isinstance(location, FileLineColLoc):
                        op_start = (
                            self.line_starts[location.line.data - 1] + location.column.data - 1
                        )
                        uses.append((self.lexer.input.content.find(f"%{name}", op_start), name))
        if uses:
            start, name = min(uses)
            self.raise_error(f"use of undefined value '%{name}'", start, start + len(name) + 1)


def _span_diagnostic(span: Span, message: str, severity: str = "error") -> Diagnostic:
    location = span.get_location()
    return Diagnostic(
        location.file, location.line, location.col, one_line(message), severity, len(span)
    )


def parse(
    ctx: Context, source: Source, first_line: int, text: str, implicit_module: bool = True
) -> ModuleOp:
    """Parses a piece of `source` into a module whose ops carry their source locations."""
    try:
        # The lexer reads the first token already in the constructor.
        return LocatingParser(ctx, text, source.name, first_line).parse_module(implicit_module)
    except ParseError as error:
        notes = error.refs if isinstance(error, MultipleSpansParseError) else []
        raise CompileError(
            _span_diagnostic(error.span, error.msg),
            *(_span_diagnostic(span, note or "", "note") for span, note in notes),
        ) from None
    except Exception as error:  # outside any op (errors in ops become ParseErrors there)
        raise CompileError(
            Diagnostic(source.name, first_line, 1, internal_error("while parsing", error))
        ) from None


def diagnostic_at(location: FileLineColLoc, message: str) -> Diagnostic:
    return Diagnostic(
        location.filename.data, location.line.data, location.column.data, one_line(message)
    )


def file_location(location: Attribute) -> FileLineColLoc | None:
    """The source position in a location, looking through the name that decompose-torch
    gives each op (`loc("rms_norm"("model.py":3:12))`)."""
    while isinstance(location, NameLoc):
        location = location.location
    return location if isinstance(location, FileLineColLoc) else None


def op_diagnostic(op: Operation, message: str, outer: Operation | None = None) -> Diagnostic:
    """An error at `op`, or at its nearest ancestor with a known location (ops that a pass
    creates have none unless the pass copied one), or else at `outer`."""
    for node in (op, outer):
        while node is not None:
            if (location := file_location(node.location)) is not None:
                return diagnostic_at(location, message)
            node = node.parent_op()
    return Diagnostic("<unknown>", 1, 1, one_line(message))


def failure_diagnostic(error: Exception, what: str, outer: Operation) -> Diagnostic:
    """`what failed: ...` at the op a pass's `PassFailedException(message, op)` names (or
    any exception whose arguments hold an op), or else at `outer`."""
    op = next((arg for arg in error.args if isinstance(arg, Operation)), outer)
    message = (
        " ".join(str(arg) for arg in error.args if not isinstance(arg, Operation))
        or type(error).__name__
    )
    return op_diagnostic(op, f"{what} failed: {message}", outer)


def _verify_error(op: Operation, error: Exception) -> CompileError:
    """A verify error of `op`, reported at the op it names (a use, an access) or else at `op`."""
    op = next((arg for arg in error.args if isinstance(arg, Operation)), op)
    message = " ".join(str(arg) for arg in error.args if not isinstance(arg, Operation))
    # Some messages (xDSL's traits among them) already start with the op's name.
    if not message.startswith(f"'{op.name}'"):
        message = f"'{op.name}' op {message}"
    return CompileError(op_diagnostic(op, message))


def _upstream_verify_failure(error: Exception) -> bool:
    """Whether an op's `verify_` rejected it with a plain Exception rather than a
    VerifyException, as xDSL 0.75's memref.load and memref.store do for a wrong number of
    indices."""
    frames = traceback.extract_tb(error.__traceback__)
    return type(error) is Exception and bool(frames) and frames[-1].name == "verify_"


def verify(module: ModuleOp) -> None:
    """Checks that every value is defined before its uses (`verify_dominance`), then verifies
    innermost ops first, so that a failure is reported at the op whose invariant broke rather
    than at the function or module around it."""
    try:
        verify_dominance(module)
    except DiagnosticException as error:
        raise _verify_error(module, error) from None
    with analyses_kept():
        _verify_innermost_first(module)


def _verify_innermost_first(module: ModuleOp) -> None:
    for op in module.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
            for region in op.regions:
                # The one check of Block.verify that `verify_nested_ops=False` skips.
                if (
                    len(region.blocks) == 1
                    and region.block.first_op is None
                    and not op.has_trait(NoTerminator)
                ):
                    raise DiagnosticException(
                        "its single-block region is empty but needs a terminator"
                    )
        except Exception as error:
            if not isinstance(error, DiagnosticException) and not _upstream_verify_failure(error):
                raise CompileError(
                    op_diagnostic(op, internal_error(f"while verifying '{op.name}'", error))
                ) from None
            raise _verify_error(op, error) from None


_EXPECTATION = re.compile(
    r"(?<![\w-])expected-(error|warning|note|remark)\s*(?:@(above|below|[+-]\d+))?\s*\{\{(.*)\}\}"
)


@dataclass(frozen=True)
class Expectation:
    """An `expected-<severity>` annotation: a diagnostic whose message contains `message` must be
    reported on `line`. `comment` is where the annotation itself is written."""

    severity: str
    line: int
    message: str
    comment: Diagnostic


def expectations(source: Source) -> list[Expectation]:
    """The annotations of `source`, with MLIR's designators: none (this line), `@+N`, `@-N`,
    `@above` (the last line without an annotation) and `@below` (the next such line)."""
    found: list[Expectation] = []
    waiting_for_next_line: list[tuple[str, str, Diagnostic]] = []
    last_plain_line = 0
    for number, line in enumerate(source.lines, 1):
        match = _EXPECTATION.search(line)
        if match is None:
            found += [
                Expectation(severity, number, message, comment)
                for severity, message, comment in waiting_for_next_line
            ]
            waiting_for_next_line.clear()
            last_plain_line = number
            continue
        severity, designator, message = match.groups()
        comment = Diagnostic(
            source.name, number, match.start() + 1, "", length=match.end() - match.start()
        )
        if designator == "below":
            waiting_for_next_line.append((severity, message, comment))
            continue
        if designator is None:
            target = number
        elif designator == "above":
            target = last_plain_line
        else:
            target = number + int(designator)
        found.append(Expectation(severity, target, message, comment))
    found += [
        Expectation(severity, 0, message, comment)
        for severity, message, comment in waiting_for_next_line
    ]
    return found


def unmet(expected: list[Expectation], reported: list[Diagnostic]) -> list[Diagnostic]:
    """What `--verify-diagnostics` complains about: each reported diagnostic must match an
    annotation on its line, and each annotation must match a reported diagnostic."""
    problems: list[Diagnostic] = []
    met: set[int] = set()
    for diagnostic in reported:
        matching = [
            index
            for index, e in enumerate(expected)
            if (e.comment.file, e.line, e.severity)
            == (diagnostic.file, diagnostic.line, diagnostic.severity)
            and e.message in diagnostic.message
        ]
        if matching:
            # Two identical errors on a line are met by two identical annotations.
            met.add(next((index for index in matching if index not in met), matching[0]))
        else:
            problems.append(
                Diagnostic(
                    diagnostic.file,
                    diagnostic.line,
                    diagnostic.col,
                    f"unexpected {diagnostic.severity}: {diagnostic.message}",
                    length=diagnostic.length,
                )
            )
    for index, e in enumerate(expected):
        if index not in met:
            message = f'expected {e.severity} "{e.message}" was not produced'
            problems.append(
                Diagnostic(
                    e.comment.file, e.comment.line, e.comment.col, message, length=e.comment.length
                )
            )
    return sorted(problems, key=lambda d: (d.line, d.col))
