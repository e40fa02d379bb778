#include "tools/bench/measured_run.h"

#include <chrono>
#include <iostream>
#include <stdexcept>

#include "ns3/simulator.h"
#include "tools/bench/tcp_send_probe.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/reports/run_result.h"

namespace nbox::bench {

RunFigures MeasureRun(const std::string& name, ns3::Ptr<ns3::NboxNetwork> network,
                      const RunHooks& hooks) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const uint64_t events_before = ns3::Simulator::GetEventCount();
  // One nanosecond is far below any link's latency: the time-0 events have created the
  // sockets and sent SYNs, and no data segment can have left yet.
  ns3::Simulator::Stop(ns3::NanoSeconds(1));
  ns3::Simulator::Run();
  TcpSendProbe probe;
  if (probe.Attach(network->GetHosts()) == 0) {
    throw std::runtime_error(name + ": no TCP socket exists after the first nanosecond");
  }
  const auto loop =
      cosim::RunSimulation(hooks.finished, hooks.stalled, cosim::ProgressMode::kOff, std::cerr);
  if (!loop.finished) throw std::runtime_error(name + ": the run stalled before its end");

  RunFigures f;
  f.name = name;
  f.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  f.events = ns3::Simulator::GetEventCount() - events_before;
  f.simulated_s = ns3::Simulator::Now().GetSeconds();
  f.payload_bytes = hooks.payload_bytes();
  f.data_segments = probe.data_segments();
  f.mean_outstanding_bytes = probe.MeanOutstandingBytes();
  f.max_outstanding_bytes = probe.max_outstanding_bytes();
  f.wire_bytes = network->GetStats().wireBytes;
  f.peak_rss_kib = cosim::PeakRssKib();
  return f;
}

}  // namespace nbox::bench
