#include "tools/cosim/reports/traffic_matrix.h"

#include <fmt/format.h>

#include "collectives/traffic.h"

namespace nbox::cosim {

TrafficMatrix ProgramTraffic(const work::JobPrograms& job,
                             const std::vector<ns3::Ptr<ns3::NboxCommunicator>>& communicators) {
  TrafficMatrix matrix;
  for (int rank = 0; rank < job.world_size(); ++rank) {
    const auto& program = job.programs[static_cast<size_t>(rank)];
    if (!program) continue;  // a real rank
    const auto& slots = job.rank_comms[static_cast<size_t>(rank)];
    for (const auto& op : program->ops) {
      if (op.kind != work::OpKind::kCollective && op.kind != work::OpKind::kTransfers) continue;
      const int comm_index = slots[static_cast<size_t>(op.comm)];
      const ns3::NboxCommunicator& comm = *communicators[static_cast<size_t>(comm_index)];
      const ns3::NboxCommWork work = ns3::NboxCommWork::FromOp(op);
      const int me = work::RankIn(job.communicators[static_cast<size_t>(comm_index)], rank);
      auto add = [&](int peer, int channel, uint64_t bytes) {
        matrix[{static_cast<uint32_t>(rank), comm.GetMember(static_cast<uint32_t>(peer)),
                static_cast<uint32_t>(comm_index), static_cast<uint32_t>(channel)}] += bytes;
      };
      if (work.isTransfers) {
        for (const auto& step : comm.BuildRankSchedule(static_cast<uint32_t>(me), work).steps) {
          if (step.kind == coll::StepKind::kSend) add(step.peer, step.channel, step.bytes);
        }
        continue;
      }
      // The closed form of the schedules' sends (collectives/traffic.h): linear in the group
      // size per rank, where building the schedule is too.
      coll::ForEachLaneOf(comm.SpecOf(work), me, [&](const coll::LaneTraffic& lane) {
        add(lane.dst, lane.channel, lane.bytes);
      });
    }
  }
  return matrix;
}

std::string TrafficCsv(const TrafficMatrix& matrix, const work::JobPrograms& job) {
  std::string csv = "src,dst,group,parallelism,channel,bytes\n";
  for (const auto& [key, bytes] : matrix) {
    const auto [src, dst, comm, channel] = key;
    const work::Communicator& c = job.communicators[comm];
    csv += fmt::format("{},{},{},{},{},{}\n", src, dst, c.name, work::ToString(c.parallelism),
                       channel, bytes);
  }
  return csv;
}

uint64_t TotalBytes(const TrafficMatrix& matrix) {
  uint64_t total = 0;
  for (const auto& [key, bytes] : matrix) total += bytes;
  return total;
}

}  // namespace nbox::cosim
