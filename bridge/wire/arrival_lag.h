// How late deliveries reached a realtime rank, as the plugin's ArrivalLag frame tells nbox-cosim
// (README.md, "Running with real ranks"); nbox-cosim counts its own lag in the same
// LagHistogram, so both figures have one resolution.
#pragma once

#include "bridge/wire/lag_histogram.h"
#include "bridge/wire/messages.h"

namespace nbox::bridge::wire {

// The ArrivalLag frame of a rank whose Completes came as late as `lags` counts.
inline ArrivalLag SummariseArrivalLags(const LagHistogram& lags) {
  ArrivalLag lag;
  lag.completions = lags.count();
  lag.p99_ns = lags.Quantile(0.99);
  lag.max_ns = lags.max_ns();
  return lag;
}

}  // namespace nbox::bridge::wire
