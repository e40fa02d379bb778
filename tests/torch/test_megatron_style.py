"""One tensor-parallel group of a Megatron-style job as real ranks of nbox-cosim:
bridge/torch/examples/train_megatron_style.py (t = 2, p = 2, d = 2 on 8 ranks, plain PyTorch)
runs as ranks 0 and 1 of scenarios/megatron-style.ini, whose transformer workload emulates the
other six, on the packet, flow and analytical models; and with all 8 ranks real on gloo. No
retries: a run that breaks the clock protocol fails the check (the analytical model's
connections, stamped just ahead of a rank's running clock, once did about one run in 200:
tests/bridge/nbox_plugin_test.cc, NoBlockedPromiseWhileAConnectionThatIsDueIsHeld).

Checked:
- each model: exit status 0, both real ranks report their three iterations and, per
  iteration, the calls counted by hand from Megatron's rules for stage 0 (below);
- each forward tensor-parallel all-reduce of iteration 0 (the embedding's, and each layer's
  attention and MLP, both micro-batches) gives, bit for bit, the all-real gloo run's result
  (later ones differ by design: the emulated stage 1 and data-parallel peer send this rank's
  own data back, payload = self);
- the emulated ranks' collectives are the all-emulated job's, group by group, for every group
  with no real member;
- three mistakes each end the run with exit status 1 and an error naming them: a wrong group
  size (the script at t = 4: the group [0,1,2,3] the scenario lacks), a missing collective (no
  gradient norm: emulated rank 4 named waiting in 'grad norm ar') and a collective on the wrong
  group (the gradient norm on the data-parallel group: the sizes that disagree and the op
  emulated rank 2 is in).

Printed, not checked: the job's steady iteration with the real ranks against all emulated (the
real ranks' compute is this machine's CPU, the emulated ranks' the scenario's model).

    /usr/bin/python3 tests/torch/test_megatron_style.py BUILD_DIR
"""

import collections
import json
import os
import re
import subprocess
import sys
import tempfile

from torch_test_support import free_port, verdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.abspath(sys.argv[1])
COSIM = os.path.join(BUILD, "tools", "cosim", "nbox-cosim")
PYTHONPATH = os.path.join(BUILD, "bridge", "torch")
SCENARIO = os.path.join(ROOT, "scenarios", "megatron-style.ini")
SCRIPT = os.path.join(ROOT, "bridge", "torch", "examples", "train_megatron_style.py")
FAULT = os.path.join(HERE, "megatron_style_fault.py")
WORLD = 8
REAL = (0, 1)
ITERATIONS = 3
# Stage 0's calls per iteration (2 micro-batches, one layer, 1F1B with p = 2): the embedding's
# all-reduce and each layer's two in each forward (6), each layer's two input-gradient
# all-reduces in each backward (4), the data-parallel gradient all-reduce and the gradient
# norm's (2), and four point-to-point calls: the first forward's send, the second's send
# beside the first gradient's receive, the second gradient's receive.
CALLS_PER_ITERATION = 6 + 4 + 2 + 4


def digests(text):
    """Iteration 0's forward tensor-parallel results: (micro-batch, name) -> sha256."""
    found = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 5 and fields[0] == "digest" and fields[1] == "0":
            found[(fields[2], " ".join(fields[3:-1]))] = fields[-1]
    return found


