#!/usr/bin/env bash
# Installs the Debian 12 packages nbox builds and tests with, skipping those already there.
# Run as root (or with sudo). README "Dependencies" says why each one is needed.
set -euo pipefail

# --run: only what building and running nbox-cosim needs (the README's first command);
# without it, everything the tests, benchmarks and tools need as well.
run_only=false
if [ "${1:-}" = "--run" ]; then run_only=true; fi

packages=(
  build-essential cmake pkg-config       # compiler and build
  libns3-dev ns3 libgsl-dev              # ns-3 3.37; find_package(ns3) needs these and the
  libxml2-dev libsqlite3-dev libpython3-dev  # headers and libraries its CMake targets name
  libboost-graph-dev                     # topologies/ (Boost.Graph)
  libcli11-dev                           # command lines
  nlohmann-json3-dev                     # results.json, traces
  libfmt-dev                             # formatting of reports and errors
  libinih-dev                            # scenario .ini files
  libssl-dev                             # bridge: HMAC-SHA256 authentication of real ranks
  libprotobuf-dev protobuf-compiler      # Chakra execution traces (workloads/chakra)
  libjemalloc-dev                        # the allocator nbox's executables link (cost per event)
  python3                                # nbox-sweep, the what-if sweeps over nbox-cosim
)
test_packages=(
  git                                    # cloning and working on the repository
  libgtest-dev libgmock-dev              # tests
  python3-matplotlib python3-pytest      # nbox-sweep's plots and its tests
  python3-yaml                           # nbox-import: ASTRA-sim's network files are YAML
  iproute2                               # fidelity test: network namespaces, veth, HTB (ip, tc)
  time                                   # nbox-bench-memory: a child's own peak memory (GNU time)
  libsimgrid-dev                         # the flow model's solver against SimGrid's (bench, test)
  patchelf                               # nbox-bench-event-cost: nbox-cosim without jemalloc
)

# PyTorch for the torch.distributed backend (bridge/torch) and its tests, CPU only, for
# /usr/bin/python3; without its recommends (which pull in a desktop's worth of Qt).
torch_packages=(python3-torch libtorch-dev pybind11-dev)
if $run_only; then
  test_packages=()
  torch_packages=()
fi
packages+=("${test_packages[@]}")

missing_of() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t missing < <(missing_of "${packages[@]}")
missing_torch=()
if ((${#torch_packages[@]})); then
  mapfile -t missing_torch < <(missing_of "${torch_packages[@]}")
fi
if ((${#missing[@]} + ${#missing_torch[@]})); then
  echo "install-deps: installing ${missing[*]} ${missing_torch[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  if ((${#missing[@]})); then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
  fi
  if ((${#missing_torch[@]})); then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      "${missing_torch[@]}"
  fi
else
  echo "install-deps: all packages present"
fi
