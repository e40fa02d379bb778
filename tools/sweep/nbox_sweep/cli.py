"""nbox-sweep's command line.

    nbox-sweep SCENARIO --vary KEY=V1,V2,... [--vary ...] [--zip] [-j N] --out DIR
               [--set KEY=VALUE ...] [--timeout S] [--emit slurm [--sbatch OPTION ...]]
    nbox-sweep collect DIR
    nbox-sweep task DIR [--index I]        (one Slurm array task; default SLURM_ARRAY_TASK_ID)
    nbox-sweep plot DIR [DIR ...] [--x KEY] [--lines KEY] [--top N]

Exit status: 0 every point ok, 1 some point failed (or is missing), 2 bad input (nothing
run), 130 interrupted.
"""

import argparse
import os
import sys
from typing import List, Optional

from nbox_sweep import grid
from nbox_sweep.cosim import Cosim
from nbox_sweep.errors import EXIT_BAD_INPUT, EXIT_OK, EXIT_POINTS_FAILED, SweepError
from nbox_sweep.point_run import OK, run_point
from nbox_sweep.progress import Progress
from nbox_sweep.report import summary_table
from nbox_sweep.runner import run_sweep
from nbox_sweep.slurm import TASK_ID_VARIABLE, write_slurm_script
from nbox_sweep.summary import count_statuses, write_summary
from nbox_sweep.sweep_dir import SUMMARY_CSV, Plan, SweepDir, file_sha256, point_by_index
from nbox_sweep.validate import validate_plan

SUBCOMMANDS = ("collect", "task", "plot")
EXIT_INTERRUPTED = 130


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nbox-sweep",
        description="Run nbox-cosim over a grid of scenario settings, one folder per point, "
                    "and summarise. Other commands: `nbox-sweep collect DIR`, "
                    "`nbox-sweep task DIR`, `nbox-sweep plot DIR ...` (each has --help).")
    p.add_argument("scenario", help="scenario file (.ini)")
    p.add_argument("--vary", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="a scenario key and its values, e.g. network.ecn=on,off (repeatable: "
                        "the grid is every combination, first --vary outermost)")
    p.add_argument("--zip", action="store_true",
                   help="pair the i-th values of every --vary instead of the grid")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="fix a key for every point (repeatable)")
    p.add_argument("--out", required=True, metavar="DIR", help="the sweep folder")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="points run at once (default: the number of CPUs)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="stop and fail a point that runs longer than this")
    p.add_argument("--emit", choices=["slurm"],
                   help="write DIR/sweep.slurm (a job array, task i = point i) instead of "
                        "running the points here")
    p.add_argument("--sbatch", action="append", default=[], metavar="OPTION",
                   help="with --emit slurm: an extra #SBATCH line, e.g. --sbatch=--partition=cpu")
    p.add_argument("--array-limit", type=int, default=0, metavar="N",
                   help="with --emit slurm: at most N array tasks at once")
    p.add_argument("--cosim", metavar="PATH", help="the nbox-cosim to run")
    return p


def _collect_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nbox-sweep collect",
        description="Build DIR/summary.csv and summary.json from the point folders (after "
                    "a Slurm array, or to refresh).")
    p.add_argument("dir", metavar="DIR")
    return p


def _task_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nbox-sweep task",
        description=f"Run one point of a sweep folder: point --index, else "
                    f"${TASK_ID_VARIABLE} (a Slurm array task).")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--index", type=int, default=None)
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS")
    return p


def _plot_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nbox-sweep plot",
        description="Draw PNGs beside the CSVs they come from. A sweep folder gives "
                    "iteration_time.png and busbw.png beside summary.csv; a run folder (one "
                    "with results.json, e.g. DIR/points/NAME) gives collectives, ports, "
                    "timeline (needs output.trace=chrome) and traffic (needs traffic.csv).")
    p.add_argument("dirs", nargs="+", metavar="DIR")
    p.add_argument("--x", metavar="KEY", help="varied key on the x axis (default: the first)")
    p.add_argument("--lines", metavar="KEY",
                   help="varied key drawn as one line per value (default: the second)")
    p.add_argument("--top", type=int, default=16, metavar="N",
                   help="ports shown in ports.png: the N busiest (default 16)")
    return p


def _default_cosim(default_cosim: Optional[str]) -> Optional[str]:
    return os.environ.get("NBOX_COSIM") or default_cosim


