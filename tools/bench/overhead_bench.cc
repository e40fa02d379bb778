// nbox-bench-overhead: what nbox's own layers (transport, communicator, ranks) cost on top
// of plain ns-3, measured on one scenario (default scenarios/leaf-spine-16.ini).
//
// Run A is the nbox job. Run B, in the same process on a rebuilt identical network, sends
// the job's traffic matrix (the bytes of every (source rank, destination rank, channel)
// connection over the whole job) with ns-3's own BulkSend/PacketSink and no nbox layer: one
// flow per connection, all started together. Its send buffer is matched to the data the nbox
// job keeps in flight (ReplayConditions says why); both runs are timed on the wall clock and
// compared per payload byte. tools/bench/README.md explains the figures.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/units.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/simulator.h"
#include "tools/bench/measured_run.h"
#include "tools/bench/plain_replay.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/network_models.h"
#include "tools/cosim/reports/traffic_matrix.h"
#include "tools/cosim/scenario/scenario.h"

namespace {

using nbox::bench::RunFigures;

// The job's traffic matrix, from its schedules, without running it.
nbox::cosim::TrafficMatrix JobTraffic(const nbox::scenario::Scenario& scenario) {
  auto assembly = nbox::cosim::AssembleJob(scenario);
  auto matrix =
      nbox::cosim::ProgramTraffic(assembly.workload.programs, assembly.job->GetCommunicators());
  ns3::Simulator::Destroy();
  return matrix;
}

RunFigures RunNbox(const nbox::scenario::Scenario& scenario) {
  auto assembly = nbox::cosim::AssembleJob(scenario);
  auto job = assembly.job;
  auto transport = assembly.transport;
  nbox::bench::RunHooks hooks{[job] { return job->IsFinished(); },
                              [job] { return job->IsStalled(); },
                              [transport] { return transport->GetStats().bytesDelivered; }};
  RunFigures f = nbox::bench::MeasureRun("nbox job", assembly.net.network, hooks);
  ns3::Simulator::Destroy();
  return f;
}

void PrintHeader() {
  std::cout << fmt::format("{:<20} {:>11} {:>10} {:>8} {:>9} {:>10} {:>9} {:>10} {:>8} {:>9}\n",
                           "run", "events", "sim s", "wall s", "events/s", "wall/sim s",
                           "wall s/GB", "segments", "ev/seg", "inflight");
}

void PrintRow(const RunFigures& f) {
  std::cout << fmt::format(
      "{:<20} {:>11} {:>10.6f} {:>8.2f} {:>9.0f} {:>10.1f} {:>9.3f} {:>10} {:>8.2f} {:>9}\n",
      f.name, f.events, f.simulated_s, f.wall_s, f.events / f.wall_s, f.wall_s / f.simulated_s,
      f.wall_s / (static_cast<double>(f.payload_bytes) / 1e9), f.data_segments,
      static_cast<double>(f.events) / f.data_segments, nbox::FormatBytes(f.mean_outstanding_bytes));
}

nlohmann::ordered_json ToJson(const RunFigures& f) {
  return {{"events", f.events},
          {"simulated_s", f.simulated_s},
          {"wall_s", f.wall_s},
          {"events_per_s", f.events / f.wall_s},
          {"wall_per_simulated_s", f.wall_s / f.simulated_s},
          {"payload_bytes", f.payload_bytes},
          {"wire_bytes", f.wire_bytes},
          {"data_segments", f.data_segments},
          {"mean_outstanding_bytes", f.mean_outstanding_bytes},
          {"max_outstanding_bytes", f.max_outstanding_bytes},
          {"peak_rss_kib", f.peak_rss_kib}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nbox-bench-overhead: nbox's cost over plain ns-3 on the same traffic"};
  std::string path = "scenarios/leaf-spine-16.ini";
  std::vector<std::string> overrides;
  std::string run = "both";
  std::string send_buffer_text = "auto";
  std::string write_text = "segment";
  bool json = false;
  app.add_option("scenario", path, "scenario file");
  app.add_option("--set", overrides, "override a scenario key (section.key=value)");
  app.add_option("--run", run, "which runs: both, nbox or plain")
      ->check(CLI::IsMember({"both", "nbox", "plain"}));
  app.add_option("--send-buffer", send_buffer_text,
                 "TCP send buffer of the BulkSend flows: auto (the nbox job's mean bytes in "
                 "flight, in whole segments; needs the nbox run) or a size such as 4MB");
  app.add_option("--write-size", write_text,
                 "bytes per BulkSend write: segment (one TCP segment) or a size such as 512B");
  app.add_flag("--json", json, "also print the figures as JSON");
  CLI11_PARSE(app, argc, argv);

  try {
    overrides.push_back("output.progress=off");
    const auto scenario =
        nbox::scenario::LoadScenario(path, overrides, {nbox::cosim::CheckNetworkModel});
    const uint32_t segment = ns3::NboxNetworkHelper::SegmentSize(scenario.network.mtu);
    const bool auto_buffer = send_buffer_text == "auto";
    if (run == "plain" && auto_buffer) {
      throw std::invalid_argument(
          "--send-buffer auto needs the nbox run; with --run plain give a size");
    }
    const nbox::cosim::TrafficMatrix matrix = JobTraffic(scenario);
    const uint64_t total = nbox::cosim::TotalBytes(matrix);

    std::optional<RunFigures> a;
    std::optional<RunFigures> b;
    if (run != "plain") a = RunNbox(scenario);
    const uint32_t write_bytes =
        write_text == "segment" ? segment : static_cast<uint32_t>(nbox::ParseBytes(write_text));
    nbox::bench::CalibratedReplay replay;
    if (run != "nbox") {
      if (auto_buffer) {
        replay = nbox::bench::RunMatchedReplay(scenario, matrix, write_bytes, segment,
                                               a->mean_outstanding_bytes);
      } else {
        replay.conditions = {static_cast<uint32_t>(nbox::ParseBytes(send_buffer_text)),
                             write_bytes};
        replay.figures = nbox::bench::RunPlainReplay(scenario, matrix, replay.conditions);
      }
      b = replay.figures;
    }

    std::cout << fmt::format("scenario {}: {} connections, {} payload, MSS {} B\n", path,
                             matrix.size(), nbox::FormatBytes(static_cast<double>(total)), segment);
    if (b) {
      std::cout << fmt::format(
          "plain replay: {} BulkSend flows started together at t=0, writes of {} B, send "
          "buffer {} B ({})\n",
          matrix.size(), replay.conditions.write_bytes, replay.conditions.send_buffer_bytes,
          auto_buffer ? "matched to the nbox run's mean in flight" : "given");
      for (size_t i = 0; auto_buffer && i < replay.tried_buffers.size(); ++i) {
        std::cout << fmt::format(
            "  calibration run {}: send buffer {} B gave {} in flight "
            "(nbox run: {})\n",
            i + 1, replay.tried_buffers[i], nbox::FormatBytes(replay.tried_outstanding[i]),
            nbox::FormatBytes(a->mean_outstanding_bytes));
      }
    }
    PrintHeader();
    if (a) PrintRow(*a);
    if (b) PrintRow(*b);
    double per_byte = 0;
    if (a && b) {
      per_byte = (a->wall_s / a->payload_bytes) / (b->wall_s / b->payload_bytes);
      const double events_per_byte = (static_cast<double>(a->events) / a->payload_bytes) /
                                     (static_cast<double>(b->events) / b->payload_bytes);
      const double per_event = (a->wall_s / a->events) / (b->wall_s / b->events);
      std::cout << fmt::format(
          "nbox / plain: wall per payload byte {:.3f}, events per payload byte {:.3f}, wall "
          "per event {:.3f}\n",
          per_byte, events_per_byte, per_event);
    }
    if (a) {
      std::cout << fmt::format(
          "nbox run: {:.0f} events/s, {:.1f} s wall per simulated s, "
          "peak memory {:.1f} MiB\n",
          a->events / a->wall_s, a->wall_s / a->simulated_s, a->peak_rss_kib / 1024.0);
    }
    if (json) {
      nlohmann::ordered_json out;
      out["scenario"] = path;
      out["connections"] = matrix.size();
      out["segment_bytes"] = segment;
      if (b) {
        out["plain_send_buffer_bytes"] = replay.conditions.send_buffer_bytes;
        out["plain_write_bytes"] = replay.conditions.write_bytes;
        if (auto_buffer) {
          out["plain_calibration_buffers"] = replay.tried_buffers;
          out["plain_calibration_outstanding"] = replay.tried_outstanding;
        }
      }
      if (a) out["nbox"] = ToJson(*a);
      if (b) out["plain"] = ToJson(*b);
      if (a && b) out["ratio_wall_per_payload_byte"] = per_byte;
      std::cout << out.dump(2) << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "nbox-bench-overhead: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
