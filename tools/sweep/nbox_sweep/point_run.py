"""Running one point: one nbox-cosim process, its output kept in the point's folder.

Shared by the local runner (many points in parallel) and by a Slurm array task (one point),
so both leave exactly the same files behind for `collect`.
"""

import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Optional, Set

from nbox_sweep.cosim import COSIM_BAD_INPUT, COSIM_OK, command_line
from nbox_sweep.grid import Point
from nbox_sweep.sweep_dir import Plan, read_json, tail, write_json

RESULTS = "results.json"
STATUS = "status.json"
STDOUT = "cosim.out"
STDERR = "cosim.err"

# A process ended by these signals was interrupted, not failed.
_INTERRUPTIONS = (-signal.SIGINT, -signal.SIGTERM)

# Point statuses, as the summary shows them.
OK = "ok"              # results.json written
FAILED = "failed"      # nbox-cosim ran and failed (or crashed, or timed out)
INVALID = "invalid"    # nbox-cosim rejected the point's scenario (exit status 2)
MISSING = "missing"    # never run (e.g. a Slurm task that has not run yet)


@dataclass
class Outcome:
    point: Point
    status: str
    exit_code: Optional[int]
    error: str
    wall_s: float  # how long this attempt took; 0 when skipped
    skipped: bool = False  # finished in an earlier run


def recorded_failure(folder: str) -> Optional[dict]:
    """The status.json of a point whose last attempt failed, else None."""
    path = os.path.join(folder, STATUS)
    if not os.path.isfile(path):
        return None
    status = read_json(path)
    return status if status.get("status") != OK else None


def is_finished(folder: str) -> bool:
    """A point is finished when nbox-cosim wrote its results.json and its last attempt did
    not fail afterwards (nbox-cosim writes results.json atomically, so it is never partial)."""
    return os.path.isfile(os.path.join(folder, RESULTS)) and recorded_failure(folder) is None


class LiveProcesses:
    """The nbox-cosim processes running now, so an interrupted sweep can stop them."""

    def __init__(self):
        self._lock = threading.Lock()
        self._procs: Set[subprocess.Popen] = set()
        self.stopping = False

    def add(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.add(proc)
            if self.stopping:
                proc.terminate()

    def remove(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.discard(proc)

    def terminate_all(self) -> None:
        with self._lock:
            self.stopping = True
            for proc in self._procs:
                proc.terminate()


def _describe_exit(exit_code: int) -> str:
    if exit_code < 0:
        try:
            name = signal.Signals(-exit_code).name
        except ValueError:
            name = f"signal {-exit_code}"
        return f"nbox-cosim was killed by {name}"
    return f"nbox-cosim exited with status {exit_code}"


def run_point(plan: Plan, point: Point, folder: str, timeout_s: Optional[float] = None,
              live: Optional[LiveProcesses] = None) -> Outcome:
    """Runs the point unless it is finished; records how the attempt ended in status.json."""
    if is_finished(folder):
        return Outcome(point, OK, COSIM_OK, "", 0.0, skipped=True)
    os.makedirs(folder, exist_ok=True)
    status_path = os.path.join(folder, STATUS)
    for stale in (status_path, os.path.join(folder, RESULTS)):
        if os.path.exists(stale):
            os.remove(stale)  # left by an earlier, failed attempt; this one replaces it
    cmd = command_line(plan.cosim, plan.scenario, plan.point_overrides(point), folder)
    start = time.monotonic()
    timed_out = False
    with open(os.path.join(folder, STDOUT), "w") as out, \
            open(os.path.join(folder, STDERR), "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        if live is not None:
            live.add(proc)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.kill()
            proc.wait()
        finally:
            if live is not None:
                live.remove(proc)
    wall_s = time.monotonic() - start
    if (live is not None and live.stopping) or proc.returncode in _INTERRUPTIONS:
        # Stopped from outside (Ctrl-C, scancel): not a result of the point, so nothing is
        # recorded and the next run tries it again.
        return Outcome(point, MISSING, None, "interrupted", wall_s)
    exit_code = None if timed_out else proc.returncode
    if timed_out:
        status, error = FAILED, f"timed out after {timeout_s:g} s (--timeout)"
    elif exit_code == COSIM_OK and os.path.isfile(os.path.join(folder, RESULTS)):
        status, error = OK, ""
    elif exit_code == COSIM_OK:
        status, error = FAILED, "nbox-cosim exited with status 0 but wrote no results.json"
    else:
        status = INVALID if exit_code == COSIM_BAD_INPUT else FAILED
        stderr_tail = tail(os.path.join(folder, STDERR))
        if exit_code < 0 or not stderr_tail:  # a crash: say so before whatever it printed
            error = "\n".join(filter(None, [_describe_exit(exit_code), stderr_tail]))
        else:
            error = stderr_tail
    write_json(status_path, {"status": status, "exit_code": exit_code, "error": error,
                             "wall_s": round(wall_s, 3)})
    return Outcome(point, status, exit_code, error, wall_s)
