"""matplotlib (Debian's python3-matplotlib), headless, and how every figure is saved."""

import os

from nbox_sweep.errors import SweepError

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display needed
    import matplotlib.pyplot as plt
except ImportError as e:  # pragma: no cover - depends on the machine
    raise SweepError("nbox-sweep plot needs matplotlib: apt-get install python3-matplotlib "
                     "(and run nbox-sweep with Debian's /usr/bin/python3)") from e

# One look for every picture: readable on a laptop screen and in a README.
plt.rcParams.update({
    "figure.dpi": 100,
    "savefig.dpi": 120,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
})


def save_beside(fig, csv_path: str, stem: str = "") -> str:
    """Saves the figure as a PNG beside the CSV it was drawn from (same stem unless given),
    without metadata that would change from one machine to the next."""
    folder = os.path.dirname(os.path.abspath(csv_path))
    name = (stem or os.path.splitext(os.path.basename(csv_path))[0]) + ".png"
    path = os.path.join(folder, name)
    fig.savefig(path, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return path
