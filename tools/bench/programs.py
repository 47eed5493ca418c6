"""PyTorch programs shared by the benchmark suites and the differential corpus, as
`emmy compile -c` sources (torch, nn and F predefined): the pieces of a Llama-style decoder
layer.

    MLP(dim, hidden)(x)                      # SwiGLU: down(silu(gate(x)) * up(x))
    DecoderLayer(dim, heads, hidden, seq)(x) # RMSNorm, rotary attention, RMSNorm, MLP
"""

ROTARY_ATTENTION = """
class Attention(nn.Module):
    def __init__(self, dim, heads, seq):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        position = torch.arange(seq).float()[:, None]
        frequency = 1.0 / 10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim)
        angles = torch.cat([position * frequency, position * frequency], dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())

    def rotate(self, x):
        half = x.shape[-1] // 2
        rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * self.cos + rotated * self.sin

    def forward(self, x):
        b, s, d = x.shape
        q = self.q(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        y = F.scaled_dot_product_attention(self.rotate(q), self.rotate(k), v, is_causal=True)
        return self.o(y.transpose(1, 2).reshape(b, s, d))
"""

SWIGLU_MLP = """
class MLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))
"""
"""A SwiGLU MLP: `MLP(dim, hidden)`, gate and up (dim -> hidden) sharing their input, down
taking hidden back to dim."""

SWIGLU_DECODER_LAYER = (
    SWIGLU_MLP
    + """
class DecoderLayer(nn.Module):
    def __init__(self, dim=32, heads=4, hidden=64, seq=8):
        super().__init__()
        self.attention_norm = nn.RMSNorm(dim, eps=1e-5)
        self.attention = Attention(dim, heads, seq)
        self.mlp_norm = nn.RMSNorm(dim, eps=1e-5)
        self.mlp = MLP(dim, hidden)

    def forward(self, x):
        h = x + self.attention(self.attention_norm(x))
        return h + self.mlp(self.mlp_norm(h))
"""
)
"""An RMSNorm-attention-RMSNorm-SwiGLU decoder block around whichever `Attention` class
the program defines before it: `DecoderLayer(dim, heads, hidden, seq)`."""
