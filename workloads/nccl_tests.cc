#include "workloads/nccl_tests.h"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "workloads/ops.h"

namespace nbox::work {
namespace {

template <typename T>
void Require(bool ok, const char* field, const std::string& expected, T got) {
  if (!ok) {
    throw std::invalid_argument(
        fmt::format("NcclTestsConfig.{}: must be {} (got {})", field, expected, got));
  }
}

// The buffer is cut among the ranks, so nccl-tests rounds its size to whole elements per rank.
bool CutAmongRanks(coll::CollectiveOp op) {
  return coll::IsGathered(op) || op == coll::CollectiveOp::kAllToAll;
}

}  // namespace

void ValidateNcclTestsConfig(const NcclTestsConfig& config) {
  if (config.collective == coll::CollectiveOp::kAllToAllV) {
    throw std::invalid_argument("NcclTestsConfig.collective: must not be AllToAllV");
  }
  Require(config.element_bytes >= 1, "element_bytes", ">= 1", config.element_bytes);
  Require(config.min_bytes >= 1, "min_bytes", ">= 1", config.min_bytes);
  Require(config.max_bytes >= config.min_bytes, "max_bytes",
          fmt::format(">= min_bytes = {}", config.min_bytes), config.max_bytes);
  Require(config.step_factor >= 2, "step_factor", ">= 2", config.step_factor);
  Require(config.warmup >= 0, "warmup", ">= 0", config.warmup);
  Require(config.iterations >= 1, "iterations", ">= 1", config.iterations);
}

std::vector<uint64_t> NcclTestsSizes(const NcclTestsConfig& config, int ranks) {
  ValidateNcclTestsConfig(config);
  if (ranks < 1) throw std::invalid_argument("NcclTestsSizes: ranks must be >= 1");
  const uint64_t unit =
      config.element_bytes * (CutAmongRanks(config.collective) ? static_cast<uint64_t>(ranks) : 1);
  std::vector<uint64_t> sizes;
  for (uint64_t size = config.min_bytes; size <= config.max_bytes;) {
    const uint64_t rounded = size / unit * unit;
    if (rounded > 0) sizes.push_back(rounded);
    if (size > std::numeric_limits<uint64_t>::max() / config.step_factor) break;
    size *= config.step_factor;
  }
  Require(!sizes.empty(), "max_bytes",
          fmt::format("at least {} bytes, so that some size holds a whole {}-byte element{}", unit,
                      config.element_bytes, unit > config.element_bytes ? " per rank" : ""),
          config.max_bytes);
  return sizes;
}

RankProgram MakeNcclTestsProgram(const NcclTestsConfig& config, int ranks) {
  RankProgram program;
  const std::vector<uint64_t> sizes = NcclTestsSizes(config, ranks);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int iteration = static_cast<int>(i);
    program.ops.push_back(MarkerOp(OpKind::kIterationBegin, iteration));
    for (int run = 0; run < config.warmup + config.iterations; ++run) {
      const std::string_view label =
          run < config.warmup ? kNcclTestsWarmupLabel : kNcclTestsTimedLabel;
      Op op = CollectiveOp(iteration, std::string(label), config.collective, sizes[i]);
      op.element_bytes = config.element_bytes;
      program.ops.push_back(std::move(op));
      program.ops.push_back(WaitAllOp(iteration));
    }
    program.ops.push_back(MarkerOp(OpKind::kIterationEnd, iteration));
  }
  program.iterations = static_cast<int>(sizes.size());
  return program;
}

}  // namespace nbox::work
