class Middle(nn.Module):
    def forward(self, x):
        return torch.mode(x, dim=0).values

Middle()(torch.randn(4, 3))
