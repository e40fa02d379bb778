"""The emitted job array under a real Slurm (Debian's slurm-wlm) started here, privately.

The test starts its own munged (own key and socket) and its own slurmctld and slurmd (own
configuration, state folders and free ports, one node: this machine), submits the array
with `sbatch --wait`, collects, and stops the three daemons it started. ctest registers it
only when slurmctld, slurmd, sbatch and munged are installed; it needs root (slurmd runs
jobs as their user)."""

import os
import socket
import subprocess
import time

import pytest

from conftest import load_json, read_summary_csv

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="slurmd must run as root")

_START_TIMEOUT_S = 30
_JOB_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _slurm_conf(root: str, node: str, cpus: int) -> str:
    return "\n".join([
        "ClusterName=nboxsweeptest",
        f"SlurmctldHost={node}(127.0.0.1)",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"SlurmctldPort={_free_port()}",
        f"SlurmdPort={_free_port()}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={root}/munge.socket",
        f"StateSaveLocation={root}/state",
        f"SlurmdSpoolDir={root}/spool",
        f"SlurmctldPidFile={root}/slurmctld.pid",
        f"SlurmdPidFile={root}/slurmd.pid",
        f"SlurmctldLogFile={root}/slurmctld.log",
        f"SlurmdLogFile={root}/slurmd.log",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        "ReturnToService=2",
        "MpiDefault=none",
        "JobAcctGatherType=jobacct_gather/none",
        f"NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN",
        f"PartitionName=test Nodes={node} Default=YES MaxTime=INFINITE State=UP",
    ]) + "\n"


@pytest.fixture
def slurm(tmp_path):
    """A one-node Slurm of our own; yields the environment its clients need."""
    root = str(tmp_path / "slurm")
    for sub in ("", "state", "spool"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    key = os.path.join(root, "munge.key")
    with open(key, "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(key, 0o600)
    node = socket.gethostname().split(".")[0]
    conf = os.path.join(root, "slurm.conf")
    with open(conf, "w") as f:
        f.write(_slurm_conf(root, node, os.cpu_count() or 1))
    env = dict(os.environ, SLURM_CONF=conf)
    daemons = []
    try:
        daemons.append(subprocess.Popen(
            ["munged", "--foreground", "--force", f"--socket={root}/munge.socket",
             f"--key-file={key}", f"--pid-file={root}/munged.pid",
             f"--log-file={root}/munged.log", f"--seed-file={root}/munged.seed"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not os.path.exists(f"{root}/munge.socket"):
            assert time.monotonic() < deadline, "munged did not start"
            time.sleep(0.1)
        for cmd in (["slurmctld", "-D", "-i"], ["slurmd", "-D", "-N", node]):
            daemons.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))
        while True:
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
            if state.strip() == "idle":
                break
            assert time.monotonic() < deadline, f"slurmd did not come up (state {state!r})"
            time.sleep(0.3)
        yield env
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
        for daemon in reversed(daemons):
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()


def test_slurm_runs_the_emitted_array(sweeper, slurm):
    out = os.path.join(sweeper.tmp, "array")
    done = sweeper.run(sweeper.scenario, "--vary", "job.world_size=4,13,8",
                       "--vary", "network.ecn=on,off", "--out", out, "--emit", "slurm")
    assert done.returncode == 0, done.stderr
    submit = subprocess.run(["sbatch", "--wait", os.path.join(out, "sweep.slurm")],
                            env=dict(sweeper.env, **slurm), text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=_JOB_TIMEOUT_S, check=False)
    assert "Submitted batch job" in submit.stdout, submit.stderr
    assert submit.returncode != 0  # the array holds failing tasks (world size 13)

    collected = sweeper.run("collect", out)
    assert collected.returncode == 1
    names = [p["name"] for p in load_json(os.path.join(out, "sweep.json"))["points"]]
    rows = read_summary_csv(os.path.join(out, "summary.csv"))
    assert [r["point"] for r in rows] == names
    assert [r["status"] for r in rows] == ["ok", "ok", "failed", "failed", "ok", "ok"]
    assert sorted(sweeper.runs()) == sorted(n for n in names if "=13," not in n)
    for index, name in enumerate(names):  # each task logged to its own file
        with open(os.path.join(out, "slurm", f"task-{index}.log")) as f:
            assert f"point {index} {name}:" in f.read()
