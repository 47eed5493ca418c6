"""Fuzzing emmy-opt with broken IR: whatever the input, it exits 0, or 1 with a located
`file:line:col: error:` diagnostic, and never shows a Python traceback.

The inputs are the lit corpus (test/**/*.mlir, without its RUN/CHECK comments) and a few
built-in programs, each mutated a few times at random. A case is reproducible from its seed:
`pytest test/python/test_emmy_opt_fuzz.py -k 'seed-137'`.
"""

import random
import re
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

from emmy.tools.opt import main

TEST_ROOT = Path(__file__).resolve().parents[1]

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


CORPUS = [
    *BUILTIN_PROGRAMS,
    *(_without_test_comments(path.read_text()) for path in sorted(TEST_ROOT.glob("**/*.mlir"))),
]

COMMAND_LINES = [
    [],
    ["--split-input-file"],
    ["--split-input-file", "--verify-diagnostics"],
    ["--cse", "--canonicalize"],
    ["--lower-fused-to-loop"],
    ["--split-input-file", "-p", "lower-fused-to-loop{keep-unit-dims=true},canonicalize,dce"],
    ["--print-ir-after-all", "--time-passes", "--cse"],
]

TOKEN = re.compile(r"[%@^#!]?[\w.$-]+|\S")
INTERESTING_CHARACTERS = '%@^#!:,()[]{}<>=-+.0123456789xfi" \n'


def _mutate(text: str, rng: random.Random) -> str:
    tokens = [m.span() for m in TOKEN.finditer(text)]
    lines = text.split("\n")
    kind = rng.choice(
        ["delete", "duplicate", "swap", "truncate", "flip", "drop_line", "duplicate_line"]
    )
    if kind in ("delete", "duplicate", "swap") and len(tokens) >= 2:
        i, j = sorted(rng.sample(range(len(tokens)), 2))
        (a, b), (c, d) = tokens[i], tokens[j]
        if kind == "delete":
            return text[:a] + text[b:]
        if kind == "duplicate":
            return text[:b] + " " + text[a:b] + text[b:]
        return text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
    if kind == "truncate":
        return text[: rng.randrange(len(text) + 1)]
    if kind == "drop_line" and lines:
        del lines[rng.randrange(len(lines))]
        return "\n".join(lines)
    if kind == "duplicate_line" and lines:
        index = rng.randrange(len(lines))
        lines.insert(index, lines[index])
        return "\n".join(lines)
    position = rng.randrange(len(text) + 1)
    return text[:position] + rng.choice(INTERESTING_CHARACTERS) + text[position + 1 :]


@pytest.mark.parametrize("seed", range(300), ids=lambda seed: f"seed-{seed}")
def test_broken_input_gives_a_located_error_and_no_traceback(seed: int, tmp_path: Path):
    rng = random.Random(seed)
    text = rng.choice(CORPUS)
    for _ in range(rng.randint(1, 3)):
        text = _mutate(text, rng)
    path = tmp_path / "fuzzed.mlir"
    path.write_text(text)
    args = [str(path), *rng.choice(COMMAND_LINES)]

    with redirect_stdout(StringIO()), redirect_stderr(StringIO()) as errors:
        status = main(args)

    stderr = errors.getvalue()
    context = f"emmy-opt {' '.join(args)} on:\n{text}\nstderr:\n{stderr}"
    assert status in (0, 1), context
    assert "Traceback" not in stderr, context
    if status == 1:
        assert re.search(rf"{re.escape(str(path))}:\d+:\d+: error: ", stderr), context
