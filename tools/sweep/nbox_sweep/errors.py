"""The one exception nbox-sweep raises for bad input: its message is ready for the terminal."""

# Exit statuses, the same convention as nbox-cosim's.
EXIT_OK = 0
EXIT_POINTS_FAILED = 1  # the sweep ran, but at least one point did not succeed
EXIT_BAD_INPUT = 2      # nothing was run


class SweepError(Exception):
    """Bad input to nbox-sweep (command line, sweep folder, scenario): nothing was run."""
