"""The differential corpus: small PyTorch programs that cover every supported op and the
compositions people run, written as `emmy compile -c` sources.

`DT` in a source stands for the dtype under test (`torch.float32` or `torch.bfloat16`).
"""

import torch
from torch import nn

from emmy.tools.bench.differential import EXECUTABLE_LEVELS, check_levels
from emmy.tools.bench.programs import ROTARY_ATTENTION, SWIGLU_DECODER_LAYER

LLAMA_LAYER = (
    ROTARY_ATTENTION
    + SWIGLU_DECODER_LAYER
    + "\nDecoderLayer().to(DT)(torch.randn(2, 8, 32, dtype=DT))\n"
)

LLAMA_GQA_LAYER = (
    """
def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, dim, n_heads, max_seq_len, n_kv_heads=2):
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)
        inv_freq = 1.0 / 10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim)
        angles = torch.outer(torch.arange(max_seq_len).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x):
        batch, seq, _ = x.shape
        q = self.wq(x).view(batch, seq, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(batch, seq, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(batch, seq, self.n_kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = self.cos[:seq], self.sin[:seq]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.wo(out.transpose(1, 2).reshape(batch, seq, -1))
"""
    + SWIGLU_DECODER_LAYER
    + "\nDecoderLayer(32, 4, 128, 16).to(DT)(torch.randn(2, 8, 32, dtype=DT))\n"
)
"""The decoder layer with grouped-query attention (two key/value heads for four query heads),
rotation in a module-level helper, and rotary tables for 16 positions sliced to the sequence."""


