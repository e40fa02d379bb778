"""The nbox torch.distributed backend against torch's own gloo backend: every
supported operation on 2 and 3 ranks gives exactly gloo's result (inputs whose results are
exact), and DDP training gives gloo's losses and parameters (to float rounding: the two
backends add in different orders). All ranks are real processes on this machine; the nbox
backend runs over the plain TCP plugin (libnccl-net-nboxtcp.so).

    /usr/bin/python3 tests/torch/test_against_gloo.py BUILD_DIR
"""

import os
import subprocess
import sys
import tempfile

import torch

from torch_test_support import free_port, verdict

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(sys.argv[1])
TIMEOUT_S = 120


def run_ranks(script, backend, world, work):
    """Runs `world` ranks of `script`; returns each rank's saved results."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(BUILD, "bridge", "torch")
    env["NBOX_NET_PLUGIN"] = os.path.join(BUILD, "bridge", "libnccl-net-nboxtcp.so")
    env.pop("NBOX_UNIQUE_ID", None)
    init = f"tcp://127.0.0.1:{free_port()}"
    outs = [os.path.join(work, f"{backend}-{os.path.basename(script)}-{world}-{r}.pt")
            for r in range(world)]
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, script), backend, str(r),
                               str(world), init, outs[r]], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for r in range(world)]
    failed = []
    for r, p in enumerate(procs):
        try:
            output, _ = p.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise SystemExit(f"FAIL: {backend} rank {r} of {script} hung for {TIMEOUT_S} s")
        if p.returncode != 0:
            failed.append(f"{backend} rank {r} of {script} exited {p.returncode}:\n{output}")
    if failed:
        raise SystemExit("FAIL: " + "\n".join(failed))
    return [torch.load(o) for o in outs]


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="nbox-torch-") as work:
        for world in (2, 3):
            nbox = run_ranks("rank_ops.py", "nbox", world, work)
            gloo = run_ranks("rank_ops.py", "gloo", world, work)
            for rank in range(world):
                assert nbox[rank].keys() == gloo[rank].keys()
                for key in sorted(gloo[rank]):
                    a, b = nbox[rank][key], gloo[rank][key]
                    if a.dtype != b.dtype or not torch.equal(a, b):
                        failures.append(f"W={world} rank {rank} {key}: nbox {a.tolist()} "
                                        f"gloo {b.tolist()}")
            print(f"operations, {world} ranks: {len(gloo[0])} results compared per rank")
        world = 2
        nbox = run_ranks("rank_ddp.py", "nbox", world, work)
        gloo = run_ranks("rank_ddp.py", "gloo", world, work)
        for rank in range(world):
            if not torch.allclose(nbox[rank]["losses"], gloo[rank]["losses"], rtol=1e-5,
                                  atol=1e-6):
                failures.append(f"DDP rank {rank} losses: nbox {nbox[rank]['losses'].tolist()} "
                                f"gloo {gloo[rank]['losses'].tolist()}")
            for i, (a, b) in enumerate(zip(nbox[rank]["parameters"], gloo[rank]["parameters"])):
                if not torch.allclose(a, b, rtol=1e-5, atol=1e-6):
                    failures.append(f"DDP rank {rank} parameter {i} differs by "
                                    f"{(a - b).abs().max().item()}")
        # The ranks of one backend hold the same parameters (the all-reduce did its job).
        for i, (a, b) in enumerate(zip(nbox[0]["parameters"], nbox[1]["parameters"])):
            if not torch.equal(a, b):
                failures.append(f"nbox ranks disagree on parameter {i}")
        print(f"DDP, {world} ranks: losses {nbox[0]['losses'].tolist()}")
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
