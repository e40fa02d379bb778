#include "collectives/schedule.h"

#include <stdexcept>
#include <string>

#include "collectives/all_to_all.h"
#include "collectives/chain.h"
#include "collectives/direct.h"
#include "collectives/halving_doubling.h"
#include "collectives/hierarchical.h"
#include "collectives/layout.h"
#include "collectives/ring.h"
#include "collectives/tree.h"

namespace nbox::coll {
namespace {

[[noreturn]] void Invalid(const std::string& field, const std::string& problem) {
  throw std::invalid_argument("CollectiveSpec." + field + ": " + problem);
}

void CheckRank(const CollectiveSpec& spec, int rank) {
  if (rank < 0 || rank >= spec.world_size) {
    throw std::invalid_argument("rank " + std::to_string(rank) + " is outside 0.." +
                                std::to_string(spec.world_size - 1));
  }
}

bool IsKnown(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kAllGather ||
         op == CollectiveOp::kReduceScatter || op == CollectiveOp::kBroadcast ||
         op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV ||
         op == CollectiveOp::kReduce;
}

bool IsKnown(Algorithm algorithm) {
  return algorithm == Algorithm::kRing || algorithm == Algorithm::kHierarchical ||
         algorithm == Algorithm::kDirect || algorithm == Algorithm::kHalvingDoubling ||
         algorithm == Algorithm::kTree;
}

bool IsAllToAll(CollectiveOp op) {
  return op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV;
}

void ValidateCounts(const CollectiveSpec& spec) {
  const auto cells = static_cast<uint64_t>(spec.world_size) * spec.world_size;
  if (!spec.counts || spec.counts->size() != cells) {
    Invalid("counts", "AllToAllV needs world_size x world_size = " + std::to_string(cells) +
                          " sizes, got " + std::to_string(spec.counts ? spec.counts->size() : 0));
  }
  for (size_t i = 0; i < spec.counts->size(); ++i) {
    if ((*spec.counts)[i] % spec.element_bytes != 0) {
      Invalid("counts", "entry " + std::to_string(i) + " (" + std::to_string((*spec.counts)[i]) +
                            " bytes) is not a multiple of element_bytes (" +
                            std::to_string(spec.element_bytes) + ")");
    }
  }
  if (spec.bytes != 0) {
    Invalid("bytes", "AllToAllV takes its sizes from counts; bytes must be 0, got " +
                         std::to_string(spec.bytes));
  }
}

}  // namespace

bool IsRooted(CollectiveOp op) {
  return op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce;
}

bool IsGathered(CollectiveOp op) {
  return op == CollectiveOp::kAllGather || op == CollectiveOp::kReduceScatter;
}

std::string_view ToString(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "AllReduce";
    case CollectiveOp::kAllGather:
      return "AllGather";
    case CollectiveOp::kReduceScatter:
      return "ReduceScatter";
    case CollectiveOp::kBroadcast:
      return "Broadcast";
    case CollectiveOp::kAllToAll:
      return "AllToAll";
    case CollectiveOp::kAllToAllV:
      return "AllToAllV";
    case CollectiveOp::kReduce:
      return "Reduce";
  }
  return "unknown";
}

std::string_view ToString(Protocol protocol) {
  switch (protocol) {
    case Protocol::kIdeal:
      return "ideal";
    case Protocol::kLl:
      return "LL";
    case Protocol::kLl128:
      return "LL128";
    case Protocol::kSimple:
      return "Simple";
  }
  return "unknown";
}

std::string_view ToString(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kRing:
      return "Ring";
    case Algorithm::kHierarchical:
      return "Hierarchical";
    case Algorithm::kDirect:
      return "Direct";
    case Algorithm::kHalvingDoubling:
      return "HalvingDoubling";
    case Algorithm::kTree:
      return "Tree";
  }
  return "unknown";
}

