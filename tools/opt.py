"""emmy-opt: reads IR, runs passes on it and prints the result.

  emmy-opt --lower-fused-to-loop --canonicalize in.mlir
  emmy-opt -p 'lower-fused-to-loop{keep-unit-dims=true},canonicalize' in.mlir
  emmy-opt --pass-pipeline='builtin.module(torch-to-tile{block-size=256},cse)' in.mlir
  emmy-opt --torch-to-kernel --mlir-print-ir-after-change --mlir-timing in.mlir
  emmy-opt --torch-to-kernel --dump-dir dumps in.mlir   # dumps/000-input.mlir, 001-...
  emmy-opt --split-input-file --verify-diagnostics invalid.mlir
  emmy-opt --load-pass-plugin my_passes.py --my-pass in.mlir

A named pipeline (--torch-to-kernel, ...) runs as its passes: each is printed, dumped and timed
on its own, and an option given to the pipeline (--torch-to-tile=block-size=256) goes to each of
its passes that declares it. The IR is verified after each pass, and after a named pipeline as
a whole (after each of its passes with --verify-each). Dumps to stderr have MLIR's
`// -----// IR Dump After PASS //----- //` headers. --dump-dir DIR writes the input and the IR
after every pass to numbered files in DIR; EMMY_DUMP_DIR=DIR does the same wherever emmy runs a
pipeline (emmy-opt without --dump-dir, `emmy compile`, `emmy run`, the Python API), each run in
a new numbered folder under DIR.

Bad input and failing passes are reported as `file:line:col: error: ...` (exit status 1). A pass
points an error at an op by raising `PassFailedException(message, op)`.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import importlib.util
import inspect
import os
import re
import sys
import textwrap
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import cache
from io import StringIO
from pathlib import Path
from types import NoneType
from typing import IO, Any, TypeVar, get_args, get_type_hints

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.targets.mlir import MLIRTarget
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline, parse_spec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException
from xdsl.utils.hints import isa, type_repr
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

from emmy.dialects import make_context
from emmy.passes.pipelines import IRDumps, NamedPipeline
from emmy.passes.registry import pass_factories
from emmy.tools.diagnostics import (
    SPLIT_MARKER,
    CompileError,
    Source,
    expectations,
    failure_diagnostic,
    internal_error,
    op_diagnostic,
    parse,
    unmet,
    verify,
)
from emmy.tools.files import PendingFile
from emmy.tools.version import ShowVersion

T = TypeVar("T")


class UsageError(Exception):
    """A bad command line, reported as `emmy-opt: error: ...`."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):
        # argparse would exit with status 2 from inside parsing; emmy-opt reports every error
        # alike, with status 1, and main() must return rather than exit when called in-process.
        raise UsageError(message)


def _did_you_mean(word: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.5)
    return f"; did you mean '{close[0]}'?" if close else ""


