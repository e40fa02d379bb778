"""The points of a sweep: --vary and --set parsing, grid or zip expansion, point names.

A point is one nbox-cosim run: the scenario plus one value of every varied key. Its name is
derived from those values alone, so the same point has the same folder in every run of the
sweep (this is what makes a sweep resumable and a grid extensible).
"""

import hashlib
import itertools
import re
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from nbox_sweep.errors import SweepError

_KEY = re.compile(r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")
# Characters kept as they are in a folder name; any other makes the value hashed (see below).
_NAME_SAFE = re.compile(r"^[A-Za-z0-9._+-]+$")
# nbox-sweep gives every point its own output folder; the user may not set it.
RESERVED_KEYS = ("output.dir",)
_MAX_NAME_LENGTH = 180  # well below the 255-byte limit of a file name


@dataclass(frozen=True)
class Vary:
    key: str  # "section.key"
    values: Tuple[str, ...]


@dataclass(frozen=True)
class Point:
    index: int  # position in the sweep; Slurm array task `index` runs this point
    name: str
    params: Tuple[Tuple[str, str], ...]  # (key, value) in the order of the --vary flags

    def overrides(self) -> List[str]:
        """The point's --set arguments for nbox-cosim."""
        return [f"{key}={value}" for key, value in self.params]

    def params_dict(self) -> Dict[str, str]:
        return dict(self.params)


def _split_assignment(text: str, flag: str, example: str) -> Tuple[str, str]:
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not _KEY.match(key):
        raise SweepError(
            f"{flag} '{text}': expected section.key=value, e.g. {flag} {example}")
    if key in RESERVED_KEYS:
        raise SweepError(f"{flag} '{text}': {key} is chosen by nbox-sweep (one folder per "
                         f"point under --out)")
    return key, value


def parse_vary(text: str) -> Vary:
    """'section.key=v1,v2,...' -> Vary; values are kept verbatim (nbox-cosim parses them)."""
    key, values_text = _split_assignment(text, "--vary", "network.ecn=on,off")
    values = [v.strip() for v in values_text.split(",")]
    if not values_text.strip() or any(not v for v in values):
        raise SweepError(f"--vary '{text}': every value between commas must be non-empty")
    duplicates = sorted({v for v in values if values.count(v) > 1})
    if duplicates:
        raise SweepError(f"--vary '{text}': value {duplicates[0]} is listed twice")
    return Vary(key, tuple(values))


def parse_set(text: str) -> Tuple[str, str]:
    key, value = _split_assignment(text, "--set", "workload.iterations=2")
    return key, value.strip()


def check_keys_distinct(varies: Sequence[Vary], sets: Sequence[Tuple[str, str]]) -> None:
    seen = set()
    for vary in varies:
        if vary.key in seen:
            raise SweepError(f"--vary {vary.key} is given twice; list all its values in one")
        seen.add(vary.key)
    set_keys = set()
    for key, _ in sets:
        if key in seen:
            raise SweepError(f"{key} is both varied (--vary) and fixed (--set)")
        if key in set_keys:
            raise SweepError(f"--set {key} is given twice")
        set_keys.add(key)


def short_keys(keys: Sequence[str]) -> Dict[str, str]:
    """Each key's name in point names: the part after the dot, unless two keys share it."""
    tails = [k.split(".", 1)[1] for k in keys]
    return {k: (t if tails.count(t) == 1 else k) for k, t in zip(keys, tails)}


def _digest(text: str, length: int) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:length]


def _name_part(value: str) -> str:
    """A value as a folder-name fragment; unsafe characters become '_' and a short hash of the
    exact value keeps distinct values distinct ('1/2' and '1_2' differ)."""
    if _NAME_SAFE.match(value) and value not in (".", ".."):
        return value
    return re.sub(r"[^A-Za-z0-9._+-]", "_", value) + "~" + _digest(value, 6)


def point_name(params: Sequence[Tuple[str, str]], names: Dict[str, str]) -> str:
    """'host_link=25Gbps,ecn=on': the varied values only, in --vary order."""
    name = ",".join(f"{names[key]}={_name_part(value)}" for key, value in params)
    if len(name) > _MAX_NAME_LENGTH:
        full = ",".join(f"{key}={value}" for key, value in params)
        name = name[:_MAX_NAME_LENGTH - 9] + "~" + _digest(full, 8)
    return name


def expand(varies: Sequence[Vary], zip_lists: bool) -> List[Point]:
    """The sweep's points: the cartesian product of the value lists (first --vary outermost),
    or with zip_lists the i-th value of every list together."""
    if not varies:
        raise SweepError("nothing to sweep: give at least one --vary section.key=v1,v2,...")
    keys = [v.key for v in varies]
    if zip_lists:
        lengths = {v.key: len(v.values) for v in varies}
        if len(set(lengths.values())) != 1:
            detail = ", ".join(f"{k} has {n}" for k, n in lengths.items())
            raise SweepError(f"--zip needs value lists of equal length: {detail}")
        combos = list(zip(*(v.values for v in varies)))
    else:
        combos = list(itertools.product(*(v.values for v in varies)))
    names = short_keys(keys)
    points = []
    for index, combo in enumerate(combos):
        params = tuple(zip(keys, combo))
        points.append(Point(index, point_name(params, names), params))
    return points
