class Middle(nn.Module):
    def forward(self, x):
        return torch.special.ndtri(x)

Middle()(torch.randn(4, 3))
