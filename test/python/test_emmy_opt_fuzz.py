"""Fuzzing emmy-opt with broken IR: whatever the input and whichever passes run, it exits 0, or
1 with a located `file:line:col: error:` diagnostic (or an `emmy-opt: error:` about the command
line), and never shows a Python traceback or an internal error.

Each case mutates an input one to three times at random and runs emmy-opt on it in-process
under one command line. The inputs, each group as likely as the others:
- every dialect's `test/Dialect/<dialect>/ops.mlir`;
- the IR `emmy compile` prints at every level, torch to kernel, for a few corpus programs
  (`corpus.py`; made once per session, a few seconds);
- the rest of the lit suite (test/**/*.mlir) and a few built-in programs.
The command lines: every pass and named pipeline of the registry (`emmy.passes.registry`, so
that a new pass is fuzzed as soon as it is registered), alone, with random option values, or a
few in a `-p` pipeline; `-t cuda` after one; parsing and printing only; `--split-input-file
--verify-diagnostics`. A case that runs past CASE_SECONDS fails too (a hang).

By default the suite runs DEFAULT_CASES cases (1,500: about 40 s on 2 cores, fixture included,
80 s when they are busy); a longer run sets EMMY_FUZZ_CASES, e.g. `EMMY_FUZZ_CASES=20000
.venv/bin/pytest -q test/python/test_emmy_opt_fuzz.py` (about 10 minutes). A case is
reproducible from its seed (with EMMY_FUZZ_CASES above it):
`.venv/bin/pytest 'test/python/test_emmy_opt_fuzz.py::test_mutated_ir_never_crashes[seed-137]'`.
"""

from __future__ import annotations

import dataclasses
import os
import random
import re
import sys
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path
from typing import get_type_hints

import pytest
from xdsl.printer import Printer

from emmy.passes.registry import registered_passes
from emmy.tools.frontend.program import TimeLimitExceeded, time_limit
from emmy.tools.opt import main

TEST_ROOT = Path(__file__).resolve().parents[1]
DIALECTS = ("torch", "prim", "fused", "loop", "tile", "kernel")

DEFAULT_CASES = 1500
CASES = int(os.environ.get("EMMY_FUZZ_CASES", DEFAULT_CASES))
CASE_SECONDS = 60

EMITTED_PROGRAMS = [
    ("rms_norm", "float32"),
    ("softmax_last_dim", "float32"),
    ("linear_bias", "bfloat16"),
    ("whole_buffer_reductions", "float32"),
    ("embedding", "float32"),
    ("matmul_bmm", "float32"),
    ("argmax_argmin", "float32"),
    ("cumsum_cumprod", "float32"),
    ("masked_attention", "bfloat16"),
]
"""Corpus programs whose IR at every level is fuzzed: norms, softmax, a bf16 contraction, split
reductions with atomics, a gather, the fma GEMM kernel, reductions that carry an index, scans
and attention with masks."""

BUILTIN_PROGRAMS = [
    """\
func.func @row_sum(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %r = prim.reduce add %x axes [1] keepdim init 0.0 : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %r : tensor<4x1xf32>
}
""",
    """\
func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = fused.kernel @k_scale(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>):
    %wb = prim.broadcast %b : tensor<8xf32> -> tensor<4x8xf32>
    %m = prim.map(%a, %wb) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%u: f32, %v: f32):
      %p = arith.mulf %u, %v : f32
      prim.yield %p : f32
    }
    %s = prim.reduce max %m axes [1] keepdim init -inf : tensor<4x8xf32> -> tensor<4x1xf32>
    %sb = prim.broadcast %s : tensor<4x1xf32> -> tensor<4x8xf32>
    fused.yield %sb : tensor<4x8xf32>
  }
  func.return %y : tensor<4x8xf32>
}
""",
    """\
loop.kernel @k_copy(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  loop.for %i in 0 to 4 {
    %s = loop.for %j in 0 to 8 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      loop.yield %v : f32
    }
    %c0 = arith.constant 0 : index
    loop.store %s, %y[%i, %c0] : memref<4x8xf32>
  }
}
func.func @forward(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %y = memref.alloc() : memref<4x8xf32>
  loop.launch @k_copy(%x, %y) : memref<4x8xf32>, memref<4x8xf32>
  func.return %y : memref<4x8xf32>
}

// -----

func.func @scalar(%a: i32, %b: i32) -> i1 {
  %c = arith.cmpi slt, %a, %b : i32
  %d = scf.if %c -> (i1) {
    scf.yield %c : i1
  } else {
    %t = arith.constant true
    scf.yield %t : i1
  }
  func.return %d : i1
}
""",
]


