#include "tools/bench/plain_replay.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/config.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "tools/cosim/assembly/assembly.h"

namespace nbox::bench {

RunFigures RunPlainReplay(const scenario::Scenario& scenario, const cosim::TrafficMatrix& matrix,
                          const ReplayConditions& conditions) {
  if (conditions.send_buffer_bytes == 0 || conditions.write_bytes == 0) {
    throw std::invalid_argument("plain replay: send buffer and write size must be positive");
  }
  auto net = cosim::AssembleNetwork(scenario);
  // The network helper has set the scenario's TCP defaults; only the send buffer differs.
  // Sockets are created by the applications at time 0, after this.
  ns3::Config::SetDefault("ns3::TcpSocket::SndBufSize",
                          ns3::UintegerValue(conditions.send_buffer_bytes));

  std::vector<ns3::Ptr<ns3::PacketSink>> sinks;
  uint16_t port = 10000;
  for (const auto& [key, bytes] : matrix) {
    const auto [src, dst, comm, channel] = key;
    const uint32_t src_host = net.rank_to_host[src];
    const uint32_t dst_host = net.rank_to_host[dst];
    ns3::PacketSinkHelper sink("ns3::TcpSocketFactory",
                               ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port));
    sinks.push_back(
        ns3::DynamicCast<ns3::PacketSink>(sink.Install(net.network->GetHost(dst_host)).Get(0)));
    ns3::BulkSendHelper send("ns3::TcpSocketFactory",
                             ns3::InetSocketAddress(net.network->GetHostAddress(dst_host), port));
    send.SetAttribute("MaxBytes", ns3::UintegerValue(bytes));
    send.SetAttribute("SendSize", ns3::UintegerValue(conditions.write_bytes));
    send.Install(net.network->GetHost(src_host));
    ++port;
  }

  const uint64_t total = cosim::TotalBytes(matrix);
  auto delivered = [&sinks] {
    uint64_t sum = 0;
    for (const auto& s : sinks) sum += s->GetTotalRx();
    return sum;
  };
  // BulkSend has no notion of a stall; a replay that has not delivered everything after ten
  // simulated seconds (far beyond any scenario here) is broken.
  RunHooks hooks{[&] { return delivered() >= total; },
                 [] { return ns3::Simulator::Now() > ns3::Seconds(10); }, delivered};
  RunFigures f = MeasureRun("plain ns-3 BulkSend", net.network, hooks);
  ns3::Simulator::Destroy();
  return f;
}

CalibratedReplay RunMatchedReplay(const scenario::Scenario& scenario,
                                  const cosim::TrafficMatrix& matrix, uint32_t write_bytes,
                                  uint32_t segment_bytes, double target_outstanding_bytes,
                                  int max_runs) {
  constexpr double kTolerance = 0.05;
  auto whole_segments = [segment_bytes](double bytes) {
    return static_cast<uint32_t>(std::max(1.0, std::ceil(bytes / segment_bytes))) * segment_bytes;
  };
  CalibratedReplay replay;
  replay.conditions.write_bytes = write_bytes;
  replay.conditions.send_buffer_bytes = whole_segments(target_outstanding_bytes);
  for (int run = 0; run < max_runs; ++run) {
    replay.figures = RunPlainReplay(scenario, matrix, replay.conditions);
    const double measured = replay.figures.mean_outstanding_bytes;
    replay.tried_buffers.push_back(replay.conditions.send_buffer_bytes);
    replay.tried_outstanding.push_back(measured);
    if (std::abs(measured - target_outstanding_bytes) <= kTolerance * target_outstanding_bytes ||
        measured <= 0) {
      break;
    }
    const uint32_t next =
        whole_segments(replay.conditions.send_buffer_bytes * (target_outstanding_bytes / measured));
    if (next == replay.conditions.send_buffer_bytes) break;
    if (run + 1 < max_runs) replay.conditions.send_buffer_bytes = next;
  }
  return replay;
}

}  // namespace nbox::bench
