"""Pictures of one run, each drawn from a CSV in the run's folder and saved beside it.

    collectives.png  bus bandwidth of each collective of the last iteration
    ports.png        bytes sent and peak queue of the busiest ports (end-of-run counters)
    timeline.png     per-rank compute and collective spans (needs trace.json)
    traffic.png      heatmap of bytes between every pair of ranks (needs traffic.csv)
    links.png        throughput and queue over time of the busiest ports (needs links.csv,
                     written when the run set output.link_sample)
"""

import json
import os
from typing import List, Optional

from nbox_sweep.plots.canvas import plt, save_beside
from nbox_sweep.plots.links import plot_links
from nbox_sweep.plots.run_tables import read_csv, write_run_tables
from nbox_sweep.plots.traffic import traffic_matrix

# Lanes: compute, and the communication streams (one "collectives" stream, or one per
# parallelism in hybrid-parallel jobs).
_LANE_COLOURS = {"compute": "tab:blue", "collectives": "tab:orange", "tp": "tab:green",
                 "pp": "tab:purple", "dp": "tab:orange", "ep": "tab:red", "emb": "tab:brown"}


def plot_collectives(csv_path: str) -> str:
    rows = read_csv(csv_path)
    fig, ax = plt.subplots(figsize=(max(5, 0.5 * len(rows) + 2), 3.5))
    ops = sorted({r["op"] for r in rows})
    colours = {op: f"C{i}" for i, op in enumerate(ops)}
    for i, r in enumerate(rows):
        ax.bar(i, float(r["busbw_GBps"]), color=colours[r["op"]],
               label=r["op"] if r["op"] not in ax.get_legend_handles_labels()[1] else None)
    ax.set_xticks(range(len(rows)), [r["label"] for r in rows], rotation=45, ha="right")
    ax.set_ylabel("bus bandwidth (GB/s)")
    iteration = rows[0]["iteration"] if rows else "?"
    ax.set_title(f"Collectives of iteration {iteration}")
    if ops:
        ax.legend()
    return save_beside(fig, csv_path)


def _port_label(row) -> str:
    return f"{row['from']}→{row['to']}"


def _ranking(ax, rows, value, scale, colour, xlabel, title) -> None:
    """Horizontal bars of `value` for `rows`, first at the top."""
    ax.barh(range(len(rows)), [int(r[value]) / scale for r in rows], color=colour)
    ax.set_yticks(range(len(rows)), [_port_label(r) for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    if not rows:
        ax.text(0.5, 0.5, "none", ha="center", va="center", transform=ax.transAxes)


def plot_ports(csv_path: str, top: int) -> str:
    """Three rankings of the ports: most bytes sent, deepest queue, most drops."""
    rows = read_csv(csv_path)
    # Queues that matter for congestion are switch queues; a host NIC's backlog is its own
    # TCP sending ahead. Ports say which they are when results.json has from_switch.
    switch_rows = [r for r in rows if r.get("from_switch") == "True"]
    queue_rows = switch_rows if any(r.get("from_switch") for r in rows) else rows
    queue_kind = "switch ports" if queue_rows is switch_rows else "all ports"
    by_bytes = rows[:top]  # ports.csv is busiest first
    by_queue = sorted(queue_rows, key=lambda r: -int(r["peak_queue_bytes"]))[:top]
    by_drops = sorted((r for r in rows if int(r["drops"])), key=lambda r: -int(r["drops"]))[:top]
    fig, axes = plt.subplots(1, 3, figsize=(14, max(2.5, 0.3 * top + 1.2)))
    _ranking(axes[0], by_bytes, "tx_bytes", 1e6, "tab:blue", "bytes sent (MB, headers "
             "included)", "Most bytes sent")
    _ranking(axes[1], by_queue, "peak_queue_bytes", 1e3, "tab:orange", "peak queue (KB)",
             f"Deepest queues ({queue_kind})")
    _ranking(axes[2], by_drops, "drops", 1, "tab:red", "packets dropped", "Most drops")
    fig.suptitle(f"Ports at the end of the run (top {top} of {len(rows)} in each ranking)")
    fig.tight_layout()
    return save_beside(fig, csv_path)


def plot_timeline(csv_path: str) -> str:
    rows = read_csv(csv_path)
    ranks = sorted({int(r["rank"]) for r in rows})
    lanes = [lane for lane in _LANE_COLOURS if any(r["lane"] == lane for r in rows)]
    lanes += sorted({r["lane"] for r in rows} - set(lanes))
    height = 0.8 / max(1, len(lanes))
    fig, ax = plt.subplots(figsize=(11, max(2.5, 0.45 * len(ranks) + 1.2)))
    for li, lane in enumerate(lanes):
        spans = {}
        for r in rows:
            if r["lane"] == lane:
                start = float(r["start_us"]) / 1e3
                spans.setdefault(int(r["rank"]), []).append(
                    (start, float(r["end_us"]) / 1e3 - start))
        for rank, bars in spans.items():
            y = ranks.index(rank) - 0.4 + li * height
            ax.broken_barh(bars, (y, height * 0.9), facecolors=_LANE_COLOURS.get(lane, "grey"),
                           edgecolor="white", linewidth=0.3, label=lane)
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), loc="upper right", fontsize=8)
    ax.set_yticks(range(len(ranks)), [f"rank {r}" for r in ranks])
    ax.invert_yaxis()
    ax.set_xlabel("time since job start (ms)")
    ax.set_title("Per-rank timeline")
    return save_beside(fig, csv_path)


def plot_traffic(csv_path: str, world_size: Optional[int] = None) -> str:
    matrix = traffic_matrix(csv_path, world_size)
    n = len(matrix)
    fig, ax = plt.subplots(figsize=(max(4, 0.35 * n + 2.5), max(3.5, 0.35 * n + 1.5)))
    image = ax.imshow([[b / 1e6 for b in row] for row in matrix], cmap="viridis",
                      origin="upper", interpolation="nearest")
    fig.colorbar(image, ax=ax, label="MB sent")
    ax.set_xlabel("destination rank")
    ax.set_ylabel("source rank")
    ax.grid(False)
    if n <= 32:
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
    ax.set_title("Traffic matrix")
    return save_beside(fig, csv_path)


def _world_size(run_dir: str) -> Optional[int]:
    """The run's job.world_size, so ranks that sent nothing still get a row and a column."""
    with open(os.path.join(run_dir, "results.json"), encoding="utf-8") as f:
        text = json.load(f)["scenario"]["settings"].get("job.world_size")
    return int(text) if text and text.isdigit() else None


def plot_run(run_dir: str, top: int) -> List[str]:
    """Writes the run's CSV tables and every picture they allow; returns the PNG paths."""
    tables = write_run_tables(run_dir)
    pngs = [plot_collectives(tables["collectives"]), plot_ports(tables["ports"], top)]
    if "timeline" in tables:
        pngs.append(plot_timeline(tables["timeline"]))
    traffic = os.path.join(run_dir, "traffic.csv")
    if os.path.isfile(traffic):
        pngs.append(plot_traffic(traffic, _world_size(run_dir)))
    links = os.path.join(run_dir, "links.csv")
    if os.path.isfile(links):
        pngs.append(plot_links(links, top))
    return pngs
