// How nbox_mlp_train cuts its gradient into all-reduce buckets, as PyTorch DDP does: layers are
// taken from the output back (the order backward finishes them) and a bucket is closed once it
// holds at least `bucket_bytes`, so the first all-reduces run while backward still computes the
// earlier layers. Buckets are contiguous slices of the flat gradient (layers sit in order in it).
#pragma once

#include <cstddef>
#include <vector>

#include "bridge/examples/mlp_train/mlp.h"

namespace nbox::train {

struct GradientBucket {
  size_t begin = 0;     // first float of the slice
  size_t end = 0;       // one past the last
  int ready_layer = 0;  // the slice is final once backward has finished this layer
};

// Buckets in launch order. `extra_floats` floats appended after the parameters' gradient (the
// loss rides along this way) belong to the first bucket. bucket_bytes >= 1.
std::vector<GradientBucket> PlanBuckets(const Mlp& mlp, size_t bucket_bytes, size_t extra_floats);

}  // namespace nbox::train
