"""tools/traffic/nbox-messages-to-htsim: a hand-checked conversion, its refusals, and a real
run's messages.csv turned into a file that obeys the rules csg-htsim's ConnectionMatrix::load
checks (datacenter/connection_matrix.cpp: header counts, one start method per connection,
non-zero ids, every trigger declared with a type)."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "traffic", "nbox-messages-to-htsim")
HEADER = "id,iteration,src,dst,group,channel,bytes,op,deps,posted_ns,delivered_ns\n"


def convert(tmp_path, csv_text, *args):
    source = tmp_path / "messages.csv"
    source.write_text(csv_text)
    out = tmp_path / "job.cm"
    run = subprocess.run([sys.executable, TOOL, str(source), str(out), *args],
                         capture_output=True, text=True)
    return run, (out.read_text() if out.exists() else None)


def test_hand_checked_conversion(tmp_path):
    # Rank 0 sends to 1 (id 0), 1 forwards at once (id 1: triggered by 0's delivery), rank 2
    # sends after 500 ns of compute following 1's delivery (id 2: its own start), and rank 0
    # waits for 1 and 2 (id 3: triggered by 2, the later delivery).
    csv_text = HEADER + (
        "0,0,0,1,world,0,100,op a,,0,1000\n"
        "1,0,1,2,world,0,200,op a,0,1000,2500\n"
        "2,0,2,0,world,0,300,\"op, b\",1,3000,4000\n"
        "3,0,0,1,world,1,400,op b,1 2,4000,5000\n")
    run, text = convert(tmp_path, csv_text)
    assert run.returncode == 0, run.stderr
    assert text.splitlines()[1:] == [
        "Nodes 3",
        "Connections 4",
        "Triggers 2",
        "0->1 id 1 start 0 size 100 send_done_trigger 1",
        "1->2 id 2 trigger 1 size 200",
        "2->0 id 3 start 3000000 size 300 send_done_trigger 2",
        "0->1 id 4 trigger 2 size 400",
        "trigger id 1 oneshot",
        "trigger id 2 oneshot",
    ]


def test_one_iteration_alone(tmp_path):
    csv_text = HEADER + (
        "0,0,0,1,world,0,100,op,,0,1000\n"
        "1,1,1,0,world,0,100,op,0,1500,2500\n"
        "2,1,0,1,world,0,100,op,1,2500,3500\n")
    run, text = convert(tmp_path, csv_text, "--iteration", "1", "--nodes", "16")
    assert run.returncode == 0, run.stderr
    assert text.splitlines()[1:] == [
        "Nodes 16", "Connections 2", "Triggers 1",
        "1->0 id 1 start 0 size 100 send_done_trigger 1",
        "0->1 id 2 trigger 1 size 100",
        "trigger id 1 oneshot",
    ]


def test_a_connections_messages_stay_in_order(tmp_path):
    # Two messages posted together on one connection: nbox sent the second after the first,
    # so it waits for the first's end although it depends on nothing; on another channel the
    # connection is another and starts with the first.
    csv_text = HEADER + (
        "0,0,0,1,world,0,100,op,,0,1000\n"
        "1,0,0,1,world,0,100,op,,0,2000\n"
        "2,0,0,1,world,1,100,op,,0,1000\n")
    run, text = convert(tmp_path, csv_text)
    assert run.returncode == 0, run.stderr
    assert text.splitlines()[4:] == [
        "0->1 id 1 start 0 size 100 send_done_trigger 1",
        "0->1 id 2 trigger 1 size 100",
        "0->1 id 3 start 0 size 100",
        "trigger id 1 oneshot",
    ]


@pytest.mark.parametrize("csv_text, error", [
    ("id,src\n", "messages.csv:1: expected the header"),
    (HEADER + "0,0,0,1,world,0,100,op,1,0,10\n", "messages.csv:2: dependency 1 is not an earlier"),
    (HEADER + "0,0,0,1,world,0,3000000000,op,,0,10\n", "messages.csv:2: 3000000000 bytes do not fit"),
    (HEADER + "0,0,0,1,world,0,100,op,,0,\n", "messages.csv:2: message 0 was never delivered"),
    (HEADER + "0,0,0,1,world,0,100,op,,0\n", "messages.csv:2: 10 fields, expected 11"),
    (HEADER, "messages.csv: no messages"),
    (HEADER + "0,0,0,1,world,0,100,op,,x,10\n", "messages.csv:2: invalid literal"),
])
def test_refusals_name_the_line(tmp_path, csv_text, error):
    run, text = convert(tmp_path, csv_text)
    assert run.returncode == 2
    assert error in run.stderr
    assert text is None, "nothing written"


def check_connection_matrix(text):
    """The checks of csg-htsim's loader, and every connection reachable from a start."""
    lines = [line.split() for line in text.splitlines() if line and not line.startswith("#")]
    header = {tokens[0]: int(tokens[1]) for tokens in lines[:3]}
    connections = [tokens for tokens in lines[3:] if "->" in tokens[0]]
    triggers = [tokens for tokens in lines[3:] if tokens[0] == "trigger"]
    assert header["Connections"] == len(connections)
    assert header["Triggers"] == len(triggers)
    declared = {int(t[2]) for t in triggers}
    assert all(t[3] == "oneshot" for t in triggers)
    ids, fired, sizes = set(), [], 0
    for tokens in connections:
        fields = dict(zip(tokens[1::2], tokens[2::2]))
        assert int(fields["id"]) > 0 and fields["id"] not in ids
        ids.add(fields["id"])
        assert ("start" in fields) != ("trigger" in fields)
        if "trigger" in fields:
            assert int(fields["trigger"]) in declared
        if "send_done_trigger" in fields:
            fired.append(int(fields["send_done_trigger"]))
        src, dst = (int(x) for x in tokens[0].split("->"))
        assert max(src, dst) < header["Nodes"]
        sizes += int(fields["size"])
    assert sorted(fired) == sorted(declared), "every trigger fired by exactly one connection"
    return sizes


def test_a_real_runs_messages(tmp_path):
    cosim = os.environ["NBOX_COSIM"]
    out = tmp_path / "run"
    subprocess.run([cosim, os.path.join(ROOT, "tests/cosim/fixtures/trace_replay.ini"),
                    "--set", "output.messages=csv", "--out", str(out)],
                   check=True, capture_output=True)
    target = tmp_path / "job.cm"
    subprocess.run([sys.executable, TOOL, str(out / "messages.csv"), str(target)], check=True)
    rows = (out / "messages.csv").read_text().splitlines()[1:]
    assert check_connection_matrix(target.read_text()) == sum(int(r.split(",")[6]) for r in rows)
