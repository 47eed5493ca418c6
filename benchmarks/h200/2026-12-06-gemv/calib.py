"""The harness's floor and the L2 flush: an empty kernel, and reading (amax) or copying buffers
of 8 to 512 MB, each timed after the harness's flush (zeroing 256 MB: dirty lines) and after a
flush by reading (clean lines).

    PYTHONPATH=benchmarks/h200/2026-12-06-gemv python3 benchmarks/h200/2026-12-06-gemv/calib.py
"""

import torch
from gemv_proto import both

COPY_GBPS = 4254  # the device copy bandwidth this H200 measured in the same session

empty = torch.empty(1, device="cuda")
print("empty kernel (fill_ 1 elt):", both(lambda: empty.fill_(1.0)))
for mb in (8, 32, 64, 128, 512):
    a = torch.randn(mb << 19, device="cuda", dtype=torch.bfloat16)
    b = torch.empty_like(a)
    floor = (mb << 20) / (COPY_GBPS * 1e3)
    d, c = both(lambda: torch.amax(a))
    print(
        f"amax {mb} MB: dirty {d:.2f} clean {c:.2f} us; floor {floor:.2f}  clean frac {floor / c:.2f}"
    )
    d, c = both(lambda: b.copy_(a))
    print(
        f"copy {mb} MB: dirty {d:.2f} clean {c:.2f} us; floor {2 * floor:.2f}  clean frac {2 * floor / c:.2f}"
    )
