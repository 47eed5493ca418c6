"""Every corpus program, at every executable level, against PyTorch eager, in fp32 and bf16.

This is `emmy run` as a test: a failure names the first level that disagrees with eager,
and so the pass that broke the program.
"""

import pytest
from corpus import PROGRAMS, assert_every_level_matches_eager, source

from emmy.passes.pipelines import LEVELS
from emmy.tools.bench.differential import lower
from emmy.tools.frontend.program import load_program


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_level_matches_eager(name: str, dtype: str) -> None:
    program = load_program(source(name, dtype), "<source>")
    torch_ir = program.to_torch_ir()
    assert_every_level_matches_eager(program, torch_ir, seed=7)


def test_corpus_is_large_enough() -> None:
    assert len(PROGRAMS) >= 25


def test_each_level_prints_the_dialect_of_that_level() -> None:
    program = load_program(source("rms_norm", "float32"), "<source>")
    torch_ir = program.to_torch_ir()
    for level in LEVELS:
        text = str(lower(torch_ir, level))
        assert f"{level}." in text, level
