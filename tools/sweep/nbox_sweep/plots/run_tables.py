"""The CSV tables a run's pictures are drawn from, taken from nbox-cosim's output files.

    collectives.csv  the last iteration's collectives (results.json)
    ports.csv        every port's end-of-run counters, busiest first (results.json)
    timeline.csv     every compute and collective span of every rank (trace.json)
    traffic.csv      bytes between every pair of ranks: written by nbox-cosim itself, only read
                     here (see traffic.py)

No matplotlib here: these tables are useful without pictures and tested on their own.
"""

import csv
import json
import os
from typing import Dict, List, Sequence

from nbox_sweep.errors import SweepError

COLLECTIVES_COLUMNS = ["iteration", "label", "op", "bytes", "ranks", "time_s", "algbw_GBps",
                       "busbw_GBps"]
# Written when results.json has them (a newer nbox-cosim): the communicator, its kind, and the
# time from the last member's start to the end, which algbw and busbw divide.
COLLECTIVES_OPTIONAL_COLUMNS = ["group", "parallelism", "run_s"]
PORTS_COLUMNS = ["from", "to", "link", "tx_bytes", "tx_packets", "drops", "ecn_marks",
                 "peak_queue_bytes"]
# Written when results.json has it (a newer nbox-cosim): whether the port is a switch's.
PORTS_OPTIONAL_COLUMNS = ["from_switch"]
TIMELINE_COLUMNS = ["rank", "lane", "name", "iteration", "start_us", "end_us"]
# trace.json's thread ids (tools/cosim/reports/chrome_trace.cc) when it names no threads: thread 0 is
# compute, thread 1 the (only) communication stream. Newer traces name every thread.
TRACE_LANES = {0: "compute", 1: "collectives"}


def write_csv(path: str, columns: Sequence[str], rows: List[Dict]) -> str:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if row[c] is None else row[c] for c in columns])
    return path


def read_csv(path: str) -> List[Dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _load(path: str):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def last_iteration_collectives(results: Dict) -> List[Dict]:
    collectives = results["collectives"]
    if not collectives:
        return []
    last = max(c["iteration"] for c in collectives)
    columns = COLLECTIVES_COLUMNS + COLLECTIVES_OPTIONAL_COLUMNS
    return [{k: c.get(k) for k in columns} for c in collectives if c["iteration"] == last]


def ports_busiest_first(results: Dict) -> List[Dict]:
    """Every port, by bytes sent (most first), ties in results.json's order (link id)."""
    ports = [{k: p.get(k) if k in PORTS_OPTIONAL_COLUMNS else p[k]
              for k in PORTS_COLUMNS + PORTS_OPTIONAL_COLUMNS}
             for p in results["network"]["ports"]]
    return sorted(ports, key=lambda p: -p["tx_bytes"])


def timeline_spans(trace: Dict) -> List[Dict]:
    """Complete ('X') events of a Chrome trace as spans, by rank, lane, then start."""
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = []
    for e in trace["traceEvents"]:
        if e.get("ph") != "X":
            continue
        lane = names.get((e["pid"], e["tid"])) or TRACE_LANES.get(e["tid"], f"thread {e['tid']}")
        spans.append({
            "rank": e["pid"],
            "lane": lane,
            "name": e["name"],
            "iteration": e.get("args", {}).get("iteration"),
            "start_us": e["ts"],
            "end_us": e["ts"] + e["dur"],
        })
    spans.sort(key=lambda s: (s["rank"], s["lane"], s["start_us"], s["name"]))
    return spans


def write_run_tables(run_dir: str) -> Dict[str, str]:
    """Writes the CSVs a run's outputs allow; returns {table name: path}."""
    written = {}
    results = _load(os.path.join(run_dir, "results.json"))
    if "jobs" in results:
        names = ", ".join(f"results-{job['name']}.json" for job in results["jobs"])
        raise SweepError(f"{run_dir} is a cluster's run: its jobs' reports are {names}; "
                         "plotting a cluster's run is not there yet (its summary row has each "
                         "job's figures)")
    written["collectives"] = write_csv(os.path.join(run_dir, "collectives.csv"),
                                       COLLECTIVES_COLUMNS + COLLECTIVES_OPTIONAL_COLUMNS,
                                       last_iteration_collectives(results))
    written["ports"] = write_csv(os.path.join(run_dir, "ports.csv"),
                                 PORTS_COLUMNS + PORTS_OPTIONAL_COLUMNS,
                                 ports_busiest_first(results))
    trace_path = os.path.join(run_dir, "trace.json")
    if os.path.isfile(trace_path):
        written["timeline"] = write_csv(os.path.join(run_dir, "timeline.csv"),
                                        TIMELINE_COLUMNS, timeline_spans(_load(trace_path)))
    return written
