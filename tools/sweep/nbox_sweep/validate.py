"""Checks a sweep before anything runs, asking nbox-cosim itself.

1. Every varied or fixed key must be one that `nbox-cosim --list-keys` lists.
2. If nbox-cosim has `--check`, every point's full scenario is validated with it (values,
   cross-key rules); otherwise a point with a bad value is rejected when it runs (exit status
   2, recorded as "invalid"), which costs only the start of one process.
"""

import concurrent.futures as cf
import difflib
import subprocess
from typing import List, Optional, Sequence

from nbox_sweep.cosim import COSIM_OK, Cosim
from nbox_sweep.errors import SweepError
from nbox_sweep.sweep_dir import Plan

_MAX_ERRORS_SHOWN = 5


def check_keys(keys: Sequence[str], known: Sequence[str]) -> None:
    problems = []
    for key in keys:
        if key not in known:
            near = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            problems.append(f"unknown scenario key {key}{hint}")
    if problems:
        raise SweepError("; ".join(problems) + " — `nbox-cosim --list-keys` lists them all")


def _check_point(cosim: Cosim, plan: Plan, index: int) -> Optional[str]:
    point = plan.points[index]
    cmd = cosim.command(plan.scenario, plan.point_overrides(point), check=True)
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    if done.returncode == COSIM_OK:
        return None
    message = done.stderr.strip() or f"exit status {done.returncode}"
    return f"point {point.name}: {message}"


def check_points(cosim: Cosim, plan: Plan, jobs: int) -> None:
    """Raises SweepError naming the points nbox-cosim --check rejects."""
    with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        errors: List[str] = [e for e in pool.map(lambda i: _check_point(cosim, plan, i),
                                                 range(len(plan.points))) if e]
    if errors:
        shown = errors[:_MAX_ERRORS_SHOWN]
        more = len(errors) - len(shown)
        text = "\n".join(shown) + (f"\n... and {more} more" if more else "")
        raise SweepError(f"{len(errors)} of {len(plan.points)} points are not valid "
                         f"scenarios:\n{text}")


def validate_plan(cosim: Cosim, plan: Plan, jobs: int) -> bool:
    """Checks the plan; returns whether the points were checked in full (--check)."""
    check_keys(plan.varied_keys() + [k for k, _ in plan.sets], cosim.known_keys())
    if not cosim.has_check():
        return False
    check_points(cosim, plan, jobs)
    return True
