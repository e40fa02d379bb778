#!/usr/bin/env python3
"""How busy the ground truth's shared link was: reads nbox_fabric_capture's file.

    fabric_summary.py CAPTURE.csv --rate BPS [--from S --to S]

Per direction, over the window (CLOCK_MONOTONIC seconds; the whole capture without one): the
share of the link's time its packets took (frame bytes x 8 / rate over the window), so that one
minus it is the time the link stood idle, and its packets by size. nbox-fidelity prints the same
figure for both sides of a two-bridge case; nbox's is the shared port's tx_bytes in
results.json (tools/fidelity/README.md, "The W = 16 two-bridge miss").
"""
import collections
import sys


def read(path):
    """{direction: [(seconds, frame bytes)]} of a capture, in time order."""
    packets = {"in": [], "out": []}
    with open(path) as f:
        next(f)
        for line in f:
            stamp, direction, size = line.split(",")
            packets[direction].append((int(stamp) * 1e-9, int(size)))
    for rows in packets.values():
        rows.sort()
    return packets


def link_busy(rows, rate_bps, start, end):
    """The share of [start, end) the link spent sending `rows`' frames at rate_bps."""
    return sum(size for stamp, size in rows if start <= stamp < end) * 8 / rate_bps / (end - start)


def main(argv):
    options = dict(zip(argv[1::2], argv[2::2]))
    if (len(argv) % 2 != 1 or "--rate" not in options or
            ("--from" in options) != ("--to" in options)):
        sys.exit(__doc__)
    rate = float(options["--rate"])
    for direction, rows in read(argv[0]).items():
        if not rows:
            continue
        start = float(options.get("--from", rows[0][0]))
        end = float(options.get("--to", rows[-1][0]))
        busy = link_busy(rows, rate, start, end)
        sizes = collections.Counter(size for stamp, size in rows if start <= stamp < end)
        print(f"{direction}: link busy {busy:.4f} of {(end - start) * 1e3:.1f} ms (idle "
              f"{(1 - busy) * (end - start) * 1e3:.1f} ms); frame bytes x packets: "
              f"{', '.join(f'{s} x {n}' for s, n in sizes.most_common(4))}")


if __name__ == "__main__":
    main(sys.argv[1:])