def _without_test_comments(text: str) -> str:
    """Drops RUN/CHECK lines and other comments, which mutations would only waste time on,
    but keeps the split markers."""
    return "\n".join(
        line
        for line in text.split("\n")
        if not line.lstrip().startswith("//") or line.strip() == "// -----"
    )


DIALECT_OPS = [TEST_ROOT / "Dialect" / dialect / "ops.mlir" for dialect in DIALECTS]
LIT_FILES = sorted(
    path
    for path in set(TEST_ROOT.glob("**/*.mlir")) - set(DIALECT_OPS)
    # lit's Output folders hold what the last lit run wrote.
    if "Output" not in path.relative_to(TEST_ROOT).parts
)


@pytest.fixture(scope="session")
def inputs() -> list[list[str]]:
    """The groups of inputs (see the module docstring)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from corpus import source

    from emmy.passes.pipelines import LEVELS
    from emmy.tools.bench.differential import lower
    from emmy.tools.frontend.program import compile_source

    emitted = []
    for name, dtype in EMITTED_PROGRAMS:
        torch_ir = compile_source(source(name, dtype), f"<{name}>")
        for level in LEVELS:
            printed = StringIO()
            Printer(stream=printed).print_op(
                torch_ir if level == "torch" else lower(torch_ir, level)
            )
            emitted.append(printed.getvalue())
    return [
        [_without_test_comments(path.read_text()) for path in DIALECT_OPS],
        emitted,
        [*BUILTIN_PROGRAMS, *(_without_test_comments(path.read_text()) for path in LIT_FILES)],
    ]


INTEGER_OPTIONS = (0, 1, 2, 3, 7, 32, 64, 100, 256, 1024, 2048, -1, 99999999999999999999)
STRING_OPTIONS = ("auto", "none", "sync", "async", "x", "")


def _pass_spec(name: str, pass_class: type, rng: random.Random) -> str:
    """`name`, or `name{option=value ...}` with some of its options at random values."""
    hints = get_type_hints(pass_class)
    options = []
    for field in dataclasses.fields(pass_class):
        if rng.random() < 0.5:
            continue
        hint = str(hints.get(field.name, ""))
        if "bool" in hint:
            value = rng.choice(("true", "false"))
        elif "int" in hint:
            value = str(rng.choice(INTEGER_OPTIONS))
        else:
            value = rng.choice(STRING_OPTIONS)
        options.append(f"{field.name.replace('_', '-')}={value}")
    return f"{name}{{{' '.join(options)}}}" if options else name


def _command_line(rng: random.Random) -> list[str]:
    passes = registered_passes()
    names = sorted(passes)
    kind = rng.random()
    if kind < 0.15:
        return []
    if kind < 0.2:
        return ["--split-input-file", "--verify-diagnostics"]
    if kind < 0.7:
        name = rng.choice(names)
        spec = _pass_spec(name, passes[name], rng)
        flag = [f"--{name}"] if spec == name else ["-p", spec]
        return flag + (["-t", "cuda"] if rng.random() < 0.2 else [])
    chosen = rng.sample(names, rng.randint(2, 4))
    line = ["-p", ",".join(_pass_spec(name, passes[name], rng) for name in chosen)]
    return line + (["-t", "cuda"] if rng.random() < 0.3 else [])


TOKEN = re.compile(r"[%@^#!]?[\w.$-]+|\S")
NUMBER = re.compile(r"(?<![\w.%@^#!$-])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.$-])")
DIMENSION = re.compile(r"(?<=[<x])\d+(?=x)")
ELEMENT_TYPE = re.compile(r"\b(?:f16|bf16|f32|f64|i1|i8|i32|i64|index)\b")
INTERESTING_CHARACTERS = '%@^#!:,()[]{}<>=-+.0123456789xfi" \n'
INTERESTING_NUMBERS = (
    "0",
    "1",
    "2",
    "3",
    "-1",
    "31",
    "33",
    "1024",
    "65536",
    "2147483648",
    "4294967296",
    "18446744073709551616",
    "99999999999999999999",
    "0.0",
    "-0.0",
    "1.0e+39",
    "0x7FC00000",
)
INTERESTING_DIMENSIONS = ("0", "1", "2", "3", "7", "32", "1000", "65537", "2147483648")
ELEMENT_TYPES = ("f16", "bf16", "f32", "f64", "i1", "i8", "i32", "i64", "index")


def _token_class(token: str) -> str:
    return token[0] if token[0] in "%@^#!" else "word" if token[0].isalnum() else token


def _replace_match(text: str, pattern: re.Pattern, choices, rng: random.Random) -> str | None:
    matches = list(pattern.finditer(text))
    if not matches:
        return None
    match = rng.choice(matches)
    return text[: match.start()] + rng.choice(choices) + text[match.end() :]


def _mutate(text: str, rng: random.Random) -> str:
    """One random change: most keep the text parseable (a number, a dimension, an element type
    or a token replaced by another of its kind from the text), so that verifiers and passes
    see odd programs, and some break its syntax."""
    tokens = [m.span() for m in TOKEN.finditer(text)]
    lines = text.split("\n")
    kind = rng.choice(
        ["number", "dimension", "element_type", "same_kind", "same_kind", "drop_line"]
        + ["dup_line", "delete", "duplicate", "swap", "truncate", "flip"]
    )
    mutated = None
    if kind == "number":
        mutated = _replace_match(text, NUMBER, INTERESTING_NUMBERS, rng)
    elif kind == "dimension":
        mutated = _replace_match(text, DIMENSION, INTERESTING_DIMENSIONS, rng)
    elif kind == "element_type":
        mutated = _replace_match(text, ELEMENT_TYPE, ELEMENT_TYPES, rng)
    elif kind == "same_kind" and tokens:
        a, b = rng.choice(tokens)
        kin = [t for t in tokens if _token_class(text[t[0] : t[1]]) == _token_class(text[a:b])]
        c, d = rng.choice(kin)
        mutated = text[:a] + text[c:d] + text[b:]
    elif kind in ("delete", "duplicate", "swap") and len(tokens) >= 2:
        i, j = sorted(rng.sample(range(len(tokens)), 2))
        (a, b), (c, d) = tokens[i], tokens[j]
        if kind == "delete":
            mutated = text[:a] + text[b:]
        elif kind == "duplicate":
            mutated = text[:b] + " " + text[a:b] + text[b:]
        else:
            mutated = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    elif kind == "truncate":
        mutated = text[: rng.randrange(len(text) + 1)]
    elif kind == "drop_line" and lines:
        del lines[rng.randrange(len(lines))]
        mutated = "\n".join(lines)
    elif kind == "dup_line" and lines:
        index = rng.randrange(len(lines))
        lines.insert(index, lines[index])
        mutated = "\n".join(lines)
    if mutated is not None:
        return mutated
    position = rng.randrange(len(text) + 1)
    return text[:position] + rng.choice(INTERESTING_CHARACTERS) + text[position + 1 :]


@pytest.mark.parametrize("seed", range(CASES), ids=lambda seed: f"seed-{seed}")
def test_mutated_ir_never_crashes(seed: int, inputs: list[list[str]], tmp_path: Path):
    rng = random.Random(seed)
    text = rng.choice(rng.choice(inputs))
    for _ in range(rng.randint(1, 3)):
        text = _mutate(text, rng)
    path = tmp_path / "fuzzed.mlir"
    path.write_text(text)
    args = [str(path), *_command_line(rng)]

    with redirect_stdout(StringIO()), redirect_stderr(StringIO()) as errors:
        try:
            with time_limit(CASE_SECONDS):
                status = main(args)
        except TimeLimitExceeded:
            status = None

    stderr = errors.getvalue()
    context = f"emmy-opt {' '.join(args)} on:\n{text}\nstderr:\n{stderr}"
    assert status is not None, f"over {CASE_SECONDS} s: {context}"
    assert status in (0, 1), context
    assert "Traceback" not in stderr, context
    assert "internal error" not in stderr, context
    if status == 1:
        # At the input, or at the file an explicit loc(...) of the input names.
        located = re.search(r"^(?!<unknown>)\S+:\d+:\d+: error: ", stderr, re.MULTILINE)
        assert located or stderr.startswith("emmy-opt: error: "), context
