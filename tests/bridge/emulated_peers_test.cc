// One real rank (the host runtime over libnccl-net-nbox.so, in this process) with three
// emulated peers served by the EmulatedPeers test double: the real BridgeServer with
// ServerOptions::real, the real CosimBootstrapRoot, synthetic handles, server-made connections.
// Results are checked against closed forms of the inputs (sums, concatenation, the root's data)
// and, with payload = self, against the homogeneity formulas (sum W·x, max x, prod x^W).
#include "tests/bridge/emulated_peers.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bridge/include/nbox_host.h"

namespace nbox::bridge::testing {
namespace {

constexpr int kWorld = 4;
constexpr int kChannels = 2;
constexpr uint64_t kChunk = 4096;

coll::CollectiveSpec SpecOf(coll::CollectiveOp op, uint64_t bytes, int root = 0) {
  coll::CollectiveSpec spec;  // as the runtime builds it (api.cc SpecFor)
  spec.op = op;
  spec.world_size = kWorld;
  spec.bytes = bytes;
  spec.element_bytes = 4;
  spec.channels = kChannels;
  spec.chunk_bytes = kChunk;
  spec.root = root;
  return spec;
}

float Input(int rank, size_t i) {
  return PlanInput(rank, i);
}

std::vector<float> Inputs(int rank, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = Input(rank, i);
  return v;
}

// Sets the environment nbox-cosim would print, and joins.
nboxComm_t Join(const EmulatedPeers& peers, int rank, const char* clock = "virtual") {
  setenv("NBOX_NET_PLUGIN", NBOX_PLUGIN_PATH, 1);
  setenv("NBOX_BRIDGE", peers.bridge_endpoint().c_str(), 1);
  setenv("NBOX_SECRET", kTestSecret, 1);
  setenv("NBOX_RANK", std::to_string(rank).c_str(), 1);
  setenv("NBOX_WORLD_SIZE", std::to_string(kWorld).c_str(), 1);
  setenv("NBOX_UNIQUE_ID", peers.unique_id_text().c_str(), 1);
  setenv("NBOX_CHANNELS", std::to_string(kChannels).c_str(), 1);
  setenv("NBOX_CHUNK_BYTES", std::to_string(kChunk).c_str(), 1);
  setenv("NBOX_CLOCK", clock, 1);
  unsetenv("NBOX_UNIQUE_ID_FILE");
  unsetenv("NBOX_JOB_ID");
  nboxComm_t comm = nullptr;
  EXPECT_EQ(nboxCommInitFromEnv(&comm), nboxSuccess) << nboxGetLastError(nullptr);
  return comm;
}

// (real rank, clock mode)
class OneRealRank : public ::testing::TestWithParam<std::tuple<int, const char*>> {};

TEST_P(OneRealRank, RunsEveryCollectiveWithThreeEmulatedPeers) {
  const int me = std::get<0>(GetParam());
  std::vector<bool> real(kWorld, false);
  real[me] = true;
  const size_t n_reduce = 3000, n_gather = 700, n_scatter = 500, n_bcast = 1000;
  const int emulated_root = (me + 3) % kWorld;

  std::vector<PlannedCollective> plan;
  {
    PlannedCollective all_reduce{SpecOf(coll::CollectiveOp::kAllReduce, n_reduce * 4)};
    for (int r = 0; r < kWorld; ++r) all_reduce.before.push_back(Inputs(r, n_reduce));
    plan.push_back(all_reduce);
    PlannedCollective all_gather{SpecOf(coll::CollectiveOp::kAllGather, kWorld * n_gather * 4)};
    for (int r = 0; r < kWorld; ++r) {
      std::vector<float> buffer(kWorld * n_gather, 0.0f);
      for (size_t i = 0; i < n_gather; ++i) buffer[r * n_gather + i] = Input(r, i);
      all_gather.before.push_back(buffer);
    }
    plan.push_back(all_gather);
    PlannedCollective scatter{SpecOf(coll::CollectiveOp::kReduceScatter, kWorld * n_scatter * 4)};
    for (int r = 0; r < kWorld; ++r) scatter.before.push_back(Inputs(r, kWorld * n_scatter));
    plan.push_back(scatter);
    for (int root : {emulated_root, me}) {
      PlannedCollective broadcast{SpecOf(coll::CollectiveOp::kBroadcast, n_bcast * 4, root)};
      for (int r = 0; r < kWorld; ++r) {
        broadcast.before.push_back(r == root ? Inputs(r, n_bcast)
                                             : std::vector<float>(n_bcast, 0.0f));
      }
      plan.push_back(broadcast);
    }
  }
  EmulatedPeers peers(kWorld, real, kChannels, kChunk, Payload::kExact, plan);
  nboxComm_t comm = Join(peers, me, std::get<1>(GetParam()));
  ASSERT_NE(comm, nullptr);

  uint64_t t0 = 0;
  ASSERT_EQ(nboxCommVirtualTimeNs(comm, &t0), nboxSuccess);
  ASSERT_EQ(nboxMarkIteration(comm, 7, 1), nboxSuccess);
  std::vector<float> reduced(n_reduce), gathered(kWorld * n_gather), scattered(n_scatter);
  std::vector<float> from_emulated(n_bcast, -1.0f), from_me = Inputs(me, n_bcast);
  const std::vector<float> reduce_in = Inputs(me, n_reduce);
  const std::vector<float> gather_in = Inputs(me, n_gather);
  const std::vector<float> scatter_in = Inputs(me, kWorld * n_scatter);
  ASSERT_EQ(nboxAllReduce(reduce_in.data(), reduced.data(), n_reduce, nboxFloat32, nboxSum, comm,
                          nullptr),
            nboxSuccess);
  ASSERT_EQ(nboxAllGather(gather_in.data(), gathered.data(), n_gather, nboxFloat32, comm, nullptr),
            nboxSuccess);
  ASSERT_EQ(nboxReduceScatter(scatter_in.data(), scattered.data(), n_scatter, nboxFloat32, nboxSum,
                              comm, nullptr),
            nboxSuccess);
  ASSERT_EQ(nboxBroadcast(nullptr, from_emulated.data(), n_bcast, nboxFloat32, emulated_root, comm,
                          nullptr),
            nboxSuccess);
  ASSERT_EQ(nboxBroadcast(from_me.data(), from_me.data(), n_bcast, nboxFloat32, me, comm, nullptr),
            nboxSuccess);
  ASSERT_EQ(nboxCommSynchronize(comm), nboxSuccess) << nboxGetLastError(comm);
  ASSERT_EQ(nboxMarkIteration(comm, 7, 0), nboxSuccess);
  uint64_t t1 = 0;
  ASSERT_EQ(nboxCommVirtualTimeNs(comm, &t1), nboxSuccess);
  EXPECT_GE(t1, t0);
  ASSERT_EQ(nboxCommDestroy(comm), nboxSuccess);
  ASSERT_TRUE(peers.WaitForGoodbyes(1));

  for (size_t i = 0; i < n_reduce; ++i) {
    float sum = 0;
    for (int r = 0; r < kWorld; ++r) sum += Input(r, i);
    ASSERT_EQ(reduced[i], sum) << "all-reduce element " << i;
  }
  for (int r = 0; r < kWorld; ++r) {
    for (size_t i = 0; i < n_gather; ++i) {
      ASSERT_EQ(gathered[r * n_gather + i], Input(r, i)) << "all-gather segment " << r;
    }
  }
  for (size_t i = 0; i < n_scatter; ++i) {
    float sum = 0;
    for (int r = 0; r < kWorld; ++r) sum += Input(r, me * n_scatter + i);
    ASSERT_EQ(scattered[i], sum) << "reduce-scatter element " << i;
  }
  for (size_t i = 0; i < n_bcast; ++i) {
    ASSERT_EQ(from_emulated[i], Input(emulated_root, i)) << "broadcast element " << i;
    ASSERT_EQ(from_me[i], Input(me, i));
  }

  EXPECT_EQ(peers.problems(), std::vector<std::string>());
  EXPECT_EQ(peers.bootstrap_failure(), "");
  // The server made one connection from every emulated rank on every lane (lanes
  // 0..channels-1 carry collectives, lane `channels` Send/Recv) as soon as the real rank
  // listened; the real rank connected only where it sent: to its ring successor, on the
  // collective lanes.
  std::set<std::tuple<int, int, int>> seen, expected;
  for (const auto& c : peers.connections()) {
    EXPECT_TRUE(seen.insert({c.sender, c.receiver, c.lane}).second) << "twice";
  }
  for (int other = 0; other < kWorld; ++other) {
    if (other == me) continue;
    for (int lane = 0; lane <= kChannels; ++lane) expected.insert({other, me, lane});
  }
  for (int lane = 0; lane < kChannels; ++lane) expected.insert({me, (me + 1) % kWorld, lane});
  EXPECT_EQ(seen, expected);
  // The calls, as the runtime reported them when the program made them.
  const std::vector<wire::OpReport> ops = peers.ops();
  ASSERT_EQ(ops.size(), 7u);
  EXPECT_EQ(ops[0].kind, wire::OpReportKind::kIterationBegin);
  EXPECT_EQ(ops[0].seq, 7u);
  const wire::ReportedOp expected_ops[] = {
      wire::ReportedOp::kAllReduce, wire::ReportedOp::kAllGather, wire::ReportedOp::kReduceScatter,
      wire::ReportedOp::kBroadcast, wire::ReportedOp::kBroadcast};
  const uint64_t expected_bytes[] = {n_reduce * 4, kWorld * n_gather * 4, kWorld * n_scatter * 4,
                                     n_bcast * 4, n_bcast * 4};
  for (int i = 0; i < 5; ++i) {
    const wire::OpReport& op = ops[1 + i];
    EXPECT_EQ(op.kind, wire::OpReportKind::kCollective);
    EXPECT_EQ(op.op, expected_ops[i]) << i;
    EXPECT_EQ(op.bytes, expected_bytes[i]) << i;
    EXPECT_EQ(op.seq, static_cast<uint64_t>(i));
    EXPECT_EQ(op.dtype, nboxFloat32);
    EXPECT_GE(op.vtime, ops[i].vtime);  // the rank's clock never goes back
  }
  EXPECT_EQ(ops[4].root, emulated_root);
  EXPECT_EQ(ops[5].root, me);
  EXPECT_EQ(ops[1].root, -1);
  EXPECT_EQ(ops[6].kind, wire::OpReportKind::kIterationEnd);
  EXPECT_EQ(peers.goodbyes(), 1);
}

INSTANTIATE_TEST_SUITE_P(RealRankAndClock, OneRealRank,
                         ::testing::Values(std::make_tuple(0, "virtual"),
                                           std::make_tuple(2, "virtual"),
                                           std::make_tuple(3, "realtime")),
                         [](const auto& info) {
                           return "Rank" + std::to_string(std::get<0>(info.param)) + "_" +
                                  std::get<1>(info.param);
                         });

// payload = self: the emulated peers send no bytes; the real rank fills their messages from
// its own input, so every rank holding x gives exactly sum W·x, max x, prod x^W.
TEST(PayloadSelf, ReductionsSeeHomogeneousPeers) {
  const int me = 1;
  std::vector<bool> real(kWorld, false);
  real[me] = true;
  const size_t n = 2500;
  // Only the message sizes of the plan matter here (no bytes travel).
  const auto sizes_only = [&](coll::CollectiveOp op, uint64_t bytes) {
    PlannedCollective c{SpecOf(op, bytes)};
    c.before.assign(kWorld, std::vector<float>(bytes / 4, 0.0f));
    return c;
  };
  std::vector<PlannedCollective> plan = {sizes_only(coll::CollectiveOp::kAllReduce, n * 4),
                                         sizes_only(coll::CollectiveOp::kAllReduce, n * 4),
                                         sizes_only(coll::CollectiveOp::kAllReduce, n * 4),
                                         sizes_only(coll::CollectiveOp::kReduceScatter, n * 4),
                                         sizes_only(coll::CollectiveOp::kAllGather, n * 4)};
  EmulatedPeers peers(kWorld, real, kChannels, kChunk, Payload::kSynthetic, plan);
  nboxComm_t comm = Join(peers, me);
  ASSERT_NE(comm, nullptr);

  std::vector<float> x(n);
  std::vector<int32_t> ints(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(static_cast<int>(i % 101) - 50) * 0.5f;  // exact in float
    ints[i] = static_cast<int32_t>(i % 7) - 3;
  }
  std::vector<float> sum(n), max(n), scattered(n / kWorld), gathered(n);
  std::vector<int32_t> prod(n);
  const std::vector<float> own_segment(x.begin(), x.begin() + n / kWorld);
  ASSERT_EQ(nboxAllReduce(x.data(), sum.data(), n, nboxFloat32, nboxSum, comm, nullptr),
            nboxSuccess);
  ASSERT_EQ(nboxAllReduce(x.data(), max.data(), n, nboxFloat32, nboxMax, comm, nullptr),
            nboxSuccess);
  ASSERT_EQ(nboxAllReduce(ints.data(), prod.data(), n, nboxInt32, nboxProd, comm, nullptr),
            nboxSuccess);
  ASSERT_EQ(nboxReduceScatter(x.data(), scattered.data(), n / kWorld, nboxFloat32, nboxSum, comm,
                              nullptr),
            nboxSuccess);
  ASSERT_EQ(
      nboxAllGather(own_segment.data(), gathered.data(), n / kWorld, nboxFloat32, comm, nullptr),
      nboxSuccess);
  ASSERT_EQ(nboxCommSynchronize(comm), nboxSuccess) << nboxGetLastError(comm);
  ASSERT_EQ(nboxCommDestroy(comm), nboxSuccess);

  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(sum[i], kWorld * x[i]) << i;
    ASSERT_EQ(max[i], x[i]) << i;
    const int32_t v = ints[i];
    ASSERT_EQ(prod[i], v * v * v * v) << i;
  }
  const size_t seg = n / kWorld;
  for (size_t i = 0; i < seg; ++i) {
    ASSERT_EQ(scattered[i], kWorld * x[me * seg + i]) << "reduce-scatter " << i;
    for (int r = 0; r < kWorld; ++r) {
      ASSERT_EQ(gathered[r * seg + i], own_segment[i]) << "all-gather segment " << r;
    }
  }
  EXPECT_EQ(peers.problems(), std::vector<std::string>());
}

// Virtual clock: compute that overlaps an all-reduce counts once. The runtime thread waits
// for the network while the program computes, and the clock keeps running; it stops only while
// the program waits. Each message takes 50 ms, the all-reduce about three of them in a row, the
// compute 300 ms: the iteration is the compute, not compute + communication (about 450 ms).
TEST(VirtualClock, ComputeOverlappingCommunicationIsNotLost) {
  const int me = 0;
  std::vector<bool> real(kWorld, false);
  real[me] = true;
  const size_t n = 400;
  PlannedCollective all_reduce{SpecOf(coll::CollectiveOp::kAllReduce, n * 4)};
  for (int r = 0; r < kWorld; ++r) all_reduce.before.push_back(Inputs(r, n));
  constexpr uint64_t kDelayNs = 50'000'000;
  EmulatedPeers peers(kWorld, real, kChannels, kChunk, Payload::kExact, {all_reduce}, kDelayNs);
  nboxComm_t comm = Join(peers, me);
  ASSERT_NE(comm, nullptr);
  const std::vector<float> input = Inputs(me, n);
  std::vector<float> output(n);
  uint64_t t0 = 0, t1 = 0;
  ASSERT_EQ(nboxCommVirtualTimeNs(comm, &t0), nboxSuccess);
  nboxRequest_t request = nullptr;
  ASSERT_EQ(nboxAllReduce(input.data(), output.data(), n, nboxFloat32, nboxSum, comm, &request),
            nboxSuccess);
  const auto compute_start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the "backward pass"
  const uint64_t compute_ns =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now() - compute_start)
                                .count());
  ASSERT_EQ(nboxWait(request), nboxSuccess) << nboxGetLastError(comm);
  ASSERT_EQ(nboxCommVirtualTimeNs(comm, &t1), nboxSuccess);
  ASSERT_EQ(nboxCommDestroy(comm), nboxSuccess);
  for (size_t i = 0; i < n; ++i) {
    float sum = 0;
    for (int r = 0; r < kWorld; ++r) sum += Input(r, i);
    ASSERT_EQ(output[i], sum) << i;
  }
  EXPECT_GE(t1 - t0, compute_ns);
  EXPECT_LT(t1 - t0, compute_ns + 75'000'000)
      << "the clock stood still while the runtime waited and the program computed";
  EXPECT_EQ(peers.problems(), std::vector<std::string>());
}

