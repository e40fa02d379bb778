#include "tests/cosim/job_fixture.h"

#include <gtest/gtest.h>

#include <sstream>

#include "ns3/core-module.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/reports/traffic_matrix.h"
#include "workloads/ops.h"

namespace nbox::testing {

work::RankProgram AllReduceProgram(uint64_t bytes, int iterations) {
  return work::RepeatedCollectiveProgram(coll::CollectiveOp::kAllReduce, bytes, iterations);
}

double SteadyAllReduceSeconds(const StarJob& setup, uint64_t bytes) {
  return CollectiveSeconds(setup, coll::CollectiveOp::kAllReduce, bytes, 1);
}

double CollectiveSeconds(const StarJob& setup, coll::CollectiveOp op, uint64_t bytes,
                         int iteration) {
  const auto outcome = RunOnStar(setup, work::RepeatedCollectiveProgram(op, bytes, 2));
  EXPECT_TRUE(outcome.finished);
  EXPECT_EQ(outcome.summary.collectives.size(), 2u);
  // The collective's own time, from its earliest member's start to its latest member's end: the
  // iteration's time runs from the previous iteration's end, which a root that finished early
  // has left already (summary.h).
  for (const auto& collective : outcome.summary.collectives) {
    if (collective.iteration == iteration) return collective.time_s;
  }
  return 0;
}

ScenarioOutcome RunScenario(const scenario::Scenario& s) {
  cosim::JobAssembly assembly = cosim::AssembleJob(s);
  auto job = assembly.job;
  std::ostringstream quiet;
  const auto loop =
      cosim::RunSimulation([job] { return job->IsFinished(); }, [job] { return job->IsStalled(); },
                           cosim::ProgressMode::kOff, quiet);
  ScenarioOutcome outcome;
  outcome.finished = loop.finished;
  outcome.summary = cosim::Summarize(*job->GetRecords());
  outcome.result = cosim::CollectResult(s, assembly, loop);
  outcome.records = job->GetRecords();
  ns3::Simulator::Destroy();
  ns3::Config::Reset();
  return outcome;
}

JobOutcome RunOnStar(const StarJob& setup, const work::RankProgram& program) {
  return RunOnStar(setup, work::SameProgramEverywhere(
                              setup.world, std::make_shared<const work::RankProgram>(program),
                              work::Parallelism::kData, "dp"));
}

JobOutcome RunOnStar(const StarJob& setup, const work::JobPrograms& programs) {
  const auto topology = topo::MakeStar(setup.world, setup.rate_bps, setup.latency_s);
  const auto rank_to_host = topo::PlaceRanks(topology, setup.world);
  auto network = ns3::NboxNetworkHelper(setup.network).Install(topology);
  auto transport = ns3::CreateObject<ns3::NboxTcpTransport>();
  transport->Setup(network, rank_to_host);

  ns3::NboxJobHelper helper;
  helper.SetCommunicatorAttribute("Channels", ns3::UintegerValue(setup.channels));
  helper.SetCommunicatorAttribute("ChunkSize", ns3::UintegerValue(setup.chunk_bytes));
  helper.SetCommunicatorAttribute("AllReduceAlgorithm",
                                  ns3::StringValue(setup.all_reduce_algorithm));
  helper.SetCommunicatorAttribute("BroadcastAlgorithm", ns3::StringValue(setup.rooted_algorithm));
  helper.SetCommunicatorAttribute("ReduceAlgorithm", ns3::StringValue(setup.rooted_algorithm));
  helper.SetCommunicatorAttribute("CollectiveOrder", ns3::StringValue(setup.collective_order));
  helper.SetCommunicatorAttribute("MaxConcurrentCollectives",
                                  ns3::UintegerValue(setup.max_concurrent));
  helper.SetRankAppAttribute("RecordComputeOps", ns3::BooleanValue(setup.record_compute_ops));
  auto job = helper.Install(network, transport, programs, rank_to_host);

  std::ostringstream quiet;
  const auto loop =
      cosim::RunSimulation([job] { return job->IsFinished(); }, [job] { return job->IsStalled(); },
                           cosim::ProgressMode::kOff, quiet);
  JobOutcome outcome;
  outcome.finished = loop.finished;
  outcome.records = job->GetRecords();
  outcome.summary = cosim::Summarize(*outcome.records);
  outcome.transport = transport->GetStats();
  outcome.network = network->GetStats();
  outcome.traffic = cosim::ProgramTraffic(programs, job->GetCommunicators());
  outcome.schedule_bytes = cosim::TotalBytes(outcome.traffic);
  ns3::Simulator::Destroy();
  ns3::Config::Reset();
  return outcome;
}

}  // namespace nbox::testing
