"""One rank of a 4-rank job with Megatron's groups for tensor parallelism 2: tensor pairs of
consecutive ranks ([0, 1], [2, 3]) and data-parallel groups across them ([0, 2], [1, 3]), made
with torch.distributed.new_group on the nbox backend, each collective's result checked against
a closed form of the ranks' inputs (test_cosim_groups.py runs it).

    rank_groups.py RANK WORLD INIT_METHOD ITERATIONS real|self

real: every rank is a real process (the plain TCP plugin); self: a real rank of nbox-cosim with
payload = self, whose emulated peers hold its own data, so each member's input is this rank's.
Per iteration: 10 ms of compute (a timed wait), an all-reduce of 4 KiB on the world, one of
16 KiB in the rank's tensor pair, and in its data-parallel group an all-reduce of 64 KiB and an
all-gather into 32 KiB. Prints "FAIL ..." for every wrong result and exits 1 if there was one.
"""

import sys
import time

import torch
import torch.distributed as dist

import nbox_torch  # noqa: F401  (registers the backend)

rank, world, init_method, iterations, payload = int(sys.argv[1]), int(sys.argv[2]), \
    sys.argv[3], int(sys.argv[4]), sys.argv[5]
TENSOR = 2
dist.init_process_group("nbox", init_method=init_method, rank=rank, world_size=world)
# Every rank creates every group, in the same order (torch.distributed requires it).
tensor_groups = [dist.new_group(list(range(first, first + TENSOR)))
                 for first in range(0, world, TENSOR)]
data_groups = [dist.new_group(list(range(place, world, TENSOR))) for place in range(TENSOR)]
tensor_members = list(range(rank - rank % TENSOR, rank - rank % TENSOR + TENSOR))
data_members = list(range(rank % TENSOR, world, TENSOR))


def value(member):
    """Member's input: its rank + 1, or this rank's where the peers hold this rank's data."""
    return float((rank if payload == "self" else member) + 1)


failures = 0


def check(what, got, want):
    global failures
    if not torch.equal(got, want):
        failures += 1
        print(f"FAIL rank {rank} {what}: got {got[:4].tolist()}..., want {want[:4].tolist()}...",
              flush=True)


for _ in range(iterations):
    time.sleep(0.01)
    everyone = torch.full((1024,), value(rank))
    dist.all_reduce(everyone)
    check("world all-reduce", everyone, torch.full((1024,), sum(value(m) for m in range(world))))
    pair = torch.full((4 * 1024,), value(rank))
    dist.all_reduce(pair, group=tensor_groups[rank // TENSOR])
    check("tensor all-reduce", pair, torch.full((4 * 1024,), sum(map(value, tensor_members))))
    gradients = torch.full((16 * 1024,), value(rank))
    dist.all_reduce(gradients, group=data_groups[rank % TENSOR])
    check("data all-reduce", gradients,
          torch.full((16 * 1024,), sum(map(value, data_members))))
    shard = torch.full((8 * 1024 // len(data_members),), value(rank))
    gathered = torch.empty(8 * 1024)
    dist.all_gather_into_tensor(gathered, shard, group=data_groups[rank % TENSOR])
    check("data all-gather", gathered,
          torch.cat([torch.full_like(shard, value(m)) for m in data_members]))
dist.barrier()
dist.destroy_process_group()
sys.exit(1 if failures else 0)
