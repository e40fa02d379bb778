// MakeTraceReplayJob on the hand-written two-rank trace: the ops worked out by hand from
// the rules in workloads/trace_replay.h.
#include "workloads/trace_replay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/collective_trace.h"

namespace nbox::work {
namespace {

// A compact picture of an op: "begin 0", "coll AllReduce 1048576 trace #0 AllReduce", "wait",
// "compute 1000ns compute before trace #1", "end 0".
// The replayed job's programs, one per rank.
std::vector<std::shared_ptr<const RankProgram>> Programs(const CollectiveTrace& trace,
                                                         int iterations) {
  return MakeTraceReplayJob(trace, iterations).programs;
}

std::vector<std::string> Describe(const RankProgram& program, int iteration) {
  std::vector<std::string> lines;
  for (const Op& op : program.ops) {
    if (op.iteration != iteration) continue;
    switch (op.kind) {
      case OpKind::kIterationBegin:
        lines.push_back("begin " + std::to_string(op.iteration));
        break;
      case OpKind::kIterationEnd:
        lines.push_back("end " + std::to_string(op.iteration));
        break;
      case OpKind::kWaitAll:
        lines.push_back("wait");
        break;
      case OpKind::kCompute:
        lines.push_back("compute " + std::to_string(std::llround(op.duration_s * 1e9)) + "ns " +
                        op.label);
        break;
      case OpKind::kCollective:
        lines.push_back("coll " + std::string(coll::ToString(op.collective)) + " " +
                        std::to_string(op.bytes) + " " + op.label);
        break;
      case OpKind::kTransfers:
      case OpKind::kWait:
      case OpKind::kWaitStream:
        lines.push_back("unexpected op kind " + std::to_string(static_cast<int>(op.kind)));
        break;
    }
  }
  return lines;
}

CollectiveTrace Fixture() {
  return ReadCollectiveTrace("tests/workloads/fixtures/two_rank_trace.jsonl");
}

TEST(TraceReplay, RankZeroWaitsWhenItLaunchedAfterTheEndAndOverlapsOtherwise) {
  const std::vector<std::shared_ptr<const RankProgram>> programs = Programs(Fixture(), 1);
  ASSERT_EQ(programs.size(), 2u);
  EXPECT_EQ(programs[0]->iterations, 1);
  // AllReduce 1000-5000; AllGather 6000-11900 starts after it ended: wait, 1000 ns;
  // ReduceScatter starts at 7000 while the all-gather runs: 7000 - 6000 ns, no wait.
  EXPECT_EQ(Describe(*programs[0], 0),
            (std::vector<std::string>{
                "begin 0", "coll AllReduce 1048576 trace #0 AllReduce", "wait",
                "compute 1000ns compute before trace #1", "coll AllGather 8192 trace #1 AllGather",
                "compute 1000ns compute before trace #2",
                "coll ReduceScatter 4096 trace #2 ReduceScatter", "wait", "end 0"}));
}

TEST(TraceReplay, RankOneHasItsOwnGaps) {
  const std::vector<std::shared_ptr<const RankProgram>> programs = Programs(Fixture(), 1);
  // AllReduce 1200-5100; AllGather 9100-12000: wait, 4000 ns; ReduceScatter 12500: wait,
  // 500 ns.
  EXPECT_EQ(Describe(*programs[1], 0),
            (std::vector<std::string>{
                "begin 0", "coll AllReduce 1048576 trace #0 AllReduce", "wait",
                "compute 4000ns compute before trace #1", "coll AllGather 8192 trace #1 AllGather",
                "wait", "compute 500ns compute before trace #2",
                "coll ReduceScatter 4096 trace #2 ReduceScatter", "wait", "end 0"}));
}

TEST(TraceReplay, EachIterationReplaysTheWholeTrace) {
  const std::vector<std::shared_ptr<const RankProgram>> programs = Programs(Fixture(), 3);
  EXPECT_EQ(programs[1]->iterations, 3);
  EXPECT_EQ(programs[1]->ops.size(), 3u * 10);
  EXPECT_EQ(Describe(*programs[1], 2),
            (std::vector<std::string>{
                "begin 2", "coll AllReduce 1048576 trace #0 AllReduce", "wait",
                "compute 4000ns compute before trace #1", "coll AllGather 8192 trace #1 AllGather",
                "wait", "compute 500ns compute before trace #2",
                "coll ReduceScatter 4096 trace #2 ReduceScatter", "wait", "end 2"}));
}

TEST(TraceReplay, BackToBackCollectivesGetNoComputeOp) {
  CollectiveTrace trace;
  trace.nranks = 1;
  trace.communicators = {{"0x1", {0}, 1}};
  trace.ranks = {{{1, coll::CollectiveOp::kAllReduce, 64, 0, 100},
                  {2, coll::CollectiveOp::kAllReduce, 64, 100, 200},
                  {3, coll::CollectiveOp::kAllReduce, 64, 150, 300}}};
  EXPECT_EQ(Describe(*Programs(trace, 1)[0], 0),
            (std::vector<std::string>{"begin 0", "coll AllReduce 64 trace #0 AllReduce", "wait",
                                      "coll AllReduce 64 trace #1 AllReduce",
                                      "compute 50ns compute before trace #2",
                                      "coll AllReduce 64 trace #2 AllReduce", "wait", "end 0"}));
}

// Several communicators: each is a communicator of the job on a stream of its own, named
// "world", "comm1", ...; a rank's program names the ones it is in by slot, and labels count
// places per communicator so that every member's part of a collective has the same one.
TEST(TraceReplay, EveryCommunicatorOnItsOwnStream) {
  CollectiveTrace trace;
  trace.nranks = 2;
  trace.communicators = {{"0xF", {0, 1}, 3}, {"0xA", {1}, 1}};
  TraceCollective solo{1, coll::CollectiveOp::kAllReduce, 64, 0, 10};
  solo.comm = 1;
  const TraceCollective world{3, coll::CollectiveOp::kAllReduce, 32, 20, 30};
  trace.ranks = {{world}, {solo, world}};
  const JobPrograms job = MakeTraceReplayJob(trace, 1);
  ASSERT_EQ(job.communicators.size(), 2u);
  EXPECT_EQ(job.communicators[0].name, "world");
  EXPECT_EQ(job.communicators[1].name, "comm1");
  EXPECT_EQ(job.stream_names, (std::vector<std::string>{"world", "comm1"}));
  EXPECT_EQ(job.rank_comms[0], (std::vector<int>{0}));
  EXPECT_EQ(job.rank_comms[1], (std::vector<int>{0, 1}));
  EXPECT_EQ(
      Describe(*job.programs[1], 0),
      (std::vector<std::string>{"begin 0", "coll AllReduce 64 trace comm1 #0 AllReduce", "wait",
                                "compute 10ns compute before trace #1",
                                "coll AllReduce 32 trace world #0 AllReduce", "wait", "end 0"}));
  EXPECT_EQ(job.programs[1]->ops[1].comm, 1) << "slot 1 of rank 1 is comm1";
  EXPECT_EQ(job.programs[1]->ops[4].comm, 0);
  EXPECT_NO_THROW(ValidateJobPrograms(job));
}

TEST(TraceReplay, LoadingChecksTheJobSize) {
  EXPECT_EQ(
      LoadTraceReplayJob("tests/workloads/fixtures/two_rank_trace.jsonl", 2, 1).programs.size(),
      2u);
  try {
    LoadTraceReplayJob("tests/workloads/fixtures/two_rank_trace.jsonl", 4, 1);
    FAIL() << "no error";
  } catch (const TraceError& error) {
    EXPECT_STREQ(error.what(),
                 "tests/workloads/fixtures/two_rank_trace.jsonl: the trace has 2 ranks but the "
                 "job has 4 (job.world_size; workload.trace_scaling scales a trace to another "
                 "number of ranks)");
  }
}

TEST(TraceReplay, RefusesZeroIterations) {
  EXPECT_THROW(MakeTraceReplayJob(Fixture(), 0), std::invalid_argument);
}

}  // namespace
}  // namespace nbox::work
