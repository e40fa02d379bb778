"""Pictures of a whole sweep, drawn from DIR/summary.csv and saved beside it.

    iteration_time.png  steady iteration time and exposed communication against the x key,
                        one line per value of the lines key
    busbw.png           bus bandwidth of each collective type, same axes

With more than two varied keys, one picture is drawn per combination of the other keys'
values (iteration_time__<those values>.png). Points that did not finish leave a gap.
"""

import math
import os
from typing import Dict, List, Optional, Sequence, Tuple

from nbox_sweep.errors import SweepError
from nbox_sweep.grid import point_name, short_keys
from nbox_sweep.plots.canvas import plt, save_beside
from nbox_sweep.plots.run_tables import read_csv
from nbox_sweep.summary import BUSBW_PREFIX
from nbox_sweep.sweep_dir import SUMMARY_CSV, Plan, SweepDir


def resolve_key(name: str, keys: Sequence[str]) -> str:
    """A varied key given in full (network.ecn) or by its part after the dot (ecn)."""
    matches = [k for k in keys if k == name or k.split(".", 1)[1] == name]
    if len(matches) != 1:
        raise SweepError(f"'{name}' is not one varied key of this sweep (varied: "
                         f"{', '.join(keys)})")
    return matches[0]


def choose_axes(plan: Plan, x_key: Optional[str],
                lines_key: Optional[str]) -> Tuple[str, Optional[str]]:
    keys = plan.varied_keys()
    x = resolve_key(x_key, keys) if x_key else keys[0]
    if lines_key:
        lines = resolve_key(lines_key, keys)
        if lines == x:
            raise SweepError(f"--x and --lines are both {x}")
    else:
        lines = next((k for k in keys if k != x), None)
    return x, lines


def _as_number(text: str) -> Optional[float]:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def x_positions(values: Sequence[str]) -> Tuple[List[float], bool]:
    """Numbers are placed at their value; anything else (25Gbps, on) in --vary order."""
    numbers = [_as_number(v) for v in values]
    if all(n is not None for n in numbers):
        return numbers, True
    return [float(i) for i in range(len(values))], False


def _figure_groups(plan: Plan, rows: List[Dict], x: str,
                   lines: Optional[str]) -> List[Tuple[str, List[Dict]]]:
    """(file-name suffix, rows) for each combination of the keys on neither axis."""
    others = [k for k in plan.varied_keys() if k not in (x, lines)]
    if not others:
        return [("", rows)]
    names = short_keys(plan.varied_keys())
    groups: Dict[str, List[Dict]] = {}
    for row in rows:
        suffix = "__" + point_name([(k, row[k]) for k in others], names)
        groups.setdefault(suffix, []).append(row)
    return list(groups.items())


def _number(row: Dict, column: str) -> float:
    text = row.get(column, "")
    return float(text) if row["status"] == "ok" and text not in ("", None) else math.nan


def _draw_lines(ax, plan: Plan, rows: List[Dict], x: str, lines: Optional[str], column: str,
                scale: float) -> None:
    x_values = next(v.values for v in plan.varies if v.key == x)
    positions, numeric = x_positions(x_values)
    line_values = next((v.values for v in plan.varies if v.key == lines), (None,))
    for line_value in line_values:
        ys = []
        for x_value in x_values:
            match = [r for r in rows
                     if r[x] == x_value and (lines is None or r[lines] == line_value)]
            ys.append(_number(match[0], column) * scale if match else math.nan)
        if all(math.isnan(y) for y in ys):
            continue
        label = None if lines is None else f"{line_value}"
        ax.plot(positions, ys, marker="o", label=label)
    if not numeric:
        ax.set_xticks(positions, x_values)
    ax.set_xlabel(x)
    if lines is not None and ax.get_legend_handles_labels()[0]:
        ax.legend(title=lines, fontsize=8)


def plot_iteration_time(plan: Plan, summary_csv: str, x: str, lines: Optional[str]) -> List[str]:
    rows = read_csv(summary_csv)
    pngs = []
    for suffix, group in _figure_groups(plan, rows, x, lines):
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6.5), sharex=True)
        _draw_lines(top, plan, group, x, lines, "steady_iteration_time_s", 1e3)
        top.set_ylabel("steady iteration time (ms)")
        top.set_xlabel("")
        _draw_lines(bottom, plan, group, x, lines, "steady_exposed_comm_s", 1e3)
        bottom.set_ylabel("exposed communication (ms)")
        top.set_title(os.path.basename(plan.scenario) + suffix.replace("__", "  "))
        for ax in (top, bottom):
            ax.set_ylim(bottom=0)
        pngs.append(save_beside(fig, summary_csv, "iteration_time" + suffix))
    return pngs


def plot_busbw(plan: Plan, summary_csv: str, x: str, lines: Optional[str]) -> List[str]:
    rows = read_csv(summary_csv)
    columns = [c for c in (rows[0].keys() if rows else []) if c.startswith(BUSBW_PREFIX)]
    if not columns:
        return []
    pngs = []
    for suffix, group in _figure_groups(plan, rows, x, lines):
        fig, axes = plt.subplots(len(columns), 1, figsize=(7, 3.4 * len(columns)),
                                 sharex=True, squeeze=False)
        for ax, column in zip(axes[:, 0], columns):
            _draw_lines(ax, plan, group, x, lines, column, 1.0)
            ax.set_ylabel(f"{column[len(BUSBW_PREFIX):]} bus bandwidth (GB/s)")
            ax.set_ylim(bottom=0)
        axes[0, 0].set_title("Bus bandwidth, last iteration" + suffix.replace("__", "  "))
        pngs.append(save_beside(fig, summary_csv, "busbw" + suffix))
    return pngs


def plot_sweep(sweep: SweepDir, x_key: Optional[str], lines_key: Optional[str]) -> List[str]:
    plan = sweep.read_plan()
    summary_csv = sweep.file(SUMMARY_CSV)
    if not os.path.isfile(summary_csv):
        raise SweepError(f"{summary_csv} is missing: run `nbox-sweep collect {sweep.path}` "
                         f"first")
    x, lines = choose_axes(plan, x_key, lines_key)
    return (plot_iteration_time(plan, summary_csv, x, lines)
            + plot_busbw(plan, summary_csv, x, lines))
