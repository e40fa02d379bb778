"""nbox-sweep: what-if sweeps over nbox-cosim scenarios (see tools/sweep/README.md)."""
