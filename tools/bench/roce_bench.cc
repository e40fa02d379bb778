// nbox-bench-roce: the RoCE path's speed beside the TCP path's on the same job (default
// tools/bench/allreduce-64.ini): events, simulated time, wall time, events per second and
// wall seconds per simulated second. tools/bench/README.md quotes the figures.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ns3/simulator.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/network_models.h"
#include "tools/cosim/reports/summary.h"
#include "tools/cosim/scenario/scenario.h"

namespace {

struct Figures {
  std::string transport;
  uint64_t events = 0;
  double simulated_s = 0;
  double wall_s = 0;
  double iteration_s = 0;
  uint64_t payload_bytes = 0;
};

Figures Run(const std::string& path, const std::string& transport,
            const std::vector<std::string>& sets) {
  std::vector<std::string> overrides = sets;
  overrides.push_back("network.transport=" + transport);
  const auto scenario =
      nbox::scenario::LoadScenario(path, overrides, {nbox::cosim::CheckNetworkModel});
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();  // building the network counts: it is part of a run
  auto assembly = nbox::cosim::AssembleJob(scenario);
  auto job = assembly.job;
  std::ostringstream quiet;
  const uint64_t events_before = ns3::Simulator::GetEventCount();
  const auto loop = nbox::cosim::RunSimulation([job] { return job->IsFinished(); },
                                               [job] { return job->IsStalled(); },
                                               nbox::cosim::ProgressMode::kOff, quiet);
  if (!loop.finished) throw std::runtime_error(transport + ": the job did not finish");
  Figures f;
  f.transport = transport;
  f.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  f.events = ns3::Simulator::GetEventCount() - events_before;
  f.simulated_s = ns3::Simulator::Now().GetSeconds();
  const auto summary = nbox::cosim::Summarize(*job->GetRecords());
  f.iteration_s = summary.iterations.empty() ? 0 : summary.iterations.back().time_s;
  f.payload_bytes = assembly.transport->GetStats().bytesDelivered;
  ns3::Simulator::Destroy();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nbox-bench-roce: the RoCE and TCP paths' speed on the same job"};
  std::string path = "tools/bench/allreduce-64.ini";
  std::vector<std::string> sets;
  std::string json_path;
  app.add_option("scenario", path, "scenario file (default tools/bench/allreduce-64.ini)");
  app.add_option("--set", sets, "section.key=value, applied to both runs");
  app.add_option("--json", json_path, "also write the figures as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  std::cout << fmt::format("{:<6} {:>11} {:>11} {:>11} {:>8} {:>10} {:>12}\n", "path", "events",
                           "simulated s", "iteration s", "wall s", "events/s", "wall/sim s");
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const std::string transport : {"roce", "tcp"}) {
    const Figures f = Run(path, transport, sets);
    std::cout << fmt::format("{:<6} {:>11} {:>11.6f} {:>11.6f} {:>8.2f} {:>10.0f} {:>12.0f}\n",
                             f.transport, f.events, f.simulated_s, f.iteration_s, f.wall_s,
                             f.events / f.wall_s, f.wall_s / f.simulated_s)
              << std::flush;
    out[transport] = {{"events", f.events},
                      {"simulated_s", f.simulated_s},
                      {"iteration_s", f.iteration_s},
                      {"wall_s", f.wall_s},
                      {"events_per_s", f.events / f.wall_s},
                      {"wall_per_simulated_s", f.wall_s / f.simulated_s},
                      {"payload_bytes", f.payload_bytes}};
  }
  if (!json_path.empty()) {
    std::ofstream(json_path) << out.dump(2) << "\n";
  }
  return 0;
}
