#!/bin/bash
# tools/nbox-fit-analytical as a user runs it (BUILD_DIR as $1):
#  - on a star, where nothing shares a link and the alpha-beta form is exact, every fitted
#    factor against the flow model is within 1% of 1;
#  - a bad size exits 2.
set -u
build=$1
fit="$(dirname "$0")/../../tools/nbox-fit-analytical"
scenario="$(dirname "$0")/../cosim/fixtures/models/ring_star.ini"
fail() { echo "FAIL: $*"; echo "$out"; exit 1; }

out=$("$fit" "$scenario" --build "$build" --sizes 1MiB,8MiB 2>&1) || fail "fit exited $?"
for key in allreduce_factor allgather_factor reducescatter_factor broadcast_factor; do
  value=$(echo "$out" | sed -n "s/^$key = //p")
  [ -n "$value" ] || fail "no $key"
  awk -v c="$value" 'BEGIN { exit !(c > 0.99 && c < 1.01) }' || fail "$key = $value, not 1 +- 1%"
done

"$fit" "$scenario" --build "$build" --sizes 3 > /dev/null 2>&1
status=$?
[ "$status" = 2 ] || { out="exit $status"; fail "a bad size did not exit 2"; }
echo "ok"
