"""`emmy exec`: runs IR files on the CPU interpreter and reports bad input without tracebacks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from emmy.tools.cli import main

SOFTMAX = """
loop.kernel @softmax(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  loop.for %i in 0 to 4 {
    %m = loop.for %j in 0 to 8 reduce max init -inf : f32 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      loop.yield %v : f32
    }
    %s = loop.for %j in 0 to 8 reduce add init 0.0 : f32 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      loop.yield %e : f32
    }
    loop.for %j in 0 to 8 {
      %v = loop.load %x[%i, %j] : memref<4x8xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      %q = arith.divf %e, %s : f32
      loop.store %q, %y[%i, %j] : memref<4x8xf32>
    }
  }
}
func.func @forward(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %y = memref.alloc() : memref<4x8xf32>
  loop.launch @softmax(%x, %y) : memref<4x8xf32>, memref<4x8xf32>
  func.return %y : memref<4x8xf32>
}
func.func @double(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = prim.map(%x) : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: f32):
    %r = arith.addf %a, %a : f32
    prim.yield %r : f32
  }
  func.return %y : tensor<3xf32>
}
"""


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "softmax.mlir"
    path.write_text(SOFTMAX)
    return path


def test_exec_prints_a_summary_of_each_result(program, capsys):
    assert main(["exec", str(program)]) == 0
    out = capsys.readouterr().out
    assert "@forward on random inputs (seed 0): 1 result" in out
    assert "#0 memref<4x8xf32>: 4x8 float32" in out
    assert "NaN" not in out


def test_exec_writes_the_results(program, tmp_path, capsys):
    inputs = tmp_path / "in.npz"
    x = np.random.default_rng(7).standard_normal((4, 8)).astype(np.float32)
    np.savez(inputs, x)
    output = tmp_path / "out"
    assert main(["exec", str(program), "--inputs", str(inputs), "-o", str(output)]) == 0
    assert f"inputs from {inputs}" in capsys.readouterr().out
    with np.load(output) as results:
        assert list(results) == ["arr_0"]
        np.testing.assert_allclose(results["arr_0"], softmax(x), rtol=1e-5)


def test_exec_runs_the_named_function_on_seeded_inputs(program, tmp_path, capsys):
    outputs = [tmp_path / f"out{seed}.npz" for seed in (1, 1, 2)]
    for seed, output in zip((1, 1, 2), outputs):
        command = ["exec", str(program), "--function", "double", "--seed", str(seed)]
        assert main([*command, "-o", str(output)]) == 0
    assert "@double on random inputs (seed 2)" in capsys.readouterr().out
    first, again, other = (np.load(output)["arr_0"] for output in outputs)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_syntax_error_is_located_without_a_traceback(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(SOFTMAX.replace("arith.subf %v, %m", "arith.subf %v %m", 1))
    result = subprocess.run(
        [sys.executable, "-m", "emmy.tools.cli", "exec", str(path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert result.stderr.startswith(f"{path}:10:26: error: ")
    assert "%d = arith.subf %v %m : f32" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    "old, new, location, message",
    [
        (
            "0 to 8 {\n      %v = loop.load",
            "0 to 9 {\n      %v = loop.load",
            "15:7",
            "'loop.load' op index %j of memref<4x8xf32> ranges over [0, 8], outside dimension 1 "
            "of size 8",
        ),
        (
            # Past the end by an index the verifier cannot bound: it comes from the data.
            "0 to 8 {\n      %v = loop.load %x[%i, %j]",
            "0 to 8 {\n"
            "      %zero = arith.constant 0.0 : f32\n"
            "      %u = loop.load %x[%i, %j] : memref<4x8xf32>\n"
            "      %u0 = arith.mulf %u, %zero : f32\n"
            "      %z = arith.fptosi %u0 : f32 to i64\n"
            "      %zi = arith.index_cast %z : i64 to index\n"
            "      %c8 = arith.constant 8 : index\n"
            "      %k0 = arith.addi %j, %c8 : index\n"
            "      %k = arith.addi %k0, %zi : index\n"
            "      %v = loop.load %x[%i, %k]",
            "23:7",
            "while running 'loop.load': index #1 takes values from 8 to 15, out of bounds",
        ),
        (
            "loop.launch @softmax(%x, %y) : memref<4x8xf32>, memref<4x8xf32>",
            "loop.launch @softmax(%x) : memref<4x8xf32>",
            "25:3",
            "'loop.launch' op launch passes (memref<4x8xf32>) but @softmax takes",
        ),
    ],
    ids=["out of bounds", "out of bounds at run time", "verifier"],
)
def test_runtime_and_verifier_errors_are_located(tmp_path, capsys, old, new, location, message):
    path = tmp_path / "broken.mlir"
    path.write_text(SOFTMAX.replace(old, new, 1))
    assert main(["exec", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:{location}: error: ")
    assert message in err


def test_input_errors(program, tmp_path, capsys):
    wrong_shape = tmp_path / "wrong.npz"
    np.savez(wrong_shape, np.zeros((8, 4), np.float32))
    assert main(["exec", str(program), "--inputs", str(wrong_shape)]) == 1
    expected = "error: input #0 has shape [8, 4] but argument #0 of @forward is memref<4x8xf32>"
    assert expected in capsys.readouterr().err
    misnamed = tmp_path / "misnamed.npz"
    np.savez(misnamed, x=np.zeros((4, 8), np.float32))
    assert main(["exec", str(program), "--inputs", str(misnamed)]) == 1
    assert "holds x, but the function takes 1 inputs, expected as arr_0" in capsys.readouterr().err
    assert main(["exec", str(program), "--function", "softmax"]) == 1
    assert "@softmax is a 'loop.kernel'" in capsys.readouterr().err
    assert main(["exec", str(tmp_path / "missing.mlir")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_help():
    emmy = Path(sys.executable).parent / "emmy"
    result = subprocess.run([emmy, "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "exec" in result.stdout
    with pytest.raises(SystemExit) as exit_:
        main(["exec", "--help"])
    assert exit_.value.code == 0
