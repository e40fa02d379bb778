"""Progress of a sweep on the terminal: a redrawn bar with the time left on a TTY, one plain
line per finished point otherwise (logs, CI, Slurm)."""

import time
from typing import Optional, TextIO

_BAR_WIDTH = 24


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def estimate_left(run_wall_s: float, runs_done: int, points_left: int,
                  jobs: int) -> Optional[float]:
    """Time left if each remaining point takes the mean time of the points run so far and
    -j of them run at once; None before any run finished."""
    if runs_done == 0:
        return None
    return run_wall_s / runs_done * points_left / max(1, min(jobs, points_left))


class Progress:
    def __init__(self, total: int, stream: TextIO, tty: bool, jobs: int = 1,
                 clock=time.monotonic):
        self.total = total
        self.jobs = jobs
        self.stream = stream
        self.tty = tty
        self.clock = clock
        self.start = clock()
        self.done = 0       # points finished, skipped ones included
        self.runs_done = 0  # points run in this invocation
        self.run_wall_s = 0.0  # their wall times, added up
        self.skipped = 0
        self.not_ok = 0
        self.running = 0    # set by the runner: processes alive now
        self._drawn = False

    def _left_text(self) -> str:
        left = estimate_left(self.run_wall_s, self.runs_done, self.total - self.done, self.jobs)
        return "estimating time left" if left is None else f"~{format_duration(left)} left"

    def _bar(self) -> str:
        filled = _BAR_WIDTH * self.done // self.total if self.total else _BAR_WIDTH
        counts = f"{self.done}/{self.total} points"
        if self.not_ok:
            counts += f", {self.not_ok} not ok"
        elapsed = format_duration(self.clock() - self.start)
        left = "done" if self.done == self.total else self._left_text()
        return (f"[{'#' * filled}{'.' * (_BAR_WIDTH - filled)}] {counts}, "
                f"{self.running} running, {elapsed} elapsed, {left}")

    def _clear(self) -> None:
        if self.tty and self._drawn:
            self.stream.write("\r\033[K")
            self._drawn = False

    def redraw(self) -> None:
        if self.tty:
            self._clear()
            self.stream.write(self._bar())
            self.stream.flush()
            self._drawn = True

    def finished(self, name: str, status: str, wall_s: float, skipped: bool,
                 error: str = "") -> None:
        self.done += 1
        if skipped:
            self.skipped += 1
        else:
            self.runs_done += 1
            self.run_wall_s += wall_s
        if status != "ok":
            self.not_ok += 1
        # Lines worth keeping are printed on TTYs too: failures, and every point otherwise.
        if not self.tty or status != "ok":
            self._clear()
            how = "skipped (finished earlier)" if skipped else f"{status} in {wall_s:.1f} s"
            line = f"[{self.done}/{self.total}] {name}: {how}"
            if not self.tty and not skipped and self.done < self.total:
                line += f" ({self._left_text()})"
            if error:
                line += "\n    " + error.splitlines()[-1]
            self.stream.write(line + "\n")
        self.redraw()

    def close(self) -> None:
        self.running = 0
        if self.tty:
            self.redraw()
            self.stream.write("\n")
            self.stream.flush()
