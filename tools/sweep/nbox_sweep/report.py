"""The table nbox-sweep prints when a sweep or a collect is done (the CSV has every column)."""

from typing import Dict, List

from nbox_sweep.summary import BUSBW_PREFIX


def _ms(value) -> str:
    return "" if value is None else f"{value * 1e3:.3f}"


def _gbps(value) -> str:
    return "" if value is None else f"{value:.2f}"


def summary_table(rows: List[Dict], columns: List[str]) -> str:
    busbw = [c for c in columns if c.startswith(BUSBW_PREFIX)]
    header = ["point", "status", "iteration ms", "exposed comm ms"]
    header += [f"{c[len(BUSBW_PREFIX):]} busbw GB/s" for c in busbw]
    header += ["drops", "retrans", "ecn"]
    table = [header]
    for row in rows:
        table.append([row["point"], row["status"], _ms(row["steady_iteration_time_s"]),
                      _ms(row["steady_exposed_comm_s"])]
                     + [_gbps(row[c]) for c in busbw]
                     + ["" if row[c] is None else str(row[c])
                        for c in ("drops", "retransmissions", "ecn_marks")])
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = []
    for line in table:
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1])]
        cells += [cell.rjust(width) for cell, width in zip(line[2:], widths[2:])]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"
