"""Pictures from fixture data: the CSV tables they are drawn from, checked by hand, and PNGs
that exist beside those tables."""

import json
import os
import shutil

import pytest

from conftest import FIXTURES, load_json, png_size, read_summary_csv
from nbox_sweep.errors import SweepError
from nbox_sweep.plots.run_tables import write_run_tables
from nbox_sweep.plots.links import busiest_ports, plot_links, read_links
from nbox_sweep.plots.traffic import traffic_matrix


@pytest.fixture
def run_dir(tmp_path):
    """A run folder as nbox-cosim leaves it, plus the traffic.csv it will write."""
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("results.json", "trace.json", "traffic.csv"):
        shutil.copy(os.path.join(FIXTURES, name), folder / name)
    return str(folder)


def _assert_png(path, min_side=100):
    assert os.path.getsize(path) > 1000, path
    width, height = png_size(path)
    assert width >= min_side and height >= min_side, (path, width, height)


def test_run_tables_hold_the_fixture_values(run_dir):
    tables = write_run_tables(run_dir)
    collectives = read_summary_csv(tables["collectives"])
    assert [(c["iteration"], c["label"], c["op"], c["busbw_GBps"]) for c in collectives] == [
        ("2", "bucket0", "AllReduce", "10.0"), ("2", "bucket1", "AllReduce", "14.0"),
        ("2", "gather0", "AllGather", "7.5")]
    ports = read_summary_csv(tables["ports"])
    assert [(p["from"], p["to"], p["tx_bytes"]) for p in ports] == [
        ("switch0", "host2", "62000000"), ("host1", "switch0", "61000000"),
        ("host0", "switch0", "60000000"), ("switch0", "host0", "59000000")]
    assert ports[0]["drops"] == "3" and ports[0]["peak_queue_bytes"] == "123456"
    timeline = read_summary_csv(tables["timeline"])
    assert [(t["rank"], t["lane"], t["name"], t["start_us"], t["end_us"]) for t in timeline] == [
        ("0", "collectives", "bucket0", "250.0", "370.0"),
        ("0", "compute", "forward", "0.0", "100.0"),
        ("0", "compute", "backward", "100.0", "300.0"),
        ("1", "collectives", "bucket0", "260.0", "370.0"),
        ("1", "compute", "forward", "0.0", "100.0"),
        ("1", "compute", "backward", "100.0", "350.5")]


def test_ports_table_keeps_from_switch_when_results_have_it(run_dir):
    path = os.path.join(run_dir, "results.json")
    results = load_json(path)
    for port in results["network"]["ports"]:
        port["from_switch"] = port["from"].startswith("switch")
    with open(path, "w") as f:
        json.dump(results, f)
    ports = read_summary_csv(write_run_tables(run_dir)["ports"])
    assert [(p["from"], p["from_switch"]) for p in ports] == [
        ("switch0", "True"), ("host1", "False"), ("host0", "False"), ("switch0", "True")]


def test_traffic_matrix_adds_channels_and_keeps_silent_ranks(run_dir):
    path = os.path.join(run_dir, "traffic.csv")
    assert traffic_matrix(path, world_size=4) == [
        [0, 1500, 0, 0],
        [0, 0, 1500, 0],
        [7, 0, 0, 1500],
        [1500, 0, 0, 0]]
    assert len(traffic_matrix(path, world_size=6)) == 6
    with pytest.raises(SweepError, match="not below the world size 3"):
        traffic_matrix(path, world_size=3)


def test_traffic_csv_errors_name_the_line(tmp_path):
    bad = tmp_path / "traffic.csv"
    bad.write_text("src,dst,bytes\n0,1,10\n1,x,5\n")
    with pytest.raises(SweepError, match=r"traffic.csv:3: src, dst and bytes"):
        traffic_matrix(str(bad))
    bad.write_text("from,to,bytes\n0,1,10\n")
    with pytest.raises(SweepError, match="expected the columns src, dst, bytes"):
        traffic_matrix(str(bad))


