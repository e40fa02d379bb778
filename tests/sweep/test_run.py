"""Running sweeps locally: folders, summary values, resuming, failures, progress."""

import io
import os
import signal
import subprocess
import time

import pytest

from conftest import FIXTURES, load_json, read_summary_csv
from nbox_sweep.progress import Progress, estimate_left, format_duration


def _sweep(sweeper, *extra, out="out", env=None):
    return sweeper.run(sweeper.scenario, *extra, "--out", os.path.join(sweeper.tmp, out),
                       "-j", "2", env=env)


GRID = ("--vary", "job.world_size=4,8", "--vary", "topology.host_link=25Gbps,100Gbps")
NAMES = ["world_size=4,host_link=25Gbps", "world_size=4,host_link=100Gbps",
         "world_size=8,host_link=25Gbps", "world_size=8,host_link=100Gbps"]


def test_every_point_gets_its_own_folder_and_command(sweeper):
    done = _sweep(sweeper, *GRID, "--set", "workload.iterations=2")
    assert done.returncode == 0, done.stderr
    out = os.path.join(sweeper.tmp, "out")
    assert sorted(sweeper.runs()) == sorted(NAMES)
    for index, name in enumerate(NAMES):
        folder = os.path.join(out, "points", name)
        point = load_json(os.path.join(folder, "point.json"))
        assert point["index"] == index
        assert point["command"][2:] == [
            "--set", "workload.iterations=2",
            "--set", f"job.world_size={name.split(',')[0].split('=')[1]}",
            "--set", f"topology.host_link={name.split('host_link=')[1]}",
            "--out", folder]
        settings = load_json(os.path.join(folder, "results.json"))["scenario"]["settings"]
        assert settings["workload.iterations"] == "2"
    manifest = load_json(os.path.join(out, "sweep.json"))
    assert [p["name"] for p in manifest["points"]] == NAMES


def test_summary_holds_each_point_results(sweeper):
    assert _sweep(sweeper, *GRID, "--vary", "network.ecn=on,off").returncode == 0
    out = os.path.join(sweeper.tmp, "out")
    rows = read_summary_csv(os.path.join(out, "summary.csv"))
    json_rows = load_json(os.path.join(out, "summary.json"))["rows"]
    assert len(rows) == len(json_rows) == 8
    for row, json_row in zip(rows, json_rows):
        results = load_json(os.path.join(out, "points", row["point"], "results.json"))
        settings = results["scenario"]["settings"]
        assert row["status"] == "ok" and row["error"] == ""
        for key in ("job.world_size", "topology.host_link", "network.ecn"):
            assert row[key] == settings[key] == json_row[key]
        # The CSV holds the very numbers of results.json, not rounded copies.
        assert float(row["steady_iteration_time_s"]) == results["steady_iteration_time_s"]
        assert json_row["steady_iteration_time_s"] == results["steady_iteration_time_s"]
        for key in ("drops", "retransmissions", "ecn_marks", "peak_queue_bytes"):
            assert int(row[key]) == json_row[key] == results["network"][key]


def test_derived_figures_match_a_hand_checked_run(sweeper):
    # fixtures/results.json: steady iterations 1 and 2 expose 0.020 s and 0.024 s; the last
    # iteration's AllReduces reach 10 and 14 GB/s, its one AllGather 7.5 GB/s.
    done = _sweep(sweeper, "--vary", "job.seed=1",
                  env={"FAKE_COSIM_RESULTS": os.path.join(FIXTURES, "results.json")})
    assert done.returncode == 0, done.stderr
    row = load_json(os.path.join(sweeper.tmp, "out", "summary.json"))["rows"][0]
    assert row["steady_iteration_time_s"] == 0.122
    assert row["steady_exposed_comm_s"] == pytest.approx(0.022, abs=1e-15)
    assert row["busbw_GBps_AllReduce"] == 12.0
    assert row["busbw_GBps_AllGather"] == 7.5
    assert (row["drops"], row["retransmissions"], row["ecn_marks"],
            row["peak_queue_bytes"]) == (3, 4, 0, 123456)
    assert "122.000" in done.stdout and "12.00" in done.stdout  # the terminal table


