"""One rank of a small hybrid-parallel job for the record-and-scale check
(test_record_and_scale.py): tensor-parallel pairs of consecutive ranks and data-parallel
groups across them, as Megatron places them, on the nbox backend over the plain TCP plugin.
With NBOX_PROFILE_TRACE set, the host runtime records every collective of every group.

    rank_hybrid.py RANK WORLD INIT_METHOD ITERATIONS

Per iteration: 20 ms of compute (a timed wait), an all-reduce of 64 KiB in the rank's tensor
pair, an all-reduce of 256 KiB and an all-gather into 128 KiB in its data-parallel group (small,
so that eight ranks on two cores spend little CPU time on them).
"""

import sys
import time

import torch
import torch.distributed as dist

import nbox_torch  # noqa: F401  (registers the backend)

rank, world, init_method, iterations = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], \
    int(sys.argv[4])
TENSOR = 2
dist.init_process_group("nbox", init_method=init_method, rank=rank, world_size=world)
# Every rank creates every group, in the same order (torch.distributed requires it).
tensor_groups = [dist.new_group(list(range(first, first + TENSOR)))
                 for first in range(0, world, TENSOR)]
data_groups = [dist.new_group(list(range(place, world, TENSOR))) for place in range(TENSOR)]
tensor_group = tensor_groups[rank // TENSOR]
data_group = data_groups[rank % TENSOR]
data_ranks = world // TENSOR

activations = torch.ones(16 * 1024)
gradients = torch.ones(64 * 1024)
shard = torch.ones(32 * 1024 // data_ranks)
gathered = torch.empty(32 * 1024)
for _ in range(iterations):
    time.sleep(0.02)
    dist.all_reduce(activations, group=tensor_group)
    dist.all_reduce(gradients, group=data_group)
    dist.all_gather_into_tensor(gathered, shard, group=data_group)
dist.barrier()
dist.destroy_process_group()
