// Runs a schedule on the reference executor with generated inputs and compares every rank's
// buffer against a serial computation of the collective (sum of all inputs; concatenation of
// the contributions; the reduced own segment; the sum at the root).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "collectives/reference_executor.h"
#include "collectives/schedule.h"
#include "collectives_test_util.h"

namespace nbox::coll::testing {

// A well-mixed deterministic value per (rank, element, salt) in {-1000/4, ..., 1000/4} for
// floating types (quarters are exact) and {-1000, ..., 1000} for integers. Sums of up to a
// few thousand of them are exact in float, so any order of reduction gives the same bits.
template <typename T>
T InputValue(int rank, uint64_t element, uint64_t salt) {
  uint64_t x = salt * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(rank) * 0xBF58476D1CE4E5B9ull +
               element * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 29;
  const auto value = static_cast<int64_t>(x % 2001) - 1000;
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(value);
  } else {
    return static_cast<T>(value) / static_cast<T>(4);
  }
}

// What an all-gather rank holds outside its own segment before the run; never a valid value.
template <typename T>
constexpr T kUnfilled = static_cast<T>(-77777);

// Returns "" if running `schedule` with `seed` produces the serial result, else a description
// of the first wrong element. Lets ExecutionError and DeadlockError through.
template <typename T>
std::string CheckRun(const Schedule& schedule, uint64_t seed, uint64_t salt = 1) {
  const CollectiveSpec& spec = schedule.spec;
  const int world = spec.world_size;
  const uint64_t elements = spec.bytes / sizeof(T);
  std::vector<std::vector<T>> buffers(world, std::vector<T>(elements));
  for (int r = 0; r < world; ++r) {
    for (uint64_t i = 0; i < elements; ++i) {
      const bool own = SegmentOwner(elements, world, i) == r;
      buffers[r][i] =
          spec.op == CollectiveOp::kAllGather && !own ? kUnfilled<T> : InputValue<T>(r, i, salt);
    }
  }
  ExecuteSchedule<T>(schedule, buffers, seed);

  for (int r = 0; r < world; ++r) {
    for (uint64_t i = 0; i < elements; ++i) {
      const int owner = SegmentOwner(elements, world, i);
      T want{};
      if (spec.op == CollectiveOp::kAllGather) {
        want = InputValue<T>(owner, i, salt);
      } else if ((spec.op == CollectiveOp::kReduceScatter && owner != r) ||
                 (spec.op == CollectiveOp::kReduce && r != spec.root)) {
        continue;  // partial sums, not part of the result
      } else {
        for (int q = 0; q < world; ++q) want += InputValue<T>(q, i, salt);
      }
      if (buffers[r][i] != want) {
        return std::string(ToString(spec.op)) + " W=" + std::to_string(world) +
               " channels=" + std::to_string(spec.channels) +
               " chunk=" + std::to_string(spec.chunk_bytes) +
               " bytes=" + std::to_string(spec.bytes) + " seed=" + std::to_string(seed) +
               ": rank " + std::to_string(r) + " element " + std::to_string(i) + " is " +
               std::to_string(buffers[r][i]) + ", expected " + std::to_string(want);
      }
    }
  }
  return "";
}

// Runs a Broadcast schedule on int32 buffers (the root's holding 1000 root + 3 i + 1, every
// other rank's a value no input has) under the interleaving `seed`; returns "" when every rank
// ends with the root's data, else a description of the first wrong element.
inline std::string CheckBroadcastRun(const Schedule& schedule, uint64_t seed) {
  const CollectiveSpec& spec = schedule.spec;
  const uint64_t elements = spec.bytes / 4;
  auto root_value = [&](uint64_t i) { return static_cast<int32_t>(1000 * spec.root + 3 * i + 1); };
  std::vector<std::vector<int32_t>> buffers(spec.world_size,
                                            std::vector<int32_t>(elements, -77777));
  for (uint64_t i = 0; i < elements; ++i) buffers[spec.root][i] = root_value(i);
  ExecuteSchedule<int32_t>(schedule, buffers, seed);
  for (int r = 0; r < spec.world_size; ++r) {
    for (uint64_t i = 0; i < elements; ++i) {
      if (buffers[r][i] != root_value(i)) {
        return "W=" + std::to_string(spec.world_size) + " root=" + std::to_string(spec.root) +
               " channels=" + std::to_string(spec.channels) +
               " chunk=" + std::to_string(spec.chunk_bytes) + " seed=" + std::to_string(seed) +
               ": rank " + std::to_string(r) + " element " + std::to_string(i) + " is " +
               std::to_string(buffers[r][i]);
      }
    }
  }
  return "";
}

}  // namespace nbox::coll::testing
