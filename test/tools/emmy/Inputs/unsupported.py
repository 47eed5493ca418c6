class TopTwo(nn.Module):
    def forward(self, x):
        return torch.topk(x, 2, dim=0).values

TopTwo()(torch.randn(4, 3))
