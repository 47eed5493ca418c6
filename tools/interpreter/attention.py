"""Attention on the CPU, the one numpy definition that `prim.attention` and `loop.attention`
run (`emmy.dialects.attention` says what it computes).

    %o = prim.attention %q, %k, %v scale 1.250000e-01 causal : ... -> tensor<1x4x50x64xbf16>
    // o = softmax(q @ repeat(k)^T * 0.125, keys above the diagonal -inf) @ repeat(v)
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Attribute

from emmy.dialects.attention import accumulator_type, kv_group
from emmy.dialects.dtypes import element_bytes
from emmy.tools.interpreter.scalar import numpy_dtype, to_type


def attention(
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    mask: np.ndarray | None,
    scale: float,
    causal: bool,
    input_type: Attribute,
    output_type: Attribute,
) -> np.ndarray:
    accumulator = accumulator_type(input_type)
    dtype = numpy_dtype(accumulator)
    group = kv_group(query.shape, key.shape)
    if group > 1:
        key, value = (np.repeat(x, group, axis=-3) for x in (key, value))
    scores = np.matmul(query.astype(dtype), np.swapaxes(key.astype(dtype), -1, -2))
    scores = to_type(scores * dtype.type(scale), accumulator)
    if mask is not None:
        if mask.dtype == np.bool_:
            scores = np.where(mask, scores, -np.inf)
        else:
            scores = to_type(scores + mask.astype(dtype), accumulator)
    if causal:
        rows, columns = scores.shape[-2:]
        scores = np.where(np.tril(np.ones((rows, columns), np.bool_)), scores, -np.inf)
    maxima = scores.max(axis=-1, keepdims=True)
    # A row masked whole (max -inf) takes its exponents from 0: all 0, over a sum of 1.
    masked_whole = maxima == -np.inf
    with np.errstate(invalid="ignore"):
        exponentials = np.exp(scores - np.where(masked_whole, 0, maxima))
        sums = exponentials.sum(axis=-1, keepdims=True)
        probabilities = exponentials / np.where(masked_whole, 1, sums)
    if element_bytes(input_type) == 2:
        probabilities = to_type(to_type(probabilities, input_type), accumulator)
    out = np.matmul(probabilities.astype(dtype), value.astype(dtype))
    return to_type(out, output_type)
