"""One small sweep with the real nbox-cosim (NBOX_COSIM): 4 ranks of ResNet-50, one
iteration, two host link rates. A few seconds per point."""

import math
import os
import time

import pytest

from conftest import REPO, load_json, png_size, read_summary_csv

COSIM = os.environ.get("NBOX_COSIM", "")
# ctest always sets NBOX_COSIM (and then a missing binary fails the tests); only a hand run of
# pytest without it skips them.
pytestmark = pytest.mark.skipif(not COSIM, reason="NBOX_COSIM (the real nbox-cosim) not set")

SCENARIO = os.path.join(REPO, "scenarios", "default.ini")
TINY = ("--set", "job.world_size=4", "--set", "workload.model=resnet50",
        "--set", "workload.iterations=1", "--set", "output.trace=chrome")
RATES = ("25Gbps", "100Gbps")


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    """The sweep, run once for the module's tests."""
    return str(tmp_path_factory.mktemp("e2e") / "out")


def _sweep(sweeper, out, vary):
    return sweeper.run(SCENARIO, *TINY, "--vary", vary, "--out", out, "-j", "2", cosim=COSIM)


def test_sweep_runs_and_summarises_real_results(sweeper, sweep_dir):
    done = _sweep(sweeper, sweep_dir, "topology.host_link=" + ",".join(RATES))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = read_summary_csv(os.path.join(sweep_dir, "summary.csv"))
    assert [r["point"] for r in rows] == [f"host_link={rate}" for rate in RATES]
    by_rate = {}
    for row in rows:
        results = load_json(os.path.join(sweep_dir, "points", row["point"], "results.json"))
        assert row["status"] == "ok"
        assert results["scenario"]["settings"]["topology.host_link"] == row["topology.host_link"]
        assert float(row["steady_iteration_time_s"]) == results["steady_iteration_time_s"]
        # One iteration: its exposed communication and its all-reduces are the steady ones.
        assert float(row["steady_exposed_comm_s"]) == results["iterations"][0]["exposed_comm_s"]
        busbw = [c["busbw_GBps"] for c in results["collectives"] if c["op"] == "AllReduce"]
        assert float(row["busbw_GBps_AllReduce"]) == pytest.approx(sum(busbw) / len(busbw))
        for key in ("drops", "retransmissions", "ecn_marks", "peak_queue_bytes"):
            assert int(row[key]) == results["network"][key]
        by_rate[row["topology.host_link"]] = row
    slow, fast = by_rate["25Gbps"], by_rate["100Gbps"]
    # A ring's bus bandwidth cannot beat the host link (25 Gb/s = 3.125 GB/s), and a faster
    # link cannot make the iteration slower.
    assert 0 < float(slow["busbw_GBps_AllReduce"]) <= 3.125
    assert float(fast["busbw_GBps_AllReduce"]) > float(slow["busbw_GBps_AllReduce"])
    assert float(slow["steady_iteration_time_s"]) >= float(fast["steady_iteration_time_s"])


def test_running_again_skips_every_point(sweeper, sweep_dir):
    start = time.monotonic()
    done = _sweep(sweeper, sweep_dir, "topology.host_link=" + ",".join(RATES))
    assert done.returncode == 0
    assert done.stderr.count("skipped (finished earlier)") == 2
    assert time.monotonic() - start < 10  # no simulation ran


def test_plots_of_the_real_sweep_and_one_run(sweeper, sweep_dir):
    done = sweeper.run("plot", sweep_dir, os.path.join(sweep_dir, "points", "host_link=25Gbps"))
    assert done.returncode == 0, done.stderr
    names = sorted(os.path.basename(p) for p in done.stdout.split())
    # nbox-cosim writes traffic.csv on every run, so the traffic matrix is drawn too.
    assert names == ["busbw.png", "collectives.png", "iteration_time.png", "ports.png",
                     "timeline.png", "traffic.png"]
    for png in done.stdout.split():
        width, height = png_size(png)
        assert width > 100 and height > 100


def test_an_unknown_key_is_refused_by_the_real_key_list(sweeper, tmp_path):
    out = str(tmp_path / "bad")
    done = _sweep(sweeper, out, "network.tcp_ccc=cubic,dctcp")
    assert done.returncode == 2
    assert "unknown scenario key network.tcp_ccc (did you mean network.tcp_cc?)" in done.stderr
    assert not os.path.exists(out)


