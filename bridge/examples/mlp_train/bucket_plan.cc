#include "bridge/examples/mlp_train/bucket_plan.h"

#include <stdexcept>

namespace nbox::train {

std::vector<GradientBucket> PlanBuckets(const Mlp& mlp, size_t bucket_bytes, size_t extra_floats) {
  if (bucket_bytes < 1) throw std::invalid_argument("bucket size must be at least one byte");
  std::vector<GradientBucket> buckets;
  size_t end = mlp.parameter_count() + extra_floats;
  for (int l = mlp.layer_count() - 1; l >= 0; --l) {
    const size_t begin = mlp.layer(l).weights;
    if ((end - begin) * sizeof(float) >= bucket_bytes || l == 0) {
      buckets.push_back(GradientBucket{begin, end, l});
      end = begin;
    }
  }
  return buckets;
}

}  // namespace nbox::train
