#!/bin/bash
# Runs one job of W real ranks, each in its own network namespace, as the ground truth of
# nbox's fidelity checks (tools/fidelity/nbox-fidelity, tests/fidelity): W hosts behind Linux
# bridges, every host link shaped to RATE in both directions by HTB (docs/PLATFORM.md: htb works
# here, netem does not), MTU on every interface. The ranks talk over the plain TCP ncclNet
# plugin; rank 0's output goes to stdout.
#
#   netns_job.sh --world W --rate 500mbit [--mtu 9000] [--queue PACKETS] [--timeout S] \
#       [--layout star|two-bridges] [--fabric-rate RATE] [--fabric-queue fifo|per-host] \
#       [--tcp-cc NAME] [--capture-fabric FILE] [--rank-logs DIR] \
#       --plugin /path/libnccl-net-nboxtcp.so --root /path/nbox_fidelity_root -- PROGRAM [ARGS...]
#
# --layout star (the default): one bridge. two-bridges: even ranks on one bridge, odd ranks on
# another, the bridges joined by one link shaped to --fabric-rate in both directions; every hop
# of a ring over ranks 0..W-1 crosses it, W/2 flows each way. --fabric-queue fifo (the default):
# that link queues like every other, one FIFO of --queue packets each way. per-host: each way,
# one HTB class per sending host (all of equal rate, borrowing up to the link's), each with a
# FIFO of --queue packets (so no host loses packets the FIFO would have kept), so the hosts'
# flows share the link round robin as a fair-queuing switch would, whatever their windows.
#
# --capture-fabric FILE (two-bridges only): record every packet crossing the shared link, both
# ways, while the job runs, into FILE: nbox_fabric_capture, built beside --root (its source,
# fabric_capture.c, says what and how; fabric_summary.py reads the file).
#
# --rank-logs DIR: keep every rank's output as DIR/rank<r>.log (only rank 0's reaches stdout),
# such as every rank's STARTS_US line of the bench's --print-starts.
#
# --tcp-cc (default cubic, what nbox's scenarios model by default): the congestion control of the
# ranks' sending sockets, set by the plugin (NBOX_TCP_CONGESTION). Without it they would run the
# machine's default, which need not be the one the simulated twin models (bbr on some hosts).
#
# PROGRAM runs once per rank with NBOX_RANK, NBOX_WORLD_SIZE, NBOX_UNIQUE_ID, NBOX_NET_PLUGIN
# and NBOX_TCP_IFADDR (its namespace's address) set. The communicator's bootstrap root is a
# process of its own (nbox_fidelity_root, in rank 0's namespace) that outlives every rank, as
# the host runtime requires. Needs root; exits 77 with a line starting "SKIP:" when namespaces cannot be
# made. Everything it creates (namespaces, their links, the temporary directory) is removed on
# exit, also on failure or a signal. Addresses are 10.201.0.x inside the namespaces only.
set -u

