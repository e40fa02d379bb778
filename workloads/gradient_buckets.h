// Gradient buckets of data-parallel training: which layers' gradients are all-reduced together.
//
// As in PyTorch DDP (after its first iteration, when the Reducer rebuilds its buckets in the
// order gradients actually became ready), layers are taken in reverse order, L-1 down to 0,
// and packed into consecutive buckets. The first bucket has its own, usually smaller, cap
// (PyTorch: 1 MiB) so that the first all-reduce starts early; every later bucket uses the
// normal cap (PyTorch: bucket_cap_mb = 25 MiB).
#pragma once

#include <cstdint>
#include <vector>

namespace nbox::work {

// When a bucket is full.
enum class BucketClosing {
  // PyTorch's Reducer (compute_bucket_assignment_by_size): a layer is always added to the
  // open bucket, and the bucket closes as soon as it holds at least its cap, so a bucket may
  // exceed its cap by less than its last layer.
  kAtCap,
  // A bucket closes before a layer would push it past its cap, so no bucket exceeds its cap
  // unless it is a single layer that alone is larger than the cap.
  kBelowCap,
};

struct GradientBucket {
  int first_ready_layer = 0;  // highest layer index in the bucket: its gradients come first
  int last_ready_layer = 0;   // lowest layer index: the all-reduce is issued after its backward
  uint64_t bytes = 0;         // gradient bytes of layers last_ready_layer..first_ready_layer
  uint64_t cap = 0;           // the cap that applied: first_bucket_cap for bucket 0, else cap
};

// Packs layers L-1..0, whose gradient sizes are layer_bytes[0..L-1] (forward order), into
// buckets, returned in issue order (bucket 0 holds layer L-1). Every layer is in exactly one
// bucket. Throws std::invalid_argument if layer_bytes is empty or a cap is 0.
std::vector<GradientBucket> AssignGradientBuckets(const std::vector<uint64_t>& layer_bytes,
                                                  uint64_t first_bucket_cap, uint64_t bucket_cap,
                                                  BucketClosing closing);

// The buckets with their layers of no gradients left out (an MoE model's dense layers among its
// expert gradients): each bucket's ready layers narrowed to those that hold bytes, so its
// reduction is issued after the lowest of them, and buckets of no bytes dropped.
std::vector<GradientBucket> WithoutEmptyLayers(std::vector<GradientBucket> buckets,
                                               const std::vector<uint64_t>& layer_bytes);

}  // namespace nbox::work
