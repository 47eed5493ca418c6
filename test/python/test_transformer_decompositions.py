"""`nn.TransformerEncoderLayer` and `nn.MultiheadAttention` in eval without gradients take
PyTorch's fused fast path (`aten._transformer_encoder_layer_fwd`,
`aten._native_multi_head_attention`); emmy compiles them whole through
`emmy.tools.frontend.transformer_decompositions`, against eager on fresh random inputs."""

import pytest
import torch
import torch.nn as nn

import emmy  # noqa: F401  (registers the backend)

EMBED, HEADS, ROWS = 32, 4, 7


def compiled(module: nn.Module):
    """`module` under `torch.compile(backend="emmy")`, which fails rather than run any op in
    eager PyTorch."""
    torch._dynamo.reset()
    return torch.compile(module, backend="emmy", options={"fallback": False})


def key_padding() -> torch.Tensor:
    """Batch 1 leaves out its last two keys (True: left out)."""
    padding = torch.zeros(2, ROWS, dtype=torch.bool)
    padding[1, -2:] = True
    return padding


MASKS = {
    "none": lambda: {},
    "key-padding": lambda: {"src_key_padding_mask": key_padding()},
    "causal-float": lambda: {"src_mask": nn.Transformer.generate_square_subsequent_mask(ROWS)},
    "causal-bool": lambda: {
        "src_mask": torch.ones(ROWS, ROWS, dtype=torch.bool).triu(1),
    },
}


@pytest.mark.parametrize("mask", sorted(MASKS))
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_fast_path_matches_eager(mask, norm_first, activation) -> None:
    layer = nn.TransformerEncoderLayer(
        EMBED, HEADS, 64, dropout=0.0, activation=activation, batch_first=True,
        norm_first=norm_first,
    ).eval()  # fmt: skip
    x, masks = torch.randn(2, ROWS, EMBED), MASKS[mask]()
    with torch.no_grad():
        torch.testing.assert_close(compiled(layer)(x, **masks), layer(x, **masks))


def test_encoder_of_two_layers_matches_eager() -> None:
    encoder = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(EMBED, HEADS, 64, dropout=0.0, batch_first=True),
        num_layers=2, enable_nested_tensor=False,
    ).eval()  # fmt: skip
    x = torch.randn(3, ROWS, EMBED)
    with torch.no_grad():
        torch.testing.assert_close(compiled(encoder)(x), encoder(x))


@pytest.mark.parametrize("need_weights", [False, True])
def test_multi_head_attention_fast_path_matches_eager(need_weights) -> None:
    """Self-attention with a key padding mask; with `need_weights`, the weights averaged over
    the heads are the second result."""

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.MultiheadAttention(EMBED, HEADS, batch_first=True)

        def forward(self, x, padding):
            return self.attention(x, x, x, key_padding_mask=padding, need_weights=need_weights)

    module = SelfAttention().eval()
    x = torch.randn(2, ROWS, EMBED)
    with torch.no_grad():
        out, weights = compiled(module)(x, key_padding())
        expected, expected_weights = module(x, key_padding())
    torch.testing.assert_close(out, expected)
    if need_weights:
        torch.testing.assert_close(weights, expected_weights)