def test_run_pictures_are_written_beside_their_csv(sweeper, run_dir):
    done = sweeper.run("plot", run_dir)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.split()
    for name in ("collectives", "ports", "timeline", "traffic"):
        png = os.path.join(run_dir, name + ".png")
        assert png in printed
        assert os.path.isfile(os.path.join(run_dir, name + ".csv"))
        _assert_png(png)


def test_a_run_without_trace_or_traffic_gets_the_other_pictures(sweeper, run_dir):
    os.remove(os.path.join(run_dir, "trace.json"))
    os.remove(os.path.join(run_dir, "traffic.csv"))
    assert sweeper.run("plot", run_dir).returncode == 0
    assert sorted(f for f in os.listdir(run_dir) if f.endswith(".png")) == [
        "collectives.png", "ports.png"]


def test_sweep_pictures_are_written_beside_the_summary(sweeper):
    out = os.path.join(sweeper.tmp, "out")
    sweeper.run(sweeper.scenario, "--vary", "topology.host_link=25Gbps,50Gbps,100Gbps",
                "--vary", "job.world_size=4,8,13", "--set", "output.trace=chrome",
                "--out", out)  # world size 13 fails: its line is missing, not an error
    done = sweeper.run("plot", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [os.path.join(out, "iteration_time.png"),
                                   os.path.join(out, "busbw.png")]
    for png in done.stdout.split():
        _assert_png(png)
    # A run folder of the sweep has its own pictures.
    point = os.path.join(out, "points", "host_link=50Gbps,world_size=8")
    assert sweeper.run("plot", point).returncode == 0
    _assert_png(os.path.join(point, "timeline.png"))


def test_a_third_varied_key_gives_one_picture_per_value(sweeper):
    out = os.path.join(sweeper.tmp, "out")
    sweeper.run(sweeper.scenario, "--vary", "job.world_size=4,8", "--vary", "network.ecn=on,off",
                "--vary", "topology.host_link=25Gbps,100Gbps", "--out", out)
    done = sweeper.run("plot", out, "--x", "host_link", "--lines", "job.world_size")
    assert done.returncode == 0, done.stderr
    assert sorted(os.path.basename(p) for p in done.stdout.split()) == [
        "busbw__ecn=off.png", "busbw__ecn=on.png",
        "iteration_time__ecn=off.png", "iteration_time__ecn=on.png"]


def test_plot_rejects_unknown_axes_and_foreign_folders(sweeper, tmp_path):
    out = os.path.join(sweeper.tmp, "out")
    sweeper.run(sweeper.scenario, "--vary", "job.world_size=4,8", "--out", out)
    done = sweeper.run("plot", out, "--x", "tcp_cc")
    assert done.returncode == 2 and "'tcp_cc' is not one varied key" in done.stderr
    done = sweeper.run("plot", str(tmp_path))
    assert done.returncode == 2 and "neither a sweep folder" in done.stderr


def test_links_picks_the_ports_that_carried_most_and_draws_them(tmp_path):
    links = tmp_path / "links.csv"
    shutil.copy(os.path.join(FIXTURES, "links.csv"), links)
    series = read_links(str(links))
    assert series[1] == ("sw0→h0", [(0.0001, 50.0, 2000), (0.0002, 50.0, 4000),
                                    (0.0003, 50.0, 1000)])
    # Carried (Gb/s x s over the intervals after the first sample), worked by hand:
    # port 0: 10e-4 + 10e-4 = 0.002; port 1: 50e-4 + 50e-4 = 0.01; port 2: 120e-4 + 0 = 0.012.
    assert busiest_ports(series, 2) == [2, 1]
    assert busiest_ports(series, 5) == [2, 1, 0]
    _assert_png(plot_links(str(links), 2))
    assert os.path.isfile(tmp_path / "links.png")


def test_links_csv_errors_name_the_line(tmp_path):
    bad = tmp_path / "links.csv"
    bad.write_text("time_s,port,from,to,gbps,queue_bytes\n0.1,0,a,b,1,0\n0.2,x,a,b,1,0\n")
    with pytest.raises(SweepError, match=r"links.csv:3: time_s, port"):
        read_links(str(bad))
