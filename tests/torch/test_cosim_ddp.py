"""An unmodified PyTorch DDP script as a real rank under nbox-cosim:

- bridge/torch/examples/train_ddp.py as rank 0 of 4 (ranks 1-3 emulated, mirroring it,
  payload = self) gives, step for step, the losses rank 0 prints when all 4 ranks are real
  PyTorch processes on gloo training on the same data (the homogeneous job payload = self
  stands for), and the report has the rank's 8 marked iterations;
- a script that raises after joining, and one whose process is killed, end the run within a
  second of the failure with exit status 1 and the rank named;
- a killed nbox-cosim ends its PyTorch rank within a second, in a collective or computing
  between calls (never a hang);
- ranks 0 and 3 real at once (ranks 1-2 emulated) give the same losses, while their DDP
  buckets travel as they compute the next ones;
- so do 2, 3 and 32 channels with chunks down to 8 bytes and the tree and halving-doubling
  algorithms;
- a rank computing while its all-reduce travels has its clock run through the compute, after
  a plain call and after a backward pass (tests/torch/compute_while_in_flight.py): 0.2 s of
  compute moves the clock by 0.2 s (up to 0.25 s on a busy machine), and the all-reduce,
  0.63 s on the simulated 100 Mb/s links, is still in flight.

    /usr/bin/python3 tests/torch/test_cosim_ddp.py BUILD_DIR
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

from torch_test_support import free_port, verdict

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(sys.argv[1])
COSIM = os.path.join(BUILD, "tools", "cosim", "nbox-cosim")
EXAMPLE = os.path.join(ROOT, "bridge", "torch", "examples", "train_ddp.py")
PYTHONPATH = os.path.join(BUILD, "bridge", "torch")
WORLD = 4


def losses(text):
    return re.findall(r"^step (\d+) loss (\S+)$", text, re.M)


def all_real():
    """Rank 0's losses with every rank a real PyTorch process on gloo."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
               WORLD_SIZE=str(WORLD))
    procs = [subprocess.Popen([sys.executable, EXAMPLE, "--epochs", "1", "--same-data"],
                              env=dict(env, RANK=str(r)), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for r in range(WORLD)]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    for r, p in enumerate(procs):
        if p.returncode != 0:
            sys.exit(f"FAIL: all-real rank {r} exited {p.returncode}:\n{outputs[r]}")
    return losses(outputs[0])


def cosim(work, launch_args, name, settings=()):
    out = os.path.join(work, name)
    launch = (f"PYTHONPATH={PYTHONPATH} {sys.executable} -m nbox_torch.run {launch_args}")
    start = time.monotonic()
    sets = [arg for setting in settings for arg in ("--set", setting)]
    run = subprocess.run([COSIM, os.path.join(ROOT, "scenarios", "pytorch-ddp.ini"), "--set",
                          f"job.world_size={WORLD}", "--set", f"realranks.launch={launch}",
                          *sets, "--out", out],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    return run, out, time.monotonic() - start


def ended(pid):
    """True once `pid` has exited: gone, or a zombie (its parent, nbox-cosim, is dead, and when
    init reaps it is init's business, seconds later in some sandboxes)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def killed_cosim_ends_the_rank(work, script, ready):
    """SIGKILLs nbox-cosim once its PyTorch rank's log shows `ready`; the rank must have ended
    within a second."""
    out = os.path.join(work, "killed-cosim-" + os.path.basename(script).split()[0])
    launch = f"PYTHONPATH={PYTHONPATH} {sys.executable} -m nbox_torch.run {script}"
    cosim_proc = subprocess.Popen([COSIM, os.path.join(ROOT, "scenarios", "pytorch-ddp.ini"),
                                   "--set", f"job.world_size={WORLD}", "--set",
                                   f"realranks.launch={launch}", "--out", out],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  cwd=ROOT)
    name = f"killed nbox-cosim ({os.path.basename(script).split()[0]})"
    rank_pid = None
    deadline = time.monotonic() + 60
    while rank_pid is None and time.monotonic() < deadline:
        line = cosim_proc.stdout.readline()
        found = re.search(r"real rank 0 started \(pid (\d+)\)", line)
        rank_pid = int(found.group(1)) if found else None
    if rank_pid is None:
        cosim_proc.kill()
        return [f"{name}: the rank never started"]
    log = os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".nbox-staging-" +
                       str(cosim_proc.pid), "rank0.log")
    while time.monotonic() < deadline:
        if os.path.exists(log) and ready in open(log).read():
            break
        time.sleep(0.1)
    cosim_proc.kill()
    cosim_proc.wait()
    killed = time.monotonic()
    while time.monotonic() - killed < 10:
        if ended(rank_pid):
            took = time.monotonic() - killed
            print(f"{name}: rank ended {took:.2f} s later")
            return [] if took < 1.0 else [f"{name}: the rank ended only {took:.2f} s later"]
        time.sleep(0.02)
    os.kill(rank_pid, 9)
    return [f"{name}: its PyTorch rank still ran 10 s later"]


def clock_runs_while_computing(work):
    script = os.path.join(ROOT, "tests", "torch", "compute_while_in_flight.py")
    run, out, _ = cosim(work, script, "computing-in-flight", ["topology.host_link=100Mbps"])
    with open(os.path.join(out, "rank0.log")) as f:
        log = f.read()
    found = dict(re.findall(r"^(\w+) advanced_ns (\d+) in_flight 1$", log, re.M))
    if run.returncode != 0 or set(found) != {"COMPUTING", "AFTER_BACKWARD"}:
        return [f"computing while in flight: exit {run.returncode}, log:\n{log}"]
    failures = []
    for name, advanced in found.items():
        seconds = int(advanced) / 1e9
        print(f"computing while in flight ({name}): the clock moved {seconds:.4f} s in 0.2 s")
        if not 0.2 <= seconds <= 0.25:
            failures.append(f"computing while in flight ({name}): the clock moved {seconds} s "
                            "during 0.2 s of compute")
    return failures


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="nbox-torch-cosim-") as work:
        run, out, _ = cosim(work, f"{EXAMPLE} --epochs 1 --same-data", "ddp")
        if run.returncode != 0:
            sys.exit(f"FAIL: nbox-cosim exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
        with open(os.path.join(out, "rank0.log")) as f:
            emulated = losses(f.read())
        with open(os.path.join(out, "results.json")) as f:
            results = json.load(f)
        real = all_real()
        if len(emulated) != 8 or emulated != real:
            failures.append(f"losses differ:\n  nbox (1 real of {WORLD}): {emulated}\n"
                            f"  all real on gloo:       {real}")
        rank = results["real_ranks"]["ranks"][0]
        if rank["iterations_marked"] < 8 or results["status"] != "complete":
            failures.append(f"report: status {results['status']}, "
                            f"{rank['iterations_marked']} iterations marked")
        print(f"losses, 1 real rank of {WORLD} under nbox: {[l for _, l in emulated]}")

        run, out, _ = cosim(work, f"{EXAMPLE} --epochs 1 --same-data", "ddp-0-3",
                            ["realranks.ranks=0,3"])
        if run.returncode != 0:
            failures.append(f"ranks 0 and 3 real: exit {run.returncode}:\n{run.stdout}\n"
                            f"{run.stderr}")
        else:
            for rank in (0, 3):
                with open(os.path.join(out, f"rank{rank}.log")) as f:
                    if losses(f.read()) != real:
                        failures.append(f"ranks 0 and 3 real: rank {rank}'s losses differ")
            print("ranks 0 and 3 real: the all-real run's losses on both")

        # The same job under other collective settings: DDP's constructor all-gathers one
        # int64 and broadcasts the module state, which channels cut on 8-byte elements as the
        # mirrored peers must too.
        for settings in (["collectives.channels=2"],
                         ["collectives.channels=3", "collectives.chunk=8B",
                          "collectives.allreduce=tree", "collectives.broadcast=tree"],
                         ["collectives.channels=32", "collectives.chunk=1KiB",
                          "collectives.allreduce=halving-doubling"]):
            name = "ddp-" + "-".join(s.split("=")[1] for s in settings)
            run, out, _ = cosim(work, f"{EXAMPLE} --epochs 1 --same-data", name, settings)
            with open(os.path.join(out, "rank0.log")) as f:
                got = losses(f.read())
            if run.returncode != 0 or got != real:
                failures.append(f"{' '.join(settings)}: exit {run.returncode}, losses {got}:\n"
                                f"{run.stdout}\n{run.stderr}")
            else:
                print(f"{' '.join(settings)}: the all-real run's losses")

        failures += clock_runs_while_computing(work)


        for name in ("raise_after_init.py", "killed_after_init.py"):
            script = os.path.join(ROOT, "tests", "torch", name)
            run, out, took = cosim(work, script, name)
            ended = time.time()
            text = run.stdout + run.stderr
            with open(os.path.join(out, "rank0.log")) as f:
                event = re.search(r"^EVENT_TIME ([\d.]+)$", f.read(), re.M)
            after = ended - float(event[1]) if event else None
            if run.returncode != 1 or "rank 0" not in text or after is None or after > 1.0:
                failures.append(f"{name}: exit {run.returncode}, {after} s after the failure:\n"
                                f"{text}")
            else:
                print(f"{name}: exit 1, {after:.2f} s after the failure (whole run {took:.1f} s)")
        # In a collective (training: the DDP all-reduces fail at once) and between calls
        # (computing: the backend's watchdog ends the process).
        failures += killed_cosim_ends_the_rank(
            work, f"{EXAMPLE} --epochs 1 --steps-per-epoch 100000", "step 3 ")
        failures += killed_cosim_ends_the_rank(
            work, os.path.join(ROOT, "tests", "torch", "computing_after_init.py"), "computing")
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
