"""A rank that computes while its all-reduce travels: its clock must run through the compute
(bridge/torch/program_waits.h). Posts an asynchronous all-reduce, computes for COMPUTE_S of
wall time without calling torch.distributed, then waits; prints how far the rank's clock moved
during the compute and whether the all-reduce was still in flight at its end, then the same for
a backward pass whose gradient hook posts the all-reduce (the end-of-backward wait must end at
the next call)."""
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

COMPUTE_S = 0.2
ELEMENTS = 1 << 20  # 4 MiB of float32

dist.init_process_group("gloo")
group = c10d._get_default_group()


def compute(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def measured(post):
    work = post()
    before = group.virtual_time_ns()
    compute(COMPUTE_S)
    advanced = group.virtual_time_ns() - before
    in_flight = not work.is_completed()
    work.wait()
    return advanced, in_flight


advanced, in_flight = measured(lambda: dist.all_reduce(torch.ones(ELEMENTS), async_op=True))
print(f"COMPUTING advanced_ns {advanced} in_flight {int(in_flight)}", flush=True)

# A backward pass whose hook posts an all-reduce: at its end the program counts as waiting
# until its next call; this one comes at once and is then computed over.
weight = torch.ones(ELEMENTS, requires_grad=True)
posted = []
weight.register_hook(lambda grad: posted.append(dist.all_reduce(torch.ones(ELEMENTS),
                                                                async_op=True)) or grad)
(weight * 2).sum().backward()
advanced, in_flight = measured(lambda: dist.all_reduce(torch.ones(ELEMENTS), async_op=True))
posted[0].wait()
print(f"AFTER_BACKWARD advanced_ns {advanced} in_flight {int(in_flight)}", flush=True)
dist.barrier()
sys.exit(0)
