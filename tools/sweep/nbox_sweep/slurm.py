"""A sweep as a Slurm job array: task i runs point i of DIR/sweep.json.

The contract a task relies on, and the tests check by running the script as Slurm would:
SLURM_ARRAY_TASK_ID holds the task's index, 0 to points-1; the task runs
`nbox-sweep task DIR`, which runs that one point into its folder (or skips it if finished)
and exits with nbox-cosim's status. `nbox-sweep collect DIR` then builds the summary.
The folder must be on a file system every node sees.
"""

import os
import shlex
from typing import Sequence

from nbox_sweep.sweep_dir import SLURM_LOGS, SLURM_SCRIPT, Plan, SweepDir, write_atomically

TASK_ID_VARIABLE = "SLURM_ARRAY_TASK_ID"


def slurm_script(plan: Plan, sweep: SweepDir, launcher: str, sbatch_options: Sequence[str],
                 array_limit: int = 0) -> str:
    last = len(plan.points) - 1
    array = f"0-{last}" + (f"%{array_limit}" if array_limit > 0 else "")
    logs = os.path.join(sweep.path, SLURM_LOGS, "task-%a.log")
    job_name = "nbox-sweep-" + os.path.basename(sweep.path.rstrip("/"))
    lines = [
        "#!/bin/bash",
        f"# nbox-sweep job array: task i runs point i of {sweep.file('sweep.json')}.",
        f"# Submit:     sbatch {shlex.quote(sweep.file(SLURM_SCRIPT))}",
        f"# Afterwards: {shlex.quote(launcher)} collect {shlex.quote(sweep.path)}",
        f"#SBATCH --job-name={job_name}",
        f"#SBATCH --array={array}",
        "#SBATCH --ntasks=1",
        "#SBATCH --cpus-per-task=1",  # nbox-cosim is one single-threaded process
        f"#SBATCH --output={logs}",
    ]
    lines += [f"#SBATCH {option}" for option in sbatch_options]
    lines += [
        "set -euo pipefail",
        f': "${{{TASK_ID_VARIABLE}:?run this script with sbatch (it is a job array)}}"',
        f"exec {shlex.quote(launcher)} task {shlex.quote(sweep.path)}",
    ]
    return "\n".join(lines) + "\n"


def write_slurm_script(plan: Plan, sweep: SweepDir, launcher: str,
                       sbatch_options: Sequence[str], array_limit: int = 0) -> str:
    os.makedirs(sweep.file(SLURM_LOGS), exist_ok=True)
    path = sweep.file(SLURM_SCRIPT)
    write_atomically(path, slurm_script(plan, sweep, launcher, sbatch_options, array_limit))
    os.chmod(path, 0o755)
    return path
