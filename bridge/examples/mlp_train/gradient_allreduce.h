// Data-parallel gradient averaging for nbox_mlp_train: each bucket of the flat gradient is
// all-reduced (sum, in place, asynchronously) through the host runtime as soon as backward has
// finished the layers it holds, so communication overlaps the rest of backward.
#pragma once

#include <vector>

#include "bridge/examples/mlp_train/bucket_plan.h"
#include "bridge/include/nbox_host.h"

namespace nbox::train {

class GradientAllReduce {
 public:
  GradientAllReduce(nboxComm_t comm, std::vector<GradientBucket> buckets);

  const std::vector<GradientBucket>& buckets() const { return buckets_; }

  // A new step whose gradient lives in `gradient` (the whole flat vector, extras included).
  void Begin(float* gradient);
  // Backward finished `layer`: starts every bucket that is now final. Throws std::runtime_error
  // with the runtime's message when a call fails.
  void OnLayerDone(int layer);
  // Waits for every bucket of the step. Throws std::runtime_error on failure.
  void Finish();

 private:
  nboxComm_t comm_;
  std::vector<GradientBucket> buckets_;
  float* gradient_ = nullptr;
  size_t next_ = 0;
  std::vector<nboxRequest_t> requests_;
};

}  // namespace nbox::train
