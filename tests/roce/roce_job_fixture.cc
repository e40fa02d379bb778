#include "tests/roce/roce_job_fixture.h"

#include <memory>
#include <sstream>

#include "ns3/core-module.h"
#include "ns3/nbox-job-helper.h"
#include "ns3/nbox-roce-transport.h"
#include "tools/cosim/loop/sim_loop.h"

namespace nbox::testing {

RoceJobOutcome RunRoceJob(const RoceJob& setup, const work::RankProgram& program) {
  ns3::NboxRoceNetworkHelper helper;
  if (setup.configure) setup.configure(helper);
  auto network = helper.Install(setup.topology);
  auto transport = ns3::CreateObject<ns3::NboxRoceTransport>(network, setup.rank_to_host);

  ns3::NboxJobHelper job_helper;
  job_helper.SetCommunicatorAttribute("Channels", ns3::UintegerValue(setup.channels));
  job_helper.SetCommunicatorAttribute("ChunkSize", ns3::UintegerValue(setup.chunk_bytes));
  auto shared = std::make_shared<const work::RankProgram>(program);
  std::vector<std::shared_ptr<const work::RankProgram>> programs(setup.rank_to_host.size(), shared);
  auto job = job_helper.Install(network, transport, programs, setup.rank_to_host);

  std::ostringstream quiet;
  const auto loop =
      cosim::RunSimulation([job] { return job->IsFinished(); }, [job] { return job->IsStalled(); },
                           cosim::ProgressMode::kOff, quiet);
  RoceJobOutcome outcome;
  outcome.finished = loop.finished;
  outcome.summary = cosim::Summarize(*job->GetRecords());
  outcome.transport = transport->GetStats();
  outcome.nic = transport->GetNicStats();
  outcome.network = network->GetStats();
  ns3::Simulator::Destroy();
  ns3::Config::Reset();
  return outcome;
}

}  // namespace nbox::testing