void ValidateSpec(const CollectiveSpec& spec) {
  if (!IsKnown(spec.op)) {
    Invalid("op", "unknown value " + std::to_string(static_cast<int>(spec.op)));
  }
  if (!IsKnown(spec.algorithm)) {
    Invalid("algorithm", "unknown value " + std::to_string(static_cast<int>(spec.algorithm)));
  }
  if (spec.world_size < 1 || spec.world_size > kMaxWorldSize) {
    Invalid("world_size",
            std::to_string(spec.world_size) + " is not in 1.." + std::to_string(kMaxWorldSize));
  }
  if (spec.channels < 1 || spec.channels > kMaxChannels) {
    Invalid("channels",
            std::to_string(spec.channels) + " is not in 1.." + std::to_string(kMaxChannels));
  }
  if (IsRooted(spec.op) && (spec.root < 0 || spec.root >= spec.world_size)) {
    Invalid("root",
            std::to_string(spec.root) + " is not in 0.." + std::to_string(spec.world_size - 1));
  }
  if (spec.ranks_per_server < 0 ||
      (spec.ranks_per_server > 0 && spec.world_size % spec.ranks_per_server != 0)) {
    Invalid("ranks_per_server", std::to_string(spec.ranks_per_server) +
                                    " must be 0 (no servers) or divide world_size (" +
                                    std::to_string(spec.world_size) + ")");
  }
  if (spec.algorithm == Algorithm::kHierarchical && spec.op != CollectiveOp::kAllReduce &&
      !IsAllToAll(spec.op)) {
    Invalid("algorithm", "Hierarchical is an all-reduce and all-to-all algorithm; op is " +
                             std::string(ToString(spec.op)));
  }
  if (spec.algorithm == Algorithm::kHierarchical && spec.ranks_per_server == 0) {
    Invalid("ranks_per_server", "Hierarchical needs the ranks per server, got 0");
  }
  if (IsAllToAll(spec.op) && spec.algorithm == Algorithm::kRing) {
    Invalid("algorithm", "all-to-all runs Direct or Hierarchical, not Ring");
  }
  if (IsRooted(spec.op) && spec.algorithm == Algorithm::kDirect) {
    Invalid("algorithm",
            "Direct runs all-reduce, reduce-scatter, all-gather and all-to-all; op is " +
                std::string(ToString(spec.op)));
  }
  if (spec.algorithm == Algorithm::kHalvingDoubling && spec.op != CollectiveOp::kAllReduce &&
      spec.op != CollectiveOp::kAllGather && spec.op != CollectiveOp::kReduceScatter) {
    Invalid("algorithm", "HalvingDoubling runs all-reduce, reduce-scatter and all-gather; op is " +
                             std::string(ToString(spec.op)));
  }
  if (spec.algorithm == Algorithm::kTree && spec.op != CollectiveOp::kAllReduce &&
      !IsRooted(spec.op)) {
    Invalid("algorithm",
            "Tree runs all-reduce, broadcast and reduce; op is " + std::string(ToString(spec.op)));
  }
  if (spec.element_bytes == 0) Invalid("element_bytes", "must be at least 1");
  if (spec.op == CollectiveOp::kAllToAllV) ValidateCounts(spec);
  if (spec.bytes % spec.element_bytes != 0) {
    Invalid("bytes", std::to_string(spec.bytes) + " is not a multiple of element_bytes (" +
                         std::to_string(spec.element_bytes) + ")");
  }
  if (spec.chunk_bytes != 0 && spec.chunk_bytes < spec.element_bytes) {
    Invalid("chunk_bytes", std::to_string(spec.chunk_bytes) + " is less than one element (" +
                               std::to_string(spec.element_bytes) +
                               " bytes); use 0 for no chunking");
  }
}

RankSchedule BuildRankSchedule(const CollectiveSpec& spec, int rank) {
  ValidateSpec(spec);
  CheckRank(spec, rank);
  switch (spec.algorithm) {
    case Algorithm::kRing:
      return IsRooted(spec.op) ? BuildChainRankSchedule(spec, rank)
                               : BuildRingRankSchedule(spec, rank);
    case Algorithm::kHierarchical:
      return IsAllToAll(spec.op) ? BuildHierarchicalAllToAllRankSchedule(spec, rank)
                                 : BuildHierarchicalRankSchedule(spec, rank);
    case Algorithm::kDirect:
      return IsAllToAll(spec.op) ? BuildDirectAllToAllRankSchedule(spec, rank)
                                 : BuildDirectRankSchedule(spec, rank);
    case Algorithm::kHalvingDoubling:
      return BuildHalvingDoublingRankSchedule(spec, rank);
    case Algorithm::kTree:
      return BuildTreeRankSchedule(spec, rank);
  }
  throw std::logic_error("BuildRankSchedule: algorithm not dispatched");
}

uint64_t ScheduleStepBound(const CollectiveSpec& spec) {
  switch (spec.algorithm) {
    case Algorithm::kRing:
      return IsRooted(spec.op) ? ChainStepBound(spec) : RingStepBound(spec);
    case Algorithm::kHierarchical:
      // A rank also relays pieces from its server's GPUs to its rail peers: a Recv and a Send
      // each, as many blocks again as it sends itself.
      return IsAllToAll(spec.op) ? 4 * ChunkCountBound(spec) : HierarchicalStepBound(spec);
    case Algorithm::kDirect:
      return IsAllToAll(spec.op) ? 2 * ChunkCountBound(spec) : DirectStepBound(spec);
    case Algorithm::kHalvingDoubling:
      return HalvingDoublingStepBound(spec);
    case Algorithm::kTree:
      return TreeStepBound(spec);
  }
  throw std::logic_error("ScheduleStepBound: algorithm not dispatched");
}

Schedule BuildSchedule(const CollectiveSpec& spec) {
  ValidateSpec(spec);
  Schedule schedule;
  schedule.spec = spec;
  schedule.ranks.reserve(spec.world_size);
  for (int rank = 0; rank < spec.world_size; ++rank) {
    schedule.ranks.push_back(BuildRankSchedule(spec, rank));
  }
  return schedule;
}

ByteRange RankSegment(const CollectiveSpec& spec, int rank) {
  ValidateSpec(spec);
  CheckRank(spec, rank);
  const ElementRange segment = SplitEvenly(spec.bytes / spec.element_bytes, spec.world_size, rank);
  return {segment.begin * spec.element_bytes, segment.count * spec.element_bytes};
}

double BusBandwidthFactor(CollectiveOp op, int world_size) {
  if (world_size < 1) {
    throw std::invalid_argument("BusBandwidthFactor: world_size " + std::to_string(world_size) +
                                " is less than 1");
  }
  const double n = world_size;
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllToAllV:
      return (n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return 1.0;
  }
  throw std::invalid_argument("BusBandwidthFactor: unknown op " +
                              std::to_string(static_cast<int>(op)));
}

}  // namespace nbox::coll
