"""The documentation is executed: every command the README and `docs/*.md` show runs here, and
the output they show is what it prints.

A code block (indented four spaces, or fenced) whose first line starts with `$ ` is a session:
each `$ ` line is a command, run with bash from the repository root with the tools of this
Python's environment first on PATH, and the lines after it, up to the next `$ ` line, are what it
prints (standard output, then standard error). A shown line `...` stands for any number of
lines, and `...` inside a line for any text; trailing blanks and blank lines are ignored. A
command must exit 0 unless an HTML comment before its block says otherwise:

    <!-- docs: exit 1 -->      every command of the next block exits 1
    <!-- docs: gpu -->         the next block needs a CUDA GPU (checked on a GPU run, skipped here)
    <!-- docs: not run -->     the next block is not run (say why in the text)

Blocks without `$ ` are IR, code or output excerpts and are not run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"<!--\s*docs:\s*(?P<what>[^>]*?)\s*-->")
COMMAND_TIMEOUT_S = 600


@dataclass
class Command:
    command: str
    expected: list[str]


@dataclass
class Session:
    document: Path
    line: int
    """The 1-based line of the block's first command."""
    commands: list[Command]
    marks: list[str]

    @property
    def name(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def _blocks(lines: list[str]):
    """(first line number, block lines, marks) of each code block of a Markdown document."""
    index, marks = 0, []
    while index < len(lines):
        line = lines[index]
        if match := MARKER.search(line):
            marks.append(match["what"])
            index += 1
        elif line.startswith("```"):
            end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            yield index + 2, lines[index + 1 : end], marks
            index, marks = end + 1, []
        elif line.startswith("    ") and (index == 0 or not lines[index - 1].strip()):
            end = index
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            while not lines[end - 1].strip():
                end -= 1
            yield index + 1, [text[4:] for text in lines[index:end]], marks
            index, marks = end, []
        else:
            if line.strip():
                marks = []
            index += 1


def sessions() -> list[Session]:
    found = []
    for document in DOCUMENTS:
        for line, block, marks in _blocks(document.read_text().splitlines()):
            if not block or not block[0].startswith("$ "):
                continue
            commands: list[Command] = []
            for text in block:
                if text.startswith("$ "):
                    commands.append(Command(text[2:], []))
                else:
                    commands[-1].expected.append(text)
            found.append(Session(document, line, commands, marks))
    return found


def _line_pattern(shown: str) -> re.Pattern:
    return re.compile(".*".join(re.escape(part) for part in shown.rstrip().split("...")) + r"\Z")


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` reads as `expected`, a `...` line standing for any lines and `...` in
    a line for any text."""
    if not expected:
        return not actual
    shown, *rest = expected
    if shown.strip() == "...":
        return any(output_matches(rest, actual[skip:]) for skip in range(len(actual) + 1))
    return (
        bool(actual)
        and _line_pattern(shown).match(actual[0].rstrip()) is not None
        and output_matches(rest, actual[1:])
    )


def run(command: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ)
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environment["PATH"]])
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
    )


def test_the_documents_show_sessions() -> None:
    """The parser finds the README's sessions (a parser that finds none checks nothing)."""
    names = [session.name for session in sessions()]
    assert len([n for n in names if n.startswith("README.md")]) >= 10, names


def test_output_matching() -> None:
    assert output_matches(["a ... c", "...", "z"], ["a b c", "x", "y", "z"])
    assert output_matches(["..."], [])
    assert not output_matches(["a", "b"], ["a"])
    assert not output_matches(["a"], ["a", "b"])
    assert not output_matches(["a ... c"], ["a b d"])


PATH_IN_TEXT = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|mlir|md|json|toml|sh))`")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.name)
def test_the_paths_a_document_names_exist(document: Path) -> None:
    """A file the text names by its path from the repository root is there."""
    named = set(PATH_IN_TEXT.findall(document.read_text()))
    assert named, document
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"{document.name} names files that do not exist: {missing}"


@pytest.mark.parametrize("session", sessions(), ids=lambda s: s.name)
def test_documented_session_runs_as_shown(session: Session) -> None:
    if "not run" in session.marks:
        pytest.skip("marked not run")
    if "gpu" in session.marks and not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    exit_status = next(
        (int(mark.split()[1]) for mark in session.marks if mark.startswith("exit ")), 0
    )
    for command in session.commands:
        result = run(command.command)
        printed = (result.stdout + result.stderr).rstrip().splitlines()
        assert result.returncode == exit_status, (
            f"{session.name}: `{command.command}` exited {result.returncode}:\n"
            + "\n".join(printed[-40:])
        )
        assert output_matches(command.expected, printed), (
            f"{session.name}: `{command.command}` printed\n"
            + "\n".join(printed)
            + "\n\nbut the document shows\n"
            + "\n".join(command.expected)
        )


def test_readme_lists_the_importers_ops():
    """The README's table of supported ops is the importer's own (regenerate it with
    `python -m emmy.tools.frontend.importer`)."""
    from emmy.tools.frontend.importer import supported_ops_table

    readme = (ROOT / "README.md").read_text()
    shown = readme.split("<!-- supported ops: begin -->\n")[1].split("<!-- supported ops: end -->")[
        0
    ]
    assert shown == supported_ops_table()
