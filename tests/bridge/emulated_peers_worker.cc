// One real rank of the emulated-peers tests as its own process (the nbox plugin holds one
// session per process, so two real ranks need two processes). Configured by the environment
// nbox-cosim would print; runs the collectives of TwoRealRanks in emulated_peers_test.cc on the
// inputs of emulated_peers_inputs.h and checks each result against its closed form. Exit 0 when all
// match; otherwise prints what differed and exits 1.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bridge/include/nbox_host.h"
#include "tests/bridge/emulated_peers_inputs.h"

namespace {

using nbox::bridge::testing::PlanInput;

int Fail(const char* what, size_t i, double got, double want) {
  std::fprintf(stderr, "%s element %zu: got %g, expected %g\n", what, i, got, want);
  return 1;
}

}  // namespace

int main() {
  nboxComm_t comm = nullptr;
  if (nboxCommInitFromEnv(&comm) != nboxSuccess) {
    std::fprintf(stderr, "init: %s\n", nboxGetLastError(nullptr));
    return 1;
  }
  int me = 0, world = 0;
  nboxCommUserRank(comm, &me);
  nboxCommCount(comm, &world);
  const size_t n = 3000, root = static_cast<size_t>(std::atoi(std::getenv("TEST_ROOT")));
  std::vector<float> in(n), reduced(n), gathered(world * n), bcast(n, -1.0f);
  for (size_t i = 0; i < n; ++i) in[i] = PlanInput(me, i);
  if (nboxAllReduce(in.data(), reduced.data(), n, nboxFloat32, nboxSum, comm, nullptr) != 0 ||
      nboxAllGather(in.data(), gathered.data(), n, nboxFloat32, comm, nullptr) != 0 ||
      nboxBroadcast(in.data(), bcast.data(), n, nboxFloat32, static_cast<int>(root), comm,
                    nullptr) != 0 ||
      nboxCommSynchronize(comm) != nboxSuccess) {
    std::fprintf(stderr, "rank %d: %s\n", me, nboxGetLastError(comm));
    return 1;
  }
  nboxCommDestroy(comm);
  for (size_t i = 0; i < n; ++i) {
    float sum = 0;
    for (int r = 0; r < world; ++r) sum += PlanInput(r, i);
    if (reduced[i] != sum) return Fail("all-reduce", i, reduced[i], sum);
    if (bcast[i] != PlanInput(static_cast<int>(root), i)) {
      return Fail("broadcast", i, bcast[i], PlanInput(static_cast<int>(root), i));
    }
    for (int r = 0; r < world; ++r) {
      if (gathered[r * n + i] != PlanInput(r, i)) {
        return Fail("all-gather", r * n + i, gathered[r * n + i], PlanInput(r, i));
      }
    }
  }
  return 0;
}
