class M(nn.Module):
    def forward(self, x):
        a = torch.cummax(x, 0).values
        b = torch.median(x, 1, keepdim=True).values * 2
        c = a + b + torch.relu(x)
        return c, torch.kthvalue(x, 2).values
M()(torch.randn(4, 5))