def all_real(work):
    port = free_port()
    procs = []
    for rank in range(WORLD):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(WORLD), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port))
        procs.append(subprocess.Popen(
            [sys.executable, SCRIPT, "--iterations", "1", "--digest"], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outputs, failures = [], []
    for rank, proc in enumerate(procs):
        output, _ = proc.communicate(timeout=300)
        outputs.append(output)
        if proc.returncode != 0:
            failures.append(f"all-real rank {rank} exited {proc.returncode}:\n{output[-2000:]}")
    return outputs, failures


def cosim(work, name, sets, launch_args=None, fault=None):
    out = os.path.join(work, name)
    command = [COSIM, SCENARIO, "--out", out]
    for s in sets:
        command += ["--set", s]
    if launch_args is not None:
        program = [FAULT, fault, SCRIPT] if fault else [SCRIPT]
        launch = (f"PYTHONPATH={PYTHONPATH} {sys.executable} -m nbox_torch.run "
                  + " ".join(program + launch_args))
        command += ["--set", f"realranks.launch={launch}"]
    else:
        command += ["--set", "realranks.ranks=", "--set", "realranks.launch="]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    results = None
    if os.path.exists(os.path.join(out, "results.json")):
        with open(os.path.join(out, "results.json")) as f:
            results = json.load(f)
    logs = {}
    for rank in REAL:
        path = os.path.join(out, f"rank{rank}.log")
        if os.path.exists(path):
            with open(path) as f:
                logs[rank] = f.read()
    return run, results, logs


def emulated_groups(results, real_ranks):
    """Collective instances per (group, op, bytes), of groups with no real member."""
    groups = {}
    for c in results["collectives"]:
        groups.setdefault(c["group"], collections.Counter())[(c["op"], c["bytes"])] += 1
    return {g: counts for g, counts in groups.items() if g not in real_ranks}


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="nbox-megatron-style-") as work:
        outputs, failures = all_real(work)
        if failures:
            return verdict(failures)
        gloo = {rank: digests(outputs[rank]) for rank in REAL}
        if any(len(d) != 6 for d in gloo.values()):
            return verdict([f"the all-real run printed {[len(d) for d in gloo.values()]} "
                            "iteration-0 digests on ranks 0 and 1, 6 each expected"])
        for model in ("packet", "flow", "analytical"):
            sets = [f"network.model={model}"]
            _, emulated, _ = cosim(work, f"emulated-{model}", sets)
            run, real, logs = cosim(work, f"real-{model}", sets,
                                    ["--iterations", str(ITERATIONS), "--digest"])
            if run.returncode != 0 or real is None:
                failures.append(f"{model}: exit {run.returncode}\n{run.stdout[-3000:]}"
                                f"{run.stderr[-2000:]}\nlogs: {logs}")
                continue
            for report in real["real_ranks"]["ranks"]:
                calls = report["collectives_reported"]
                marked = len(report["iterations"])
                if calls != CALLS_PER_ITERATION * ITERATIONS or marked != ITERATIONS:
                    failures.append(f"{model}: real rank {report['rank']} reported {calls} "
                                    f"calls and {marked} iterations, expected "
                                    f"{CALLS_PER_ITERATION * ITERATIONS} and {ITERATIONS}")
            for rank in REAL:
                if digests(logs.get(rank, "")) != gloo[rank]:
                    failures.append(f"{model}: rank {rank}'s forward tensor-parallel results "
                                    f"of iteration 0 differ from the all-real gloo run's:\n"
                                    f"{digests(logs.get(rank, ''))}\n{gloo[rank]}")
            real_groups = {c["group"] for c in emulated["collectives"]} - \
                {c["group"] for c in real["collectives"]}
            if real_groups != {"tp0"}:
                failures.append(f"{model}: groups missing from the report: {real_groups}, "
                                "only tp0 (both members real) expected")
            touching = {"tp0", "pp0", "pp1"}  # groups with a real member that report instances
            expected = emulated_groups(emulated, touching)
            got = emulated_groups(real, touching)
            if got != expected:
                failures.append(f"{model}: the emulated ranks' collectives differ:\n{got}\n"
                                f"{expected}")
            print(f"{model}: steady iteration {real['steady_iteration_time_s'] * 1e3:.2f} ms "
                  f"with ranks 0-1 real, {emulated['steady_iteration_time_s'] * 1e3:.3f} ms all "
                  "emulated")

        mistakes = [
            ("wrong-group-size", None, ["--tensor", "4"],
             [r"joined a group of world ranks \[0,1,2,3\]", r"no communicator"]),
            ("missing-collective", "skip-grad-norm", [],
             [r"the job stalled",
              r"emulated rank 4 waits in 'grad norm ar' of iteration 0: AllReduce of 4 bytes "
              r"on mp0 \(world ranks 0,1,4,5\)"]),
            ("wrong-group", "grad-norm-on-data-group", [],
             [r"schedules disagree: a \d+-byte message from emulated rank [23] to real rank "
              r"[01] .* matched a receive of only 4 bytes",
              r"emulated rank 2 waits in 'dp grads L0 ar' of iteration 1: AllReduce of 197120 "
              r"bytes on dp0 \(world ranks 0,2\)"]),
        ]
        for name, fault, extra, patterns in mistakes:
            run, _, logs = cosim(work, name, ["network.model=flow"],
                                 ["--iterations", str(ITERATIONS)] + extra, fault)
            text = run.stdout + run.stderr
            if run.returncode != 1:
                failures.append(f"{name}: exit {run.returncode}, 1 expected\n{text[-3000:]}")
            for pattern in patterns:
                if not re.search(pattern, text):
                    failures.append(f"{name}: no /{pattern}/ in\n{text[-3000:]}")
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
