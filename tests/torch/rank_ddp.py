"""One rank of the DDP check (test_against_gloo.py): trains a small MLP with
DistributedDataParallel (its bucketed, overlapped gradient all-reduce) for a few steps on
synthetic data, the same seed on every backend, and saves rank 0's losses and the final
parameters.

    rank_ddp.py BACKEND RANK WORLD INIT_METHOD OUT_FILE
"""

import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

backend, rank, world, init_method, out_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    sys.argv[4], sys.argv[5]
if backend == "nbox":
    import nbox_torch  # noqa: F401
dist.init_process_group(backend, init_method=init_method, rank=rank, world_size=world)
torch.manual_seed(1234)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                            torch.nn.ReLU(), torch.nn.Linear(64, 4))
# Small buckets, so one backward pass launches several all-reduces that overlap it.
ddp = DistributedDataParallel(model, bucket_cap_mb=0.01)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
generator = torch.Generator().manual_seed(99 + rank)
losses = []
for step in range(5):
    x = torch.randn(16, 32, generator=generator)
    y = torch.randint(0, 4, (16,), generator=generator)
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(ddp(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
torch.save({"losses": torch.tensor(losses),
            "parameters": [p.detach().clone() for p in model.parameters()]}, out_file)
dist.destroy_process_group()
