#!/bin/sh
# nbox-bench-profile.sh: what nbox's own code costs, counted in instructions by callgrind
# (repeatable, unlike wall time on a shared machine). Runs nbox-bench-overhead under
# callgrind, collecting only while each of its two runs simulates (MeasureRun), and prints:
#   1. the self instructions of the nbox run split by who executes them: nbox's job layers
#      (transport, communicator, ranks, schedules), its network counters, its ECMP routing,
#      the benchmark's own probe and loop, and everything else (ns-3, C and C++ libraries);
#   2. instructions per payload byte of the nbox run and of the plain BulkSend replay.
#
# Usage: tools/bench/nbox-bench-profile.sh [BUILD_DIR] [SCENARIO [nbox-bench-overhead options]]
#   BUILD_DIR  default: build (must hold tools/bench/nbox-bench-overhead)
#   SCENARIO   default: scenarios/leaf-spine-16.ini shortened to one iteration of a
#              15M-parameter model (60 MB of gradients), about 15 minutes in all: callgrind
#              runs a program about 50 times slower.
# The plain replay's send buffer is calibrated by a normal run first (unless --send-buffer is
# given), so callgrind runs each side once. Run from the repository root. Output goes to
# $NBOX_PROFILE_DIR (default /tmp/nbox-profile): nbox.callgrind.1 (the nbox run),
# nbox.callgrind (the plain replay), native.txt and bench.txt (the benchmark's own output,
# without and under callgrind; the latter's wall times are callgrind's).
set -eu

build=${1:-build}
if [ $# -ge 1 ]; then shift; fi
if [ $# -ge 1 ]; then
  scenario=$1
  shift
else
  scenario=scenarios/leaf-spine-16.ini
  set -- --set workload.iterations=1 --set workload.model=custom \
    --set workload.parameters=15M --set workload.layers=50 \
    --set workload.flops_per_sample=11.5GFLOP
fi
bench=$build/tools/bench/nbox-bench-overhead
out=${NBOX_PROFILE_DIR:-/tmp/nbox-profile}

for tool in valgrind callgrind_annotate; do
  command -v "$tool" > /dev/null || { echo "nbox-bench-profile: $tool not found (apt-get install valgrind)" >&2; exit 2; }
done
[ -x "$bench" ] || { echo "nbox-bench-profile: $bench not built (cmake --build $build --target nbox-bench-overhead)" >&2; exit 2; }
[ -r "$scenario" ] || { echo "nbox-bench-profile: cannot read scenario $scenario" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out"/nbox.callgrind* "$out"/native.txt "$out"/bench.txt

case " $* " in
  *" --send-buffer"*) ;;
  *)
    echo "calibrating the replay's send buffer: $bench $scenario $*" >&2
    "$bench" "$scenario" "$@" --json > "$out/native.txt"
    buffer=$(sed -n 's/^ *"plain_send_buffer_bytes": \([0-9]*\),*$/\1/p' "$out/native.txt")
    set -- "$@" --send-buffer "$buffer"
    ;;
esac

echo "callgrind: $bench $scenario $* (this takes a while)" >&2
# Collect only inside MeasureRun (the two measured runs). Dumping on entry to the replay
# writes the nbox run to nbox.callgrind.1; the replay ends in nbox.callgrind. The patterns
# name the functions exactly: a trailing * would also match the lambdas defined inside them.
valgrind --tool=callgrind --callgrind-out-file="$out/nbox.callgrind" \
  --toggle-collect='nbox::bench::MeasureRun(*)' \
  --dump-before='nbox::bench::RunPlainReplay(*ReplayConditions const&)' \
  "$bench" "$scenario" "$@" --json > "$out/bench.txt" 2> "$out/valgrind.log" || {
  echo "nbox-bench-profile: the benchmark failed, see $out/valgrind.log" >&2
  exit 1
}

# Self instructions per function, every function listed (threshold 100%), no source.
self_costs() {
  callgrind_annotate --inclusive=no --threshold=100 --auto=no "$1"
}

# Payload bytes of the nbox and plain runs, in that order, from the benchmark's JSON.
payload=$(sed -n 's/^ *"payload_bytes": \([0-9]*\),*$/\1/p' "$out/bench.txt")
nbox_payload=$(echo "$payload" | sed -n 1p)
plain_payload=$(echo "$payload" | sed -n 2p)

self_costs "$out/nbox.callgrind.1" | awk -v scenario="$scenario" '
  # A line per function: "  1,234 ( 0.01%)  file:function [object]".
  /^ *[0-9,]+ +\( *[0-9.]+%\) +/ {
    cost = $1; gsub(",", "", cost)
    name = $0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", name)
    if (name ~ /PROGRAM TOTALS/) { total = cost; next }
    # Callback and std::function glue instantiated for an nbox type counts as that type: it
    # runs only because nbox code registered it.
    if (name ~ /Nbox(TcpTransport|Transport|Communicator|RankApp|Job)|nbox::(coll|work)::/) job += cost
    else if (name ~ /NboxNetwork/) counters += cost
    else if (name ~ /NboxEcmpRouting/) routing += cost
    else if (name ~ /nbox::(bench|cosim)::/) harness += cost
    else rest += cost
  }
  function row(label, n) { printf "  %-52s %16.0f  %6.2f%%\n", label, n, 100 * n / total }
  END {
    printf "nbox run of %s, self instructions while simulating:\n", scenario
    row("nbox job layers (transport, communicator, ranks)", job)
    row("nbox network counters (NboxNetwork trace sinks)", counters)
    row("nbox ECMP routing (NboxEcmpRouting)", routing)
    row("benchmark probe and run loop", harness)
    row("ns-3, C and C++ libraries", rest)
    row("total", total)
    printf "nbox job layers + counters over everything but them and the harness: +%.2f%%\n",
      100 * (job + counters) / (total - job - counters - harness)
    printf "all nbox code, routing included, over the rest:                     +%.2f%%\n",
      100 * (job + counters + routing) / (total - job - counters - routing - harness)
  }'

total_of() {
  self_costs "$1" | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}
nbox_ir=$(total_of "$out/nbox.callgrind.1")
plain_ir=$(total_of "$out/nbox.callgrind")
awk -v a="$nbox_ir" -v b="$plain_ir" -v pa="$nbox_payload" -v pb="$plain_payload" 'BEGIN {
  printf "instructions per payload byte: nbox run %.3f, plain replay %.3f, nbox / plain %.3f\n",
    a / pa, b / pb, (a / pa) / (b / pb)
}'
if [ -s "$out/native.txt" ]; then
  echo "the same runs natively (wall clock, from $out/native.txt):"
  sed -n '/^run /,/^nbox \/ plain/p' "$out/native.txt"
fi
