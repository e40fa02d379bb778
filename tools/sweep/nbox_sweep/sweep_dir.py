"""The layout of a sweep folder, and its manifest.

    DIR/sweep.json               the plan: scenario, fixed --set values, varied keys, points
    DIR/summary.csv, .json       one row per point (written by run and collect)
    DIR/sweep.slurm, DIR/slurm/  the Slurm job array and its logs (--emit slurm)
    DIR/points/<name>/           one nbox-cosim run:
        point.json                 its parameters and command line
        results.json, perf.json    nbox-cosim's outputs (trace.json with output.trace=chrome)
        cosim.out, cosim.err       nbox-cosim's terminal output
        status.json                how the last attempt ended (exit status, error, wall time)

The manifest is what `collect`, `task` (one Slurm array task) and `plot` read, so the three
work on a folder written by another machine.

nbox-cosim refuses a run folder that holds files nbox did not write; it knows the names the
sweep writes into a point's folder (here, and the tables and pictures of `plot RUN`) from
IsSweepCompanion in tools/cosim/output/output_folder_rules.cc: a new one must be named there too.
"""

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Dict, List, Tuple

from nbox_sweep.cosim import command_line
from nbox_sweep.errors import SweepError
from nbox_sweep.grid import Point, Vary

MANIFEST = "sweep.json"
SUMMARY_CSV = "summary.csv"
SUMMARY_JSON = "summary.json"
POINTS = "points"
SLURM_SCRIPT = "sweep.slurm"
SLURM_LOGS = "slurm"
_FORMAT = 1


def write_atomically(path: str, text: str) -> None:
    """Readers (another array task, collect) never see a half-written file."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_json(path: str, value) -> None:
    write_atomically(path, json.dumps(value, indent=2) + "\n")


def read_json(path: str):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise SweepError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from e


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@dataclass
class Plan:
    """What a sweep runs. `base` (scenario file, its content, fixed --set values) is the part
    every point shares; a folder may only be resumed or extended with the same base."""
    scenario: str  # absolute path
    scenario_sha256: str
    sets: List[Tuple[str, str]]
    varies: List[Vary]
    zip_lists: bool
    points: List[Point]
    cosim: str  # the nbox-cosim the plan was made with; `task` uses it

    def base_overrides(self) -> List[str]:
        return [f"{key}={value}" for key, value in self.sets]

    def point_overrides(self, point: Point) -> List[str]:
        return self.base_overrides() + point.overrides()

    def varied_keys(self) -> List[str]:
        return [v.key for v in self.varies]

    def to_json(self) -> Dict:
        return {
            "format": _FORMAT,
            "scenario": self.scenario,
            "scenario_sha256": self.scenario_sha256,
            "set": [{"key": k, "value": v} for k, v in self.sets],
            "vary": [{"key": v.key, "values": list(v.values)} for v in self.varies],
            "zip": self.zip_lists,
            "cosim": self.cosim,
            "points": [{"index": p.index, "name": p.name,
                        "params": [{"key": k, "value": v} for k, v in p.params]}
                       for p in self.points],
        }

    @staticmethod
    def from_json(data: Dict, where: str) -> "Plan":
        try:
            if data["format"] != _FORMAT:
                raise SweepError(f"{where}: format {data['format']} is not {_FORMAT}; it was "
                                 f"written by another version of nbox-sweep")
            return Plan(
                scenario=data["scenario"],
                scenario_sha256=data["scenario_sha256"],
                sets=[(s["key"], s["value"]) for s in data["set"]],
                varies=[Vary(v["key"], tuple(v["values"])) for v in data["vary"]],
                zip_lists=bool(data["zip"]),
                points=[Point(p["index"], p["name"],
                              tuple((q["key"], q["value"]) for q in p["params"]))
                        for p in data["points"]],
                cosim=data["cosim"],
            )
        except (KeyError, TypeError) as e:
            raise SweepError(f"{where}: not an nbox-sweep manifest (missing {e})") from e


class SweepDir:
    def __init__(self, path: str):
        self.path = os.path.abspath(path)

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def point_dir(self, point: Point) -> str:
        return os.path.join(self.path, POINTS, point.name)

    def read_plan(self) -> Plan:
        manifest = self.file(MANIFEST)
        if not os.path.isfile(manifest):
            raise SweepError(f"{self.path} is not a sweep folder: {MANIFEST} is missing")
        return Plan.from_json(read_json(manifest), manifest)

    def check_same_base(self, plan: Plan) -> None:
        """Refuses to mix points of different bases in one folder: a resumed point is skipped
        on the strength of its results.json, which must then mean the same thing."""
        if not os.path.isfile(self.file(MANIFEST)):
            return
        old = self.read_plan()
        differences = []
        if old.scenario != plan.scenario:
            differences.append(f"scenario {old.scenario} -> {plan.scenario}")
        elif old.scenario_sha256 != plan.scenario_sha256:
            differences.append(f"the content of {plan.scenario} changed")
        if old.sets != plan.sets:
            differences.append(f"--set {old.base_overrides()} -> {plan.base_overrides()}")
        if differences:
            raise SweepError(f"{self.path} holds a sweep with another base ("
                             + "; ".join(differences)
                             + "): its finished points would be taken as results of this one. "
                             "Use another --out, or delete the folder.")

    def write_plan(self, plan: Plan) -> None:
        os.makedirs(os.path.join(self.path, POINTS), exist_ok=True)
        write_json(self.file(MANIFEST), plan.to_json())
        for point in plan.points:
            folder = self.point_dir(point)
            os.makedirs(folder, exist_ok=True)
            write_json(os.path.join(folder, "point.json"), {
                "index": point.index,
                "name": point.name,
                "params": point.params_dict(),
                "command": command_line(plan.cosim, plan.scenario,
                                        plan.point_overrides(point), folder),
            })


def point_by_index(plan: Plan, index: int) -> Point:
    if not 0 <= index < len(plan.points):
        raise SweepError(f"point {index} does not exist: the sweep has points 0 to "
                         f"{len(plan.points) - 1}")
    return plan.points[index]


def tail(path: str, lines: int = 12, max_chars: int = 2000) -> str:
    """The last lines of a text file (an error for the summary), or '' if there is none."""
    if not os.path.isfile(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    kept = [line for line in text.splitlines() if line.strip()][-lines:]
    return "\n".join(kept)[-max_chars:]