PROGRAMS: dict[str, str] = {
    "rms_norm": "nn.RMSNorm(64).to(DT)(torch.randn(2, 8, 64, dtype=DT))",
    "layer_norm": "nn.LayerNorm(48).to(DT)(torch.randn(4, 48, dtype=DT))",
    "softmax_last_dim": "nn.Softmax(dim=-1)(torch.randn(3, 5, 16, dtype=DT))",
    "softmax_middle_dim": "nn.Softmax(dim=1)(torch.randn(2, 8, 4, dtype=DT))",
    "log_softmax": "nn.LogSoftmax(dim=0)(torch.randn(6, 10, dtype=DT))",
    "linear_bias": "nn.Linear(24, 16).to(DT)(torch.randn(3, 5, 24, dtype=DT))",
    "linear_no_bias": "nn.Linear(3, 2, bias=False).to(DT)(torch.randn(4, 3, dtype=DT))",
    "gelu_mlp": """
class GeluMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(16, 32), nn.Linear(32, 16)
    def forward(self, x):
        return self.down(F.gelu(self.up(x))) + F.gelu(x, approximate="tanh")
GeluMLP().to(DT)(torch.randn(4, 16, dtype=DT))
""",
    "swiglu_mlp": """
class SwiGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(16, 40, bias=False)
        self.up = nn.Linear(16, 40, bias=False)
        self.down = nn.Linear(40, 16, bias=False)
    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))
SwiGLU().to(DT)(torch.randn(2, 3, 16, dtype=DT))
""",
    "causal_attention": """
class CausalAttention(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
CausalAttention()(torch.randn(1, 2, 6, 8, dtype=DT), torch.randn(1, 2, 6, 8, dtype=DT),
                  torch.randn(1, 2, 6, 8, dtype=DT))
""",
    "masked_attention": """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, mask, bias):
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        b = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3)
        return a + b
MaskedAttention()(torch.randn(2, 5, 8, dtype=DT), torch.randn(2, 7, 8, dtype=DT),
                  torch.randn(2, 7, 4, dtype=DT), torch.rand(5, 7) > 0.3,
                  torch.randn(5, 7, dtype=DT))
""",
    "elementwise_unary": """
class Unary(nn.Module):
    def forward(self, x):
        p = x.abs() + 0.5
        return (torch.exp(x) + torch.log(p) + torch.sqrt(p) + torch.rsqrt(p) + torch.tanh(x)
                + torch.sigmoid(x) + torch.relu(x) + F.silu(x) - x.neg() + p.pow(2) + p ** 0.5)
Unary()(torch.randn(4, 12, dtype=DT))
""",
    "elementwise_binary_broadcast": """
class Binary(nn.Module):
    def forward(self, a, b):
        return (a + b) * (a - b) / (b.abs() + 1) + torch.maximum(a, b) - torch.minimum(a, 2 * b)
Binary()(torch.randn(3, 1, 5, dtype=DT), torch.randn(4, 5, dtype=DT))
""",
    "where_clamp_compare": """
class Select(nn.Module):
    def forward(self, x, y):
        return torch.where(x > y, x, y.clamp(min=-0.5, max=0.5)) + (x <= 0).to(x.dtype)
Select()(torch.randn(6, 7, dtype=DT), torch.randn(6, 7, dtype=DT))
""",
    "reductions": """
class Reductions(nn.Module):
    def forward(self, x):
        return (x.sum(dim=1), x.mean(dim=(0, 2), keepdim=True), x.amax(dim=-1),
                x.amin(dim=0), torch.var(x, dim=2), torch.var(x, dim=1, correction=0))
Reductions()(torch.randn(3, 4, 10, dtype=DT))
""",
    "whole_buffer_reductions": """
class WholeBuffer(nn.Module):
    def forward(self, x):
        return x.sum(), x.amax(), x.amin()
WholeBuffer()(torch.randn(98304, dtype=DT))
""",
    "matmul_bmm": """
class Products(nn.Module):
    def forward(self, a, b, c):
        return torch.matmul(a, b) + torch.bmm(a, c)
Products()(torch.randn(2, 3, 5, dtype=DT), torch.randn(2, 5, 4, dtype=DT),
           torch.randn(2, 5, 4, dtype=DT))
""",
    "embedding": """
class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(20, 8)
    def forward(self, ids):
        return self.table(ids) * 2
Embed().to(DT)(torch.randint(0, 20, (2, 5)))
""",
    "remainder_floor_divide": """
class Rounding(nn.Module):
    def forward(self, n, x):
        ints = (n % 7) + (n // -3) + torch.remainder(n, -5)
        floats = torch.remainder(x, 1.5) + x // 0.7 + torch.div(x, -2.0, rounding_mode="floor")
        truncated = torch.div(n, -3, rounding_mode="trunc")
        return ints, floats, truncated, torch.div(x * 4, 3, rounding_mode="trunc")
Rounding()(torch.randint(-50, 50, (4, 10)), torch.randn(4, 10, dtype=DT))
""",
    "trigonometric_hyperbolic": """
class Trigonometry(nn.Module):
    def forward(self, x, y):
        unit = torch.tanh(x) * 0.875
        circular = (torch.tan(x), torch.atan(x * 3), torch.asin(unit), torch.acos(unit))
        hyperbolic = (torch.sinh(x), torch.cosh(x), torch.asinh(x * 3),
                      torch.acosh(1 + x * x), torch.atanh(unit))
        zeros, other_zeros = x * 0, y * 0
        quadrants = (torch.atan2(x, y), torch.atan2(zeros, y), torch.atan2(zeros, other_zeros),
                     torch.atan2(y, zeros))
        huge, tiny = 2.0**100, 2.0**-100  # their squares overflow, underflow in f32 and bf16
        magnitudes = (torch.hypot(x, y), torch.hypot(x * huge, y * huge),
                      torch.hypot(x * tiny, y * tiny), torch.hypot(x, zeros),
                      torch.hypot(zeros, other_zeros), torch.hypot(x * huge * huge, torch.log(y)),
                      torch.hypot(x, torch.log(y)))
        return circular, hyperbolic, quadrants, magnitudes
Trigonometry()(torch.randn(4, 16, dtype=DT), torch.randn(4, 16, dtype=DT))
""",
    "bitwise_logical": """
class Bits(nn.Module):
    def forward(self, a, b, x, i, j):
        m = (a & b) | (~a ^ (x > 0))
        n = torch.logical_and(x, a).logical_not() | torch.logical_or(x > 1, b)
        k = (i & j) ^ (~i | 5)
        return torch.where(m, x, -x), n, k, torch.logical_xor(i, x)
Bits()(torch.rand(4, 8) > 0.5, torch.rand(4, 8) > 0.5, torch.randn(4, 8, dtype=DT),
       torch.randint(-100, 100, (4, 8)), torch.randint(-100, 100, (8,)))
""",
    "activations_and_predicates": """
class Activations(nn.Module):
    def forward(self, x, low, high):
        shaped = F.leaky_relu(x, 0.1) + F.elu(x, 0.7) + F.selu(x) + F.hardtanh(x, -0.5, 0.8)
        bounded = torch.clamp(x, min=low, max=high) + F.relu6(x * 4) + torch.sign(x)
        logs = x.log()
        flags = torch.stack([(x > 1).any(-1), (x > -2).all(-1), torch.isnan(logs).any(-1)])
        return shaped, bounded, torch.nan_to_num(logs), flags
Activations()(torch.randn(4, 16, dtype=DT), torch.randn(16, dtype=DT) - 1,
              torch.randn(4, 1, dtype=DT) + 1)
""",
    "pads_norms_repeats": """
class Reshaping(nn.Module):
    def forward(self, x, index):
        padded = F.pad(x, (1, 2, -1, 3), value=0.25)
        normed = F.normalize(x, dim=-1) + torch.linalg.vector_norm(x, 1, dim=0)
        variance, mean = torch.var_mean(x, dim=-1, keepdim=True)
        picked = x.index_select(1, index) * x.index_select(0, index[:2]).sum()
        return padded, normed, (x - mean) * variance, x.repeat(2, 1, 3), picked
Reshaping()(torch.randn(16, 16, dtype=DT), torch.tensor([3, 0, 15, 3]))
""",
    "group_norm_max_exp2": """
class Groups(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.GroupNorm(4, 8)
    def forward(self, x):
        top, where = x.max(-1)  # of the input itself: ties fall alike
        return torch.exp2(self.norm(x)) + top.unsqueeze(-1), where, x.min(1).values
Groups().to(DT)(torch.randn(2, 8, 6, dtype=DT))
""",
    "flip_roll_prod": """
class Shuffles(nn.Module):
    def forward(self, x):
        turned = x.flip(0, -1) + torch.roll(x, (2, -3), (0, 1))
        return turned, torch.roll(x, 5), (x * 0.25 + 1).prod(-1), x.prod(0, keepdim=True)
Shuffles()(torch.randn(6, 10, dtype=DT))
""",
    "pooling_and_upsampling": """
class Pools(nn.Module):
    def forward(self, x):
        pooled = F.max_pool2d(x, 3, 2, 1) + F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)
        # ceil_mode's last windows reach past the input and its padding (a ResNet-D shortcut's
        # pooling, the window counts of both count_include_pad)
        ceiled = (F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
                  F.avg_pool2d(x[..., :7], 2, ceil_mode=True, count_include_pad=False),
                  F.max_pool2d(x[..., :7], 2, ceil_mode=True))
        return (F.interpolate(pooled, scale_factor=2), F.avg_pool2d(x, 2), F.max_pool1d(x[0], 2),
                *ceiled)
Pools()(torch.randn(2, 3, 6, 8, dtype=DT))
""",
    "advanced_indexing": """
class Indexing(nn.Module):
    def forward(self, x, i, j):
        last = torch.tensor([-1, 0])  # counted from the end
        return (
            x[:, i] * 2,
            x[i, j[:2]],
            x[:, i, :, j[1:]],
            x[..., j],
            x[i.view(2, 1), j.view(1, 3)],
            x[:, :, i.view(2, 1), j.view(1, 3)],
            x[last, :, last],
        )
Indexing()(torch.randn(4, 5, 6, 7, dtype=DT), torch.randint(0, 4, (2,)), torch.randint(0, 4, (3,)))
""",
    "unfold_and_interpolation": """
class Resample(nn.Module):
    def __init__(self):
        super().__init__()
        self.unfold = nn.Unfold(kernel_size=3, padding=1, stride=2)
    def forward(self, x, y):
        return (
            self.unfold(x),
            F.interpolate(x, scale_factor=2, mode="bilinear"),
            F.interpolate(x, size=(5, 11), mode="bilinear", align_corners=True),
            F.interpolate(y, scale_factor=2, mode="linear"),
        )
Resample()(torch.randn(2, 3, 6, 8, dtype=DT), torch.randn(2, 3, 7, dtype=DT))
""",
    "pool_indices_adaptive_bucketize": """
class Windows(nn.Module):
    def forward(self, x, edges):
        pooled, where = F.max_pool2d(x, 2, return_indices=True)
        return (
            pooled, where, F.max_pool1d(x[0], 3, 2, 1, return_indices=True)[1],
            F.adaptive_avg_pool2d(x, (3, 5)), F.adaptive_avg_pool1d(x[1], 3),
            torch.bucketize(x, edges), torch.bucketize(x, edges, right=True),
        )
Windows()(torch.randn(2, 3, 6, 8, dtype=DT), torch.tensor([-1.0, -0.25, 0.0, 0.5], dtype=DT))
""",
    "bool_arithmetic_batch_statistics": """
class Statistics(nn.Module):
    def __init__(self):
        super().__init__()
        self.instance = nn.InstanceNorm2d(3, affine=True)
        self.batch = nn.BatchNorm1d(4, track_running_stats=False)  # the batch's statistics
        with torch.no_grad():
            for norm in (self.instance, self.batch):
                norm.weight.uniform_(0.5, 2.0)
                norm.bias.uniform_(-1.0, 1.0)
    def forward(self, x, y, a, b):
        # bool * is "and", + and maximum "or", minimum "and"; logaddexp multiplies two bools
        bools = a * b, a + b, torch.maximum(a, b), torch.minimum(a, b)
        # The norms in f32: eager's bf16 kernels round within the norm (emmy's do not), by
        # more than the one bf16 ulp that test_torch_functions allows. Their weights too,
        # which a harness may have cast with the module (CUDA's norms refuse mixed dtypes).
        instance, batch = self.instance, self.batch
        norms = (
            F.instance_norm(x.float(), weight=instance.weight.float(), bias=instance.bias.float()),
            F.batch_norm(y.float(), None, None, batch.weight.float(), batch.bias.float(), True),
        )
        return *norms, *bools, torch.logaddexp(x, x.flip(-1))
Statistics()(torch.randn(2, 3, 5, 6, dtype=DT), torch.randn(3, 4, 7, dtype=DT),
                    torch.rand(4, 5) > 0.5, torch.rand(4, 5) > 0.5)
""",
    "index_add_scatter_add": """
class Accumulate(nn.Module):
    def forward(self, x, i, v, j, w, k, src):
        # Repeated positions add up (index_put's counted from the end too). In f32: eager's
        # bf16 kernels round after each add, by more than the one bf16 ulp that
        # test_torch_functions allows.
        x, v, w, src = x.float(), v.float(), w.float(), src.float()
        return (
            x.index_add(0, i, v), x.index_add(1, j, w, alpha=-2),
            torch.ops.aten.index_put(x, [None, j - 8], w, True),
            torch.zeros(3, 8, device=x.device).scatter_add(0, k, src),
            x.scatter_add(1, k[:5, :4] * 3, x[:, :4]),
        )
Accumulate()(torch.randn(5, 8, dtype=DT), torch.tensor([0, 2, 1, 0, 2, 4, 0]),
             torch.randn(7, 8, dtype=DT), torch.tensor([1, 1, 7, 0]), torch.randn(5, 4, dtype=DT),
             torch.randint(0, 3, (6, 8)), torch.randn(6, 8, dtype=DT))
""",
    "round_decimals": """
class Rounding(nn.Module):
    def forward(self, x):
        # Halves to even after the scaling, in f32 for bf16 (rounded once), as torch's.
        tens, hundreds = torch.round(x * 50, decimals=1), torch.round(x * 500, decimals=-2)
        return tens, hundreds, x.round(decimals=3)
Rounding()(torch.randn(4, 9, dtype=DT))
""",
    "embedding_bags": """
class Bags(nn.Module):
    def __init__(self):
        super().__init__()
        self.sum = nn.EmbeddingBag(10, 4, mode="sum")
        self.mean = nn.EmbeddingBag(10, 4, mode="mean", padding_idx=3)
        self.max = nn.EmbeddingBag(10, 4, mode="max")
    def forward(self, ids, flat, weights):
        offsets = torch.tensor([0, 2, 2, 5], device=ids.device)  # bag 1 is empty
        return (
            self.sum(ids), self.mean(flat, offsets), self.max(flat, offsets),
            self.sum(flat, offsets, per_sample_weights=weights),
            F.embedding_bag(flat, self.sum.weight, torch.tensor([0, 4, 9], device=ids.device),
                            mode="mean", include_last_offset=True),
        )
# In f32: eager's bf16 bags round after each add, by more than the one bf16 ulp that
# test_torch_functions allows.
Bags()(torch.randint(0, 10, (3, 4)), torch.tensor([1, 3, 3, 5, 7, 2, 9, 0, 3]), torch.rand(9))
""",
    "fmod_infinities_matrix_vector": """
class Rest(nn.Module):
    def forward(self, x, y, n, m, v):
        # fmod, % and // near multiples of the divisor (a rounded quotient one off), of an infinite
        # divisor, of integers; where values are infinite; beta * b + alpha * m @ v, in f32
        # (eager's bf16 addmv rounds by more than the one bf16 ulp test_torch_functions allows).
        # steps in f32: eager divides a bf16 tensor by a Python float unrounded, emmy by the
        # float rounded to bf16, which moves multiples of it (a difference of its own).
        steps = torch.arange(-6, 7, dtype=torch.float32) * 0.7
        big = torch.where(x > 1, float("inf"), x).float()
        m, v = m.float(), v.float()
        return (
            torch.fmod(x * 4, 0.7), torch.fmod(x, y), torch.fmod(steps, 0.7),
            torch.remainder(steps, 0.7), torch.remainder(steps, -0.7), torch.remainder(x, y),
            steps // 0.7, steps // -0.7, x // y, torch.div(x, 0.0, rounding_mode="floor"),
            torch.fmod(x, float("inf")), torch.fmod(n, 3), torch.fmod(-n, 4),
            torch.isinf(big), torch.isposinf(big), torch.isneginf(-big), torch.isinf(n),
            torch.logaddexp2(x, y),
            torch.addmv(x[:, 0].float(), m, v), torch.addmv(big[:, 0], m, v, beta=0.5, alpha=-2),
            torch.addmv(big[:, 1], m, v, beta=0),
        )
Rest()(torch.randn(5, 3, dtype=DT), torch.randn(5, 3, dtype=DT) + 3,
       torch.randint(-20, 20, (4,)), torch.randn(5, 6, dtype=DT), torch.randn(6, dtype=DT))
""",
    "unfold_windows": """
class Windows(nn.Module):
    def forward(self, x, image):
        # Overlapping frames of a signal, and an image cut into 4x4 patches (two unfolds).
        frames = x.unfold(-1, 5, 2)
        patches = image.unfold(2, 4, 4).unfold(3, 4, 4)
        return frames * 2, patches.flatten(-2).sum(-1), x.unfold(0, 1, 2)
Windows()(torch.randn(3, 17, dtype=DT), torch.randn(2, 3, 8, 12, dtype=DT))
""",
    "slice_and_entry_writes": """
class Writes(nn.Module):
    def forward(self, x, rows, row):
        # Writes to a slice or an entry of a clone, which export makes functional
        # (slice_scatter, select_scatter, copy), beside the functional forms themselves.
        y = x.clone()
        y[:, 1:4] = rows
        y[-1] = row
        y[0, :2] = 0.5
        return (
            y,
            torch.slice_scatter(x, rows[:, :2], dim=1, start=-3, end=-1),
            torch.select_scatter(x, row * 2, 0, 1),
            torch.slice_scatter(x, x * 3, dim=0),
        )
Writes()(torch.randn(3, 6, dtype=DT), torch.randn(3, 3, dtype=DT), torch.randn(6, dtype=DT))
""",
    "scatter_reductions_uninitialized": """
class Reduce(nn.Module):
    def forward(self, x, index, src, n, nsrc, image):
        # scatter_reduce's every reduction with and without self (a position no index names keeps
        # x's); circular padding and hinge loss, which decompose through torch.empty; erfc's
        # tails; lgamma and digamma of either sign (in f32 and off the integers: bf16's
        # coarse x * 4 may be a pole, NaN in eager), with and without the steps up; erfinv
        # across (-1, 1), within 1e-4 of +-1 (its tail fit; inputs of exactly rounded ops,
        # since a ulp there moves erfinv by 1e-4) and at +-1 and beyond (+-inf, NaN);
        # index_reduce (scatter_reduce of whole slices).
        # Sums and means in f32 (eager's bf16 ones round at each element); no prod in bf16.
        sums = [x.float().scatter_reduce(1, index, src.float(), r, include_self=s)
                for r in ("sum", "mean") for s in (True, False)]
        extremes = [t.scatter_reduce(1, index, u, r, include_self=s)
                    for t, u in ((x, src), (n, nsrc)) for r in ("amax", "amin")
                    for s in (True, False)]
        extremes.append(n.scatter_reduce(1, index, nsrc, "sum", include_self=False))
        return (*sums, *extremes, n[:, :6].scatter_reduce(0, index[:2] % 4, nsrc[:2], "prod"),
                F.pad(image, (1, 2, 2, 1), mode="circular"), F.hinge_embedding_loss(x, x.sign()),
                torch.erfc(x * 3), torch.erfc(image.float().abs() * 4 + 2),
                torch.lgamma(x.float() * 4 + 0.1), torch.digamma(x.float() * 4 + 0.1),
                torch.lgamma(image.float().abs() * 30),
                torch.digamma(src.float().abs() * 30 + 1),
                torch.erfinv(x.float() / (x.float().abs() + 1)),
                torch.erfinv((1 - x.float().abs() * 1e-5) * x.float().sign()),
                torch.erfinv(x.float().clamp(-1, 1).round()), torch.erfinv(x * 2),
                x.index_reduce(0, index[0, :3] % 4, x.flip(0)[:3], "amax"),
                x.float().index_reduce(1, index[1], src.float(), "mean", include_self=False),
                n.index_reduce(0, index[2, :4] % 4, n.flip(1), "prod"))
Reduce()(torch.randn(4, 8, dtype=DT), torch.randint(0, 8, (4, 6)), torch.randn(4, 6, dtype=DT),
         torch.randint(-50, 50, (4, 8)), torch.randint(-9, 9, (4, 6)),
         torch.randn(2, 3, 5, 5, dtype=DT))
""",
    "top_p_sampling": """
class Sampler(nn.Module):
    def forward(self, logits, labels, n):
        # Top-k then top-p (nucleus) filtering as generation loops write it: the sorted
        # probabilities scattered back to their vocabulary places; a one-hot by scatter of a
        # value; a permutation's inverse; integer scatter. Stable sorts in f32, so that ties
        # keep one order (bf16 probabilities tie); no index names a place twice, since
        # torch leaves which write wins there unspecified (its CUDA kernels differ).
        logits = logits.float() / 0.7
        kth = torch.topk(logits, 5).values[:, [-1]]
        logits = logits.masked_fill(logits < kth, float("-inf"))
        probs = logits.softmax(-1)
        ordered, order = torch.sort(probs, descending=True, stable=True)
        kept = ordered * ((ordered.cumsum(-1) - ordered) < 0.9)
        nucleus = torch.zeros_like(probs).scatter(-1, order, kept)
        one_hot = torch.zeros(labels.shape[0], 12, device=labels.device)
        one_hot = one_hot.scatter_(1, labels[:, None], 1.0)
        ranks = torch.arange(order.shape[1], device=order.device).expand_as(order)
        inverse = torch.empty_like(order).scatter_(1, order, ranks)
        return (nucleus / nucleus.sum(-1, keepdim=True), one_hot, inverse,
                n.scatter(0, torch.argsort(n, dim=0, stable=True)[:2], -n[:2]),
                n.scatter(1, torch.argsort(n, dim=1, stable=True)[:, :2], 7))
Sampler()(torch.randn(3, 20, dtype=DT), torch.randint(0, 12, (5,)), torch.randint(-9, 9, (3, 6)))
""",
    "multilabel_margin": """
class Margins(nn.Module):
    def forward(self, x, y):
        # Each row's classes in y's order, the list ended (-1) after as many as its row has
        # positives (one at least): PyTorch's own decomposition counted the slots after the
        # end as class 0. In f32, as eager's bf16 kernel sums in bf16.
        order = torch.argsort(y, dim=-1, descending=True, stable=True)
        count = (y > 0).sum(-1, keepdim=True).clamp_min(1)
        labels = torch.where(torch.arange(y.shape[-1], device=y.device) < count, order, -1)
        x = x.float()
        return (F.multilabel_margin_loss(x, labels, reduction="none"),
                F.multilabel_margin_loss(x, labels),
                nn.MultiLabelMarginLoss(reduction="sum")(x[0], labels[0]))
Margins()(torch.randn(5, 7, dtype=DT), torch.randn(5, 7, dtype=DT))
""",
    "merged_image_embeddings": """
class Merge(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 6)
    def forward(self, ids, features, x):
        # A vision-language model's merge: the image features take the places of the image
        # token's (7) embeddings, in order; masked_scatter of a broadcast mask too.
        embeds = self.embed(ids)
        image = (ids == 7).unsqueeze(-1).expand_as(embeds)
        merged = embeds.masked_scatter(image, features.to(embeds.dtype))
        return merged, x.masked_scatter(x[:1] > 0, -x)
Merge().to(DT)(torch.randint(0, 10, (2, 9)), torch.randn(18, 6, dtype=DT),
               torch.randn(3, 5, dtype=DT))
""",
    "histograms_distances": """
class Statistics(nn.Module):
    def forward(self, x, a, b):
        # histc over the data's range, a given one (with values outside it) and an empty
        # range; cdist at several p; the entries below and above a diagonal; rrelu in eval;
        # nanmedian of rows with NaN in them (none all NaN, whose index torch leaves to its
        # quickselect); the mode of rows with ties (without NaN, which torch's CPU kernel sorts
        # with an order NaN breaks).
        f, a, b = x.float(), a.float(), b.float()
        holes = torch.where(x > 0.8, float("nan"), x)
        holes[:, 0] = torch.arange(x.shape[0], device=x.device) - 9.0
        below, above = torch.tril_indices(4, 6, -1), torch.triu_indices(4, 6, 2)
        return (torch.histc(f, 7), torch.histc(f, 5, -1, 1), torch.histc(f * 0, 4),
                torch.cdist(a, b), torch.cdist(a, b, 1), torch.cdist(a, b, float("inf")),
                torch.cdist(a, b, 0), torch.cdist(a, b, 3), torch.cdist(a[0], b[1]),
                x[below[0], below[1]], x[above[0], above[1]] * 2, F.rrelu(x, 0.1, 0.3),
                torch.nanmedian(holes, 1), torch.nanmedian(holes, 0, keepdim=True).values,
                torch.nanmedian(holes), torch.nanmedian((x * 4).int(), 1).values,
                torch.mode((x * 2).round(), 1), torch.mode((a * 3).int(), 0, keepdim=True),
                torch.dist(a[0], b[0, :5]), torch.dist(a, a.flip(0), 3),
                torch.ldexp(x, (a[0, :4, :1] * 3).int()))
Statistics().eval()(torch.randn(4, 6, dtype=DT), torch.randn(2, 5, 3, dtype=DT),
                    torch.randn(2, 7, 3, dtype=DT))
""",
    "fold_and_pair_writes": """
class Writes(nn.Module):
    def forward(self, patches, x):
        # fold (col2im: sums of overlapping patches, an index_put of two index tensors), and
        # writes and sums at (row, column) pairs, some counted from the end, some repeated
        # where the write is a sum or the same value (which write wins at a repeat is left
        # open by torch, and differs on CUDA); the sums in f32, as eager's bf16 ones round at
        # each term.
        rows = torch.tensor([0, 2, -1, 2], device=x.device)
        cols = torch.tensor([1, 3, 0, 3], device=x.device)
        y = x.clone()
        y[rows[:3], cols[:3]] = x[0, :3] * 2
        z = x.clone()
        z[rows[:, None], cols[None, :2]] += 1.5
        return (F.fold(patches.float(), (5, 6), (3, 2), stride=(2, 1), padding=1), y, z,
                torch.ops.aten.index_put(x.float(), [rows, cols], x[1, :4].float(), True))
Writes()(torch.randn(2, 12, 21, dtype=DT), torch.randn(4, 6, dtype=DT))
""",
    "grid_sample_pooling_3d": """
class Sampling(nn.Module):
    def forward(self, image, grid, volume):
        # grid_sample bilinear and nearest, with zeros and border padding (a spatial transformer's
        # warp; some points outside; bicubic in test_dynamo_backend, as its decomposition rounds
        # apart from eager's kernel by more than the torch level's test allows); 3-D max pooling;
        # adaptive max pooling to sizes that divide the input's and that do not (windows that
        # overlap), to one element, with the positions of the maxima. The samples in f32:
        # eager's bf16 kernel interpolates in f32 and rounds once, its decomposition at every op.
        pooled, where = F.adaptive_max_pool2d(image, (2, 4), return_indices=True)
        f, g = image.float(), grid.float()
        return (F.grid_sample(f, g, align_corners=False),
                F.grid_sample(f, g, mode="nearest", padding_mode="border", align_corners=True),
                F.max_pool3d(volume, 2), F.max_pool3d(volume, (2, 3, 3), stride=1),
                pooled, where, F.adaptive_max_pool2d(image, 1),
                F.adaptive_max_pool2d(image, (3, 5), return_indices=True),
                F.adaptive_max_pool1d(volume[0, 0], 4))
Sampling()(torch.randn(2, 3, 8, 8, dtype=DT), torch.rand(2, 4, 5, 2, dtype=DT) * 2.2 - 1.1,
           torch.randn(1, 2, 4, 6, 6, dtype=DT))
""",
    "bilinear_layer": """
class Pairs(nn.Module):
    def __init__(self):
        super().__init__()
        self.bilinear = nn.Bilinear(6, 5, 3)

    def forward(self, x1, x2):
        # nn.Bilinear (x1^T W x2 + b, aten._trilinear) on batched rows, in f32 (eager's bf16
        # rounds its partial products apart from emmy's f32 sums).
        return self.bilinear(x1.float(), x2.float()), self.bilinear(x1[0].float(), x2[1].float())
Pairs()(torch.randn(2, 4, 6, dtype=DT), torch.randn(2, 4, 5, dtype=DT))
""",
    "bit_shifts": """
class Shifts(nn.Module):
    def forward(self, n, by, packed):
        # Shifts by a negative amount or past the width give 0 (or the sign), as torch's;
        # four 4-bit fields unpacked from each i32, as a quantized weight's are; gcd and lcm
        # of either sign and of zeros, and of i32s up to 2^31.
        nibbles = (packed.unsqueeze(-1) >> torch.tensor([0, 4, 8, 12], device=n.device)) & 0xF
        return (n << by, n >> by, n.int() >> (by.int() % 40), n << 3, nibbles * 1.5,
                torch.gcd(n, by - 10), torch.lcm(n, by), torch.gcd(packed, packed.flip(-1)))
Shifts()(torch.randint(-100, 100, (3, 6)), torch.randint(-2, 70, (3, 6)),
         torch.randint(0, 2**31 - 1, (2, 5), dtype=torch.int32))
""",
    "small_integers": """
class SmallIntegers(nn.Module):
    # int8 and int16 wrap as torch's do (products, sums kept in 8 bits; no int8 matmul,
    # which eager CUDA does not have);
    # shifts by amounts past the width; floor division and remainder of either sign; an
    # int8 weight dequantized by a per-row scale into a linear, as weight-only quantization
    # runs it.
    def forward(self, a, b, by, h, w, scale, x):
        nonzero = torch.where(b == 0, torch.ones_like(b), b)
        return (
            a * b, a + b - 100, a.sum(-1), a.amax(-1), a.argmin(-1),
            a.sort(-1).values, a.cumsum(-1), a << by, a >> by, a // nonzero, a % nonzero,
            torch.where(a > b, a, -b), a.clamp(-20, 20), h * 3 + 30000, (h >> 3) & 0x0F0F,
            h.float() / 7, a.to(torch.int16) * 300,
            F.linear(x, w.to(DT) * scale.to(DT)),
        )
SmallIntegers()(
    torch.randint(-128, 128, (3, 16), dtype=torch.int8),
    torch.randint(-128, 128, (3, 16), dtype=torch.int8),
    torch.randint(0, 12, (3, 16), dtype=torch.int8),
    torch.randint(-32768, 32768, (4, 5), dtype=torch.int16),
    torch.randint(-127, 128, (24, 16), dtype=torch.int8),
    torch.rand(24, 1) / 64,
    torch.randn(5, 16, dtype=DT),
)
""",
    "searchsorted": """
class Search(nn.Module):
    def forward(self, edges, x, rows, ids):
        # Sorted here: the random inputs the corpus draws are not. NaN goes after every edge.
        edges, rows = edges.sort().values, rows.sort(-1).values
        y = torch.where(x > 1.5, float("nan"), x)
        return (
            torch.searchsorted(edges, y), torch.searchsorted(edges, y, right=True),
            torch.searchsorted(rows, x[:3, :2].contiguous(), side="right"),
            torch.searchsorted(
                ids.sort().values, torch.tensor([[3, 9], [0, 4]], device=ids.device),
                out_int32=True,
            ),
        )
Search()(torch.randn(6, dtype=DT), torch.randn(4, 5, dtype=DT), torch.randn(3, 7, dtype=DT),
         torch.randint(0, 10, (8,)))
""",
    "block_diagonal": """
class BlockDiagonal(nn.Module):
    # block_diag pads each block with zeros of no width at the edges: cats of empty inputs.
    def forward(self, a, b, c):
        return torch.block_diag(a, b, c), torch.cat([a[:, :0], b[:2]], 1)
BlockDiagonal()(
    torch.randn(2, 3, dtype=DT), torch.randn(3, 2, dtype=DT), torch.randn(1, 4, dtype=DT)
)
""",
    "signs": """
class Signs(nn.Module):
    # Zeros of both signs and NaN: copysign and signbit read the sign bit itself.
    def forward(self, x, y, n):
        z = torch.where(x.abs() < 0.3, x * 0.0, x)
        z = torch.where(x > 1.5, float("nan"), z)
        return (
            torch.copysign(y, z), torch.copysign(n, -2.0), torch.signbit(z), torch.signbit(n),
            torch.nan_to_num(torch.angle(z.float()), 9.0), torch.angle(n),
            torch.signbit(torch.copysign(y * 0.0, z)),
        )
Signs()(torch.randn(6, 5, dtype=DT), torch.randn(6, 5, dtype=DT), torch.randint(-5, 5, (5,)))
""",
    "complex_rotary": """
def rotary_table(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    return torch.polar(torch.ones(end, dim // 2), torch.outer(torch.arange(end).float(), freqs))


class Rotary(nn.Module):
    # Meta's Llama: rotary embeddings as complex products, with a complex buffer.
    def __init__(self, head_dim, max_seq_len):
        super().__init__()
        self.register_buffer("freqs_cis", rotary_table(head_dim, max_seq_len), persistent=False)

    def forward(self, xq, xk):
        seq = xq.shape[1]
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        freqs_cis = self.freqs_cis[:seq].view(1, seq, 1, xq_.shape[-1])
        xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
        xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)
Rotary(16, 32)(torch.randn(2, 8, 4, 16, dtype=DT), torch.randn(2, 8, 2, 16, dtype=DT))
""",
    "complex_arithmetic": """
class ComplexArithmetic(nn.Module):
    def forward(self, x, angle, z):
        c = torch.polar(x.float().abs() + 0.5, angle.float())
        d = torch.complex(x.float(), angle.float() * 2)
        e = (c * d).conj() / (d + 1j) - 0.5 * z + 2
        f = torch.cat([e, c.transpose(0, 1).flip(0).transpose(0, 1)], 0).unsqueeze(0)
        g = torch.exp(e * 0.25) - f.permute(1, 0, 2).squeeze(1)[2:6] + f[0, :4, 1:3].mean(1, True)
        h = (g / x.float().abs().clamp(min=0.5) * 3j).sum(1, keepdim=True) + z.real
        parts = torch.view_as_real(torch.stack([g, g.new_ones(()) - h]))
        return g.real.to(DT), g.imag, g.abs(), d.angle(), parts.flatten(-2).to(DT), h.imag
ComplexArithmetic()(torch.randn(4, 6, dtype=DT), torch.randn(4, 6, dtype=DT),
                    torch.randn(4, 6, dtype=torch.complex64))
""",
    "running_extremes": """
class RunningExtremes(nn.Module):
    def forward(self, x, n):
        # Ties (rounded inputs) take their last place; NaN, once met, stays, at its last place.
        rounded = (x * 4).round() / 4
        y = torch.where(x > 1.2, float("nan"), rounded)
        ahead, low = torch.cummax(y, 1), torch.cummin(rounded, 0)
        whole = torch.cummin(n, -1)
        return (
            torch.nan_to_num(ahead.values, nan=8.0), ahead.indices, *low, *whole,
            torch.cummax(x[0, 0], 0).values,
            # -inf (a prefix of only -inf stays -inf), +inf, and large values (their max is
            # taken out first)
            torch.logcumsumexp(torch.where(rounded > 1.0, float("-inf"), x * 30), 1),
            torch.logcumsumexp(torch.where(x < -2.0, float("inf"), x), 0),
        )
RunningExtremes()(torch.randn(3, 6, 5, dtype=DT), torch.randint(-3, 3, (4, 7)))
""",
    "sort_topk": """
class Sorts(nn.Module):
    def forward(self, x, n):
        y = torch.where(x > 1.0, float("nan"), x)  # NaN orders above every number
        ascending, order = torch.sort(y, dim=1, stable=True)
        top, where = torch.topk(x, 3)
        low, at = torch.topk(x, 2, dim=0, largest=False)
        # Through gather, so that ties (a bf16 row may hold two equal values) may fall in any
        # order, as topk and an unstable sort leave them. The NaNs come out as 8.0: a
        # program whose output holds NaN is not checked on the GPU (see bench_program).
        return (
            torch.nan_to_num(ascending, nan=8.0), order,
            torch.nan_to_num(torch.sort(y, dim=-1, descending=True)[0], nan=8.0), top,
            x.gather(-1, where), low, x.gather(0, at), x.gather(-1, torch.argsort(x, dim=-1)),
            torch.sort(n, dim=-1, descending=True, stable=True),
        )
Sorts()(torch.randn(4, 6, 5, dtype=DT), torch.randint(-3, 3, (3, 7)))
""",
    "median_kthvalue": """
class Selections(nn.Module):
    def forward(self, x, n):
        y = torch.where(x > 1.0, float("nan"), x)  # NaN orders above every number
        middle, at = torch.median(x, dim=1)  # 6 elements: the lower of the middle two
        second, where = torch.kthvalue(x, 2, dim=-1, keepdim=True)
        with_nan, nan_at = torch.median(y, dim=-1, keepdim=True)  # NaN, at a row's first NaN
        high, high_at = torch.kthvalue(y, 4, 0)
        # Indices through gather, so that ties (a bf16 row may hold two equal values) may
        # fall in any order, as torch's quickselect leaves them; but the first NaN's place is
        # exact. The NaNs come out as 8.0: a program whose output holds NaN is not checked on
        # the GPU (see bench_program).
        return (
            middle, x.gather(1, at.unsqueeze(1)), second, x.gather(-1, where),
            torch.nan_to_num(with_nan, nan=8.0), torch.where(with_nan.isnan(), nan_at, -1),
            torch.nan_to_num(y.gather(-1, nan_at), nan=8.0), torch.nan_to_num(high, nan=8.0),
            torch.nan_to_num(y.gather(0, high_at.unsqueeze(0)), nan=8.0),
            torch.median(x), torch.nan_to_num(torch.median(y), nan=8.0),
            torch.median(n, -1).values, torch.kthvalue(n, 5, 0, keepdim=True).values,
        )
Selections()(torch.randn(4, 6, 5, dtype=DT), torch.randint(-3, 3, (7, 8)))
""",
    "diagonal": """
class Diagonals(nn.Module):
    def forward(self, x, m, z):
        return (
            torch.diagonal(x, 1, 0, 2), torch.diagonal(x, -2, 2, 1), x.diagonal(), m.diag(),
            m.diag(-1), m.t().diag(3), torch.trace(m), torch.diagonal(z, 1, -1, 1) * 2,
        )
Diagonals()(torch.randn(3, 4, 5, dtype=DT), torch.randn(4, 6, dtype=DT),
            torch.randn(2, 3, 4, 5, dtype=DT))
""",
    "batch_norm_eval": """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(8)
        self.bn2 = nn.BatchNorm2d(3, affine=False)
        with torch.no_grad():
            self.bn.running_mean.normal_()
            self.bn.running_var.uniform_(0.5, 2)
            self.bn.weight.normal_()
            self.bn.bias.normal_()
    def forward(self, x, y):
        return self.bn(x), self.bn2(y)
M().to(DT)(torch.randn(5, 8, 7, dtype=DT), torch.randn(2, 3, 4, 5, dtype=DT))
""",
    "gather": """
class Gather(nn.Module):
    def forward(self, x, i, j):
        rows = torch.gather(x, 1, i)
        return rows, torch.gather(x, 0, j) * 2, torch.gather(x[:, :, 0], -1, i[:, :, 1])
Gather()(torch.randn(4, 6, 3, dtype=DT), torch.randint(0, 6, (4, 5, 3)),
         torch.randint(0, 4, (2, 6, 2)))
""",
    "argmax_argmin": """
class Arg(nn.Module):
    def forward(self, x):
        y = torch.where(x > 1.5, float("nan"), x)
        ties = (x > 0).to(x.dtype).argmax()
        return x.argmax(dim=1), x.argmin(dim=-1, keepdim=True), y.argmax(0), ties, x.argmin()
Arg()(torch.randn(4, 6, 3, dtype=DT))
""",
    "convolutions": """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 6, 3, padding=1)
        self.c2 = nn.Conv2d(3, 5, (3, 2), (2, 1), padding=(1, 0), dilation=(1, 2), bias=False)
    def forward(self, x, y):
        return self.c1(x), torch.relu(self.c2(y))
M().to(DT)(torch.randn(2, 4, 12, dtype=DT), torch.randn(2, 3, 9, 8, dtype=DT))
""",
    "grouped_and_transposed_convolutions": """
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.depthwise = nn.Conv1d(6, 6, 4, padding=3, groups=6)
        self.grouped = nn.Conv2d(4, 6, 3, stride=2, groups=2)
        self.up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.up1d = nn.ConvTranspose1d(6, 3, 4, stride=3, padding=2, dilation=2, bias=False)
    def forward(self, x, y):
        return self.depthwise(x)[..., :-3], self.grouped(y), self.up(y), self.up1d(x)
M().to(DT)(torch.randn(2, 6, 10, dtype=DT), torch.randn(2, 4, 7, 6, dtype=DT))
""",
    "index_rows": """
class Rows(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(10, 3, 4))
    def forward(self, x, positions):
        return x * self.table.to(x.dtype)[positions]
Rows().to(DT)(torch.randn(5, 3, 4, dtype=DT), torch.randint(0, 10, (5,)))
""",
    "cumsum_cumprod": """
class Running(nn.Module):
    def forward(self, x, n):
        p = torch.cumprod(1 + 0.1 * torch.tanh(x), 0)
        return torch.cumsum(x, dim=-1), p, n.cumsum(1), (n > 0).cumsum(0), x.cumsum(1)[:, 5]
Running()(torch.randn(4, 37, 3, dtype=DT), torch.randint(-9, 9, (3, 64), dtype=torch.int32))
""",
    "index_copy_put": """
class Update(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pos", torch.tensor([5, 1, 6]))
        self.register_buffer("rows", torch.tensor([[2, -1], [0, 3]]))
    def forward(self, cache, new, table, row):
        k = cache.index_copy(2, self.pos, new)
        v = torch.ops.aten.index_put(cache, [None, None, self.pos], new[:, :, :1] * 2)
        return k, v + 1, torch.ops.aten.index_put(table, [self.rows], row)
Update()(torch.randn(1, 2, 8, 4, dtype=DT), torch.randn(1, 2, 3, 4, dtype=DT),
         torch.randn(5, 3, dtype=DT), torch.randn(3, dtype=DT))
""",
    "rounding_and_transcendental": """
class M(nn.Module):
    def forward(self, x):
        y = x * 3
        return (torch.floor(y) + torch.ceil(y) + torch.round(y) + torch.trunc(y),
                torch.sin(x) * torch.cos(x) + torch.erf(x),
                torch.log1p(x.abs()) + torch.expm1(x) + torch.log2(x.abs() + 1))
M()(torch.randn(4, 33, dtype=DT))
""",
    "views": """
class Views(nn.Module):
    def forward(self, x):
        a = x.reshape(4, 6).transpose(0, 1).unsqueeze(0)
        b = x.permute(2, 0, 1).reshape(1, 6, 4)
        c = x[:, 1:3, ::3].squeeze(0).expand(2, 2, 2)
        return a + b, c.sum(0)
Views()(torch.randn(1, 4, 6, dtype=DT))
""",
    "cat_slice": """
class CatSlice(nn.Module):
    def forward(self, x, y):
        return torch.cat([x[:, :3], y, x[:, 5:]], dim=1)
CatSlice()(torch.randn(4, 8, dtype=DT), torch.randn(4, 2, dtype=DT))
""",
    "to_dtype": """
class Casts(nn.Module):
    def forward(self, x):
        return x.to(torch.bfloat16).to(torch.float32) * 3, x.to(torch.float16)
Casts()(torch.randn(5, 6, dtype=DT))
""",
    "constants": """
class Constants(nn.Module):
    def forward(self, x):
        return x * torch.ones(4, dtype=x.dtype) + torch.arange(4, dtype=x.dtype) - 1.5
Constants()(torch.randn(3, 4, dtype=DT))
""",
    "residual_rms_norm": """
class ResidualNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(32)
    def forward(self, x, residual):
        h = x + residual
        return self.norm(h), h
ResidualNorm().to(DT)(torch.randn(4, 32, dtype=DT), torch.randn(4, 32, dtype=DT))
""",
    "layer_norm_linear": """
class NormLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm, self.proj = nn.LayerNorm(16), nn.Linear(16, 8)
    def forward(self, x):
        return torch.relu(self.proj(self.norm(x)))
NormLinear().to(DT)(torch.randn(2, 4, 16, dtype=DT))
""",
    "softmax_attention_by_hand": """
class ManualAttention(nn.Module):
    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1) / 4.0
        return torch.softmax(scores, dim=-1) @ v
ManualAttention()(torch.randn(2, 6, 16, dtype=DT), torch.randn(2, 6, 16, dtype=DT),
                  torch.randn(2, 6, 16, dtype=DT))
""",
    "two_layer_norms_shared_input": """
class TwoNorms(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.LayerNorm(12), nn.RMSNorm(12)
    def forward(self, x):
        return self.a(x) * self.b(x)
TwoNorms().to(DT)(torch.randn(5, 12, dtype=DT))
""",
    "llama_decoder_layer": LLAMA_LAYER,
    "llama_gqa_decoder_layer": LLAMA_GQA_LAYER,
}