def make_plan(args, cosim: Cosim) -> Plan:
    scenario = os.path.abspath(args.scenario)
    if not os.path.isfile(scenario):
        raise SweepError(f"scenario file not found: {args.scenario}")
    varies = [grid.parse_vary(text) for text in args.vary]
    sets = [grid.parse_set(text) for text in args.set]
    grid.check_keys_distinct(varies, sets)
    points = grid.expand(varies, args.zip)
    return Plan(scenario, file_sha256(scenario), sets, varies, args.zip, points, cosim.path)


def _print_summary(plan: Plan, sweep: SweepDir, stream) -> int:
    columns, rows = write_summary(plan, sweep)
    stream.write(summary_table(rows, columns))
    counts = count_statuses(rows)
    stream.write(f"{len(rows)} points: " + ", ".join(f"{n} {s}" for s, n in counts.items())
                 + f"; summary in {sweep.file(SUMMARY_CSV)} and summary.json\n")
    return EXIT_OK if counts.get(OK, 0) == len(rows) else EXIT_POINTS_FAILED


def command_run(argv: List[str], launcher: str, default_cosim: Optional[str]) -> int:
    args = _run_parser().parse_args(argv)
    if args.jobs < 1:
        raise SweepError("-j must be at least 1")
    if args.emit is None and (args.sbatch or args.array_limit):
        raise SweepError("--sbatch and --array-limit go with --emit slurm")
    cosim = Cosim(args.cosim or _default_cosim(default_cosim))
    plan = make_plan(args, cosim)
    sweep = SweepDir(args.out)
    sweep.check_same_base(plan)
    fully_checked = validate_plan(cosim, plan, args.jobs)
    sweep.write_plan(plan)
    if not fully_checked:
        sys.stderr.write("nbox-sweep: this nbox-cosim has no --check: a point with a bad "
                         "value is reported as invalid when it runs\n")
    if args.emit == "slurm":
        script = write_slurm_script(plan, sweep, launcher, args.sbatch, args.array_limit)
        print(f"{len(plan.points)} points; submit with: sbatch {script}\n"
              f"then: {launcher} collect {sweep.path}")
        return EXIT_OK
    progress = Progress(len(plan.points), sys.stderr, sys.stderr.isatty(), args.jobs)
    run_sweep(plan, sweep, args.jobs, progress, args.timeout)
    return _print_summary(plan, sweep, sys.stdout)


def command_collect(argv: List[str]) -> int:
    args = _collect_parser().parse_args(argv)
    sweep = SweepDir(args.dir)
    return _print_summary(sweep.read_plan(), sweep, sys.stdout)


def command_task(argv: List[str]) -> int:
    args = _task_parser().parse_args(argv)
    index = args.index
    if index is None:
        text = os.environ.get(TASK_ID_VARIABLE)
        if text is None:
            raise SweepError(f"no point chosen: give --index I or set {TASK_ID_VARIABLE}")
        try:
            index = int(text)
        except ValueError as e:
            raise SweepError(f"{TASK_ID_VARIABLE}={text!r} is not a point index") from e
    sweep = SweepDir(args.dir)
    plan = sweep.read_plan()
    point = point_by_index(plan, index)
    outcome = run_point(plan, point, sweep.point_dir(point), args.timeout)
    how = "skipped (finished earlier)" if outcome.skipped else outcome.status
    print(f"point {index} {point.name}: {how}")
    if outcome.error:
        sys.stderr.write(outcome.error + "\n")
    return EXIT_OK if outcome.status == OK else EXIT_POINTS_FAILED


def command_plot(argv: List[str]) -> int:
    args = _plot_parser().parse_args(argv)
    from nbox_sweep.plots import plot_folders  # matplotlib only when plotting
    for path in plot_folders(args.dirs, x_key=args.x, lines_key=args.lines, top=args.top):
        print(path)
    return EXIT_OK


def main(argv: List[str], launcher: str = "nbox-sweep",
         default_cosim: Optional[str] = None) -> int:
    try:
        if argv and argv[0] == "collect":
            return command_collect(argv[1:])
        if argv and argv[0] == "task":
            return command_task(argv[1:])
        if argv and argv[0] == "plot":
            return command_plot(argv[1:])
        return command_run(argv, launcher, default_cosim)
    except SweepError as e:
        sys.stderr.write(f"nbox-sweep: {e}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("\nnbox-sweep: interrupted; run the same command again to go on\n")
        return EXIT_INTERRUPTED
