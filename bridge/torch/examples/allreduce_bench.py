"""allreduce_bench.py: the PyTorch twin of nbox_allreduce_bench, for the fidelity check with
PyTorch ranks (tools/fidelity/nbox-fidelity --job torch).

Each iteration waits --compute-us microseconds (a timed wait on the wall clock: a stand-in for
compute that does not depend on how many processes share the CPU), then all-reduces --bytes of
float32 with torch.distributed. Iterations are timed on the rank's clock (the nbox backend's
virtual_time_ns: virtual time under nbox-cosim, the wall clock otherwise). Rank 0 prints
ITERATIONS_US with the timed iterations, as nbox_allreduce_bench does.

    python3 -m nbox_torch.run allreduce_bench.py --bytes 1048576 --iters 20 --warmup 4
"""

import argparse
import time

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bytes", type=int, default=1 << 20)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--compute-us", type=float, default=0)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    group = c10d._get_default_group()
    clock = getattr(group, "virtual_time_ns", None) or time.monotonic_ns
    data = torch.ones(args.bytes // 4)
    times = []
    for iteration in range(args.warmup + args.iters):
        start = clock()
        if args.compute_us > 0:
            deadline = time.monotonic() + args.compute_us * 1e-6
            while time.monotonic() < deadline:
                time.sleep(max(0.0, deadline - time.monotonic()))
        dist.all_reduce(data)
        if iteration >= args.warmup:
            times.append((clock() - start) / 1e3)
    if dist.get_rank() == 0:
        print("ITERATIONS_US " + " ".join(f"{t:.1f}" for t in times), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