world=0 rate="" mtu=9000 queue=100 timeout_s=300 plugin="" root="" layout=star fabric_rate=""
fabric_queue=fifo tcp_cc=cubic capture_fabric="" rank_logs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --world) world=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --mtu) mtu=$2; shift 2 ;;
    --queue) queue=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --plugin) plugin=$2; shift 2 ;;
    --root) root=$2; shift 2 ;;
    --layout) layout=$2; shift 2 ;;
    --fabric-rate) fabric_rate=$2; shift 2 ;;
    --fabric-queue) fabric_queue=$2; shift 2 ;;
    --tcp-cc) tcp_cc=$2; shift 2 ;;
    --capture-fabric) capture_fabric=$2; shift 2 ;;
    --rank-logs) rank_logs=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "netns_job.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [ "$world" -lt 1 ] || [ "$world" -gt 200 ] || [ -z "$rate" ] || [ -z "$plugin" ] || [ -z "$root" ] ||
  [ $# -eq 0 ] || { [ "$layout" != star ] && [ "$layout" != two-bridges ]; } ||
  { [ "$layout" = two-bridges ] && [ -z "$fabric_rate" ]; } ||
  { [ "$fabric_queue" != fifo ] && [ "$fabric_queue" != per-host ]; } ||
  { [ -n "$capture_fabric" ] && [ "$layout" != two-bridges ]; }; then
  echo "usage: netns_job.sh --world W --rate RATE --plugin PATH --root PATH [--mtu B] [--queue P]" \
    "[--timeout S] [--layout star|two-bridges --fabric-rate RATE [--fabric-queue fifo|per-host]]" \
    "[--tcp-cc NAME] [--capture-fabric FILE (two-bridges)] [--rank-logs DIR]" \
    "-- PROGRAM [ARGS]" >&2
  exit 2
fi

if ! grep -qw -- "$tcp_cc" /proc/sys/net/ipv4/tcp_available_congestion_control 2> /dev/null; then
  echo "SKIP: this kernel has no TCP congestion control '$tcp_cc' (available:" \
    "$(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2> /dev/null))"
  exit 77
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the fidelity ground truth needs root (network namespaces, tc); running as $(id -un)"
  exit 77
fi
for tool in ip tc timeout; do
  if ! command -v "$tool" > /dev/null; then echo "SKIP: '$tool' is not installed"; exit 77; fi
done

# Namespaces an earlier run left behind (killed by SIGKILL, so its trap never ran): named after
# a process that no longer exists.
for ns in $(ip netns list 2> /dev/null | awk '{print $1}' | grep -E '^nbxf[0-9]+'); do
  owner=${ns#nbxf}
  owner=${owner%%[!0-9]*}
  if ! kill -0 "$owner" 2> /dev/null; then ip netns delete "$ns" 2> /dev/null; fi
done

prefix="nbxf$$"
switch="${prefix}sw"
workdir=$(mktemp -d /tmp/nbox-fidelity-XXXXXX)
created=()
pids=()

cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2> /dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null; done
  # Deleting a namespace deletes the interfaces inside it (and so both ends of each veth).
  for ns in "${created[@]}"; do ip netns delete "$ns" 2> /dev/null; done
  rm -rf "$workdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! ip netns add "$switch" 2> "$workdir/netns.err"; then
  echo "SKIP: cannot create a network namespace: $(cat "$workdir/netns.err")"
  exit 77
fi
created+=("$switch")
# `ip netns exec` needs to remount / and /sys inside the namespace, which a chroot or some
# containers refuse even to root: a machine this test cannot use.
if ! ip netns exec "$switch" true 2> "$workdir/netns.err"; then
  echo "SKIP: cannot run a command inside a network namespace: $(cat "$workdir/netns.err")"
  exit 77
fi

# HTB at `rate` on the egress of one interface: a single class every packet falls into, a
# short FIFO behind it. The bursts are two packets, so the link never runs above `rate` for
# longer than two packets' time. A kernel without HTB is a machine this test cannot use: skip.
shape() {
  local ns=$1 dev=$2 link_rate=${3:-$rate} burst=$((mtu + 14))
  if ! ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: htb default 10 \
    2> "$workdir/tc.err"; then
    echo "SKIP: cannot shape links with HTB here: $(cat "$workdir/tc.err")"
    exit 77
  fi
  ip netns exec "$ns" tc class add dev "$dev" parent 1: classid 1:10 htb rate "$link_rate" \
    ceil "$link_rate" burst "$burst" cburst "$burst" quantum $((mtu + 14)) &&
    ip netns exec "$ns" tc qdisc add dev "$dev" parent 1:10 handle 10: pfifo limit "$queue"
}

# The fabric link's egress `dev` in namespace `ns`, carrying the packets of the ranks of
# parity `parity` (the hosts on that side): HTB at `fabric_rate` over one class per host, each
# with a FIFO of `queue` packets (--fabric-queue per-host). Equal quanta make HTB lend the
# link's rate round robin among the classes with packets waiting.
shape_per_host() {
  local ns=$1 dev=$2 parity=$3 burst=$((mtu + 14))
  ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: htb default 1ff &&
    ip netns exec "$ns" tc class add dev "$dev" parent 1: classid 1:1 htb rate "$fabric_rate" \
      ceil "$fabric_rate" burst "$burst" cburst "$burst" quantum "$burst" || return 1
  # One more class for what no host sends from (none is expected: ARP, say).
  for class in $(seq $((parity + 1)) 2 "$world") 1ff; do
    local id=$class
    [ "$class" = 1ff ] || id=$(printf '%x' $((class + 1)))
    ip netns exec "$ns" tc class add dev "$dev" parent 1:1 classid "1:$id" htb rate 8kbit \
      ceil "$fabric_rate" burst "$burst" cburst "$burst" quantum "$burst" &&
      ip netns exec "$ns" tc qdisc add dev "$dev" parent "1:$id" pfifo limit "$queue" || return 1
    [ "$class" = 1ff ] ||
      ip netns exec "$ns" tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
        match ip src "10.201.0.$class/32" flowid "1:$id" || return 1
  done
}

# One packet per socket buffer on every interface: with the kernel's default (segmentation
# offload up to 64 KB) TCP hands the HTB shaper super-packets of up to seven 9000-byte packets,
# which it lets through as one burst. An option this kernel lacks is left out.
single_packets() {
  local ns=$1 dev=$2
  ip -n "$ns" link set dev "$dev" gso_max_segs 1 gso_max_size "$mtu" 2> /dev/null || true
  ip -n "$ns" link set dev "$dev" gro_max_size "$mtu" 2> /dev/null || true
}

set -e
# The bridges: one namespace each ("$switch" always; "${switch}b" for the odd ranks of
# two-bridges), joined by a shaped veth pair.
bridges=("$switch")
if [ "$layout" = two-bridges ]; then
  ip netns add "${switch}b"
  created+=("${switch}b")
  bridges+=("${switch}b")
fi
for sw in "${bridges[@]}"; do
  ip -n "$sw" link set lo up
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
done
if [ "$layout" = two-bridges ]; then
  ip -n "$switch" link add x0 mtu "$mtu" type veth peer name x1 mtu "$mtu" netns "${switch}b"
  ip -n "$switch" link set x0 master br0 up
  ip -n "${switch}b" link set x1 master br0 up
  single_packets "$switch" x0
  single_packets "${switch}b" x1
  if [ "$fabric_queue" = per-host ]; then
    # Rank r is 10.201.0.(r + 1) on bridge r % 2; x0 leaves the even ranks' bridge.
    if ! shape_per_host "$switch" x0 0 2> "$workdir/tc.err" ||
      ! shape_per_host "${switch}b" x1 1 2>> "$workdir/tc.err"; then
      echo "SKIP: cannot give each host its own class on the shared link here:" \
        "$(cat "$workdir/tc.err")"
      exit 77
    fi
  else
    shape "$switch" x0 "$fabric_rate"
    shape "${switch}b" x1 "$fabric_rate"
  fi
fi
for ((r = 0; r < world; ++r)); do
  ns="${prefix}r$r"
  sw=${bridges[$((r % ${#bridges[@]}))]}
  ip netns add "$ns"
  created+=("$ns")
  ip -n "$ns" link set lo up
  ip -n "$ns" link add eth0 mtu "$mtu" type veth peer name "p$r" netns "$sw"
  ip -n "$sw" link set "p$r" mtu "$mtu" master br0 up
  ip -n "$ns" addr add "10.201.0.$((r + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  single_packets "$ns" eth0
  single_packets "$sw" "p$r"
  shape "$ns" eth0
  shape "$sw" "p$r"
done
set +e

ip netns exec "${prefix}r0" env NBOX_BOOTSTRAP_ADDR=10.201.0.1 "$root" "$workdir/id" \
  > "$workdir/root.log" 2>&1 &
root_pid=$!
pids+=("$root_pid")
for ((tries = 0; tries < 100; ++tries)); do
  [ -s "$workdir/id" ] && break
  sleep 0.1
done
if [ ! -s "$workdir/id" ]; then
  echo "netns_job.sh: the bootstrap root wrote no id:" >&2
  cat "$workdir/root.log" >&2
  exit 1
fi
unique_id=$(cat "$workdir/id")

capture_pid=""
if [ -n "$capture_fabric" ]; then
  ip netns exec "${switch}b" "$(dirname "$root")/nbox_fabric_capture" x1 "$capture_fabric" \
    > "$workdir/capture.log" 2>&1 &
  capture_pid=$!
  pids+=("$capture_pid")
  # The ranks start once the socket is bound, so the capture has the job's every packet.
  for ((tries = 0; tries < 100; ++tries)); do
    grep -q '^capturing on' "$workdir/capture.log" 2> /dev/null && break
    kill -0 "$capture_pid" 2> /dev/null || break
    sleep 0.1
  done
  if ! grep -q '^capturing on' "$workdir/capture.log" 2> /dev/null; then
    echo "netns_job.sh: the capture of the shared link did not start:" >&2
    cat "$workdir/capture.log" >&2
    exit 1
  fi
fi

rank_pids=()
for ((r = 0; r < world; ++r)); do
  # One channel of 1 MiB chunks unless the caller says otherwise: what the nbox side's
  # scenarios say (tools/fidelity/nbox-fidelity, tests/fidelity).
  ip netns exec "${prefix}r$r" env NBOX_RANK=$r NBOX_WORLD_SIZE="$world" \
    NBOX_CHANNELS="${NBOX_CHANNELS:-1}" NBOX_CHUNK_BYTES="${NBOX_CHUNK_BYTES:-1MiB}" \
    NBOX_UNIQUE_ID="$unique_id" NBOX_NET_PLUGIN="$plugin" NBOX_TCP_CONGESTION="$tcp_cc" \
    NBOX_TCP_IFADDR="10.201.0.$((r + 1))" NBOX_BOOTSTRAP_TIMEOUT_S=60 \
    timeout "$timeout_s" "$@" > "$workdir/rank$r.log" 2>&1 &
  rank_pids+=($!)
  pids+=($!)
done
failed=0
for ((r = 0; r < world; ++r)); do
  if ! wait "${rank_pids[$r]}"; then
    failed=1
    echo "netns_job.sh: rank $r failed:" >&2
    cat "$workdir/rank$r.log" >&2
  fi
done
if [ -n "$capture_pid" ]; then
  kill -TERM "$capture_pid" 2> /dev/null
  if ! wait "$capture_pid"; then
    failed=1
    echo "netns_job.sh: the capture of the shared link failed:" >&2
    cat "$workdir/capture.log" >&2
  fi
fi
pids=("$root_pid") # the cleanup ends the root
cat "$workdir/rank0.log"
if [ -n "$rank_logs" ]; then
  mkdir -p "$rank_logs" && cp "$workdir"/rank*.log "$rank_logs"/ || failed=1
fi
# What the network did, from the namespaces' own counters (each namespace counts its own):
# TCP segments retransmitted by the ranks, and packets the shapers' FIFOs dropped.
retransmitted=0
for ((r = 0; r < world; ++r)); do
  n=$(ip netns exec "${prefix}r$r" awk '/^Tcp:/ { if (h) print $13; h = 1 }' /proc/net/snmp)
  retransmitted=$((retransmitted + ${n:-0}))
done
dropped=0
for ns in "${created[@]}"; do
  # The FIFOs' own counts (HTB's root repeats its children's).
  n=$(ip netns exec "$ns" tc -s qdisc show |
    awk '/^qdisc/ { fifo = ($2 == "pfifo") } fifo && /dropped/ { gsub(",", "", $7); s += $7 }
         END { print s + 0 }')
  dropped=$((dropped + n))
done
echo "NETNS_COUNTERS retransmitted_segments=$retransmitted dropped_packets=$dropped"
exit $failed
