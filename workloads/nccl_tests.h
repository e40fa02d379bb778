// nccl-tests' sweep (NVIDIA/nccl-tests, `all_reduce_perf -b MIN -e MAX -f FACTOR -n ITERS
// -w WARMUP`): one collective on the world at each size from min_bytes, times step_factor, up
// to max_bytes; each size `warmup` untimed runs and `iterations` timed ones, every run waited
// for before the next. nbox-cosim reports each size's mean time of the timed runs with
// nccl-tests' algbw and busbw (collectives/schedule.h, BusBandwidthFactor), so a published
// nccl-tests table can be set beside the simulated one (workloads/README.md, "nccl-tests").
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "collectives/schedule.h"
#include "workloads/program.h"

namespace nbox::work {

// The value of workload.kind that runs this workload.
inline constexpr std::string_view kNcclTestsKind = "nccl-tests";

// nccl-tests' default datatype, float: the sweep's element.
inline constexpr uint32_t kNcclTestsElementBytes = 4;

// Labels of the sweep's runs: only the timed ones enter a size's figures.
inline constexpr std::string_view kNcclTestsWarmupLabel = "warmup";
inline constexpr std::string_view kNcclTestsTimedLabel = "timed";

struct NcclTestsConfig {
  coll::CollectiveOp collective = coll::CollectiveOp::kAllReduce;  // not kAllToAllV
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 128ull << 20;
  uint64_t step_factor = 2;
  int warmup = 1;      // untimed runs per size
  int iterations = 1;  // timed runs per size
  uint32_t element_bytes = kNcclTestsElementBytes;
};

// Throws std::invalid_argument naming the first bad field ("NcclTestsConfig.step_factor:
// must be >= 2 (got 1)").
void ValidateNcclTestsConfig(const NcclTestsConfig& config);

// The sizes nccl-tests runs on `ranks` ranks, in its size convention: min_bytes, times
// step_factor while at most max_bytes, each rounded down to whole elements, and for the
// collectives whose buffer is cut among the ranks (all-gather, reduce-scatter, all-to-all) to
// whole elements per rank, as nccl-tests rounds them. Sizes that round to nothing are left out
// (nccl-tests prints them as 0-byte rows); a sweep left with no size is refused
// (std::invalid_argument naming max_bytes).
std::vector<uint64_t> NcclTestsSizes(const NcclTestsConfig& config, int ranks);

// Every rank's program: iteration i is the sweep's i-th size; in it `warmup` runs labelled
// kNcclTestsWarmupLabel, then `iterations` labelled kNcclTestsTimedLabel, each followed by a
// wait for it. The root of a broadcast or reduce is rank 0, nccl-tests' default.
RankProgram MakeNcclTestsProgram(const NcclTestsConfig& config, int ranks);

}  // namespace nbox::work
