"""The shapes and types an attention op accepts, shared by `prim.attention` and `loop.attention`.

    %o = prim.attention %q, %k, %v mask %m scale 1.250000e-01 causal
        : tensor<1x4x50x64xbf16>, tensor<1x2x70x64xbf16>, tensor<1x2x70x64xbf16>
          mask tensor<50x70xi1> -> tensor<1x4x50x64xbf16>

Query [..., H, L, E], key [..., Hkv, S, E], value [..., Hkv, S, Ev], output [..., H, L, Ev]:
the batch dims are equal except the last (the heads), where H is a multiple of Hkv and query
head h reads key/value head h // (H / Hkv) (grouped-query attention, the repeat never
materialized). Each output row is `softmax(q . k^T * scale + mask) . v` over the keys, with an
i1 mask keeping the scores where it is true (-inf elsewhere), a float mask added, and `causal`
keeping key j for query i iff j <= i (top-left aligned, as torch); a query whose every key
is masked gives zeros (as torch's sdpa does, not the NaN of 0 / 0). The mask broadcasts to the
scores' shape [..., H, L, S] numpy-style (right-aligned). The products and the softmax are
computed in f32 (f64 for f64 inputs); with 16-bit values the probabilities are rounded to
their type before the second product, as eager's flash kernels do.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects.builtin import AnyFloat, Float64Type, IntegerType, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import VerifyException


def kv_group(query: Sequence[int], key: Sequence[int]) -> int:
    """How many query heads share one key/value head (1 without grouped-query attention)."""
    if len(query) < 3:
        return 1
    return query[-3] // key[-3]


def packed_row_blocks(query: Sequence[int], key: Sequence[int], block_q: int) -> int:
    """The blocks of `block_q` rows that attention's kernels take, the rows of the G query
    heads of a key/value head packed together (G L rows): as many for each key/value head
    of each batch."""
    *batch, rows, _ = query
    group = kv_group(query, key)
    return -(-group * rows // block_q) * (prod(batch) // group)


def scores_shape(query: Sequence[int], key: Sequence[int]) -> tuple[int, ...]:
    return (*query[:-1], key[-2])


def accumulator_type(element_type: Attribute) -> Attribute:
    """The type attention's products and softmax are computed in."""
    return element_type if isinstance(element_type, Float64Type) else f32


def verify_attention(
    query: SSAValue, key: SSAValue, value: SSAValue, mask: SSAValue | None, output: SSAValue
) -> None:
    """Checks the shape and element type of each operand (tensors or buffers) against the
    module docstring."""

    def shape_and_type(shaped: SSAValue) -> tuple[tuple[int, ...], Attribute]:
        return tuple(shaped.type.get_shape()), shaped.type.get_element_type()

    (q, q_type), (k, k_type), (v, v_type), (o, o_type) = map(
        shape_and_type, (query, key, value, output)
    )
    if len(q) < 2 or not (len(q) == len(k) == len(v)):
        raise VerifyException(
            f"query, key and value have one rank >= 2, got {list(q)}, {list(k)}, {list(v)}"
        )
    if q[-1] != k[-1] or k[:-1] != v[:-1]:
        raise VerifyException(
            f"attention takes query [..., L, E], key [..., S, E] and value [..., S, Ev], got "
            f"{list(q)}, {list(k)}, {list(v)}"
        )
    heads_divide = len(q) < 3 or (k[-3] > 0 and q[-3] % k[-3] == 0)
    if q[:-3] != k[:-3] or not heads_divide:
        raise VerifyException(
            f"query and key share batch dims, except that the query's heads "
            f"({q[-3] if len(q) >= 3 else 1}) may be a multiple of the key's "
            f"({k[-3] if len(k) >= 3 else 1}), got {list(q)} and {list(k)}"
        )
    expected = [*q[:-1], v[-1]]
    if list(o) != expected:
        raise VerifyException(f"the output has shape {expected}, got {list(o)}")
    if not (q_type == k_type == v_type) or not isinstance(q_type, AnyFloat):
        raise VerifyException(
            f"query, key and value have one float element type, got {q_type}, {k_type}, {v_type}"
        )
    if not isinstance(o_type, AnyFloat):
        raise VerifyException(f"the output elements are floats, got {o_type}")
    if mask is None:
        return
    m, m_type = shape_and_type(mask)
    scores = scores_shape(q, k)
    broadcasts = len(m) <= len(scores) and all(
        d in (1, s) for d, s in zip(reversed(m), reversed(scores))
    )
    if not broadcasts:
        raise VerifyException(
            f"the mask {list(m)} does not broadcast to the scores' shape {list(scores)}"
        )
    boolean = isinstance(m_type, IntegerType) and m_type.width.data == 1
    if not (boolean or isinstance(m_type, AnyFloat)):
        raise VerifyException(f"the mask holds i1 or floats, got {m_type}")
