#include "tests/cosim/job_fixture.h"

#include <sstream>

#include "ns3/core-module.h"
#include "tools/cosim/sim_loop.h"
#include "tools/cosim/traffic_matrix.h"

namespace nbox::testing {

work::RankProgram AllReduceProgram(uint64_t bytes, int iterations) {
  work::RankProgram program;
  program.iterations = iterations;
  for (int i = 0; i < iterations; ++i) {
    program.ops.push_back({work::OpKind::kIterationBegin, i, "", 0, {}, 0});
    program.ops.push_back(
        {work::OpKind::kCollective, i, "allreduce", 0, coll::CollectiveOp::kAllReduce, bytes});
    program.ops.push_back({work::OpKind::kWaitCollectives, i, "", 0, {}, 0});
    program.ops.push_back({work::OpKind::kIterationEnd, i, "", 0, {}, 0});
  }
  return program;
}

JobOutcome RunOnStar(const StarJob& setup, const work::RankProgram& program) {
  const auto topology = topo::MakeStar(setup.world, setup.rate_bps, setup.latency_s);
  const auto rank_to_host = topo::PlaceRanks(topology, setup.world);
  auto network = ns3::NboxNetworkHelper(setup.network).Install(topology);
  auto transport = ns3::CreateObject<ns3::NboxTcpTransport>();
  transport->Setup(network, rank_to_host);

  ns3::NboxJobHelper helper;
  helper.SetCommunicatorAttribute("Channels", ns3::UintegerValue(setup.channels));
  helper.SetCommunicatorAttribute("ChunkSize", ns3::UintegerValue(setup.chunk_bytes));
  auto shared = std::make_shared<const work::RankProgram>(program);
  std::vector<std::shared_ptr<const work::RankProgram>> programs(setup.world, shared);
  auto job = helper.Install(network, transport, programs, rank_to_host);

  std::ostringstream quiet;
  const auto loop =
      cosim::RunSimulation([job] { return job->IsFinished(); }, [job] { return job->IsStalled(); },
                           cosim::ProgressMode::kOff, quiet);
  JobOutcome outcome;
  outcome.finished = loop.finished;
  outcome.summary = cosim::Summarize(*job->GetRecords());
  outcome.transport = transport->GetStats();
  outcome.network = network->GetStats();
  outcome.schedule_bytes =
      cosim::TotalBytes(cosim::ProgramTraffic(program, *job->GetCommunicator()));
  ns3::Simulator::Destroy();
  ns3::Config::Reset();
  return outcome;
}

}  // namespace nbox::testing
