"""Grid expansion, zip, point names, and the checks that stop a bad sweep before it runs."""

import os

import pytest

from nbox_sweep.errors import SweepError
from nbox_sweep.grid import Vary, check_keys_distinct, expand, parse_set, parse_vary


def test_vary_keeps_values_verbatim_in_order():
    assert parse_vary("topology.host_link=25Gbps, 100Gbps,50Gbps") == Vary(
        "topology.host_link", ("25Gbps", "100Gbps", "50Gbps"))


@pytest.mark.parametrize("text", [
    "host_link=25Gbps",            # no section
    "topology.host_link",          # no '='
    "topology.host_link=",         # no value
    "topology.host_link=1,,2",     # empty value
    "topology.host_link=1,2,1",    # the same value twice
    "Topology.Host=1",             # keys are lower case
    "output.dir=a,b",              # nbox-sweep chooses output folders
])
def test_bad_vary_is_rejected(text):
    with pytest.raises(SweepError):
        parse_vary(text)


def test_set_parses_one_value():
    assert parse_set("workload.iterations=2") == ("workload.iterations", "2")
    with pytest.raises(SweepError):
        parse_set("iterations=2")


def test_a_key_is_varied_or_set_once():
    a = Vary("network.ecn", ("on", "off"))
    with pytest.raises(SweepError, match="twice"):
        check_keys_distinct([a, a], [])
    with pytest.raises(SweepError, match="both varied"):
        check_keys_distinct([a], [("network.ecn", "on")])
    with pytest.raises(SweepError, match="twice"):
        check_keys_distinct([], [("job.seed", "1"), ("job.seed", "2")])


def test_grid_is_every_combination_first_vary_outermost():
    points = expand([Vary("job.world_size", ("4", "8")),
                     Vary("network.ecn", ("on", "off", "x"))], zip_lists=False)
    assert [p.index for p in points] == list(range(6))
    assert [p.params for p in points] == [
        (("job.world_size", "4"), ("network.ecn", "on")),
        (("job.world_size", "4"), ("network.ecn", "off")),
        (("job.world_size", "4"), ("network.ecn", "x")),
        (("job.world_size", "8"), ("network.ecn", "on")),
        (("job.world_size", "8"), ("network.ecn", "off")),
        (("job.world_size", "8"), ("network.ecn", "x")),
    ]
    assert points[4].overrides() == ["job.world_size=8", "network.ecn=off"]


def test_zip_pairs_the_ith_values():
    points = expand([Vary("job.world_size", ("4", "8", "16")),
                     Vary("topology.host_link", ("25Gbps", "50Gbps", "100Gbps"))],
                    zip_lists=True)
    assert [p.params_dict() for p in points] == [
        {"job.world_size": "4", "topology.host_link": "25Gbps"},
        {"job.world_size": "8", "topology.host_link": "50Gbps"},
        {"job.world_size": "16", "topology.host_link": "100Gbps"},
    ]


def test_zip_needs_lists_of_one_length():
    with pytest.raises(SweepError, match="job.world_size has 2, network.ecn has 3"):
        expand([Vary("job.world_size", ("4", "8")), Vary("network.ecn", ("a", "b", "c"))],
               zip_lists=True)


def test_a_sweep_varies_something():
    with pytest.raises(SweepError, match="at least one --vary"):
        expand([], zip_lists=False)


def test_names_use_short_keys_and_values():
    points = expand([Vary("topology.host_link", ("25Gbps",)), Vary("network.ecn", ("on",))],
                    zip_lists=False)
    assert points[0].name == "host_link=25Gbps,ecn=on"


def test_names_keep_the_section_when_two_keys_share_a_name():
    points = expand([Vary("topology.kind", ("star",)), Vary("workload.kind", ("ddp",)),
                     Vary("job.seed", ("3",))], zip_lists=False)
    assert points[0].name == "topology.kind=star,workload.kind=ddp,seed=3"


def test_names_depend_only_on_the_point_own_values():
    small = expand([Vary("network.ecn", ("on",)), Vary("job.seed", ("1",))], False)
    large = expand([Vary("network.ecn", ("off", "on")), Vary("job.seed", ("1", "2"))], False)
    assert small[0].name in [p.name for p in large]


def test_unsafe_values_give_distinct_folder_names():
    points = expand([Vary("topology.file", ("a/b.txt", "a_b.txt", "a b.txt", ".."))], False)
    names = [p.name for p in points]
    assert len(set(names)) == 4
    assert names[1] == "file=a_b.txt"
    for name in names:
        assert "/" not in name and " " not in name and name not in (".", "..")
        assert os.path.basename(name) == name


def test_very_long_names_are_shortened_but_stay_distinct():
    long_a, long_b = "x" * 300 + "a", "x" * 300 + "b"
    points = expand([Vary("workload.model", (long_a, long_b))], False)
    assert points[0].name != points[1].name
    assert all(len(p.name) <= 180 for p in points)


def test_bad_vary_syntax_fails_before_anything_runs(sweeper):
    out = os.path.join(sweeper.tmp, "out")
    done = sweeper.run(sweeper.scenario, "--vary", "host_link=25Gbps", "--out", out)
    assert done.returncode == 2
    assert "expected section.key=value" in done.stderr
    assert sweeper.runs() == [] and not os.path.exists(out)


def test_unknown_key_fails_before_anything_runs(sweeper):
    out = os.path.join(sweeper.tmp, "out")
    done = sweeper.run(sweeper.scenario, "--vary", "job.world_size=4,8",
                       "--vary", "network.tcp_ccc=cubic,dctcp", "--out", out)
    assert done.returncode == 2
    assert "unknown scenario key network.tcp_ccc (did you mean network.tcp_cc?)" in done.stderr
    assert sweeper.runs() == [] and not os.path.exists(out)


def test_bad_value_fails_before_anything_runs_when_cosim_has_check(sweeper):
    out = os.path.join(sweeper.tmp, "out")
    done = sweeper.run(sweeper.scenario, "--vary", "topology.host_link=25Gbps,40Gbs",
                       "--out", out, env={"FAKE_COSIM_CHECK": "1"})
    assert done.returncode == 2
    assert "1 of 2 points are not valid" in done.stderr
    assert "point host_link=40Gbs:" in done.stderr and "expected a rate" in done.stderr
    assert sweeper.runs() == [] and not os.path.exists(out)


def test_missing_scenario_and_missing_cosim_are_bad_input(sweeper):
    out = os.path.join(sweeper.tmp, "out")
    done = sweeper.run(os.path.join(sweeper.tmp, "nope.ini"), "--vary", "job.seed=1",
                       "--out", out)
    assert done.returncode == 2 and "scenario file not found" in done.stderr
    done = sweeper.run(sweeper.scenario, "--vary", "job.seed=1", "--out", out,
                       cosim=os.path.join(sweeper.tmp, "no-such-cosim"))
    assert done.returncode == 2 and "nbox-cosim not found" in done.stderr
