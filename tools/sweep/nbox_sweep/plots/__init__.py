"""`nbox-sweep plot`: pictures of sweeps and of single runs (needs matplotlib)."""

import os
from typing import List, Optional, Sequence

from nbox_sweep.errors import SweepError
from nbox_sweep.sweep_dir import MANIFEST, SweepDir


def plot_folders(dirs: Sequence[str], x_key: Optional[str] = None,
                 lines_key: Optional[str] = None, top: int = 16) -> List[str]:
    """Plots each folder: a sweep folder (sweep.json) or a run folder (results.json)."""
    from nbox_sweep.plots.run_plots import plot_run
    from nbox_sweep.plots.sweep_plots import plot_sweep

    pngs = []
    for folder in dirs:
        if os.path.isfile(os.path.join(folder, MANIFEST)):
            pngs += plot_sweep(SweepDir(folder), x_key, lines_key)
        elif os.path.isfile(os.path.join(folder, "results.json")):
            pngs += plot_run(folder, top)
        else:
            raise SweepError(f"{folder} is neither a sweep folder ({MANIFEST}) nor a run "
                             f"folder (results.json)")
    return pngs