class FunctionModule(nn.Module):
    """A module whose forward is `function`, for exporting a function of tensors."""

    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *inputs):
        return self.function(*inputs)


def assert_every_level_matches_eager(program, torch_ir, seed: int) -> None:
    """Every executable level of `program` (`torch_ir` its Torch IR) gives eager's outputs on
    fresh inputs drawn from `seed`, else the first level that disagrees is named."""
    reports = check_levels(program, torch_ir, EXECUTABLE_LEVELS, seed=seed)
    failed = [r for r in reports if not r.passed]
    assert not failed, "first level to disagree with eager: " + ", ".join(
        f"{r.level} (max abs {r.max_abs_error:.3g}, max rel {r.max_rel_error:.3g})" for r in failed
    )


def fresh_like(example: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A random tensor of the example's shape and dtype: standard normal floats (and complex
    numbers), integers in the example's range (so indices stay valid), random booleans."""
    if example.dtype.is_floating_point:
        return torch.randn(example.shape, generator=generator).to(example.dtype)
    if example.dtype.is_complex:
        return torch.randn(example.shape, generator=generator, dtype=example.dtype)
    if example.dtype == torch.bool:
        return torch.rand(example.shape, generator=generator) < 0.5
    low, high = int(example.min()), int(example.max()) + 1
    return torch.randint(low, high, example.shape, generator=generator, dtype=example.dtype)


