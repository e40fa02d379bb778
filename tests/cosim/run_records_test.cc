// What a run keeps, counted from its programs before it runs (tools/cosim/assembly/run_records.h):
// a hand-made job counted by hand, and whole jobs whose records, once run, are no more than
// was counted and reserved (the vectors never grew past it).
#include "tools/cosim/assembly/run_records.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

#include "ns3/core-module.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/reports/summary.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::testing {
namespace {

work::Op Marker(work::OpKind kind) {
  work::Op op;
  op.kind = kind;
  return op;
}

// Two ranks, one program: compute, a collective with a 30-character label, a wait for it.
work::JobPrograms HandMadeJob() {
  auto program = std::make_shared<work::RankProgram>();
  program->iterations = 1;
  program->ops.push_back(Marker(work::OpKind::kIterationBegin));
  work::Op compute = Marker(work::OpKind::kCompute);
  compute.label = "fwd";
  compute.duration_s = 1e-3;
  program->ops.push_back(compute);
  work::Op all_reduce = Marker(work::OpKind::kCollective);
  all_reduce.label = "allreduce of the gradients 01";
  all_reduce.bytes = 1 << 20;
  program->ops.push_back(all_reduce);
  work::Op wait = Marker(work::OpKind::kWait);
  wait.target = 2;
  program->ops.push_back(wait);
  program->ops.push_back(Marker(work::OpKind::kIterationEnd));
  return work::SameProgramEverywhere(2, program, work::Parallelism::kData, "dp");
}

TEST(RunRecords, AHandMadeJobCountedByHand) {
  const work::JobPrograms job = HandMadeJob();
  ASSERT_EQ(job.programs[0]->ops[2].label.size(), 29u);
  // A 29-character label: malloc(30) plus its 8-byte header, in 16-byte steps: 48 bytes.
  EXPECT_EQ(cosim::StringHeapBytes(29), 48u);
  EXPECT_EQ(cosim::StringHeapBytes(15), 0u);  // inline
  for (bool record_compute : {false, true}) {
    SCOPED_TRACE(record_compute ? "compute ops recorded" : "compute ops not recorded");
    const cosim::RunRecordCounts c = cosim::CountRunRecords(job, record_compute);
    EXPECT_EQ(c.collective_records, 2u);
    EXPECT_EQ(c.wait_records, 2u);  // the world does not cross stages: one record a wait
    EXPECT_EQ(c.compute_records, record_compute ? 2u : 0u);
    EXPECT_EQ(c.iteration_records, 2u);
    EXPECT_EQ(c.compute_totals, 2u);
    // The collective's label is kept once for the job, not per record: its 48 heap bytes and
    // its entry in the job's table (a std::string, 32, and a map node, 48); "fwd" sits inline.
    EXPECT_EQ(c.label_bytes, 48u + 32 + 48);
    EXPECT_EQ(c.collective_instances, 1u);
    EXPECT_EQ(c.ops, 10u);
  }
  // Real ranks (no program) keep nothing.
  work::JobPrograms half = job;
  half.programs[1] = nullptr;
  const cosim::RunRecordCounts c = cosim::CountRunRecords(half, false);
  EXPECT_EQ(c.collective_records, 1u);
  EXPECT_EQ(c.iteration_records, 1u);
}

// Runs `scenario` and compares what its records hold with what was counted before.
void RunAndCompare(const std::string& path) {
  SCOPED_TRACE(path);
  const scenario::Scenario s = scenario::LoadScenario(path);
  cosim::JobAssembly assembly = cosim::AssembleJob(s);
  const cosim::RunRecordCounts counted = assembly.records;
  auto job = assembly.job;
  std::ostringstream quiet;
  const auto loop =
      cosim::RunSimulation([job] { return job->IsFinished(); }, [job] { return job->IsStalled(); },
                           cosim::ProgressMode::kOff, quiet);
  ASSERT_TRUE(loop.finished);
  const ns3::NboxJobRecords& records = *job->GetRecords();
  EXPECT_EQ(records.collectives.size(), counted.collective_records);
  EXPECT_EQ(records.collectives.capacity(), counted.collective_records) << "grew past the count";
  EXPECT_LE(records.waits.size(), counted.wait_records);
  EXPECT_GT(records.waits.size(), 0u);
  EXPECT_EQ(records.waits.capacity(), counted.wait_records) << "grew past the count";
  EXPECT_EQ(records.compute.size(), counted.compute_records);
  EXPECT_EQ(records.iterations.size(), counted.iteration_records);
  EXPECT_EQ(records.computeTotals.size(), counted.compute_totals);
  EXPECT_EQ(cosim::Summarize(records).collectives.size(), counted.collective_instances);
  ns3::Simulator::Destroy();
  ns3::Config::Reset();
}

// Pipeline stages (waits across stages count twice), tensor groups, data-parallel buckets.
TEST(RunRecords, AHybridParallelRunKeepsWhatWasCounted) {
  RunAndCompare("tests/sweep/fixtures/transformer_tiny.ini");
}

// Expert all-to-alls, and every compute op recorded for the timeline (output.trace = chrome).
TEST(RunRecords, AnMoeRunWithItsTimelineKeepsWhatWasCounted) {
  RunAndCompare("tests/cosim/fixtures/moe_rail.ini");
}

}  // namespace
}  // namespace nbox::testing
