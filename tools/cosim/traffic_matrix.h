// Bytes each rank sends to each other rank over a whole program, derived from the
// collective schedules (not from the network), so it is an independent account of what the
// transport must carry: the benchmark replays it with plain ns-3 applications and tests use
// it for byte conservation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "ns3/nbox-communicator.h"
#include "workloads/program.h"

namespace nbox::cosim {

// (src rank, dst rank, channel) -> payload bytes.
using TrafficMatrix = std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint64_t>;

// Every rank runs `program`; `communicator` provides the schedules.
TrafficMatrix ProgramTraffic(const work::RankProgram& program, ns3::NboxCommunicator& communicator);

uint64_t TotalBytes(const TrafficMatrix& matrix);

// "src,dst,channel,bytes" with a header line, one row per entry in key order.
std::string TrafficCsv(const TrafficMatrix& matrix);

}  // namespace nbox::cosim