// Starts emulated_peers_worker as real rank `rank` with the environment nbox-cosim would give
// it; its output goes to `log`.
pid_t StartWorker(const EmulatedPeers& peers, int rank, int root, const std::string& log) {
  std::vector<std::string> env = {std::string("NBOX_NET_PLUGIN=") + NBOX_PLUGIN_PATH,
                                  "NBOX_BRIDGE=" + peers.bridge_endpoint(),
                                  std::string("NBOX_SECRET=") + kTestSecret,
                                  "NBOX_RANK=" + std::to_string(rank),
                                  "NBOX_WORLD_SIZE=" + std::to_string(kWorld),
                                  "NBOX_UNIQUE_ID=" + peers.unique_id_text(),
                                  "NBOX_CHANNELS=" + std::to_string(kChannels),
                                  "NBOX_CHUNK_BYTES=" + std::to_string(kChunk),
                                  "TEST_ROOT=" + std::to_string(root),
                                  "PATH=/usr/bin:/bin"};
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    char* argv[] = {const_cast<char*>(NBOX_EMULATED_PEERS_WORKER), nullptr};
    execve(argv[0], argv, envp.data());
    _exit(127);
  }
  return pid;
}

// Exit code of `pid`, or -1 after killing it at the deadline.
int Reap(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Ranks 0 and 1 real (two processes), 2 and 3 emulated: on the ring 0 -> 1 -> 2 -> 3 -> 0 one
// connection joins two real ranks, one goes from real to emulated, one from emulated to real.
TEST(TwoRealRanks, ShareTheRingWithTwoEmulatedRanks) {
  const std::vector<bool> real = {true, true, false, false};
  const size_t n = 3000;
  const int root = 3;
  std::vector<PlannedCollective> plan;
  PlannedCollective all_reduce{SpecOf(coll::CollectiveOp::kAllReduce, n * 4)};
  PlannedCollective all_gather{SpecOf(coll::CollectiveOp::kAllGather, kWorld * n * 4)};
  PlannedCollective broadcast{SpecOf(coll::CollectiveOp::kBroadcast, n * 4, root)};
  for (int r = 0; r < kWorld; ++r) {
    std::vector<float> input(n);
    for (size_t i = 0; i < n; ++i) input[i] = PlanInput(r, i);
    all_reduce.before.push_back(input);
    std::vector<float> gather(kWorld * n, 0.0f);
    std::copy(input.begin(), input.end(), gather.begin() + r * n);
    all_gather.before.push_back(gather);
    broadcast.before.push_back(r == root ? input : std::vector<float>(n, 0.0f));
  }
  plan = {all_reduce, all_gather, broadcast};
  EmulatedPeers peers(kWorld, real, kChannels, kChunk, Payload::kExact, plan);
  const std::string dir = ::testing::TempDir();
  const std::string logs[2] = {dir + "/nbox_emulated_rank0.log", dir + "/nbox_emulated_rank1.log"};
  const pid_t pids[2] = {StartWorker(peers, 0, root, logs[0]),
                         StartWorker(peers, 1, root, logs[1])};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(Reap(pids[r], deadline), 0) << "rank " << r << ":\n" << ReadFile(logs[r]);
  }
  EXPECT_TRUE(peers.WaitForGoodbyes(2));
  EXPECT_EQ(peers.problems(), std::vector<std::string>());
  EXPECT_EQ(peers.bootstrap_failure(), "");
  // The real-to-real connection has its lanes from the bootstrap's registration.
  std::set<std::tuple<int, int, int>> between_real;
  for (const auto& c : peers.connections()) {
    if (real[c.sender] && real[c.receiver]) between_real.insert({c.sender, c.receiver, c.lane});
  }
  std::set<std::tuple<int, int, int>> expected;
  for (int lane = 0; lane < kChannels; ++lane) expected.insert({0, 1, lane});
  EXPECT_EQ(between_real, expected);
}

}  // namespace
}  // namespace nbox::bridge::testing
