"""The Slurm job array contract: --emit slurm writes a script whose task i runs point i
(SLURM_ARRAY_TASK_ID), and `collect` builds the same summary a local run does.

Slurm itself is not started: each task is run the way slurmd runs an array task, the batch
script under bash with SLURM_ARRAY_TASK_ID set (see tools/sweep/README.md for why)."""

import os
import re
import subprocess

from conftest import load_json, read_summary_csv

GRID = ("--vary", "job.world_size=4,13,8", "--vary", "network.ecn=on,off")


def _emit(sweeper, out, *extra):
    return sweeper.run(sweeper.scenario, *GRID, "--out", out, "--emit", "slurm", *extra)


def _run_task(sweeper, script, task_id):
    env = dict(sweeper.env)
    if task_id is not None:
        env["SLURM_ARRAY_TASK_ID"] = str(task_id)
    return subprocess.run(["bash", script], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, check=False)


def test_emit_writes_a_job_array_and_runs_nothing(sweeper):
    out = os.path.join(sweeper.tmp, "array")
    done = _emit(sweeper, out, "--sbatch=--partition=cpu", "--array-limit", "2")
    assert done.returncode == 0, done.stderr
    assert sweeper.runs() == []
    script = os.path.join(out, "sweep.slurm")
    with open(script) as f:
        text = f.read()
    assert text.startswith("#!/bin/bash\n")
    directives = re.findall(r"^#SBATCH (\S+)$", text, flags=re.M)
    assert "--array=0-5%2" in directives and "--partition=cpu" in directives
    assert f"--output={out}/slurm/task-%a.log" in directives
    assert os.path.isdir(os.path.join(out, "slurm"))  # Slurm does not create it
    assert os.access(script, os.X_OK)


def test_every_task_runs_its_point_and_collect_summarises(sweeper):
    out = os.path.join(sweeper.tmp, "array")
    assert _emit(sweeper, out).returncode == 0
    script = os.path.join(out, "sweep.slurm")
    manifest = load_json(os.path.join(out, "sweep.json"))

    before = sweeper.run("collect", out)
    assert before.returncode == 1 and "6 points: 0 ok, 6 missing" in before.stdout

    # Tasks in an order Slurm might choose; task 2 and 3 are the failing world size 13.
    for task_id in (5, 0, 3, 1, 4, 2):
        done = _run_task(sweeper, script, task_id)
        name = manifest["points"][task_id]["name"]
        assert (done.returncode == 0) == ("world_size=13" not in name), done.stderr
        assert f"point {task_id} {name}:" in done.stdout
    # Each task simulated its own point, once (the fake logs only runs that succeed).
    assert sweeper.runs() == [manifest["points"][i]["name"] for i in (5, 0, 1, 4)]

    done = sweeper.run("collect", out)
    assert done.returncode == 1  # two points failed
    rows = read_summary_csv(os.path.join(out, "summary.csv"))
    assert [r["point"] for r in rows] == [p["name"] for p in manifest["points"]]
    assert [r["status"] for r in rows] == ["ok", "ok", "failed", "failed", "ok", "ok"]

    # The same grid run locally gives the same table, byte for byte.
    local = os.path.join(sweeper.tmp, "local")
    sweeper.run(sweeper.scenario, *GRID, "--out", local)
    with open(os.path.join(out, "summary.csv")) as a, \
            open(os.path.join(local, "summary.csv")) as b:
        assert a.read() == b.read()


def test_a_task_that_runs_again_skips_its_finished_point(sweeper):
    out = os.path.join(sweeper.tmp, "array")
    assert _emit(sweeper, out).returncode == 0
    script = os.path.join(out, "sweep.slurm")
    assert _run_task(sweeper, script, 0).returncode == 0
    again = _run_task(sweeper, script, 0)
    assert again.returncode == 0 and "skipped (finished earlier)" in again.stdout
    assert len(sweeper.runs()) == 1


def test_a_task_outside_the_array_or_without_an_id_is_refused(sweeper):
    out = os.path.join(sweeper.tmp, "array")
    assert _emit(sweeper, out).returncode == 0
    script = os.path.join(out, "sweep.slurm")
    beyond = _run_task(sweeper, script, 6)
    assert beyond.returncode == 2 and "the sweep has points 0 to 5" in beyond.stderr
    unset = _run_task(sweeper, script, None)
    assert unset.returncode != 0 and "run this script with sbatch" in unset.stderr
    assert sweeper.runs() == []
