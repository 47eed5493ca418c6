class Middle(nn.Module):
    def forward(self, x):
        return torch.erfinv(x)

Middle()(torch.randn(4, 3))
