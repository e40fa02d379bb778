// The plain ns-3 side of the overhead benchmark: the nbox job's traffic matrix sent with
// ns-3's own BulkSend and PacketSink applications over an identical network, with no nbox
// layer above the sockets.
#pragma once

#include <cstdint>
#include <vector>

#include "tools/bench/measured_run.h"
#include "tools/cosim/reports/traffic_matrix.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::bench {

// The conditions the replay runs under. They decide how much TCP work each packet costs,
// so they are chosen, printed and justified (tools/bench/README.md), not left to defaults.
struct ReplayConditions {
  // TCP send buffer of every BulkSend socket (ns3::TcpSocket::SndBufSize). BulkSend keeps it
  // full, so it bounds the data each sender has in flight, which is what ns-3's per-segment
  // TCP cost grows with. The benchmark matches it to the nbox job's mean in flight.
  uint32_t send_buffer_bytes = 0;
  // Bytes per BulkSend write (BulkSendApplication::SendSize). One TCP segment: every write
  // is then exactly one segment, as TCP cuts them, and ns-3 never merges writes into a real
  // (copied) payload, as it would for BulkSend's default of 512 bytes.
  uint32_t write_bytes = 0;
};

// Builds the scenario's network afresh (call on a fresh simulator), starts one
// BulkSend -> PacketSink flow per matrix entry at time 0, all at once, and measures the
// run until every byte has arrived.
RunFigures RunPlainReplay(const scenario::Scenario& scenario, const cosim::TrafficMatrix& matrix,
                          const ReplayConditions& conditions);

// A replay whose senders kept, on average over their data segments, within 5% of
// `target_outstanding_bytes` in flight. TCP's congestion window can hold a sender below its
// send buffer (Cubic leaves slow start early on a growing RTT), so the buffer that gives a
// mean in flight is found by measurement: start from the target, then rescale the buffer by
// target / measured (in whole segments) and run again, at most `max_runs` runs in all.
struct CalibratedReplay {
  RunFigures figures;                     // of the last run
  ReplayConditions conditions;            // of the last run
  std::vector<uint32_t> tried_buffers;    // every run's send buffer, in order
  std::vector<double> tried_outstanding;  // and the mean in flight it gave
};
CalibratedReplay RunMatchedReplay(const scenario::Scenario& scenario,
                                  const cosim::TrafficMatrix& matrix, uint32_t write_bytes,
                                  uint32_t segment_bytes, double target_outstanding_bytes,
                                  int max_runs = 3);

}  // namespace nbox::bench
