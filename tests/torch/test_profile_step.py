"""compute = profile on a trace recorded by Debian's torch (on this machine's CPU):
tools/profile/nbox-profile-step profiles a training step of a small GPT-style model and writes
its operators in Kineto's format; nbox-cosim reads it for the same model's shape. The trace
holds the step's GEMMs by shape with their measured times, and the simulated GEMM time is
then the CPU's (tens to hundreds of microseconds per GEMM), far above what the model gives an
H100 for GEMMs this small (a few microseconds each)."""

import json
import os
import subprocess
import sys
import tempfile

from torch_test_support import verdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = sys.argv[1]
COSIM = os.path.join(BUILD, "tools", "cosim", "nbox-cosim")

SHAPE = ["workload.kind=transformer", "workload.model=custom", "workload.layers=2",
         "workload.hidden=64", "workload.heads=4", "workload.ffn=256", "workload.vocab=100",
         "workload.seq_len=32", "workload.mlp=gelu", "workload.micro_batch=1",
         "workload.global_batch=2", "job.world_size=2", "network.model=analytical",
         "workload.iterations=1", "workload.gpu=h100", "output.progress=off"]


def gemm_seconds(out, compute, extra):
    args = [COSIM, os.path.join(ROOT, "scenarios", "default.ini"), "--out", out]
    for s in SHAPE + [f"workload.compute={compute}"] + extra:
        args += ["--set", s]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr}")
    with open(os.path.join(out, "results.json")) as f:
        results = json.load(f)
    gemm = results["iterations"][0]["breakdown"]["compute_by_kind_s"]["gemm"]
    return gemm, results["workload"]["compute"]


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        step = os.path.join(tmp, "step.json")
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "profile", "nbox-profile-step"),
                        "--out", step, "--hidden", "64", "--heads", "4", "--ffn", "256",
                        "--seq", "32", "--batch", "1", "--layers", "2"], check=True)
        with open(step) as f:
            events = json.load(f)["traceEvents"]
        dims = [e["args"]["Input Dims"] for e in events if e["name"] == "aten::addmm"]
        # The QKV projection's forward: bias of 192, tokens 32 x 64 times 64 x 192.
        if [[192], [32, 64], [64, 192], [], []] not in dims:
            failures.append(f"no QKV addmm among {dims}")
        modelled, _ = gemm_seconds(os.path.join(tmp, "model"), "model", [])
        measured, described = gemm_seconds(os.path.join(tmp, "profile"), "profile",
                                           [f"workload.compute_profile={step}"])
        if "CPU operator times" not in described:
            failures.append(f"results.json's workload.compute: {described}")
        if not measured > 10 * modelled:
            failures.append(f"GEMM time {measured} s with the CPU's profile against {modelled} s "
                            "modelled on an H100: expected the CPU's to be far longer")
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
