// nbox-bench-overhead: what nbox's own layers (transport, communicator, ranks) cost on top
// of plain ns-3, measured on one scenario (default scenarios/leaf-spine-16.ini).
//
// Run A is the nbox job. Run B, in the same process on a rebuilt identical network, sends
// the very same bytes between the same hosts (the job's traffic matrix, one BulkSend flow per
// rank pair and channel, all started at once) with ns-3's own BulkSend/PacketSink and no nbox
// layer. Both are timed on the wall clock; the overhead is the ratio of wall time per event
// and per payload byte. Prints a table and, with --json, the figures as JSON.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "tools/cosim/assembly.h"
#include "tools/cosim/sim_loop.h"
#include "tools/cosim/traffic_matrix.h"
#include "tools/scenario/scenario.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  std::string name;
  uint64_t events = 0;
  double simulated_s = 0;
  double wall_s = 0;
  uint64_t payload_bytes = 0;
  uint64_t wire_bytes = 0;
  long peak_rss_kib = 0;
};

Figures RunNbox(const nbox::scenario::Scenario& scenario, nbox::cosim::TrafficMatrix* matrix) {
  auto assembly = nbox::cosim::AssembleJob(scenario);
  *matrix = nbox::cosim::ProgramTraffic(*assembly.program, *assembly.job->GetCommunicator());
  auto job = assembly.job;
  const auto loop = nbox::cosim::RunSimulation([job] { return job->IsFinished(); },
                                               [job] { return job->IsStalled(); },
                                               nbox::cosim::ProgressMode::kOff, std::cerr);
  if (!loop.finished) throw std::runtime_error("the nbox run did not finish");
  Figures f{"nbox job",
            loop.events,
            loop.simulated_s,
            loop.wall_s,
            assembly.transport->GetStats().bytesDelivered,
            assembly.net.network->GetStats().wireBytes,
            nbox::cosim::PeakRssKib()};
  ns3::Simulator::Destroy();
  return f;
}

Figures RunPlain(const nbox::scenario::Scenario& scenario,
                 const nbox::cosim::TrafficMatrix& matrix) {
  auto net = nbox::cosim::AssembleNetwork(scenario);
  std::vector<ns3::Ptr<ns3::PacketSink>> sinks;
  uint16_t port = 10000;
  for (const auto& [key, bytes] : matrix) {
    const auto [src, dst, channel] = key;
    const uint32_t src_host = net.rank_to_host[src];
    const uint32_t dst_host = net.rank_to_host[dst];
    const ns3::InetSocketAddress to(net.network->GetHostAddress(dst_host), port);
    ns3::PacketSinkHelper sink("ns3::TcpSocketFactory",
                               ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port));
    auto sink_apps = sink.Install(net.network->GetHost(dst_host));
    sinks.push_back(ns3::DynamicCast<ns3::PacketSink>(sink_apps.Get(0)));
    ns3::BulkSendHelper send("ns3::TcpSocketFactory", to);
    send.SetAttribute("MaxBytes", ns3::UintegerValue(bytes));
    send.Install(net.network->GetHost(src_host));
    ++port;
  }
  const uint64_t total = nbox::cosim::TotalBytes(matrix);
  auto delivered = [&sinks] {
    uint64_t sum = 0;
    for (const auto& s : sinks) sum += s->GetTotalRx();
    return sum;
  };
  // BulkSend has no notion of a stall; a run that has not delivered everything after ten
  // simulated seconds (far beyond any scenario here) is broken.
  const auto loop = nbox::cosim::RunSimulation(
      [&] { return delivered() >= total; }, [] { return ns3::Simulator::Now() > ns3::Seconds(10); },
      nbox::cosim::ProgressMode::kOff, std::cerr);
  if (!loop.finished) throw std::runtime_error("the plain ns-3 run did not deliver every byte");
  Figures f{"plain ns-3 BulkSend",
            loop.events,
            loop.simulated_s,
            loop.wall_s,
            delivered(),
            net.network->GetStats().wireBytes,
            nbox::cosim::PeakRssKib()};
  ns3::Simulator::Destroy();
  return f;
}

void Print(const Figures& f) {
  std::cout << fmt::format("{:<20} {:>12} {:>12.6f} {:>9.2f} {:>12.0f} {:>14.1f} {:>12.3f}\n",
                           f.name, f.events, f.simulated_s, f.wall_s, f.events / f.wall_s,
                           f.wall_s / f.simulated_s,
                           f.wall_s / (static_cast<double>(f.payload_bytes) / 1e9));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nbox-bench-overhead: nbox's cost over plain ns-3 on the same traffic"};
  std::string path = "scenarios/leaf-spine-16.ini";
  std::vector<std::string> overrides;
  bool json = false;
  app.add_option("scenario", path, "scenario file");
  app.add_option("--set", overrides, "override a scenario key (section.key=value)");
  app.add_flag("--json", json, "also print the figures as JSON");
  CLI11_PARSE(app, argc, argv);

  try {
    overrides.push_back("output.progress=off");
    const auto scenario = nbox::scenario::LoadScenario(path, overrides);
    nbox::cosim::TrafficMatrix matrix;
    const Figures a = RunNbox(scenario, &matrix);
    const Figures b = RunPlain(scenario, matrix);

    std::cout << fmt::format("scenario {} ({} flows, {:.3f} GB payload)\n", path, matrix.size(),
                             nbox::cosim::TotalBytes(matrix) / 1e9);
    std::cout << fmt::format("{:<20} {:>12} {:>12} {:>9} {:>12} {:>14} {:>12}\n", "run", "events",
                             "simulated s", "wall s", "events/s", "wall/sim s", "wall s/GB");
    Print(a);
    Print(b);
    const double per_event = (a.wall_s / a.events) / (b.wall_s / b.events);
    const double per_byte = (a.wall_s / a.payload_bytes) / (b.wall_s / b.payload_bytes);
    std::cout << fmt::format(
        "nbox / plain: wall per event {:.3f}, wall per payload byte {:.3f}, events per payload "
        "byte {:.3f}\npeak memory of the nbox run: {:.1f} MiB\n",
        per_event, per_byte,
        (static_cast<double>(a.events) / a.payload_bytes) /
            (static_cast<double>(b.events) / b.payload_bytes),
        a.peak_rss_kib / 1024.0);
    if (json) {
      nlohmann::ordered_json out;
      for (const Figures* f : {&a, &b}) {
        out[f->name] = {{"events", f->events},         {"simulated_s", f->simulated_s},
                        {"wall_s", f->wall_s},         {"payload_bytes", f->payload_bytes},
                        {"wire_bytes", f->wire_bytes}, {"events_per_s", f->events / f->wall_s}};
      }
      out["ratio_wall_per_event"] = per_event;
      out["ratio_wall_per_payload_byte"] = per_byte;
      out["nbox_peak_rss_kib"] = a.peak_rss_kib;
      std::cout << out.dump(2) << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "nbox-bench-overhead: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
