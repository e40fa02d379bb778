"""Running a sweep's points in parallel on this machine: -j nbox-cosim processes at a time.

Each point is independent: one that fails is recorded and the others go on. Points finished
by an earlier run are skipped, so an interrupted sweep continues where it stopped.
"""

import concurrent.futures as cf
from typing import List, Optional

from nbox_sweep.point_run import OK, LiveProcesses, Outcome, is_finished, run_point
from nbox_sweep.progress import Progress
from nbox_sweep.sweep_dir import Plan, SweepDir

_REDRAW_S = 1.0  # how often the progress bar's clock moves while nothing finishes


def run_sweep(plan: Plan, sweep: SweepDir, jobs: int, progress: Progress,
              timeout_s: Optional[float] = None) -> List[Outcome]:
    """Runs every unfinished point; returns the outcomes in point order."""
    outcomes: List[Optional[Outcome]] = [None] * len(plan.points)
    to_run = []
    for point in plan.points:
        if is_finished(sweep.point_dir(point)):
            outcomes[point.index] = Outcome(point, OK, 0, "", 0.0, skipped=True)
            progress.finished(point.name, OK, 0.0, skipped=True)
        else:
            to_run.append(point)
    live = LiveProcesses()
    pool = cf.ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        futures = {pool.submit(run_point, plan, p, sweep.point_dir(p), timeout_s, live): p
                   for p in to_run}
        pending = set(futures)
        while pending:
            progress.running = sum(1 for f in pending if f.running())
            progress.redraw()
            done, pending = cf.wait(pending, timeout=_REDRAW_S,
                                    return_when=cf.FIRST_COMPLETED)
            progress.running = sum(1 for f in pending if f.running())
            for future in sorted(done, key=lambda f: futures[f].index):
                outcome = future.result()
                outcomes[outcome.point.index] = outcome
                progress.finished(outcome.point.name, outcome.status, outcome.wall_s,
                                  outcome.skipped, outcome.error)
    except KeyboardInterrupt:
        live.terminate_all()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        progress.close()
    return [o for o in outcomes if o is not None]
