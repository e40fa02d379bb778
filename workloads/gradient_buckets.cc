#include "workloads/gradient_buckets.h"

#include <stdexcept>

namespace nbox::work {

std::vector<GradientBucket> AssignGradientBuckets(const std::vector<uint64_t>& layer_bytes,
                                                  uint64_t first_bucket_cap, uint64_t bucket_cap,
                                                  BucketClosing closing) {
  if (layer_bytes.empty()) {
    throw std::invalid_argument("AssignGradientBuckets: layer_bytes must hold at least one layer");
  }
  if (first_bucket_cap == 0) {
    throw std::invalid_argument("AssignGradientBuckets: first_bucket_cap must be > 0");
  }
  if (bucket_cap == 0) {
    throw std::invalid_argument("AssignGradientBuckets: bucket_cap must be > 0");
  }

  std::vector<GradientBucket> buckets;
  GradientBucket open;
  bool open_has_layers = false;
  auto current_cap = [&] { return buckets.empty() ? first_bucket_cap : bucket_cap; };
  auto close_open = [&] {
    open.cap = current_cap();
    buckets.push_back(open);
    open = GradientBucket{};
    open_has_layers = false;
  };

  for (int layer = static_cast<int>(layer_bytes.size()) - 1; layer >= 0; --layer) {
    const uint64_t bytes = layer_bytes[static_cast<size_t>(layer)];
    // Would adding this layer pass the cap? Written without the sum so it cannot overflow;
    // a bucket already past its cap (one layer larger than the cap) closes at once.
    if (closing == BucketClosing::kBelowCap && open_has_layers &&
        (open.bytes > current_cap() || bytes > current_cap() - open.bytes)) {
      close_open();
    }
    if (!open_has_layers) open.first_ready_layer = layer;
    open.last_ready_layer = layer;
    open.bytes += bytes;
    open_has_layers = true;
    if (closing == BucketClosing::kAtCap && open.bytes >= current_cap()) close_open();
  }
  if (open_has_layers) close_open();
  return buckets;
}

std::vector<GradientBucket> WithoutEmptyLayers(std::vector<GradientBucket> buckets,
                                               const std::vector<uint64_t>& layer_bytes) {
  std::vector<GradientBucket> kept;
  for (GradientBucket& b : buckets) {
    if (b.bytes == 0) continue;
    auto empty = [&](int layer) { return layer_bytes.at(static_cast<size_t>(layer)) == 0; };
    while (empty(b.first_ready_layer)) --b.first_ready_layer;
    while (empty(b.last_ready_layer)) ++b.last_ready_layer;
    kept.push_back(b);
  }
  return kept;
}

}  // namespace nbox::work
