// Bytes each rank sends to each other rank over a whole job, derived from the programs and
// the communicators' schedules (not from the network), so it is an independent account of
// what the transport must carry: the benchmark replays it with plain ns-3 applications, tests
// use it for byte conservation, and traffic.csv shows the structure of the parallelism.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ns3/nbox-communicator.h"
#include "workloads/program.h"

namespace nbox::cosim {

// (src world rank, dst world rank, communicator, channel) -> payload bytes. A communicator's
// channel `channels` is its point-to-point lane.
using TrafficMatrix = std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, uint64_t>;

// What every emulated rank's program sends; `communicators[c]` runs job.communicators[c].
TrafficMatrix ProgramTraffic(const work::JobPrograms& job,
                             const std::vector<ns3::Ptr<ns3::NboxCommunicator>>& communicators);

uint64_t TotalBytes(const TrafficMatrix& matrix);

// "src,dst,group,parallelism,channel,bytes" with a header line, one row per entry in key
// order; group and parallelism are those of job.communicators.
std::string TrafficCsv(const TrafficMatrix& matrix, const work::JobPrograms& job);

}  // namespace nbox::cosim
