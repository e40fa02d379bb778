"""One rank of the operations check (test_against_gloo.py runs W of them per backend).

    rank_ops.py BACKEND RANK WORLD INIT_METHOD OUT_FILE

Runs every torch.distributed operation the nbox backend supports on deterministic inputs
whose results are exact in floating point (small integers), and saves the results with
torch.save, so two backends' files can be compared exactly.
"""

import sys

import torch
import torch.distributed as dist

backend, rank, world, init_method, out_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    sys.argv[4], sys.argv[5]
if backend == "nbox":
    import nbox_torch  # noqa: F401  (registers the backend)
dist.init_process_group(backend, init_method=init_method, rank=rank, world_size=world)

DTYPES = [torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8, torch.int8]
results = {}


def data(n, dtype, salt=0):
    """Small integers that differ per rank, so every reduction's result is exact."""
    return ((torch.arange(n) * (rank + 1) + salt + rank) % 5 + 1).to(dtype)


for dtype in DTYPES:
    name = str(dtype).replace("torch.", "")
    ops = [("sum", dist.ReduceOp.SUM), ("product", dist.ReduceOp.PRODUCT),
           ("min", dist.ReduceOp.MIN), ("max", dist.ReduceOp.MAX)]
    for op_name, op in ops:
        t = data(37, dtype)
        dist.all_reduce(t, op=op)
        results[f"all_reduce/{op_name}/{name}"] = t
    for op_name, op in ops:
        # torch leaves a non-root's tensor unspecified after reduce: compare the root's only.
        t = data(11, dtype, salt=5)
        dist.reduce(t, dst=world // 2, op=op)
        if rank == world // 2:
            results[f"reduce/{op_name}/{name}"] = t
    t = data(8, dtype, salt=3)
    dist.broadcast(t, src=world - 1)
    results[f"broadcast/{name}"] = t
    gathered = [torch.zeros(5, dtype=dtype) for _ in range(world)]
    dist.all_gather(gathered, data(5, dtype, salt=1))
    results[f"all_gather/{name}"] = torch.stack(gathered)
    # gloo (torch 1.13) has neither the flat all-gather nor reduce-scatter: there the
    # expectation is built from gloo's all-gather and all-reduce.
    flat = torch.zeros(5 * world, dtype=dtype)
    if backend == "nbox":
        dist.all_gather_into_tensor(flat, data(5, dtype, salt=2))
    else:
        parts = [torch.zeros(5, dtype=dtype) for _ in range(world)]
        dist.all_gather(parts, data(5, dtype, salt=2))
        flat = torch.cat(parts)
    results[f"all_gather_flat/{name}"] = flat
    blocks = [data(4, dtype, salt=r) for r in range(world)]
    if backend == "nbox":
        out = torch.zeros(4, dtype=dtype)
        dist.reduce_scatter(out, blocks)
        flat_out = torch.zeros(4, dtype=dtype)
        dist.reduce_scatter_tensor(flat_out, torch.cat(blocks))
        results[f"reduce_scatter_flat/{name}"] = flat_out
    else:
        whole = torch.cat(blocks)
        dist.all_reduce(whole)
        out = whole[4 * rank:4 * (rank + 1)].clone()
        results[f"reduce_scatter_flat/{name}"] = out
    results[f"reduce_scatter/{name}"] = out
    single_in = data(3 * world, dtype, salt=4)
    single_out = torch.zeros(3 * world, dtype=dtype)
    dist.all_to_all_single(single_out, single_in)
    results[f"all_to_all_single/{name}"] = single_out
    # gloo has only the flat all-to-all: the list form's expectation comes from it.
    pieces = [data(2, dtype, salt=10 + r) for r in range(world)]
    outs = [torch.zeros(2, dtype=dtype) for _ in range(world)]
    if backend == "nbox":
        dist.all_to_all(outs, pieces)
    else:
        flat_out = torch.zeros(2 * world, dtype=dtype)
        dist.all_to_all_single(flat_out, torch.cat(pieces))
        outs = list(flat_out.split(2))
    results[f"all_to_all/{name}"] = torch.stack(outs)

# AVG exists for the nbox backend; gloo has none, so the check compares it with SUM / W.
t = data(11, torch.float64)
if backend == "nbox":
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
else:
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    t /= world
results["all_reduce/avg/float64"] = t

# Point to point: a ring, even ranks sending first.
left, right = (rank - 1) % world, (rank + 1) % world
outgoing = data(6, torch.float32, salt=7)
incoming = torch.zeros(6)
if rank % 2 == 0:
    dist.send(outgoing, right)
    dist.recv(incoming, left)
else:
    dist.recv(incoming, left)
    dist.send(outgoing, right)
results["send_recv/float32"] = incoming
dist.barrier()
torch.save(results, out_file)
dist.destroy_process_group()
