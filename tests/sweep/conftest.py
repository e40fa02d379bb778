"""Shared helpers of nbox-sweep's tests (run by ctest through pytest, see CMakeLists.txt).

NBOX_SWEEP is the launcher of the build tree (build/tools/sweep/nbox-sweep) and NBOX_COSIM
the real nbox-cosim; ctest sets both. Orchestration tests run nbox-sweep against
fake_cosim.py, which honours nbox-cosim's command line and output format in milliseconds.
"""

import json
import os
import stat
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(HERE, "fixtures")
sys.path.insert(0, os.path.join(REPO, "tools", "sweep"))
sys.dont_write_bytecode = True


def _launcher(tmp_dir: str) -> str:
    """The build tree's nbox-sweep, or (pytest run by hand) an equivalent made here."""
    if os.environ.get("NBOX_SWEEP"):
        return os.environ["NBOX_SWEEP"]
    path = os.path.join(tmp_dir, "nbox-sweep")
    with open(path, "w") as f:
        f.write(f"#!{sys.executable}\nimport os, sys\nsys.dont_write_bytecode = True\n"
                f"sys.path.insert(0, {os.path.join(REPO, 'tools', 'sweep')!r})\n"
                "from nbox_sweep.cli import main\n"
                "sys.exit(main(sys.argv[1:], launcher=os.path.abspath(__file__)))\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


def _executable(path: str, text: str) -> str:
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


class Sweeper:
    """Runs nbox-sweep as a user would and keeps track of what the fake nbox-cosim ran."""

    def __init__(self, tmp_path):
        self.tmp = str(tmp_path)
        self.launcher = _launcher(self.tmp)
        self.fake = _executable(os.path.join(self.tmp, "fake-cosim"),
                                f"#!/bin/sh\nexec {sys.executable} "
                                f"{os.path.join(HERE, 'fake_cosim.py')} \"$@\"\n")
        self.log = os.path.join(self.tmp, "fake-runs.log")
        self.scenario = os.path.join(self.tmp, "tiny.ini")
        with open(self.scenario, "w") as f:
            f.write("[job]\nworld_size = 4\n")
        self.env = dict(os.environ, FAKE_COSIM_LOG=self.log, PYTHONDONTWRITEBYTECODE="1")

    def run(self, *args, env=None, cosim=None, check=False):
        """nbox-sweep ARGS (with --cosim fake unless cosim= says otherwise)."""
        argv = [self.launcher] + list(args)
        if args and args[0] not in ("collect", "task", "plot"):
            argv += ["--cosim", cosim or self.fake]
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(self.env, **(env or {})), check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"nbox-sweep {args} exited {done.returncode}:\n"
                                 f"{done.stdout}\n{done.stderr}")
        return done

    def runs(self):
        """The --out folders of the simulations the fake nbox-cosim ran, in order."""
        if not os.path.isfile(self.log):
            return []
        with open(self.log) as f:
            return [os.path.basename(line.strip()) for line in f if line.strip()]


@pytest.fixture
def sweeper(tmp_path):
    return Sweeper(tmp_path)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def read_summary_csv(path):
    import csv
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def png_size(path):
    """(width, height) of a PNG file, checking its signature and header chunk."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert head[12:16] == b"IHDR", f"{path} has no PNG header chunk"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
