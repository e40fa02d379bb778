"""The traffic matrix of a run: payload bytes from every rank to every other rank.

Read from the run's traffic.csv, header `src,dst,bytes` (one row per ordered pair of ranks;
further columns such as `channel` are allowed, and rows of the same pair are added up).
"""

from typing import Dict, List, Optional

from nbox_sweep.errors import SweepError
from nbox_sweep.plots.run_tables import read_csv

REQUIRED = ("src", "dst", "bytes")


def traffic_matrix(path: str, world_size: Optional[int] = None) -> List[List[int]]:
    """matrix[src][dst] = bytes; the size is world_size, or the largest rank seen + 1."""
    rows = read_csv(path)
    if rows and any(c not in rows[0] for c in REQUIRED):
        raise SweepError(f"{path}: expected the columns {', '.join(REQUIRED)}")
    totals: Dict = {}
    for line, row in enumerate(rows, start=2):
        try:
            src, dst, size = int(row["src"]), int(row["dst"]), int(row["bytes"])
        except ValueError as e:
            raise SweepError(f"{path}:{line}: src, dst and bytes must be whole numbers") from e
        if src < 0 or dst < 0 or size < 0:
            raise SweepError(f"{path}:{line}: negative rank or byte count")
        totals[(src, dst)] = totals.get((src, dst), 0) + size
    n = world_size if world_size else 1 + max((max(k) for k in totals), default=-1)
    if any(max(k) >= n for k in totals):
        raise SweepError(f"{path}: a rank is not below the world size {n}")
    matrix = [[0] * n for _ in range(n)]
    for (src, dst), size in totals.items():
        matrix[src][dst] = size
    return matrix
