// The program model run by the simulated ranks (workloads/program.h): communicator groups,
// several streams, waits on one op, point-to-point transfers and all-to-all, with their
// traffic and times against closed forms and hand-worked cases on a 10 Gb/s star.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "tests/cosim/alpha_beta.h"
#include "tests/cosim/job_fixture.h"
#include "workloads/ops.h"

namespace nbox::testing {
namespace {

using coll::CollectiveOp;
using coll::StepKind;
using work::Communicator;
using work::JobPrograms;
using work::OpKind;
using work::Parallelism;
using work::RankProgram;

constexpr double kRate = 10e9;
constexpr double kLatency = 1e-6;
constexpr uint32_t kMtu = 1500;

StarJob Star(int world) {
  StarJob setup;
  setup.world = world;
  setup.rate_bps = kRate;
  setup.latency_s = kLatency;
  setup.network.mtu = kMtu;
  return setup;
}

// A job whose slot 0 is the world and slot 1 is `groups[g]` for the ranks in group g.
JobPrograms GroupedJob(int world, const std::vector<std::vector<int>>& groups,
                       Parallelism parallelism, std::vector<std::string> streams) {
  JobPrograms job = work::SameProgramEverywhere(world, nullptr, Parallelism::kOther, "world");
  job.stream_names = std::move(streams);
  job.programs.assign(static_cast<size_t>(world), nullptr);
  for (size_t g = 0; g < groups.size(); ++g) {
    job.communicators.push_back(Communicator{"g" + std::to_string(g), parallelism, groups[g],
                                             parallelism == Parallelism::kPipeline});
    for (int rank : groups[g]) {
      job.rank_comms[static_cast<size_t>(rank)].push_back(static_cast<int>(g + 1));
    }
  }
  return job;
}

double FrameSeconds(double bytes) {
  return bytes * 8 / kRate;
}

TEST(ProgramModel, GroupsKeepTheirTrafficInside) {
  // Two groups of two ranks all-reduce 1 MiB each at once: every byte stays inside its group,
  // each rank sends S (a 2-rank ring: 2(n-1)/n S), and the disjoint groups do not slow each
  // other, so each takes the 2-rank ring's alpha-beta time.
  const uint64_t bytes = 1 << 20;
  JobPrograms job = GroupedJob(4, {{0, 1}, {2, 3}}, Parallelism::kTensor, {"tp"});
  auto program = std::make_shared<RankProgram>();
  program->iterations = 2;
  for (int i = 0; i < 2; ++i) {
    program->ops.push_back(work::MarkerOp(OpKind::kIterationBegin, i));
    program->ops.push_back(work::CollectiveOp(i, "tp allreduce", CollectiveOp::kAllReduce, bytes,
                                              /*comm=*/1, /*stream=*/0));
    program->ops.push_back(work::WaitAllOp(i));
    program->ops.push_back(work::MarkerOp(OpKind::kIterationEnd, i));
  }
  job.programs.assign(4, program);
  const JobOutcome out = RunOnStar(Star(4), job);
  ASSERT_TRUE(out.finished);
  for (const auto& [key, sent] : out.traffic) {
    const auto [src, dst, comm, channel] = key;
    EXPECT_EQ(src / 2, dst / 2) << src << " -> " << dst << " leaves its group";
    EXPECT_EQ(sent, 2 * bytes) << "two iterations of S per rank";
  }
  EXPECT_EQ(out.traffic.size(), 4u);
  EXPECT_EQ(out.transport.bytesDelivered, 4 * 2 * bytes);
  const double expected = AlphaBetaSeconds(2, static_cast<double>(bytes), kRate, kLatency, kMtu);
  EXPECT_NEAR(out.summary.iterations[1].time_s / expected, 1.0, 0.05);
  for (const auto& c : out.summary.collectives) {
    EXPECT_EQ(c.parallelism, Parallelism::kTensor);
    EXPECT_EQ(c.ranks, 2);
  }
  // The per-rank breakdown is compute-free: the whole iteration is exposed tensor-parallel
  // communication, save the skew between the two groups.
  const auto& b = out.summary.iterations[1].breakdown;
  EXPECT_EQ(b.ranks, 4);
  EXPECT_NEAR(b.exposed_s[static_cast<size_t>(Parallelism::kTensor)] + b.idle_s,
              out.summary.iterations[1].time_s, 1e-12);
}

TEST(ProgramModel, ComputeTimeIsSummedPerRankAndIterationWithOrWithoutEveryOp) {
  // Iteration 0 computes 1 + 2 ms, all-reduces, computes 4 ms; iteration 1 computes 5 ms.
  // Each rank's compute time is 7 ms and 5 ms whether each op is recorded (a timeline needs
  // them) or not (reports need only the totals).
  auto program = std::make_shared<RankProgram>();
  program->iterations = 2;
  program->ops = {work::MarkerOp(OpKind::kIterationBegin, 0),
                  work::ComputeOp(0, "a", 1e-3),
                  work::ComputeOp(0, "b", 2e-3),
                  work::CollectiveOp(0, "grads", CollectiveOp::kAllReduce, 64 << 10, 0, 0),
                  work::WaitAllOp(0),
                  work::ComputeOp(0, "c", 4e-3),
                  work::MarkerOp(OpKind::kIterationEnd, 0),
                  work::MarkerOp(OpKind::kIterationBegin, 1),
                  work::ComputeOp(1, "d", 5e-3),
                  work::MarkerOp(OpKind::kIterationEnd, 1)};
  for (const bool every_op : {true, false}) {
    StarJob setup = Star(2);
    setup.record_compute_ops = every_op;
    const JobOutcome out = RunOnStar(setup, *program);
    ASSERT_TRUE(out.finished);
    EXPECT_EQ(out.records->compute.size(), every_op ? 8u : 0u);
    ASSERT_EQ(out.records->computeTotals.size(), 4u);
    for (const ns3::NboxComputeTotal& total : out.records->computeTotals) {
      EXPECT_NEAR(total.seconds, total.iteration == 0 ? 7e-3 : 5e-3, 1e-12)
          << "rank " << total.rank << " iteration " << total.iteration;
    }
    ASSERT_EQ(out.summary.iterations.size(), 2u);
    EXPECT_NEAR(out.summary.iterations[0].compute_s, 7e-3, 1e-12);
    EXPECT_NEAR(out.summary.iterations[1].compute_s, 5e-3, 1e-12);
  }
}

TEST(ProgramModel, AWaitOnOneOpDoesNotWaitForTheOtherStream) {
  // Two ranks issue a 16 MiB all-reduce on stream 0 and a 64 KiB one on stream 1 (another
  // communicator), wait for the small one only, then compute: the compute starts the moment
  // the small one ends, long before the big one does.
  JobPrograms job = GroupedJob(2, {{0, 1}}, Parallelism::kTensor, {"dp", "tp"});
  job.communicators[0].parallelism = Parallelism::kData;
  auto program = std::make_shared<RankProgram>();
  program->iterations = 1;
  program->ops = {work::MarkerOp(OpKind::kIterationBegin, 0),
                  work::CollectiveOp(0, "big", CollectiveOp::kAllReduce, 16 << 20, 0, 0),
                  work::CollectiveOp(0, "small", CollectiveOp::kAllReduce, 64 << 10, 1, 1),
                  work::WaitOp(0, 2),
                  work::ComputeOp(0, "after small", 1e-6),
                  work::WaitAllOp(0),
                  work::MarkerOp(OpKind::kIterationEnd, 0)};
  job.programs.assign(2, program);
  const JobOutcome out = RunOnStar(Star(2), job);
  ASSERT_TRUE(out.finished);
  for (uint32_t rank = 0; rank < 2; ++rank) {
    ns3::Time small_end;
    ns3::Time big_end;
    for (const auto& c : out.records->collectives) {
      if (c.rank != rank) continue;
      const bool small = out.records->Label(c.labelId) == "small";
      (small ? small_end : big_end) = c.finished;
      EXPECT_EQ(c.stream, small ? 1u : 0u);
    }
    ns3::Time compute_start;
    for (const auto& c : out.records->compute) {
      if (c.rank == rank) compute_start = c.start;
    }
    EXPECT_EQ(compute_start, small_end) << "rank " << rank;
    EXPECT_LT(compute_start.GetSeconds(), 0.5 * big_end.GetSeconds()) << "rank " << rank;
    // The first wait ended with the tensor-parallel op, the second with the data-parallel one.
    std::vector<Parallelism> waited;
    for (const auto& w : out.records->waits) {
      if (w.rank == rank) waited.push_back(w.parallelism);
    }
    EXPECT_EQ(waited, (std::vector<Parallelism>{Parallelism::kTensor, Parallelism::kData}));
  }
}

TEST(ProgramModel, APipelineReceiveSplitsIntoBubbleAndTransfer) {
  // Stage 0 computes 100 us, then sends 8 KiB to stage 1, which waits for it from t = 0. Until
  // stage 0 posts its send (100 us) stage 1's wait is pipeline bubble; from then to the last
  // byte it is pipeline communication. By hand: 8192 bytes are 5 segments of 1448 and one of
  // 952 (within the initial window, no ACK awaited); the last byte arrives when the host has
  // serialised all six frames (payload + 54 header bytes each), the switch the last one again,
  // after two 1 us hops.
  const uint64_t bytes = 8192;
  JobPrograms job = GroupedJob(2, {{0, 1}}, Parallelism::kPipeline, {"pp"});
  auto sender = std::make_shared<RankProgram>();
  sender->iterations = 1;
  sender->ops = {work::MarkerOp(OpKind::kIterationBegin, 0), work::ComputeOp(0, "fwd", 100e-6),
                 work::TransfersOp(0, "send fwd", {{StepKind::kSend, 1, bytes}}, 1, 0),
                 work::WaitOp(0, 2), work::MarkerOp(OpKind::kIterationEnd, 0)};
  auto receiver = std::make_shared<RankProgram>();
  receiver->iterations = 1;
  receiver->ops = {work::MarkerOp(OpKind::kIterationBegin, 0),
                   work::TransfersOp(0, "recv fwd", {{StepKind::kRecv, 0, bytes}}, 1, 0),
                   work::WaitOp(0, 1), work::ComputeOp(0, "fwd", 10e-6),
                   work::MarkerOp(OpKind::kIterationEnd, 0)};
  job.programs = {sender, receiver};
  const JobOutcome out = RunOnStar(Star(2), job);
  ASSERT_TRUE(out.finished);

  const double full_frame = FrameSeconds(1448 + 54);
  const double transfer = full_frame + (5 * full_frame + FrameSeconds(952 + 54)) + 2 * kLatency;
  double bubble = 0;
  double pp = 0;
  for (const auto& w : out.records->waits) {
    if (w.rank != 1) continue;
    EXPECT_EQ(w.parallelism, Parallelism::kPipeline);
    (w.bubble ? bubble : pp) += (w.end - w.start).GetSeconds();
  }
  EXPECT_NEAR(bubble, 100e-6, 1e-9);
  EXPECT_NEAR(pp, transfer, 10e-9);
  // The breakdown of the iteration adds up to its time, and holds the bubble as half of
  // rank 1's (the mean over two ranks).
  const auto& it = out.summary.iterations[0];
  const auto& b = it.breakdown;
  double sum = b.compute_s + b.bubble_s + b.idle_s;
  for (double e : b.exposed_s) sum += e;
  EXPECT_NEAR(sum, it.time_s, 1e-12);
  EXPECT_NEAR(b.bubble_s, 50e-6, 1e-9);
  ASSERT_EQ(out.summary.collectives.size(), 2u);
  for (const auto& c : out.summary.collectives) EXPECT_TRUE(c.is_transfers);
  // The receive's record spans the bubble, but the network had it only from the send's post:
  // its run time, which the bandwidths divide, is the transfer alone.
  const auto& recv = out.summary.collectives[0].label == "recv fwd" ? out.summary.collectives[0]
                                                                    : out.summary.collectives[1];
  ASSERT_EQ(recv.label, "recv fwd");
  EXPECT_NEAR(recv.time_s, 100e-6 + transfer, 10e-9);
  EXPECT_NEAR(recv.all_started_s - recv.start_s, 100e-6, 1e-9);
  EXPECT_NEAR(recv.run_s, transfer, 10e-9);
}

TEST(ProgramModel, AllToAllOnAStarTakesItsBandwidthTime) {
  // Four ranks exchange 4 MiB each (1 MiB to every rank, three of them over the wire): each
  // host link carries 3 MiB each way, all peers at once, so the steady all-to-all takes the
  // time to move 3 MiB at TCP goodput, plus a path latency.
  const uint64_t bytes = 4 << 20;
  const int world = 4;
  auto program = std::make_shared<RankProgram>(
      work::RepeatedCollectiveProgram(CollectiveOp::kAllToAll, bytes, 3));
  const JobOutcome out = RunOnStar(
      Star(world), work::SameProgramEverywhere(world, program, Parallelism::kExpert, "ep"));
  ASSERT_TRUE(out.finished);
  EXPECT_EQ(out.transport.bytesDelivered, 3ull * world * (world - 1) * (bytes / world));
  const double goodput = kRate / 8 * (kMtu - 52) / (kMtu + 2);
  const double expected = 3.0 * (bytes / world) / goodput + FrameSeconds(kMtu + 2) + 2 * kLatency;
  EXPECT_NEAR(out.summary.iterations[2].time_s / expected, 1.0, 0.05);
  const auto groups = cosim::GroupCollectives(out.summary, 2);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].op, CollectiveOp::kAllToAll);
  EXPECT_EQ(groups[0].parallelism, Parallelism::kExpert);
}

}  // namespace
}  // namespace nbox::testing
