"""The summary table: one row per point, built only from the files in the point folders.

Columns: point, status, exit_code, error, one column per varied key, then

  steady_iteration_time_s   results.json's own figure (mean over the iterations after the
                            first, which is a TCP warm-up)
  steady_exposed_comm_s     mean exposed communication over those same iterations
  exposed_s_<kind>          per-rank mean time waiting on <kind> communication (tp, cp, pp,
                            dp, ep, emb, other) over those iterations
  bubble_s                  per-rank mean pipeline bubble over those iterations
                            (both: only the columns some point has a non-zero figure in)
  memory_per_gpu_bytes      the fullest pipeline stage's memory estimate (a closed form, not
                            simulated: workloads/README.md, "Memory per GPU"); only when some
                            point has one (transformer and MoE jobs)
  mfu                       results.json's steady model FLOPs utilization (README, "How the
                            numbers are defined"); only when some point has one
  busbw_GBps_<Op>           mean bus bandwidth of the <Op> collectives of the last iteration
  drops, retransmissions, ecn_marks, peak_queue_bytes   network totals from results.json
  pauses, paused_s          PFC pause frames sent and paused port-time, summed over ports
                            (RoCE path; 0 on the TCP path, whose results.json has neither)

A cluster's point (a scenario with [cluster] jobs: docs/CLUSTERS.md) has, for each job,
  <job>:steady_iteration_time_s, <job>:steady_exposed_comm_s, <job>:slowdown (together over
                            alone; empty without cluster.alone)
and steady_iteration_time_s and steady_exposed_comm_s are its slowest job's: the point's
figure is the job that finishes its steps last. Its network totals are the fabric's.

A point that did not finish keeps its parameters, status and error; its figures are empty.
Wall-clock figures stay out (they are in each point's perf.json): the summary of the same
sweep is the same file on every machine.
"""

import csv
import io
import math
import os
from typing import Dict, List, Tuple

from nbox_sweep.point_run import FAILED, INVALID, MISSING, OK, RESULTS, STATUS, is_finished
from nbox_sweep.sweep_dir import (SUMMARY_CSV, SUMMARY_JSON, Plan, SweepDir, read_json,
                                  write_atomically, write_json)
from nbox_sweep.errors import SweepError

FIXED_COLUMNS = ["point", "status", "exit_code", "error"]
METRIC_COLUMNS = ["steady_iteration_time_s", "steady_exposed_comm_s"]
NETWORK_COLUMNS = ["drops", "retransmissions", "ecn_marks", "peak_queue_bytes"]
# results.json key of each PFC column; missing (the TCP path) counts as 0, but a model that
# does not produce pauses (network.absent names "pfc_pauses": the flow model) leaves it empty.
PFC_COLUMNS = {"pauses": "pfc_pauses_sent", "paused_s": "paused_s"}
BUSBW_PREFIX = "busbw_GBps_"
EXPOSED_PREFIX = "exposed_s_"
BUBBLE = "bubble_s"
MEMORY = "memory_per_gpu_bytes"
MFU = "mfu"
# A cluster's jobs' own figures (results.json's "jobs"), as "<job>:<figure>" columns.
CLUSTER_JOB_FIGURES = ["steady_iteration_time_s", "steady_exposed_comm_s", "slowdown"]
CLUSTER_JOB_SEPARATOR = ":"


def _mean(values: List[float]) -> float:
    return math.fsum(values) / len(values)


def steady_iterations(iterations: List[Dict]) -> List[Dict]:
    """The iterations after the first, or the only one (tools/cosim/reports/summary.h's definition of
    the steady iteration time)."""
    return iterations[1:] if len(iterations) > 1 else iterations


def last_iteration_busbw(collectives: List[Dict]) -> Dict[str, float]:
    """Op name -> mean busbw (GB/s) over that op's collectives in the last iteration."""
    if not collectives:
        return {}
    last = max(c["iteration"] for c in collectives)
    by_op: Dict[str, List[float]] = {}
    for c in collectives:
        if c["iteration"] == last:
            by_op.setdefault(c["op"], []).append(c["busbw_GBps"])
    return {op: _mean(values) for op, values in sorted(by_op.items())}


def breakdown_means(steady: List[Dict]) -> Dict[str, float]:
    """Per-kind exposed communication and bubble (the per-rank means of tools/cosim/reports/summary.h),
    averaged over the steady iterations, every kind results.json lists, in its order."""
    breakdowns = [it.get("breakdown") for it in steady]
    if not breakdowns or any(b is None for b in breakdowns):
        return {}
    row = {}
    for kind in breakdowns[0]["exposed_s"]:
        row[EXPOSED_PREFIX + kind] = _mean([b["exposed_s"][kind] for b in breakdowns])
    row[BUBBLE] = _mean([b["bubble_s"] for b in breakdowns])
    return row


def memory_per_gpu(workload) -> object:
    """The fullest stage's estimated bytes per GPU (results.json
    workload.memory_per_gpu_estimate), or None: no estimate (not a transformer job)."""
    estimate = (workload or {}).get("memory_per_gpu_estimate")
    if not estimate:
        return None
    return max(math.fsum([stage["weights_bytes"], stage["gradients_bytes"],
                          stage["optimizer_bytes"], stage["activations_bytes"]])
               for stage in estimate["stages"])


