#!/usr/bin/env bash
# How building a simulation scales with the cluster: for each topology below, the phases of
# nbox-bench-build (graph, routes, ns-3 network), then `nbox-cosim --check` twice: with one
# rank per host (network and job) and with 8 ranks (mostly the network).
#
#   tools/bench/build-scaling.sh [BUILD_DIR] [NAME...]
#
# BUILD_DIR defaults to ./build; NAMEs pick rows of the table below (default: all).
# Every command runs under a virtual-memory cap (NBOX_BENCH_MEMORY_KIB, default 12 GiB) and a
# time limit (NBOX_BENCH_TIMEOUT_S, default 300 s), so a build that does not fit fails alone
# instead of taking the machine down; such a run shows its exit status.
set -euo pipefail

build_dir=${1:-build}
shift || true
cosim=$build_dir/tools/cosim/nbox-cosim
bench=$build_dir/tools/bench/nbox-bench-build
memory_kib=${NBOX_BENCH_MEMORY_KIB:-12582912}
timeout_s=${NBOX_BENCH_TIMEOUT_S:-300}
scenario=tests/cosim/fixtures/tiny.ini # 4 ranks of ResNet-50 on a star; overridden below

for tool in "$cosim" "$bench"; do
  [[ -x $tool ]] || { echo "build-scaling: $tool not found; build nbox-cosim and nbox-bench-build" >&2; exit 2; }
done
[[ -f $scenario ]] || { echo "build-scaling: run from the repository root ($scenario)" >&2; exit 2; }

# name | hosts | topology overrides
topologies=(
  "star-1024|1024|topology.kind=star topology.hosts=1024"
  "fat-tree-16|1024|topology.kind=fat-tree topology.k=16"
  "leaf-spine-32x16|1024|topology.kind=leaf-spine topology.leaves=32 topology.spines=16 topology.hosts_per_leaf=32 topology.fabric_link=100Gbps"
  "fat-tree-24|3456|topology.kind=fat-tree topology.k=24"
  "star-4096|4096|topology.kind=star topology.hosts=4096"
  "star-5000|5000|topology.kind=star topology.hosts=5000"
  "fat-tree-32|8192|topology.kind=fat-tree topology.k=32"
)

# Runs "$@" capped; prints "wall_s max_rss_mib" or "failed(status) wall_s max_rss_mib".
capped() {
  local figures status
  figures=$(mktemp)
  set +e
  (ulimit -v "$memory_kib"; /usr/bin/time -f "%e %M" -o "$figures" timeout "$timeout_s" "$@") \
    > /dev/null 2>&1
  status=$?
  set -e
  read -r wall rss_kib < <(tail -n 1 "$figures")
  rm -f "$figures"
  local shown
  shown=$(awk -v w="$wall" -v r="$rss_kib" 'BEGIN { printf "%.2f %.0f", w, r / 1024 }')
  if ((status == 0)); then echo "$shown"; else echo "failed($status) $shown"; fi
}

printf "%-17s %6s | %8s %9s %9s | %-22s | %-22s\n" "topology" "hosts" "routes s" \
  "network s" "net MiB" "--check, 1 rank/host" "--check, 8 ranks"
printf "%-17s %6s | %8s %9s %9s | %-22s | %-22s\n" "" "" "" "" "" "wall s, peak MiB" \
  "wall s, peak MiB"
for row in "${topologies[@]}"; do
  IFS='|' read -r name hosts keys <<< "$row"
  if (($# > 0)) && [[ ! " $* " == *" $name "* ]]; then continue; fi
  sets=()
  for key in $keys; do sets+=(--set "$key"); done
  phases=$("$bench" "$scenario" "${sets[@]}" --set job.world_size=8 2> /dev/null || true)
  # Table rows "routes <wall s> <rss MiB> <peak MiB>" and "network ...".
  read -r routes_s network_s network_mib < <(awk '
    $1 == "routes" && NF == 4 { r = $2 }
    $1 == "network" && NF == 4 { n = $2; m = $4 }
    END { if (r == "") print "failed - -"; else printf "%s %s %.0f\n", r, n, m }' <<< "$phases")
  all=$(capped "$cosim" "$scenario" --check "${sets[@]}" --set job.world_size="$hosts")
  few=$(capped "$cosim" "$scenario" --check "${sets[@]}" --set job.world_size=8)
  printf "%-17s %6s | %8s %9s %9s | %-22s | %-22s\n" "$name" "$hosts" "$routes_s" "$network_s" \
    "$network_mib" "$all" "$few"
done
