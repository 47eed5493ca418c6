class M(nn.Module):
    def forward(self, x):
        a = torch.cummax(x, 0).values
        b = torch.sort(x).values * 2
        c = a + b + torch.relu(x)
        return c, torch.topk(x, 2).values
M()(torch.randn(4, 5))
