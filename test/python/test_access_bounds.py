"""The spans of `emmy.dialects.access_bounds` hold every value they stand for: an op on spans
covers the op on all their members, so that an access it calls out of range can be out of range.
"""

from __future__ import annotations

import operator

from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import arith

from emmy.dialects.access_bounds import BINARY, Span, join, meet, span


def members(s: Span) -> list[int]:
    step = s.modulus or 1
    return list(range(s.lo, s.hi + 1, step)) if not s.empty else []


def holds(s: Span, value: int) -> bool:
    inside = (s.lo is None or s.lo <= value) and (s.hi is None or value <= s.hi)
    congruent = value == s.residue if s.modulus == 0 else (value - s.residue) % s.modulus == 0
    return inside and congruent


@st.composite
def spans(draw) -> Span:
    lo = draw(st.integers(-20, 20))
    hi = lo + draw(st.integers(0, 30))
    return span(lo, hi, draw(st.integers(0, 6)), draw(st.integers(-10, 10)))


CONCRETE = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
    arith.DivUIOp: lambda a, b: a // b if a >= 0 and b > 0 else None,
    arith.DivSIOp: lambda a, b: a // b if a >= 0 and b > 0 else None,
    arith.FloorDivSIOp: lambda a, b: a // b if a >= 0 and b > 0 else None,
    arith.RemUIOp: lambda a, b: a % b if a >= 0 and b > 0 else None,
    arith.RemSIOp: lambda a, b: a % b if a >= 0 and b > 0 else None,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
    arith.MinUIOp: lambda a, b: min(a, b) if a >= 0 and b >= 0 else None,
    arith.MaxUIOp: lambda a, b: max(a, b) if a >= 0 and b >= 0 else None,
}


@given(spans(), spans(), st.sampled_from(sorted(BINARY, key=lambda op: op.name)))
def test_an_op_on_spans_covers_the_op_on_their_members(a: Span, b: Span, op) -> None:
    result = BINARY[op](a, b) if not (a.empty or b.empty) else None
    for x in members(a):
        for y in members(b):
            value = CONCRETE[op](x, y)
            if value is not None:
                assert holds(result, value), (op.name, a, b, x, y, value, result)


@given(spans(), spans())
def test_join_covers_both_and_meet_covers_the_common_values(a: Span, b: Span) -> None:
    either, both = join(a, b), meet(a, b)
    for value in members(a) + members(b):
        assert holds(either, value)
        if holds(a, value) and holds(b, value):
            assert holds(both, value)


@given(st.integers(-50, 50), st.integers(0, 60), st.integers(1, 8), st.integers(-10, 10))
def test_span_keeps_exactly_the_congruent_values(lo: int, width: int, modulus: int, residue: int):
    s = span(lo, lo + width, modulus, residue)
    expected = [v for v in range(lo, lo + width + 1) if (v - residue) % modulus == 0]
    assert members(s) == expected
