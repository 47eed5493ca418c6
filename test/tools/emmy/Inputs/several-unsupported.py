class M(nn.Module):
    def forward(self, x):
        a = torch.nanmedian(x, 0).values
        b = torch.mode(x, 1, keepdim=True).values * 2
        c = a + b + torch.relu(x)
        return c, torch.nanmedian(x, 1).values
M()(torch.randn(4, 5))