def test_a_second_run_skips_finished_points(sweeper):
    assert _sweep(sweeper, *GRID).returncode == 0
    summary = os.path.join(sweeper.tmp, "out", "summary.csv")
    with open(summary) as f:
        first = f.read()
    done = _sweep(sweeper, *GRID)
    assert done.returncode == 0
    assert len(sweeper.runs()) == 4  # nothing ran again
    assert done.stderr.count("skipped (finished earlier)") == 4
    with open(summary) as f:
        assert f.read() == first


def test_extending_the_grid_runs_only_the_new_points(sweeper):
    assert _sweep(sweeper, *GRID).returncode == 0
    done = _sweep(sweeper, "--vary", "job.world_size=4,8,16",
                  "--vary", "topology.host_link=25Gbps,100Gbps")
    assert done.returncode == 0
    assert sorted(sweeper.runs()[4:]) == ["world_size=16,host_link=100Gbps",
                                          "world_size=16,host_link=25Gbps"]
    assert len(read_summary_csv(os.path.join(sweeper.tmp, "out", "summary.csv"))) == 6


def test_a_failing_point_is_recorded_and_the_others_finish(sweeper):
    done = _sweep(sweeper, "--vary", "job.world_size=4,13,8")
    assert done.returncode == 1
    rows = {r["point"]: r for r in read_summary_csv(os.path.join(sweeper.tmp, "out",
                                                                 "summary.csv"))}
    assert rows["world_size=4"]["status"] == rows["world_size=8"]["status"] == "ok"
    failed = rows["world_size=13"]
    assert failed["status"] == "failed" and failed["exit_code"] == "1"
    assert "ran out of events" in failed["error"]
    assert failed["steady_iteration_time_s"] == ""
    assert "world_size=13: failed" in done.stderr
    # Running again retries only the failed point.
    _sweep(sweeper, "--vary", "job.world_size=4,13,8")
    assert sweeper.runs().count("world_size=4") == 1
    assert not os.path.exists(os.path.join(sweeper.tmp, "out", "points", "world_size=13",
                                           "results.json"))


def test_a_crash_is_reported_with_its_signal(sweeper):
    assert _sweep(sweeper, "--vary", "network.tcp_cc=cubic,abort").returncode == 1
    row = load_json(os.path.join(sweeper.tmp, "out", "summary.json"))["rows"][1]
    assert row["status"] == "failed" and "killed by SIGABRT" in row["error"]


def test_a_value_nbox_cosim_rejects_is_an_invalid_point(sweeper):
    # This fake nbox-cosim has no --check, so the value is judged when the point runs.
    done = _sweep(sweeper, "--vary", "topology.host_link=25Gbps,40Gbs")
    assert done.returncode == 1
    assert "has no --check" in done.stderr
    row = load_json(os.path.join(sweeper.tmp, "out", "summary.json"))["rows"][1]
    assert row["status"] == "invalid" and row["exit_code"] == 2
    assert "expected a rate such as 100Gbps" in row["error"]


def test_a_point_over_its_time_limit_fails(sweeper):
    done = _sweep(sweeper, "--vary", "job.seed=1", "--timeout", "0.3",
                  env={"FAKE_COSIM_SLEEP": "20"})
    assert done.returncode == 1
    row = load_json(os.path.join(sweeper.tmp, "out", "summary.json"))["rows"][0]
    assert row["status"] == "failed" and "timed out after 0.3 s" in row["error"]


