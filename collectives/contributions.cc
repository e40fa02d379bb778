#include "collectives/contributions.h"

#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

namespace nbox::coll {
namespace {

// The count a rank's region starts with: 1 where the rank's input sits.
uint32_t InitialCount(const CollectiveSpec& spec, int rank, const Step& step) {
  switch (spec.op) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kReduce:
      return 1;
    case CollectiveOp::kAllGather: {
      const ByteRange own = RankSegment(spec, rank);
      return step.offset >= own.offset && step.offset < own.offset + own.bytes ? 1 : 0;
    }
    case CollectiveOp::kBroadcast:
      return rank == spec.root ? 1 : 0;
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV:
      return 1;  // a send block is the rank's own data; receive blocks are overwritten
  }
  return 0;
}

struct Message {
  uint64_t bytes;
  uint32_t count;
};

}  // namespace

std::vector<std::vector<uint32_t>> MessageContributions(const Schedule& schedule) {
  const int world = static_cast<int>(schedule.ranks.size());
  std::vector<std::vector<uint32_t>> result(world);
  // Region counts per rank, keyed by (offset, bytes): regions are equal or disjoint.
  std::vector<std::map<std::pair<uint64_t, uint64_t>, uint32_t>> counts(world);
  std::map<std::tuple<int, int, int>, std::deque<Message>> wires;  // (src, dst, channel)
  std::vector<size_t> next(world, 0);
  for (int r = 0; r < world; ++r) result[r].assign(schedule.ranks[r].steps.size(), 0);

  const auto count_of = [&](int rank, const Step& step) -> uint32_t& {
    auto [it, inserted] = counts[rank].try_emplace({step.offset, step.bytes}, 0);
    if (inserted) it->second = InitialCount(schedule.spec, rank, step);
    return it->second;
  };

  // Each rank runs its steps in id order: a step's dependencies always have lower ids, and a
  // Send's dependency is the last write of its region, so its count is the region's count
  // after every lower step. Sends never wait; a Recv waits for its message.
  bool progressed = true;
  while (progressed) {
    progressed = false;
    for (int r = 0; r < world; ++r) {
      const std::vector<Step>& steps = schedule.ranks[r].steps;
      while (next[r] < steps.size()) {
        const Step& step = steps[next[r]];
        if (step.kind == StepKind::kSend) {
          const uint32_t count = count_of(r, step);
          wires[{r, step.peer, step.channel}].push_back(Message{step.bytes, count});
          result[r][step.id] = count;
        } else {
          auto& wire = wires[{step.peer, r, step.channel}];
          if (wire.empty()) break;
          const Message message = wire.front();
          wire.pop_front();
          if (message.bytes != step.bytes) {
            throw std::invalid_argument("MessageContributions: rank " + std::to_string(r) +
                                        " step " + std::to_string(step.id) + " receives " +
                                        std::to_string(step.bytes) + " bytes, rank " +
                                        std::to_string(step.peer) + " sends " +
                                        std::to_string(message.bytes));
          }
          uint32_t& count = count_of(r, step);
          count = step.reduce ? count + message.count : message.count;
          result[r][step.id] = message.count;
        }
        ++next[r];
        progressed = true;
      }
    }
  }
  for (int r = 0; r < world; ++r) {
    if (next[r] < schedule.ranks[r].steps.size()) {
      throw std::invalid_argument("MessageContributions: rank " + std::to_string(r) +
                                  " waits forever at step " + std::to_string(next[r]) +
                                  " (no matching Send)");
    }
  }
  return result;
}

}  // namespace nbox::coll
