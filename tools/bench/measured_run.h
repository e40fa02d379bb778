// Runs a prepared ns-3 simulation to its end and measures it: events, simulated and wall
// time, and what its TCP senders did (TcpSendProbe). Both sides of the overhead benchmark go
// through here, so they are measured the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ns3/nbox-network.h"
#include "ns3/ptr.h"

namespace nbox::bench {

struct RunFigures {
  std::string name;
  uint64_t events = 0;  // ns-3 events from the first event on, the loop's slice stops included
  double simulated_s = 0;
  double wall_s = 0;
  uint64_t payload_bytes = 0;  // delivered to the receiving applications
  uint64_t data_segments = 0;  // data segments the senders transmitted, retransmissions included
  double mean_outstanding_bytes = 0;  // TcpSendProbe::MeanOutstandingBytes
  uint64_t max_outstanding_bytes = 0;
  uint64_t wire_bytes = 0;  // every port's transmitted bytes (NboxNetworkStats::wireBytes)
  long peak_rss_kib = 0;    // of the whole process so far (getrusage)
};

struct RunHooks {
  std::function<bool()> finished;           // the run is complete
  std::function<bool()> stalled;            // it can never complete
  std::function<uint64_t()> payload_bytes;  // read once the run has ended
};

// Steps the simulator just past time 0, so that sockets created by time-0 events exist and
// none has sent data yet, attaches a TcpSendProbe to the network's hosts, then runs to the
// end. Wall time and events count from before that first step. Throws std::runtime_error
// naming `name` when the run stalls.
RunFigures MeasureRun(const std::string& name, ns3::Ptr<ns3::NboxNetwork> network,
                      const RunHooks& hooks);

}  // namespace nbox::bench