def test_a_bad_value_is_caught_by_nbox_cosim(sweeper, tmp_path):
    out = str(tmp_path / "bad")
    done = _sweep(sweeper, out, "topology.host_link=25Gbs,40Gbs")
    if "has no --check" in done.stderr:  # judged when the point runs
        assert done.returncode == 1
        rows = load_json(os.path.join(out, "summary.json"))["rows"]
        assert [(r["status"], r["exit_code"]) for r in rows] == [("invalid", 2)] * 2
        assert "host_link" in rows[0]["error"] and "25Gbs" in rows[0]["error"]
    else:  # judged before anything runs
        assert done.returncode == 2 and "point host_link=25Gbs" in done.stderr
        assert not os.path.exists(out)


def test_a_sweep_over_tensor_parallelism_splits_exposed_time_by_kind(sweeper, tmp_path):
    """The parallelism keys can be varied, and the summary carries the breakdown per kind:
    t = 1 has no tensor-parallel communication, t = 2 has some; both are pipelined."""
    out = str(tmp_path / "tp")
    scenario = os.path.join(REPO, "tests", "sweep", "fixtures", "transformer_tiny.ini")
    done = sweeper.run(scenario, "--vary", "workload.tensor_parallel=1,2", "--out", out, "-j",
                       "2", cosim=COSIM)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["workload.tensor_parallel"]: r for r in
            read_summary_csv(os.path.join(out, "summary.csv"))}
    assert set(rows) == {"1", "2"}
    for t, row in rows.items():
        results = load_json(os.path.join(out, "points", row["point"], "results.json"))
        breakdown = results["iterations"][0]["breakdown"]  # one iteration: it is the steady one
        for kind in ("tp", "pp", "dp"):
            assert float(row["exposed_s_" + kind]) == breakdown["exposed_s"][kind]
        assert float(row["bubble_s"]) == breakdown["bubble_s"]
        assert float(row["bubble_s"]) > 0  # p = 2
    assert float(rows["1"]["exposed_s_tp"]) == 0
    assert float(rows["2"]["exposed_s_tp"]) > 0
    # The memory estimate of the fullest stage: splitting the layers over two tensor ranks
    # shrinks what each GPU holds.
    for t, row in rows.items():
        stages = load_json(os.path.join(out, "points", row["point"], "results.json"))[
            "workload"]["memory_per_gpu_estimate"]["stages"]
        assert float(row["memory_per_gpu_bytes"]) == max(
            math.fsum([s["weights_bytes"], s["gradients_bytes"], s["optimizer_bytes"],
                       s["activations_bytes"]]) for s in stages)
    assert float(rows["2"]["memory_per_gpu_bytes"]) < float(rows["1"]["memory_per_gpu_bytes"])
    # The MFU column is each point's results.json figure.
    for row in rows.values():
        results = load_json(os.path.join(out, "points", row["point"], "results.json"))
        assert float(row["mfu"]) == results["steady_model_flops_utilization"]
    # No point has expert-parallel or embedding communication: no column for them.
    assert "exposed_s_ep" not in rows["1"] and "exposed_s_emb" not in rows["1"]


def test_a_cluster_sweep_has_each_jobs_figures(sweeper, tmp_path):
    """Placements of the two jobs of scenarios/cluster-two-jobs.ini, each run alone too: every
    job's steady iteration and slowdown in its columns, the slowest job's as the point's."""
    out = str(tmp_path / "cluster")
    scenario = os.path.join(REPO, "scenarios", "cluster-two-jobs.ini")
    done = sweeper.run(scenario, "--vary", "job.placement=packed,spread", "--set",
                       "cluster.alone=on", "--set", "workload.iterations=2", "--out", out,
                       cosim=COSIM)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["job.placement"]: r for r in read_summary_csv(os.path.join(out, "summary.csv"))}
    for placement, row in rows.items():
        jobs = load_json(os.path.join(out, "points", row["point"], "results.json"))["jobs"]
        assert [job["name"] for job in jobs] == ["job-a", "job-b"]
        for job in jobs:
            for figure in ("steady_iteration_time_s", "steady_exposed_comm_s", "slowdown"):
                assert float(row[job["name"] + ":" + figure]) == job[figure]
        assert float(row["steady_iteration_time_s"]) == max(
            job["steady_iteration_time_s"] for job in jobs)
    # Side by side the jobs share no link; spread over every leaf they share the uplinks.
    assert float(rows["packed"]["job-a:slowdown"]) == 1.0
    assert float(rows["spread"]["job-a:slowdown"]) > 1.2
    assert float(rows["spread"]["job-b:slowdown"]) > 1.2
