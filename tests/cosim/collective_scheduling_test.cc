// Which waiting collective starts next (collectives.order) and how many run
// at once (collectives.concurrent), on a 4-rank star. Three all-reduces A, B, C are issued at
// once on one stream; A starts at once (nothing runs), B and C wait. Hand-derived from the
// ring's alpha-beta time T(S) of tests/cosim/alpha_beta.h:
//   FIFO, one at a time: B runs after A, C after B: C ends at T(A) + T(B) + T(C).
//   LIFO, one at a time: C runs after A, B after C: B ends last, at the same total.
//   FIFO, two at once: A and B start together and share every link; C follows.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "tests/cosim/alpha_beta.h"
#include "tests/cosim/job_fixture.h"
#include "workloads/ops.h"

namespace nbox::testing {
namespace {

constexpr int kWorld = 4;
constexpr uint32_t kMtu = 9000;
constexpr double kLatency = 1e-6;
const std::map<std::string, uint64_t> kSizes = {{"A", 8 << 20}, {"B", 4 << 20}, {"C", 2 << 20}};

// Two iterations: the first opens the TCP windows, the second is timed (as in
// ring_alpha_beta_test.cc).
work::RankProgram ThreeAllReducesAtOnce() {
  work::RankProgram program;
  program.iterations = 2;
  for (int i = 0; i < 2; ++i) {
    program.ops.push_back(work::MarkerOp(work::OpKind::kIterationBegin, i));
    for (const char* label : {"A", "B", "C"}) {
      program.ops.push_back(
          work::CollectiveOp(i, label, coll::CollectiveOp::kAllReduce, kSizes.at(label)));
    }
    program.ops.push_back(work::WaitAllOp(i));
    program.ops.push_back(work::MarkerOp(work::OpKind::kIterationEnd, i));
  }
  return program;
}

struct Span {
  double started = 0;
  double finished = 0;
};

// Rank 0's start and end of each collective.
std::map<std::string, Span> RunThree(const std::string& order, uint32_t concurrent) {
  StarJob setup;
  setup.world = kWorld;
  setup.latency_s = kLatency;
  setup.network.mtu = kMtu;
  setup.collective_order = order;
  setup.max_concurrent = concurrent;
  const auto outcome = RunOnStar(setup, ThreeAllReducesAtOnce());
  EXPECT_TRUE(outcome.finished);
  std::map<std::string, Span> spans;
  for (const auto& record : outcome.records->collectives) {
    if (record.rank == 0 && record.iteration == 1) {
      spans[outcome.records->Label(record.labelId)] = {record.started.GetSeconds(),
                                                       record.finished.GetSeconds()};
    }
  }
  // Times from the iteration's start (after the connections are set up).
  double origin = 0;
  for (const auto& iteration : outcome.records->iterations) {
    if (iteration.rank == 0 && iteration.iteration == 1) origin = iteration.start.GetSeconds();
  }
  for (auto& [label, span] : spans) {
    span.started -= origin;
    span.finished -= origin;
  }
  return spans;
}

double T(const std::string& label) {
  return AlphaBetaSeconds(kWorld, static_cast<double>(kSizes.at(label)), StarJob{}.rate_bps,
                          kLatency, kMtu);
}

TEST(CollectiveScheduling, FifoRunsThemInIssueOrder) {
  const auto spans = RunThree("FIFO", 1);
  EXPECT_NEAR(spans.at("A").started, 0, 1e-9);
  EXPECT_DOUBLE_EQ(spans.at("B").started, spans.at("A").finished);
  EXPECT_DOUBLE_EQ(spans.at("C").started, spans.at("B").finished);
  EXPECT_NEAR(spans.at("C").finished / (T("A") + T("B") + T("C")), 1.0, 0.05);
}

TEST(CollectiveScheduling, LifoRunsTheLastIssuedFirst) {
  const auto spans = RunThree("LIFO", 1);
  EXPECT_NEAR(spans.at("A").started, 0, 1e-9);
  EXPECT_DOUBLE_EQ(spans.at("C").started, spans.at("A").finished);
  EXPECT_DOUBLE_EQ(spans.at("B").started, spans.at("C").finished);
  EXPECT_NEAR(spans.at("C").finished / (T("A") + T("C")), 1.0, 0.05);
  EXPECT_NEAR(spans.at("B").finished / (T("A") + T("B") + T("C")), 1.0, 0.05);
}

// A and B start together and share the links; C starts when the first of them ends, and the
// links never idle: C ends after the three bandwidth terms.
TEST(CollectiveScheduling, TwoAtOnceShareTheLinks) {
  const auto spans = RunThree("FIFO", 2);
  EXPECT_NEAR(spans.at("A").started, 0, 1e-9);
  EXPECT_NEAR(spans.at("B").started, 0, 1e-9);
  EXPECT_DOUBLE_EQ(spans.at("C").started, std::min(spans.at("A").finished, spans.at("B").finished));
  EXPECT_LT(spans.at("B").started, spans.at("A").finished);
  EXPECT_NEAR(spans.at("C").finished / (T("A") + T("B") + T("C")), 1.0, 0.05);
}

}  // namespace
}  // namespace nbox::testing
