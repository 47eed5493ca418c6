"""emmy from Python: `emmy.compile` on a module, and `torch.compile(backend="emmy")`."""

import warnings

import torch
import torch.nn as nn

import emmy


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.RMSNorm(dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.proj(self.norm(x)))


block = Block(64).eval()
x = torch.randn(8, 64)

compiled = emmy.compile(block, x)  # CUDA tensors run emmy's kernels; CPU ones the interpreter
print("emmy.compile matches eager:", torch.allclose(compiled(x), block(x), atol=1e-5))
print(compiled.ir("tile").splitlines()[1][:72])

model = torch.compile(block, backend="emmy")
with torch.no_grad(), warnings.catch_warnings(record=True) as fell_back:
    warnings.simplefilter("always")
    y = model(x)
    middle = torch.compile(lambda t: torch.i0(torch.relu(t)), backend="emmy")(x)
print("torch.compile matches eager:", torch.allclose(y, block(x), atol=1e-5))
print(fell_back[-1].message)
