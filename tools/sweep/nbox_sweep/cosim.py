"""How nbox-sweep talks to nbox-cosim: its command line, its key list, its exit statuses.

nbox-cosim is the only judge of a scenario: nbox-sweep never re-implements its key schema.
It asks `nbox-cosim --list-keys` which keys exist and, when the binary offers `--check`
(validate a scenario and exit without simulating), checks every point before running any.
"""

import os
import re
import subprocess
from typing import List, Optional, Sequence, Set

from nbox_sweep.errors import SweepError

# nbox-cosim's exit statuses (tools/cosim/main.cc).
COSIM_OK = 0
COSIM_RUN_FAILED = 1
COSIM_BAD_INPUT = 2

# `--list-keys` prints Markdown: "### [section]" headings, then table rows "| `key` | ...".
_SECTION_HEADING = re.compile(r"^#+\s*\[([a-z0-9_]+)\]\s*$")
_KEY_ROW = re.compile(r"^\|\s*`([a-z0-9_]+)`\s*\|")


def parse_key_list(markdown: str) -> Set[str]:
    """'section.key' names from the text of `nbox-cosim --list-keys`."""
    keys = set()
    section = None
    for line in markdown.splitlines():
        heading = _SECTION_HEADING.match(line)
        if heading:
            section = heading.group(1)
            continue
        row = _KEY_ROW.match(line)
        if row and section:
            keys.add(f"{section}.{row.group(1)}")
    return keys


def command_line(cosim: str, scenario: str, overrides: Sequence[str],
                 out_dir: Optional[str] = None, check: bool = False) -> List[str]:
    """`nbox-cosim scenario.ini --set k=v ... [--out DIR] [--check]` as an argument list."""
    cmd = [cosim, scenario]
    for override in overrides:
        cmd += ["--set", override]
    if out_dir is not None:
        cmd += ["--out", out_dir]
    if check:
        cmd.append("--check")
    return cmd


class Cosim:
    """One nbox-cosim executable."""

    def __init__(self, path: str):
        if not path:
            raise SweepError("no nbox-cosim: pass --cosim PATH or set NBOX_COSIM")
        self.path = os.path.abspath(path)
        if not (os.path.isfile(self.path) and os.access(self.path, os.X_OK)):
            raise SweepError(f"nbox-cosim not found or not executable: {self.path} "
                             f"(build the target nbox-cosim, or pass --cosim PATH)")
        self._has_check: Optional[bool] = None

    def _query(self, args: List[str]) -> str:
        done = subprocess.run([self.path] + args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, check=False)
        if done.returncode != 0:
            raise SweepError(f"{self.path} {' '.join(args)} failed with status "
                             f"{done.returncode}: {done.stderr.strip()}")
        return done.stdout

    def known_keys(self) -> Set[str]:
        keys = parse_key_list(self._query(["--list-keys"]))
        if not keys:
            raise SweepError(f"{self.path} --list-keys printed no key: nbox-sweep cannot "
                             f"check the keys of the sweep")
        return keys

    def has_check(self) -> bool:
        """Whether this nbox-cosim validates a scenario without running it (--check)."""
        if self._has_check is None:
            self._has_check = re.search(r"(^|\s)--check\b", self._query(["--help"])) is not None
        return self._has_check

    def command(self, scenario: str, overrides: Sequence[str], out_dir: Optional[str] = None,
                check: bool = False) -> List[str]:
        return command_line(self.path, scenario, overrides, out_dir, check)