def test_a_folder_is_not_resumed_with_another_base(sweeper):
    assert _sweep(sweeper, "--vary", "job.seed=1,2").returncode == 0
    done = _sweep(sweeper, "--vary", "job.seed=1,2", "--set", "network.ecn=on")
    assert done.returncode == 2 and "another base" in done.stderr
    with open(sweeper.scenario, "a") as f:
        f.write("# edited\n")
    done = _sweep(sweeper, "--vary", "job.seed=1,2")
    assert done.returncode == 2 and "changed" in done.stderr
    assert len(sweeper.runs()) == 2


def test_zip_runs_paired_values_only(sweeper):
    done = _sweep(sweeper, "--vary", "job.world_size=4,8", "--vary", "network.ecn=on,off",
                  "--zip")
    assert done.returncode == 0, done.stderr
    assert sorted(sweeper.runs()) == ["world_size=4,ecn=on", "world_size=8,ecn=off"]


def test_an_interrupted_sweep_records_nothing_and_resumes(sweeper):
    out = os.path.join(sweeper.tmp, "out")
    cmd = [sweeper.launcher, sweeper.scenario, "--vary", "job.world_size=4,8", "--out", out,
           "-j", "2", "--cosim", sweeper.fake]
    # Its own session, so the signal reaches it and its nbox-cosim processes as Ctrl-C would.
    proc = subprocess.Popen(cmd, env=dict(sweeper.env, FAKE_COSIM_SLEEP="30"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 20
    while not all(os.path.exists(os.path.join(out, "points", name, "cosim.err"))
                  for name in ("world_size=4", "world_size=8")):
        assert time.monotonic() < deadline and proc.poll() is None, "the points never started"
        time.sleep(0.05)
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130 and "interrupted" in stderr
    for name in ("world_size=4", "world_size=8"):
        assert not os.path.exists(os.path.join(out, "points", name, "status.json"))
    done = _sweep(sweeper, "--vary", "job.world_size=4,8")
    assert done.returncode == 0 and sorted(sweeper.runs()) == ["world_size=4", "world_size=8"]


def test_collect_rebuilds_the_summary(sweeper):
    assert _sweep(sweeper, *GRID).returncode == 0
    out = os.path.join(sweeper.tmp, "out")
    with open(os.path.join(out, "summary.csv")) as f:
        first = f.read()
    os.remove(os.path.join(out, "summary.csv"))
    done = sweeper.run("collect", out)
    assert done.returncode == 0, done.stderr
    with open(os.path.join(out, "summary.csv")) as f:
        assert f.read() == first
    assert "4 points: 4 ok" in done.stdout


def test_plain_progress_has_one_line_per_point_with_time_left(sweeper):
    done = _sweep(sweeper, *GRID)
    lines = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert [line.split("]")[0] for line in lines] == ["[1/4", "[2/4", "[3/4", "[4/4"]
    assert all("left)" in line for line in lines[:3])


def test_progress_bar_on_a_terminal():
    now = [0.0]
    stream = io.StringIO()
    progress = Progress(4, stream, tty=True, jobs=1, clock=lambda: now[0])
    progress.redraw()
    assert "0/4 points" in stream.getvalue() and "estimating time left" in stream.getvalue()
    now[0] = 10.0
    progress.finished("a", "ok", 10.0, skipped=False)
    # One point in 10 s, three to go: 30 s left.
    assert stream.getvalue().endswith("1/4 points, 0 running, 00:10 elapsed, ~00:30 left")
    assert "\r\033[K" in stream.getvalue()
    progress.finished("b", "failed", 1.0, skipped=False, error="boom\nlast line")
    assert "[2/4] b: failed in 1.0 s\n    last line\n" in stream.getvalue()


def test_time_left_estimate():
    assert estimate_left(10.0, 0, 5, jobs=1) is None
    # Two runs took 10 s together: 5 s each; 3 points left.
    assert estimate_left(10.0, 2, 3, jobs=1) == 15.0
    assert estimate_left(10.0, 2, 3, jobs=2) == 7.5
    assert estimate_left(10.0, 2, 3, jobs=8) == 5.0  # only 3 can run at once
    assert format_duration(75) == "01:15" and format_duration(3725) == "1:02:05"
