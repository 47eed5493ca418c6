"""`emmy run` on the CPU: a line on stderr as each level starts, the results table on stdout
with the tolerance rule under it, and random inputs that keep an index input inside the table
it indexes (`emmy exec` too, at every level)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from emmy.passes.pipelines import LEVELS
from emmy.tools.bench.differential import random_inputs
from emmy.tools.bench.tolerances import TF32_TOLERANCE, rule, tolerance
from emmy.tools.cli import main, read_module
from emmy.tools.diagnostics import Source
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter import run
from emmy.tools.interpreter.run import find_function

EMBEDDING = "nn.Embedding(10, 8)(torch.full((64,), 3))"
"""An embedding whose example indices are all 3: fresh ones must still cover its 10 rows."""


def test_run_reports_each_level_as_it_starts_and_the_rule_under_the_table(capsys):
    assert main(["run", "-c", "nn.RMSNorm(64)(torch.randn(2, 8, 64))"]) == 0
    out, err = capsys.readouterr()
    starts = [re.fullmatch(r" *\d+\.\d s  checking (\w+)", line) for line in err.splitlines()]
    assert all(starts) and [start[1] for start in starts] == list(LEVELS)
    lines = out.splitlines()
    assert lines[0] == "level      max abs error   max rel error  result"
    assert [line.split()[0] for line in lines[1 : 1 + len(LEVELS)]] == list(LEVELS)
    assert "\n".join(lines[1 + len(LEVELS) :]) == rule(["float32"], allows_tf32=False)


def test_the_rule_explains_a_relative_error_above_rtol():
    text = rule(["float32", "bfloat16", "float32", "int64"], allows_tf32=False)
    assert text == (
        "an element passes within atol + rtol * |eager| (float32 rtol 0.0001, atol 1e-05; "
        "bfloat16 rtol 0.02, atol 0.02; int64 exactly); rel error is\n"
        "|error| / (|eager| + atol), so an element near 0 may pass with a rel error above rtol"
    )
    assert f"float32 rtol 0.0001, atol {TF32_TOLERANCE:g} of its largest |eager|" in rule(
        [torch.float32], allows_tf32=True
    )


def test_the_rule_is_the_check():
    # An element of eager value 0 off by atol passes with a rel error of about 1 > rtol.
    rtol, atol = tolerance(torch.float32, allows_tf32=False, largest=1.0)
    error, eager = atol, 0.0
    assert error <= atol + rtol * abs(eager)
    assert error / (abs(eager) + atol) > rtol
    assert tolerance("float32", allows_tf32=True, largest=8.0) == (rtol, TF32_TOLERANCE * 8.0)
    assert tolerance(torch.int64, allows_tf32=True, largest=8.0) == (0.0, 0.0)


def test_run_draws_an_embeddings_indices_from_its_rows(capsys):
    program = load_program(EMBEDDING, "<source>")
    (indices,) = random_inputs(program, program.to_torch_ir(), seed=0)
    assert indices.dtype == torch.int64
    assert set(indices.tolist()) == set(range(10))
    assert main(["run", "-c", EMBEDDING]) == 0


def test_run_keeps_other_integers_in_the_examples_range():
    source = """
class Scale(nn.Module):
    def forward(self, x, n):
        return x * n

Scale()(torch.randn(64), torch.arange(3, 7).repeat(16))
"""
    program = load_program(source, "<source>")
    _, counts = random_inputs(program, program.to_torch_ir(), seed=0)
    assert set(counts.tolist()) == {3, 4, 5, 6}


@pytest.mark.parametrize("level", LEVELS)
def test_exec_draws_an_embeddings_indices_from_its_rows(level, tmp_path: Path, capsys):
    path = tmp_path / f"{level}.mlir"
    assert main(["compile", "-c", EMBEDDING, "--ir", level, "-o", str(path)]) == 0
    # What exec runs @forward on: the table's rows, then indices of them.
    forward = find_function(read_module(Source(str(path), path.read_text())), "forward")
    table, indices = run.random_inputs(forward, seed=0)
    assert table.shape == (10, 8) and set(indices.tolist()) == set(range(10))
    assert main(["exec", str(path)]) == 0, capsys.readouterr().err
