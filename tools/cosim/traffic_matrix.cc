#include "tools/cosim/traffic_matrix.h"

#include <fmt/format.h>

namespace nbox::cosim {

TrafficMatrix ProgramTraffic(const work::RankProgram& program,
                             ns3::NboxCommunicator& communicator) {
  TrafficMatrix matrix;
  for (const auto& op : program.ops) {
    if (op.kind != work::OpKind::kCollective) continue;
    const auto& schedule = communicator.GetSchedule(op.collective, op.bytes);
    for (const auto& rank : schedule.ranks) {
      for (const auto& step : rank.steps) {
        if (step.kind != coll::StepKind::kSend) continue;
        matrix[{static_cast<uint32_t>(rank.rank), static_cast<uint32_t>(step.peer),
                static_cast<uint32_t>(step.channel)}] += step.bytes;
      }
    }
  }
  return matrix;
}

std::string TrafficCsv(const TrafficMatrix& matrix) {
  std::string csv = "src,dst,channel,bytes\n";
  for (const auto& [key, bytes] : matrix) {
    const auto [src, dst, channel] = key;
    csv += fmt::format("{},{},{},{}\n", src, dst, channel, bytes);
  }
  return csv;
}

uint64_t TotalBytes(const TrafficMatrix& matrix) {
  uint64_t total = 0;
  for (const auto& [key, bytes] : matrix) total += bytes;
  return total;
}

}  // namespace nbox::cosim
