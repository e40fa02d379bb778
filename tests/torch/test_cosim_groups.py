"""A PyTorch rank of a job with groups as a real rank of nbox-cosim: tests/torch/rank_groups.py
(Megatron's tensor pairs and data-parallel groups for t = 2 on 4 ranks, made with new_group)
runs with all 4 ranks real over the plain TCP plugin, recorded (NBOX_PROFILE_TRACE); then
nbox-cosim replays the recording with rank 0 real, running the same script, and ranks 1-3
emulated, on every network model. The real rank joins each of its groups by its members and
checks every result against closed forms (payload = self); the run must end with exit status 0
and the same collectives (operation, bytes, ranks) as the all-emulated replay of the recording.
The real rank's iteration against the all-emulated one is printed, not checked: its compute is
this machine's, not the recording's.

    /usr/bin/python3 tests/torch/test_cosim_groups.py BUILD_DIR
"""

import json
import os
import subprocess
import sys
import tempfile

from torch_test_support import free_port, verdict

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(sys.argv[1])
COSIM = os.path.join(BUILD, "tools", "cosim", "nbox-cosim")
PYTHONPATH = os.path.join(BUILD, "bridge", "torch")
SCRIPT = os.path.join(HERE, "rank_groups.py")
WORLD = 4
ITERATIONS = 3


def record(trace):
    env = dict(os.environ, PYTHONPATH=PYTHONPATH, NBOX_PROFILE_TRACE=trace,
               NBOX_NET_PLUGIN=os.path.join(BUILD, "bridge", "libnccl-net-nboxtcp.so"))
    env.pop("NBOX_UNIQUE_ID", None)
    init = f"tcp://127.0.0.1:{free_port()}"
    procs = [subprocess.Popen([sys.executable, SCRIPT, str(r), str(WORLD), init,
                               str(ITERATIONS), "real"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for r in range(WORLD)]
    failures = []
    for r, p in enumerate(procs):
        output, _ = p.communicate(timeout=180)
        if p.returncode != 0:
            failures.append(f"all-real rank {r} exited {p.returncode}:\n{output}")
    return failures


def replay(work, name, trace, model, real):
    ini = os.path.join(work, name + ".ini")
    with open(ini, "w") as f:
        f.write(f"[job]\nworld_size = {WORLD}\n[topology]\nkind = star\nhost_link = 10Gbps\n"
                f"[network]\nmodel = {model}\nmtu = 9000\n[workload]\nmodel = trace\n"
                f"trace = {trace}\niterations = 1\n[output]\nprogress = off\n")
    out = os.path.join(work, name)
    command = [COSIM, ini, "--out", out]
    if real:
        launch = (f"PYTHONPATH={PYTHONPATH} {sys.executable} -m nbox_torch.run {SCRIPT} "
                  f"{{rank}} {WORLD} env:// {ITERATIONS} self")
        command += ["--set", "realranks.ranks=0", "--set", "realranks.peers=workload",
                    "--set", "realranks.payload=self", "--set", f"realranks.launch={launch}"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    results = None
    if os.path.exists(os.path.join(out, "results.json")):
        with open(os.path.join(out, "results.json")) as f:
            results = json.load(f)
    log = ""
    if os.path.exists(os.path.join(out, "rank0.log")):
        with open(os.path.join(out, "rank0.log")) as f:
            log = f.read()
    return run, results, log


def shape(results):
    return sorted((c["op"], c["bytes"], c["ranks"]) for c in results["collectives"])


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="nbox-torch-groups-") as work:
        trace = os.path.join(work, "groups.jsonl")
        failures += record(trace)
        if failures:
            return verdict(failures)
        for model in ("packet", "flow", "analytical"):
            _, emulated, _ = replay(work, f"emulated-{model}", trace, model, real=False)
            run, real, log = replay(work, f"real-{model}", trace, model, real=True)
            if run.returncode != 0 or real is None or "FAIL" in log:
                failures.append(f"{model}: exit {run.returncode}\n{run.stdout[-3000:]}"
                                f"{run.stderr[-2000:]}\nrank 0's log:\n{log}")
                continue
            if shape(real) != shape(emulated):
                failures.append(f"{model}: collectives differ:\nreal rank {shape(real)}\n"
                                f"emulated  {shape(emulated)}")
            groups = sorted({c["group"] for c in real["collectives"]})
            real_s = real["iterations"][0]["time_s"]
            emulated_s = emulated["iterations"][0]["time_s"]
            print(f"{model}: {len(real['collectives'])} collectives on {groups}; the job "
                  f"{real_s * 1e3:.2f} ms with rank 0 real, {emulated_s * 1e3:.2f} ms replayed "
                  f"({real_s / emulated_s - 1:+.1%})")
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
