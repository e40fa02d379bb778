"""Runs an unmodified PyTorch training script as one real rank of an nbox job.

    python3 -m nbox_torch.run script.py [args...]

nbox-cosim starts each real rank with NBOX_RANK, NBOX_WORLD_SIZE, NBOX_UNIQUE_ID and the
plugin's settings in its environment (README.md, "PyTorch ranks"). Before the script runs,
this launcher:

- sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT from them, as torchrun does;
- makes torch.distributed.init_process_group use the "nbox" backend whatever backend the
  script names for CPU tensors (gloo, or none), with a process-local store: the other ranks
  are emulated by nbox-cosim and never reach a rendezvous store, and joining the nbox
  communicator already waits for every rank; NBOX_TORCH_KEEP_BACKEND=1 turns this off;
- marks iterations at every optimizer step (the end of iteration k and the start of k + 1),
  so nbox-cosim reports the rank's own iteration times; with NBOX_TORCH_STEP_TIMES=1 it also
  prints each step's wall time to stderr ("nbox_torch: step K wall_s S"), for comparisons
  with runs outside nbox.

The script then runs as __main__ with its own arguments; its exceptions and exit status are
the launcher's.
"""

import os
import runpy
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

from . import _nbox_c10d  # noqa: F401  (importing the package registered the backend)

# Backends the launcher replaces with nbox for CPU tensors.
TAKEN_OVER = {None, "gloo", "GLOO", "cpu:gloo"}


def _environment():
    for key in ("NBOX_RANK", "NBOX_WORLD_SIZE", "NBOX_UNIQUE_ID"):
        if key not in os.environ:
            sys.exit(f"nbox_torch.run: {key} is not set; run this under nbox-cosim "
                     "([realranks] launch = python3 -m nbox_torch.run script.py ...)")
    rank = int(os.environ["NBOX_RANK"])
    world = int(os.environ["NBOX_WORLD_SIZE"])
    os.environ.setdefault("RANK", str(rank))
    os.environ.setdefault("WORLD_SIZE", str(world))
    os.environ.setdefault("LOCAL_RANK", "0")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    return rank, world


def _take_over_init(rank, world):
    original = dist.init_process_group

    def init_process_group(backend=None, *args, **kwargs):
        if backend in TAKEN_OVER:
            backend = "nbox"
        if backend == "nbox":
            kwargs.pop("init_method", None)
            kwargs["store"] = kwargs.get("store") or dist.HashStore()
            kwargs["rank"] = rank
            kwargs["world_size"] = world
            if args:
                args = ()  # init_method given positionally: replaced by the store
        return original(backend, *args, **kwargs)

    dist.init_process_group = init_process_group
    # torch 1.13 ends init with a barrier on the store that every rank must reach; emulated
    # ranks never do, and the nbox communicator's join has synchronised the real ones.
    c10d._store_based_barrier = lambda *args, **kwargs: None


def _mark_iterations_at_optimizer_steps():
    state = {"iteration": 0}

    def mark(iteration, begin):
        group = c10d._get_default_group() if dist.is_initialized() else None
        if group is not None and hasattr(group, "mark_iteration"):
            group.mark_iteration(iteration, begin)

    print_times = os.environ.get("NBOX_TORCH_STEP_TIMES") == "1"
    state["last"] = time.perf_counter()

    def wrap(step):
        def step_and_mark(self, *args, **kwargs):
            result = step(self, *args, **kwargs)
            mark(state["iteration"], False)
            if print_times:
                now = time.perf_counter()
                print(f"nbox_torch: step {state['iteration']} wall_s {now - state['last']:.6f}",
                      file=sys.stderr, flush=True)
                state["last"] = now
            state["iteration"] += 1
            mark(state["iteration"], True)
            return result
        step_and_mark._nbox_marks = True
        return step_and_mark

    original_init = dist.init_process_group

    def init_and_mark_start(*args, **kwargs):
        result = original_init(*args, **kwargs)
        mark(0, True)
        state["last"] = time.perf_counter()
        return result

    dist.init_process_group = init_and_mark_start
    for optimizer in torch.optim.Optimizer.__subclasses__():
        if "step" in optimizer.__dict__ and not getattr(optimizer.step, "_nbox_marks", False):
            optimizer.step = wrap(optimizer.__dict__["step"])


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: python3 -m nbox_torch.run script.py [args...]")
    rank, world = _environment()
    if os.environ.get("NBOX_TORCH_KEEP_BACKEND") != "1":
        _take_over_init(rank, world)
    _mark_iterations_at_optimizer_steps()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
