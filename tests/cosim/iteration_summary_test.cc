// How Summarize times iterations, on records written by hand: an iteration runs from the
// previous iteration's end (the latest rank's) to its own, so iterations that overlap, because
// a rank left the previous one early, are not counted twice (tools/cosim/reports/summary.h).
#include <gtest/gtest.h>

#include <utility>

#include "ns3/nstime.h"
#include "tools/cosim/reports/summary.h"

namespace nbox::cosim {
namespace {

using ns3::Seconds;

// Two ranks, two iterations, 0.2 s of compute each. Rank 0 ends iteration 0 at 1.0 s and starts
// iteration 1 at once; rank 1 ends iteration 0 at 1.4 s. Both take 1.4 s for iteration 1.
ns3::NboxJobRecords SkewedJob() {
  ns3::NboxJobRecords records;
  records.jobStart = Seconds(0.5);
  auto iteration = [&](uint32_t rank, int index, double start, double end) {
    records.iterations.push_back({rank, index, Seconds(0.5 + start), Seconds(0.5 + end)});
    records.computeTotals.push_back({rank, index, 0.2, {}});
  };
  iteration(0, 0, 0.0, 1.0);
  iteration(1, 0, 0.0, 1.4);
  iteration(0, 1, 1.0, 2.4);
  iteration(1, 1, 1.4, 2.8);
  return records;
}

TEST(IterationSummary, AnIterationRunsFromThePreviousOnesEnd) {
  const JobSummary summary = Summarize(SkewedJob());
  ASSERT_EQ(summary.iterations.size(), 2u);
  const IterationSummary& first = summary.iterations[0];
  EXPECT_DOUBLE_EQ(first.start_s, 0.0);
  EXPECT_DOUBLE_EQ(first.end_s, 1.4);
  EXPECT_DOUBLE_EQ(first.time_s, 1.4);
  const IterationSummary& second = summary.iterations[1];
  EXPECT_DOUBLE_EQ(second.start_s, 1.0);  // rank 0's start: the iterations overlap by 0.4 s
  EXPECT_DOUBLE_EQ(second.end_s, 2.8);
  EXPECT_NEAR(second.time_s, 1.4, 1e-12);  // not the 1.8 s from rank 0's start
  EXPECT_NEAR(second.exposed_comm_s, 1.2, 1e-12);
  // The iterations tile the job: their times add up to its end.
  EXPECT_NEAR(first.time_s + second.time_s, summary.end_s, 1e-12);
  EXPECT_NEAR(SteadyIterationTime(summary), 1.4, 1e-12);
}

// One rank, one iteration of 0.8 s: 0.7 s of compute and a 0.1 s wait on a tensor-parallel
// collective fill it, so nothing is idle, though 0.7 + 0.1 falls short of 0.8 in doubles. A
// nanosecond really left is kept.
TEST(IterationSummary, ARoundingRemainderIsNotIdleTime) {
  for (const auto& [wait_end, idle] : {std::pair<double, double>{0.8, 0.0}, {0.8 - 1e-9, 1e-9}}) {
    ns3::NboxJobRecords records;
    records.jobStart = Seconds(0);
    records.iterations.push_back({0, 0, Seconds(0), Seconds(0.8)});
    records.computeTotals.push_back({0, 0, 0.7, {}});
    records.waits.push_back(
        {0, 0, work::Parallelism::kTensor, false, Seconds(0.7), Seconds(wait_end)});
    const JobSummary summary = Summarize(records);
    ASSERT_EQ(summary.iterations.size(), 1u);
    const IterationBreakdown& b = summary.iterations[0].breakdown;
    EXPECT_NEAR(b.exposed_s[static_cast<size_t>(work::Parallelism::kTensor)], wait_end - 0.7,
                1e-12);
    if (idle == 0.0) {
      EXPECT_EQ(b.idle_s, 0.0);
    } else {
      EXPECT_NEAR(b.idle_s, idle, 1e-12);
    }
  }
}

}  // namespace
}  // namespace nbox::cosim