def _format_value(value: Any) -> str:
    """A value as it is written in a pass spec."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(_format_value(v) for v in value)
    return str(value)


UNDOCUMENTED_PASS_SUMMARIES = {
    "cse": "Replaces each operation that repeats an earlier, equivalent one by its results.",
    "dce": "Erases operations whose results are unused and which have no side effects.",
}
"""One-line descriptions of the xDSL passes we register whose classes have no docstring."""


def pass_summary(pass_class: type[ModulePass]) -> str:
    """The first paragraph of the pass's docstring, on one line; a pipeline's passes after it."""
    doc = pass_class.__dict__.get("__doc__") or ""
    # @dataclass makes up a docstring, the constructor's signature, for a class without one.
    if not doc or doc.startswith(f"{pass_class.__name__}("):
        summary = UNDOCUMENTED_PASS_SUMMARIES.get(pass_class.name, "")
    else:
        summary = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    if issubclass(pass_class, NamedPipeline):
        summary += f" Passes: {', '.join(p.name for p in pass_class.passes())}."
    return summary.strip()


@dataclasses.dataclass(frozen=True)
class PassOption:
    name: str
    """Kebab-case, as written on the command line; the field name is its snake-case form."""
    type: Any
    default: str | None
    """None when the option is required."""
    declared_by: type[ModulePass]

    @property
    def doc(self) -> str:
        # Read from the source only when asked (--list-passes): finding a class's source
        # parses its whole module, too slow to do for every pass at start-up.
        return _field_docs(self.declared_by).get(self.name.replace("-", "_"), "")


@cache
def _field_docs(cls: type) -> dict[str, str]:
    """The string literal under each field, which is how passes document their options."""
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    except (OSError, TypeError, SyntaxError, AttributeError):
        return {}
    return {
        field.target.id: " ".join(doc.value.value.split())
        for field, doc in zip(body, body[1:])
        if isinstance(field, ast.AnnAssign)
        and isinstance(field.target, ast.Name)
        and isinstance(doc, ast.Expr)
        and isinstance(doc.value, ast.Constant)
        and isinstance(doc.value.value, str)
    }


def pass_options(pass_class: type[ModulePass]) -> list[PassOption]:
    """The options of a pass; a pipeline's are those of its passes, each once, defaulting to
    the value the pipeline gives it."""
    if issubclass(pass_class, NamedPipeline):
        return _pipeline_options(pass_class)
    hints = get_type_hints(pass_class)
    options = []
    for field in dataclasses.fields(pass_class):
        if not field.init:
            continue
        if field.default is not dataclasses.MISSING:
            default = _format_value(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            default = _format_value(field.default_factory())
        else:
            default = None
        options.append(
            PassOption(field.name.replace("_", "-"), hints[field.name], default, pass_class)
        )
    return options


def _pipeline_options(pipeline: type[NamedPipeline]) -> list[PassOption]:
    options: dict[str, PassOption] = {}
    for member in pipeline.passes():
        for option in pass_options(type(member)):
            value = getattr(member, option.name.replace("-", "_"))
            default = _format_value(value)
            options.setdefault(option.name, dataclasses.replace(option, default=default))
    return list(options.values())


def _accepts(hint: Any, value: tuple) -> bool:
    """Whether `value` converts to `hint` the way ArgSpecConvertible.from_spec converts it: no
    value for an optional, a single value, or a tuple."""
    if not value:
        return NoneType in get_args(hint)
    return (len(value) == 1 and isa(value[0], hint)) or isa(value, hint)


def load_pass_plugin(path: str) -> None:
    """Runs a Python file that registers passes with `emmy.passes.registry.register_pass`."""
    if not Path(path).is_file():
        raise UsageError(f"cannot load pass plugin '{path}': no such file")
    name = f"emmy_pass_plugin_{Path(path).stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load pass plugin '{path}': not a Python file")
    module = importlib.util.module_from_spec(spec)
    # Dataclasses resolve a pass's annotations through sys.modules.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise UsageError(
            f"cannot load pass plugin '{path}': {internal_error('in the plugin', error)}"
        ) from None


def _explicit_pass_values(args: list[str], pass_names: Sequence[str]) -> list[str]:
    """Writes a bare `--pass` as `--pass=`, so that argparse never takes the next argument (the
    input file, say) for the pass's options: those are only ever given after `=`, as in MLIR."""
    if "--" in args:
        end = args.index("--")
        return _explicit_pass_values(args[:end], pass_names) + args[end:]
    return [f"{arg}=" if arg.startswith("--") and arg[2:] in pass_names else arg for arg in args]


def parse_pass_pipeline(text: str) -> list[ArgSpec]:
    """The passes of a pipeline written as xDSL writes it, 'pass-a{x=1},pass-b', or as MLIR
    does, anchored on the module and with spaces between passes allowed:
    'builtin.module(pass-a{x=1}, pass-b)'."""
    if anchor := re.match(r"\s*builtin\.module\s*\(", text):
        body = text[anchor.end() :].rstrip()
        if not body.endswith(")"):
            raise UsageError("bad pass pipeline: 'builtin.module(' has no ')' at its end")
        text = body[:-1]
    text = ",".join(_top_level_pieces(text))
    try:
        return list(parse_pipeline(text))
    except ArgSpecParseError as error:
        if nested := re.search(r"[\w.]+\s*\(", text):
            raise UsageError(
                f"bad pass pipeline: '{nested[0]}...)' anchors passes on other ops, and emmy's "
                "passes all run on the module: list them in builtin.module(...) itself"
            ) from None
        details = str(error).removeprefix("Error parsing pass pipeline specification:\n")
        raise UsageError(f"bad pass pipeline: {details.rstrip()}") from None


