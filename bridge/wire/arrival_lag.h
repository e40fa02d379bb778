// How late deliveries reached a realtime rank, summarised the one way both sides use: the
// plugin for its ArrivalLag frame, nbox-cosim for the lag it reports itself (README.md,
// "Running with real ranks").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "bridge/wire/messages.h"

namespace nbox::bridge::wire {

// The p-quantile (0..1) of `values` by the nearest-rank method (the smallest value with at
// least p of them at or below it); 0 for none.
template <typename T>
T NearestRankQuantile(std::vector<T> values, double p) {
  if (values.empty()) return T{};
  const double rank = std::ceil(p * static_cast<double>(values.size()));
  const size_t index = std::min(rank < 1 ? 0 : static_cast<size_t>(rank) - 1, values.size() - 1);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index),
                   values.end());
  return values[index];
}

// The ArrivalLag frame of a rank whose Completes came `lags_ns` late.
inline ArrivalLag SummariseArrivalLags(const std::vector<uint64_t>& lags_ns) {
  ArrivalLag lag;
  lag.completions = lags_ns.size();
  lag.p99_ns = NearestRankQuantile(lags_ns, 0.99);
  lag.max_ns = lags_ns.empty() ? 0 : *std::max_element(lags_ns.begin(), lags_ns.end());
  return lag;
}

}  // namespace nbox::bridge::wire
