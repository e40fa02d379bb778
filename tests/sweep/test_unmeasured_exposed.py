"""A results.json whose exposed communication is not measured (a real-rank run in mirror mode
writes null) gives an empty column, not an unreadable point."""

import json
import os

from nbox_sweep.summary import metrics_from_results

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def _results():
    with open(os.path.join(FIXTURES, "results.json")) as f:
        return json.load(f)


def test_measured_exposed_is_the_mean_over_steady_iterations():
    results = _results()
    steady = results["iterations"][1:] or results["iterations"]
    expected = sum(it["exposed_comm_s"] for it in steady) / len(steady)
    row = metrics_from_results(results)
    assert abs(row["steady_exposed_comm_s"] - expected) <= 1e-15


def test_null_exposed_gives_an_empty_column():
    results = _results()
    for iteration in results["iterations"]:
        iteration["compute_s"] = None
        iteration["exposed_comm_s"] = None
    row = metrics_from_results(results)
    assert row["steady_exposed_comm_s"] is None
    assert row["steady_iteration_time_s"] == results["steady_iteration_time_s"]
