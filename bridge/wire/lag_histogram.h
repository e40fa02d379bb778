// Lags in nanoseconds counted in fixed memory, so that a realtime run of any length holds the
// same few hundred KiB for its lag figures (both the plugin and nbox-cosim used to keep every
// lag, 8 bytes per completion, which an hours-long run would have grown to gigabytes).
//
// Buckets are log-linear, as in HdrHistogram: every value below 1024 ns has a bucket of its
// own, and each power of two above is cut into 512 equal buckets. A quantile is reported as
// the largest value its bucket holds, capped at the largest lag seen, so it is never below the
// exact nearest-rank quantile and at most 1/512 (0.2%) above it; the maximum is exact.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace nbox::bridge::wire {

class LagHistogram {
 public:
  static constexpr int kBucketsPerOctaveBits = 9;  // 512 buckets per power of two
  static constexpr uint64_t kExactBelow = uint64_t{2} << kBucketsPerOctaveBits;  // 1024 ns

  // The buckets (224 KiB) are allocated at the first lag: virtual-clock ranks and runs never
  // add one.
  void Add(uint64_t lag_ns) {
    if (counts_.empty()) counts_.assign(BucketOf(UINT64_MAX) + 1, 0);
    ++counts_[BucketOf(lag_ns)];
    ++count_;
    max_ns_ = std::max(max_ns_, lag_ns);
  }

  uint64_t count() const { return count_; }
  uint64_t max_ns() const { return max_ns_; }

  // The p-quantile (0..1) by the nearest-rank method (the smallest lag with at least p of them
  // at or below it), to the resolution above; 0 for none.
  uint64_t Quantile(double p) const {
    if (count_ == 0) return 0;
    const double wanted = std::ceil(p * static_cast<double>(count_));
    const uint64_t rank =
        std::clamp<uint64_t>(wanted < 1 ? 1 : static_cast<uint64_t>(wanted), 1, count_);
    uint64_t seen = 0;
    for (size_t bucket = 0; bucket < counts_.size(); ++bucket) {
      seen += counts_[bucket];
      if (seen >= rank) return std::min(LargestIn(bucket), max_ns_);
    }
    return max_ns_;  // not reached: the buckets hold count_ lags
  }

  static size_t BucketOf(uint64_t ns) {
    if (ns < kExactBelow) return static_cast<size_t>(ns);
    const int octave = 63 - __builtin_clzll(ns);  // ns is in [2^octave, 2^(octave + 1))
    const int shift = octave - kBucketsPerOctaveBits;
    const uint64_t within = (ns >> shift) - (uint64_t{1} << kBucketsPerOctaveBits);
    return static_cast<size_t>(kExactBelow) +
           static_cast<size_t>(octave - kBucketsPerOctaveBits - 1) * kPerOctave +
           static_cast<size_t>(within);
  }

  static uint64_t LargestIn(size_t bucket) {
    if (bucket < kExactBelow) return bucket;
    const size_t above = bucket - static_cast<size_t>(kExactBelow);
    const int shift = static_cast<int>(above / kPerOctave) + 1;
    const uint64_t lowest = (kPerOctave + above % kPerOctave) << shift;
    return lowest + ((uint64_t{1} << shift) - 1);
  }

 private:
  static constexpr size_t kPerOctave = size_t{1} << kBucketsPerOctaveBits;

  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t max_ns_ = 0;
};

}  // namespace nbox::bridge::wire