def with_dtype(program: str, dtype: str) -> str:
    """A program text with its dtype placeholder `DT` set to `torch.<dtype>`."""
    return program.replace("DT", f"torch.{dtype}")


def source(name: str, dtype: str) -> str:
    """The program `name` with its dtype placeholder set to `torch.<dtype>`."""
    return with_dtype(PROGRAMS[name], dtype)


ATTENTION_FORMS: dict[str, tuple] = {
    "sdpa": ("sdpa", 2, 4, 4, 300, 300, 128, False),
    "causal": ("sdpa", 2, 4, 4, 300, 300, 128, True),
    "gqa": ("sdpa", 1, 8, 2, 256, 256, 64, True),
    "q_len<kv_len": ("sdpa", 1, 4, 4, 100, 700, 64, True),
    "decode": ("sdpa", 4, 8, 8, 1, 3000, 128, False),
    "decode_gqa": ("sdpa", 2, 8, 2, 5, 1000, 64, False),
    "hand_written": ("hand_written", 2, 4, 4, 200, 200, 64, False),
    "masked_gqa": ("sdpa_masked", 1, 8, 2, 200, 260, 64, False),
}
"""`emmy.tools.bench.suites.attention_case`'s arguments for the attention suite's forms at
small sizes with tails: (program, batch, heads, kv_heads, q_len, kv_len, head_dim, causal)."""
