"""Record small, run large for a hybrid-parallel job: a real 4-rank PyTorch job
(rank_hybrid.py: tensor pairs, data-parallel groups) is recorded through the nbox backend
(NBOX_PROFILE_TRACE), then replayed by nbox-cosim scaled to 8 ranks in replicas of 2
(workload.trace_replica = 2). The independent expectation is the same script run with 8 real
ranks, recorded and replayed as it is: the same collectives on the same groups with the same
sizes, exactly, and the same iteration time within 5%. The two recordings differ in this
machine's timing only, but eight ranks on two cores compute longer and stall more often than
four, so both are replayed on 10 Mb/s links, where communication is 97% of an iteration (see
NETWORK): measured within 1.5% of each other.

    /usr/bin/python3 tests/torch/test_record_and_scale.py BUILD_DIR
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
ITERATIONS = 4
# The C++ test's network with links a hundred times slower. The gaps a recording holds between
# a rank's calls carry this machine's scheduling noise (eight Python processes on two cores: a
# few milliseconds, stalls of 20-30 ms), and the replay waits for the slowest rank at every
# collective; at 1 Gb/s that noise was as long as the job's communication (iterations 6-40%
# apart), at 100 Mb/s still up to 8%. At 10 Mb/s an iteration is 2.2 s, 68 ms of it compute:
# the check is then on the scaled job's groups and their placement (which ranks share a
# collective), while tests/cosim/record_and_scale_test.cc checks scaled compute with
# deterministic C ranks.
with open(os.path.join(HERE, "..", "cosim", "fixtures", "record_and_scale_network.ini")) as f:
    NETWORK = f.read()
assert "host_link = 1Gbps\n" in NETWORK
NETWORK = NETWORK.replace("host_link = 1Gbps\n", "host_link = 10Mbps\n")


def record(world, trace):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(BUILD, "bridge", "torch")
    env["NBOX_NET_PLUGIN"] = os.path.join(BUILD, "bridge", "libnccl-net-nboxtcp.so")
    env["NBOX_PROFILE_TRACE"] = trace
    env.pop("NBOX_UNIQUE_ID", None)
    init = f"tcp://127.0.0.1:{free_port()}"
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "rank_hybrid.py"), str(r),
                               str(world), init, str(ITERATIONS)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(world)]
    for r, p in enumerate(procs):
        output, _ = p.communicate(timeout=180)
        if p.returncode != 0:
            raise SystemExit(f"FAIL: rank {r} of {world} exited {p.returncode}:\n{output}")


def replay(work, name, world, trace, scaling):
    ini = os.path.join(work, name + ".ini")
    with open(ini, "w") as f:
        f.write(f"[job]\nworld_size = {world}\n[workload]\nmodel = trace\ntrace = {trace}\n"
                f"{scaling}iterations = 1\n{NETWORK}")
    out = os.path.join(work, name)
    run = subprocess.run([COSIM, ini, "--out", out], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"FAIL: nbox-cosim {name}: {run.stdout}{run.stderr}")
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


def shape(results):
    """Each collective as (op, bytes, ranks), sorted: the groups and sizes, whatever their
    names."""
    return sorted((c["op"], c["bytes"], c["ranks"]) for c in results["collectives"])


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="nbox-record-scale-") as work:
        record(4, os.path.join(work, "four.jsonl"))
        record(8, os.path.join(work, "eight.jsonl"))
        scaled = replay(work, "scaled", 8, "four.jsonl",
                        "trace_scaling = fixed-total\ntrace_replica = 2\n")
        truth = replay(work, "truth", 8, "eight.jsonl", "")
        if shape(scaled) != shape(truth):
            failures.append(f"collectives differ:\nscaled {shape(scaled)}\ntruth  {shape(truth)}")
        scaled_s = scaled["iterations"][0]["time_s"]
        truth_s = truth["iterations"][0]["time_s"]
        print("compute per rank (mean): scaled {:.2f} ms, truth {:.2f} ms".format(
            scaled["iterations"][0]["breakdown"]["compute_s"] * 1e3,
            truth["iterations"][0]["breakdown"]["compute_s"] * 1e3))
        print(f"replayed job: 4 ranks recorded and scaled to 8: {scaled_s * 1e3:.2f} ms; "
              f"8 ranks recorded: {truth_s * 1e3:.2f} ms ({scaled_s / truth_s - 1:+.2%})")
        if abs(scaled_s / truth_s - 1) > 0.05:
            failures.append(f"iteration time {scaled_s} s against {truth_s} s: more than 5% apart")
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
