class M(nn.Module):
    def forward(self, x):
        a = torch.special.ndtri(x).sum(0)
        b = torch.i0(x) * 2
        c = a + b + torch.relu(x)
        return c, torch.special.ndtri(x).sum(1)
M()(torch.randn(4, 5))