def _top_level_pieces(text: str) -> list[str]:
    """`text` split at the commas outside braces, parentheses and strings, each piece stripped
    of spaces (which xDSL's pipeline parser refuses there)."""
    pieces, depth, quoted, start = [], 0, False, 0
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char in "{(":
            depth += 1
        elif char in "})":
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append(text[start:index].strip())
            start = index + 1
    return [*pieces, text[start:].strip()]


def _cuda_target() -> type[Target]:
    # Imported when asked for: the printer is not needed to start emmy-opt.
    from emmy.tools.cuda.target import CudaTarget

    return CudaTarget


class EmmyOptMain(xDSLOptMain):
    """xDSL's optimizer driver with emmy's dialects, passes and targets, MLIR-style pass flags,
    and errors located in the source.

    `__init__` replaces xDSLOptMain's, which parses arguments with abbreviations allowed (so
    `--lower-fused` would silently mean `--lower-fused-to-loop`) and exits on errors."""

    passes: tuple[ModulePass, ...]
    verified_as: tuple[str | None, ...]
    """For each pass, what an error in the IR after it names ("pass 'cse'", "pipeline
    'torch-to-kernel'"), or None where the IR is not verified after it: inside a named pipeline,
    whose passes are verified together at its end (as `lower()` does) unless --verify-each."""
    target: Target
    dumps: IRDumps | None = None
    """Where --dump-dir (or else EMMY_DUMP_DIR) has the IR after each pass written; made when
    the input is read, so that --list-passes makes no folder."""

    def __init__(self, args: Sequence[str] | None = None):
        args = list(sys.argv[1:] if args is None else args)
        # Plugins register passes, and their flags must exist before the real parse.
        plugin_parser = _ArgumentParser(add_help=False, allow_abbrev=False)
        plugin_parser.add_argument("--load-pass-plugin", action="append", default=[])
        for path in plugin_parser.parse_known_args(args)[0].load_pass_plugin:
            load_pass_plugin(path)

        self.available_passes = {}
        self.available_targets = {}
        self.ctx = make_context()
        self.register_all_passes()
        self.register_all_targets()

        arg_parser = _ArgumentParser(
            prog="emmy-opt",
            description=__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            allow_abbrev=False,
        )
        self.register_all_arguments(arg_parser)
        self.args, unknown = arg_parser.parse_known_args(
            _explicit_pass_values(args, list(self.available_passes))
        )
        if unknown:
            raise UsageError(self._unknown_argument(unknown[0], arg_parser))
        self.ctx.allow_unregistered = self.args.allow_unregistered_dialect
        self.target = self._make_target()
        self.setup_pipeline()
        self.times: defaultdict[str | int, float] = defaultdict(float)

    def register_all_passes(self):
        # Asked at startup, so that passes registered late (by plugins) are included.
        for name, factory in pass_factories().items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        self.available_targets["mlir"] = lambda: MLIRTarget
        self.available_targets["cuda"] = _cuda_target

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        add = arg_parser.add_argument
        add("input_file", nargs="?", help="the input IR; standard input if absent or '-'")
        add("-o", "--output-file", help="where to write the result (standard output by default)")
        add(
            "-p",
            "--passes",
            "--pass-pipeline",
            default="",
            metavar="PIPELINE",
            help="a pass pipeline, 'pass-a{option=value},pass-b', or as MLIR writes it, "
            "'builtin.module(pass-a{option=value},pass-b)'",
        )
        add(
            "-t",
            "--target",
            default="mlir",
            help=f"the output format: {', '.join(self.available_targets)}",
        )
        add(
            "--list-passes", action="store_true", help="list the passes with their options and exit"
        )
        add(
            "--load-pass-plugin",
            action="append",
            default=[],
            metavar="FILE.py",
            help="run a Python file that registers passes (emmy.passes.registry.register_pass)",
        )
        add(
            "--split-input-file",
            action="store_true",
            help=f"process each '{SPLIT_MARKER}'-separated piece of the input on its own",
        )
        add(
            "--verify-diagnostics",
            action="store_true",
            help="check the errors against the input's // expected-error {{...}} annotations",
        )
        add(
            "--verify-each",
            action="store_true",
            help="verify the IR after every pass, a named pipeline's too (by default a "
            "pipeline's passes are verified together, at its end)",
        )
        add(
            "--print-ir-before-all",
            "--mlir-print-ir-before-all",
            action="store_true",
            help="print the IR before each pass to stderr",
        )
        add(
            "--print-ir-after-all",
            "--mlir-print-ir-after-all",
            action="store_true",
            help="print the IR after each pass to stderr",
        )
        add(
            "--print-ir-after-change",
            "--mlir-print-ir-after-change",
            action="store_true",
            help="print the IR after each pass that changed it to stderr",
        )
        add(
            "--print-ir-after-failure",
            "--mlir-print-ir-after-failure",
            action="store_true",
            help="print the IR as a pass that failed (or left it invalid) left it to stderr",
        )
        add(
            "--dump-dir",
            metavar="DIR",
            help="write the input and the IR after each pass to numbered files in DIR "
            "(000-input.mlir, 001-PASS.mlir, ...); without it, EMMY_DUMP_DIR=DIR writes them "
            "to a new numbered folder under DIR",
        )
        add(
            "--time-passes",
            "--mlir-timing",
            action="store_true",
            help="report the time each pass takes on stderr",
        )
        add(
            "--print-op-generic",
            "--mlir-print-op-generic",
            action="store_true",
            help="print ops in the generic format",
        )
        add(
            "--print-debuginfo",
            "--mlir-print-debuginfo",
            action="store_true",
            help="print op locations",
        )
        add(
            "--allow-unregistered-dialect",
            action="store_true",
            help="accept ops of unknown dialects",
        )
        add("--no-implicit-module", action="store_true", help="require a top-level builtin.module")
        add("--version", action=ShowVersion, program="emmy-opt", libraries=["xdsl"])

        group = arg_parser.add_argument_group(
            "passes",
            "Run in the order given. Options: --pass=option=value or "
            "--pass='option1=v1 option2=v2'.",
        )
        for name, factory in self.available_passes.items():
            pass_class = factory()
            options = ", ".join(o.name for o in pass_options(pass_class))
            try:
                group.add_argument(
                    f"--{name}",
                    dest="pass_flags",
                    action="append",
                    nargs="?",
                    metavar="OPTIONS",
                    type=lambda text, name=name: (name, text),
                    help=pass_summary(pass_class) + (f" Options: {options}." if options else ""),
                )
            except argparse.ArgumentError:
                pass  # a plugin's pass named like a driver option: it is still available through -p

    def _unknown_argument(self, argument: str, arg_parser: argparse.ArgumentParser) -> str:
        if not argument.startswith("-"):
            return f"unexpected argument '{argument}': emmy-opt reads one input file"
        flag = argument.partition("=")[0]
        # argparse keeps no public list of its option strings.
        suggestion = _did_you_mean(flag, list(arg_parser._option_string_actions))
        return f"unknown pass or option '{flag}'{suggestion}"

    def _make_target(self) -> Target:
        try:
            spec = parse_spec(self.args.target)
        except ArgSpecParseError as error:
            raise UsageError(f"bad target '{self.args.target}': {error}") from None
        if spec.name not in self.available_targets:
            raise UsageError(
                f"unknown target '{spec.name}'"
                f"{_did_you_mean(spec.name, list(self.available_targets))} "
                f"(targets: {', '.join(self.available_targets)})"
            )
        try:
            target = self.available_targets[spec.name]().from_spec(spec)
        except (ValueError, TypeError) as error:
            raise UsageError(f"bad options for target '{spec.name}': {error}") from None
        if isinstance(target, MLIRTarget):
            target = dataclasses.replace(
                target,
                print_generic_format=self.args.print_op_generic,
                print_debuginfo=self.args.print_debuginfo,
            )
        return target

    def setup_pipeline(self):
        flags = self.args.pass_flags or []
        if self.args.passes and flags:
            raise UsageError(
                "give passes either as a -p pipeline or as flags, not both "
                f"(flags: {', '.join('--' + name for name, _ in flags)})"
            )
        if self.args.passes:
            specs = parse_pass_pipeline(self.args.passes)
        else:
            try:
                specs = [
                    parse_spec(f"{name}{{{text}}}") if text else ArgSpec(name, {})
                    for name, text in flags
                ]
            except ArgSpecParseError as error:
                details = str(error).removeprefix("Error parsing pass pipeline specification:\n")
                raise UsageError(f"bad pass pipeline: {details.rstrip()}") from None
        steps = [step for spec in specs for step in self._make_passes(spec)]
        self.passes = tuple(module_pass for module_pass, _ in steps)
        self.verified_as = tuple(verified_as for _, verified_as in steps)

    def _make_passes(self, spec: ArgSpec) -> list[tuple[ModulePass, str | None]]:
        """The pass that `spec` names, or the passes of the pipeline it names, each given the
        pipeline's options that it declares on top of those the pipeline gives it; each with
        its `verified_as`."""
        if spec.name not in self.available_passes:
            hint = (
                _did_you_mean(spec.name, list(self.available_passes))
                or " (--list-passes lists them)"
            )
            raise UsageError(f"unknown pass '{spec.name}'{hint}")
        pass_class = self.available_passes[spec.name]()
        if not issubclass(pass_class, NamedPipeline):
            return [(self._make_pass(pass_class, spec), f"pass '{spec.name}'")]
        self._check_option_names(f"pipeline '{spec.name}'", spec, pass_options(pass_class))
        members = pass_class.passes()
        passes = []
        for index, member in enumerate(members):
            declared = {option.name for option in pass_options(type(member))}
            parameters = {
                key.replace("_", "-"): value
                for key, value in (*member.spec().parameters.items(), *spec.parameters.items())
                if key.replace("_", "-") in declared
            }
            if self.args.verify_each:
                verified_as = f"pass '{member.name}'"
            else:
                verified_as = f"pipeline '{spec.name}'" if index == len(members) - 1 else None
            passes.append(
                (self._make_pass(type(member), ArgSpec(member.name, parameters)), verified_as)
            )
        return passes

    @staticmethod
    def _check_option_names(what: str, spec: ArgSpec, options: list[PassOption]) -> None:
        names = [option.name for option in options]
        for key in spec.parameters:
            if key.replace("_", "-") not in names:
                raise UsageError(
                    f"{what} has no option '{key}'"
                    f"{_did_you_mean(key, names)} (its options: {', '.join(names) or 'none'})"
                )

    def _make_pass(self, pass_class: type[ModulePass], spec: ArgSpec) -> ModulePass:
        options = {option.name: option for option in pass_options(pass_class)}
        self._check_option_names(f"pass '{spec.name}'", spec, list(options.values()))
        for key, value in spec.parameters.items():
            option = options[key.replace("_", "-")]
            if not _accepts(option.type, value):
                given = f"'{_format_value(value)}'" if value else "no value"
                raise UsageError(
                    f"option '{option.name}' of pass '{spec.name}' expects "
                    f"{type_repr(option.type)}, got {given}"
                )
        try:
            return pass_class.from_spec(spec)
        except (ValueError, TypeError) as error:
            raise UsageError(f"bad options for pass '{spec.name}': {error}") from None

    def _make_dumps(self) -> IRDumps | None:
        try:
            if self.args.dump_dir is not None:
                return IRDumps(Path(self.args.dump_dir))
            # As run_passes does: a run without passes makes no folder under EMMY_DUMP_DIR.
            return IRDumps.from_environment("emmy-opt") if self.passes else None
        except OSError as error:
            where = error.filename or self.args.dump_dir
            raise UsageError(f"cannot write IR dumps to '{where}': {error.strerror}") from None

    def pass_list(self) -> str:
        lines = ["Passes, run as --NAME[=OPTION=VALUE] flags or -p 'NAME{OPTION=VALUE ...},...':"]
        for name in sorted(self.available_passes):
            pass_class = self.available_passes[name]()
            lines.append(f"  {name}")
            if summary := pass_summary(pass_class):
                lines.append(f"      {summary}")
            for option in pass_options(pass_class):
                default = " (required)" if option.default is None else f" = {option.default}"
                lines.append(f"      {option.name}: {type_repr(option.type)}{default}")
                if option.doc:
                    lines.append(f"          {option.doc}")
        return "\n".join(lines) + "\n"

    def run(self) -> int:
        if self.args.list_passes:
            sys.stdout.write(self.pass_list())
            return 0
        source = self._read_input()
        self.dumps = self._make_dumps()
        try:
            output = self.prepare_output()
        except OSError as error:
            raise UsageError(f"cannot write '{self.args.output_file}': {error.strerror}") from None
        reported = []
        try:
            for index, (first_line, text) in enumerate(source.chunks(self.args.split_input_file)):
                if index:
                    output.write(f"{SPLIT_MARKER}\n")
                try:
                    output.write(self._process(source, first_line, text))
                except CompileError as error:
                    reported += error.diagnostics
                    if not self.args.verify_diagnostics:
                        sys.stderr.write("".join(source.render(d) for d in error.diagnostics))
                output.flush()
        except BaseException:
            if isinstance(output, PendingFile):
                output.discard()
            raise
        if isinstance(output, PendingFile):
            # An output file is replaced only by a whole, successful result.
            if reported and not self.args.verify_diagnostics:
                output.discard()
            else:
                try:
                    output.commit()
                except OSError as error:
                    raise UsageError(
                        f"cannot write '{self.args.output_file}': {error.strerror}"
                    ) from None
        if self.args.time_passes:
            sys.stderr.write(self._timing_report())
        if not self.args.verify_diagnostics:
            return 1 if reported else 0
        problems = unmet(expectations(source), reported)
        sys.stderr.write("".join(source.render(problem) for problem in problems))
        return 1 if problems else 0

    def prepare_output(self) -> IO[str]:
        if self.args.output_file is None:
            return sys.stdout
        return PendingFile(Path(self.args.output_file))

    def _read_input(self) -> Source:
        path = self.args.input_file
        if path in (None, "-"):
            name, data = "<stdin>", sys.stdin.buffer.read()
        else:
            try:
                name, data = path, Path(path).read_bytes()
            except OSError as error:
                raise UsageError(f"cannot read '{path}': {error.strerror}") from None
        # Undecodable bytes become U+FFFD, which the parser then reports where they are.
        return Source(name, data.decode("utf-8", errors="replace"))

    @contextmanager
    def _timed(self, row: str | int) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.times[row] += time.perf_counter() - start

    def _guarded(self, where: str, module: ModuleOp, action: Callable[[], T]) -> T:
        """Runs a pass or a printer; its failure becomes a diagnostic at the op it names, or
        else at the module."""
        try:
            return action()
        except DiagnosticException as error:
            raise CompileError(failure_diagnostic(error, where, module)) from None
        except Exception as error:
            raise CompileError(
                op_diagnostic(module, internal_error(f"in {where}", error))
            ) from None

    def _process(self, source: Source, first_line: int, text: str) -> str:
        with self._timed("Parser"):
            module = parse(self.ctx, source, first_line, text, not self.args.no_implicit_module)
        with self._timed("Verifier"):
            verify(module)
        # The IR as the last pass left it, where dumps or --print-ir-after-change need it.
        ir = self._ir(module) if self.dumps or self.args.print_ir_after_change else None
        self._write_dump("input", ir)
        for index, module_pass in enumerate(self.passes):
            where = f"pass '{module_pass.name}'"
            verified_as = self.verified_as[index]
            if self.args.print_ir_before_all:
                self._print_dump(f"Before {module_pass.name}", self._ir(module))
            try:
                with self._timed(index):
                    self._guarded(where, module, lambda: module_pass.apply(self.ctx, module))
                # Before verifying: a pass author wants to see the IR that does not verify.
                ir = self._after_pass(module_pass.name, module, ir)
                if verified_as is not None:
                    with self._timed("Verifier"):
                        self._verify_after(verified_as, module)
            except CompileError:
                self._after_failure(module_pass.name, module)
                raise
        with self._timed("Output"):
            return self._guarded(
                f"target '{self.target.name}'",
                module,
                lambda: self.output_resulting_program(module),
            )

    def _after_pass(self, name: str, module: ModuleOp, previous: str | None) -> str | None:
        """Prints and dumps the IR after a pass as the flags ask; returns it, if it printed it."""
        if not (self.args.print_ir_after_all or self.args.print_ir_after_change or self.dumps):
            return None
        ir = self._ir(module)
        if (ir != previous) if self.args.print_ir_after_change else self.args.print_ir_after_all:
            self._print_dump(f"After {name}", ir)
        self._write_dump(name, ir)
        return ir

    def _after_failure(self, name: str, module: ModuleOp) -> None:
        if not (self.args.print_ir_after_failure or self.dumps):
            return
        # The failure is what to report, even when the IR it left cannot be printed.
        with suppress(CompileError):
            ir = self._ir(module)
            if self.args.print_ir_after_failure:
                self._print_dump(f"After {name} Failed", ir)
            self._write_dump(f"{name}-failed", ir)

    @staticmethod
    def _verify_after(where: str, module: ModuleOp) -> None:
        try:
            verify(module)
        except CompileError as error:
            raise CompileError(
                *(
                    dataclasses.replace(d, message=f"after {where}: {d.message}")
                    for d in error.diagnostics
                )
            ) from None

    def _ir(self, module: ModuleOp) -> str:
        return self._guarded("printing the IR", module, lambda: self._printed(module))

    @staticmethod
    def _print_dump(title: str, ir: str) -> None:
        sys.stderr.write(f"// -----// IR Dump {title} //----- //\n{ir}\n\n")

    def _write_dump(self, step: str, ir: str | None) -> None:
        """Writes `ir` to the dump folder, if there is one (and then `ir` is never None)."""
        if self.dumps is None or ir is None:
            return
        try:
            self.dumps.write(step, f"{ir}\n")
        except OSError as error:
            raise UsageError(
                f"cannot write IR dumps to '{self.dumps.folder}': {error.strerror}"
            ) from None

    def _printed(self, module: ModuleOp) -> str:
        output = StringIO()
        Printer(stream=output, print_generic_format=self.args.print_op_generic).print_op(module)
        return output.getvalue()

    def output_resulting_program(self, prog: ModuleOp) -> str:
        output = StringIO()
        self.target.emit(self.ctx, prog, output)
        return output.getvalue()

    def _timing_report(self) -> str:
        rows = [
            ("Parser", self.times["Parser"]),
            *(
                (module_pass.name, self.times[index])
                for index, module_pass in enumerate(self.passes)
            ),
            ("Verifier", self.times["Verifier"]),
            ("Output", self.times["Output"]),
        ]
        total = sum(seconds for _, seconds in rows)
        rule = "===" + "-" * 73 + "==="
        lines = [
            rule,
            "... Execution time report ...".center(len(rule)).rstrip(),
            rule,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        for name, seconds in [*rows, ("Total", total)]:
            share = 100 * seconds / total if total else 0
            lines.append(f"  {seconds:10.4f} ({share:5.1f}%)  {name}")
        return "\n".join(lines) + "\n"


def main(args: Sequence[str] | None = None) -> int:
    """The `emmy-opt` command; returns its exit status, so it can also be called in-process."""
    try:
        return EmmyOptMain(args).run()
    except UsageError as error:
        sys.stderr.write(f"emmy-opt: error: {error}\n")
    except SystemExit as stop:  # --help and --version
        return stop.code if isinstance(stop.code, int) else 0
    except KeyboardInterrupt:
        sys.stderr.write("emmy-opt: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader stopped reading (`emmy-opt ... | head`): stop quietly, as Unix tools do.
        # Python's own final flush of stdout would fail again, so point stdout at /dev/null.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except Exception as error:  # a bug in emmy-opt itself: still no traceback for the user
        sys.stderr.write(f"emmy-opt: error: {internal_error('in emmy-opt', error)}\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())