def _network_columns(network: Dict) -> Dict:
    row = {key: network[key] for key in NETWORK_COLUMNS}  # null when the model has none
    absent = network.get("absent", {})
    for column, key in PFC_COLUMNS.items():
        row[column] = None if "pfc_pauses" in absent else network.get(key, 0)
    return row


def metrics_from_cluster_results(results: Dict) -> Dict:
    """The summary figures of a cluster run's results.json (tools/cosim/reports/
    cluster_results.cc): each job's, the slowest job's as the point's, the fabric's totals."""
    row = {}
    for job in results["jobs"]:
        for figure in CLUSTER_JOB_FIGURES:
            row[f"{job['name']}{CLUSTER_JOB_SEPARATOR}{figure}"] = job[figure]
    slowest = max(results["jobs"], key=lambda job: job["steady_iteration_time_s"])
    row["steady_iteration_time_s"] = slowest["steady_iteration_time_s"]
    row["steady_exposed_comm_s"] = slowest["steady_exposed_comm_s"]
    row.update(_network_columns(results["network"]))
    return row


def metrics_from_results(results: Dict) -> Dict:
    """The summary figures of one results.json (format: tools/cosim/reports/results_json.cc)."""
    if "jobs" in results:
        return metrics_from_cluster_results(results)
    network = results["network"]
    steady = steady_iterations(results["iterations"])
    exposed = [it["exposed_comm_s"] for it in steady]
    # Real-rank runs in mirror mode do not measure compute, so their exposed communication is
    # null ("not measured"): the column stays empty rather than the point being unreadable.
    measured = exposed and all(value is not None for value in exposed)
    row = {
        "steady_iteration_time_s": results["steady_iteration_time_s"],
        "steady_exposed_comm_s": _mean(exposed) if measured else None,
    }
    row.update(breakdown_means(steady))
    row[MEMORY] = memory_per_gpu(results.get("workload"))
    row[MFU] = results.get("steady_model_flops_utilization")
    for op, busbw in last_iteration_busbw(results["collectives"]).items():
        row[BUSBW_PREFIX + op] = busbw
    row.update(_network_columns(network))
    return row


def point_row(plan: Plan, sweep: SweepDir, index: int) -> Dict:
    point = plan.points[index]
    folder = sweep.point_dir(point)
    row = {"point": point.name, "status": MISSING, "exit_code": None, "error": "not run yet"}
    row.update(point.params_dict())
    status_path = os.path.join(folder, STATUS)
    if is_finished(folder):
        results_path = os.path.join(folder, RESULTS)
        try:
            row.update(metrics_from_results(read_json(results_path)))
            row.update({"status": OK, "exit_code": 0, "error": ""})
        except (KeyError, TypeError, ValueError, SweepError) as e:
            row.update({"status": FAILED, "error": f"{results_path}: unreadable ({e!r})"})
    elif os.path.isfile(status_path):
        status = read_json(status_path)
        row.update({"status": status["status"], "exit_code": status["exit_code"],
                    "error": status["error"]})
    return row


def columns_of(plan: Plan, rows: List[Dict]) -> List[str]:
    busbw = sorted({key for row in rows for key in row if key.startswith(BUSBW_PREFIX)})
    # The breakdown columns some point has a non-zero figure in (a DDP sweep shows dp alone),
    # in results.json's order.
    breakdown = []
    for row in rows:
        breakdown += [k for k in row if (k.startswith(EXPOSED_PREFIX) or k == BUBBLE) and
                      k not in breakdown]
    breakdown = [k for k in breakdown if any(row.get(k) for row in rows)]
    optional = [key for key in (MEMORY, MFU) if any(row.get(key) is not None for row in rows)]
    jobs = []  # a cluster's, in the order its points name them
    for row in rows:
        jobs += [k for k in row if CLUSTER_JOB_SEPARATOR in k and k not in jobs]
    return (FIXED_COLUMNS + plan.varied_keys() + METRIC_COLUMNS + jobs + breakdown + optional +
            busbw + NETWORK_COLUMNS + list(PFC_COLUMNS))


def build_summary(plan: Plan, sweep: SweepDir) -> Tuple[List[str], List[Dict]]:
    rows = [point_row(plan, sweep, i) for i in range(len(plan.points))]
    columns = columns_of(plan, rows)
    return columns, [{c: row.get(c) for c in columns} for row in rows]


def _csv_cell(value) -> str:
    # repr of a float is its shortest exact form: the CSV holds results.json's very numbers.
    return "" if value is None else str(value)


def summary_csv_text(columns: List[str], rows: List[Dict]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(row[c]) for c in columns])
    return out.getvalue()


def write_summary(plan: Plan, sweep: SweepDir) -> Tuple[List[str], List[Dict]]:
    """Writes DIR/summary.csv and DIR/summary.json; returns their columns and rows."""
    columns, rows = build_summary(plan, sweep)
    write_atomically(sweep.file(SUMMARY_CSV), summary_csv_text(columns, rows))
    write_json(sweep.file(SUMMARY_JSON), {
        "scenario": plan.scenario,
        "set": {k: v for k, v in plan.sets},
        "vary": {v.key: list(v.values) for v in plan.varies},
        "zip": plan.zip_lists,
        "columns": columns,
        "rows": rows,
    })
    return columns, rows


def count_statuses(rows: List[Dict]) -> Dict[str, int]:
    """Status -> number of points: ok first, then the others in a fixed order."""
    counts = {OK: 0}
    for status in (FAILED, INVALID, MISSING):
        if any(row["status"] == status for row in rows):
            counts[status] = 0
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return counts
