"""Throughput and queue of the busiest ports over time, from a run's links.csv.

nbox-cosim writes links.csv when output.link_sample is set: header
`time_s,port,from,to,gbps,queue_bytes`, one row per port per sample, where gbps is the port's
throughput over the interval ending at time_s and queue_bytes its backlog at time_s.
"""

from typing import Dict, List, Tuple

from nbox_sweep.errors import SweepError
from nbox_sweep.plots.canvas import plt, save_beside
from nbox_sweep.plots.run_tables import read_csv

REQUIRED = ("time_s", "port", "from", "to", "gbps", "queue_bytes")

# port -> (label, [(time_s, gbps, queue_bytes), ...])
Series = Dict[int, Tuple[str, List[Tuple[float, float, int]]]]


def read_links(path: str) -> Series:
    rows = read_csv(path)
    if rows and any(c not in rows[0] for c in REQUIRED):
        raise SweepError(f"{path}: expected the columns {', '.join(REQUIRED)}")
    series: Series = {}
    for line, row in enumerate(rows, start=2):
        try:
            port = int(row["port"])
            sample = (float(row["time_s"]), float(row["gbps"]), int(row["queue_bytes"]))
        except ValueError as e:
            raise SweepError(f"{path}:{line}: time_s, port, gbps and queue_bytes must be "
                             "numbers") from e
        label = f"{row['from']}→{row['to']}"
        series.setdefault(port, (label, []))[1].append(sample)
    return series


def busiest_ports(series: Series, top: int) -> List[int]:
    """The `top` ports that carried the most bytes (throughput x interval), busiest first;
    ties go to the lower port number so the choice is stable."""
    def carried(port: int) -> float:
        samples = series[port][1]
        total, previous = 0.0, None
        for time_s, gbps, _ in samples:
            if previous is not None:
                total += gbps * (time_s - previous)
            previous = time_s
        return total
    return sorted(series, key=lambda p: (-carried(p), p))[:top]


def plot_links(csv_path: str, top: int) -> str:
    series = read_links(csv_path)
    ports = busiest_ports(series, top)
    fig, (rate_ax, queue_ax) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    for port in ports:
        label, samples = series[port]
        times = [t * 1e3 for t, _, _ in samples]
        rate_ax.plot(times, [g for _, g, _ in samples], label=label, linewidth=1)
        queue_ax.plot(times, [q / 1e3 for _, _, q in samples], label=label, linewidth=1)
    rate_ax.set_ylabel("throughput (Gb/s)")
    rate_ax.set_title(f"The {len(ports)} busiest of {len(series)} ports over time")
    queue_ax.set_ylabel("queue (KB)")
    queue_ax.set_xlabel("time since job start (ms)")
    if ports:
        rate_ax.legend(fontsize=7, ncol=2, loc="upper right")
    return save_beside(fig, csv_path)
