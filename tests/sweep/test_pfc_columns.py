"""The summary's PFC columns: read from a RoCE results.json, 0 for a TCP one."""

import json
import os

from nbox_sweep.summary import PFC_COLUMNS, metrics_from_results

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def _tcp_results():
    with open(os.path.join(FIXTURES, "results.json")) as f:
        return json.load(f)


def test_tcp_results_have_no_pauses():
    row = metrics_from_results(_tcp_results())
    assert (row["pauses"], row["paused_s"]) == (0, 0)


def test_roce_results_give_their_pauses():
    results = _tcp_results()
    results["network"]["pfc_pauses_sent"] = 4733
    results["network"]["pfc_pauses_received"] = 4733
    results["network"]["paused_s"] = 0.0159
    row = metrics_from_results(results)
    assert (row["pauses"], row["paused_s"]) == (4733, 0.0159)
    assert list(PFC_COLUMNS) == ["pauses", "paused_s"]
