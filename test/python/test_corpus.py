"""Every corpus program, at every executable level, against PyTorch eager, in fp32 and bf16.

This is `emmy run` as a test: a failure names the first level that disagrees with eager,
and so the pass that broke the program.
"""

import pytest
from corpus import PROGRAMS, source

from emmy.passes.pipelines import LEVELS
from emmy.tools.bench.differential import EXECUTABLE_LEVELS, check_levels, lower
from emmy.tools.frontend.program import load_program


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_level_matches_eager(name: str, dtype: str) -> None:
    program = load_program(source(name, dtype), "<source>")
    torch_ir = program.to_torch_ir()
    reports = check_levels(program, torch_ir, EXECUTABLE_LEVELS, seed=7)
    failed = [r for r in reports if not r.passed]
    assert not failed, "first level to disagree with eager: " + ", ".join(
        f"{r.level} (max abs {r.max_abs_error:.3g}, max rel {r.max_rel_error:.3g})" for r in failed
    )


def test_corpus_is_large_enough() -> None:
    assert len(PROGRAMS) >= 25


def test_each_level_prints_the_dialect_of_that_level() -> None:
    program = load_program(source("rms_norm", "float32"), "<source>")
    torch_ir = program.to_torch_ir()
    for level in LEVELS:
        text = str(lower(torch_ir, level))
        assert f"{level}." in text, level
