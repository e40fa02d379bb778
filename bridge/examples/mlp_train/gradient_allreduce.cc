#include "bridge/examples/mlp_train/gradient_allreduce.h"

#include <stdexcept>
#include <string>

namespace nbox::train {
namespace {

void Check(nboxResult_t result, const char* what, nboxComm_t comm) {
  if (result != nboxSuccess) {
    throw std::runtime_error(std::string(what) + " failed: " + nboxGetErrorString(result) + ": " +
                             nboxGetLastError(comm));
  }
}

}  // namespace

GradientAllReduce::GradientAllReduce(nboxComm_t comm, std::vector<GradientBucket> buckets)
    : comm_(comm), buckets_(std::move(buckets)) {}

void GradientAllReduce::Begin(float* gradient) {
  gradient_ = gradient;
  next_ = 0;
  requests_.clear();
}

void GradientAllReduce::OnLayerDone(int layer) {
  while (next_ < buckets_.size() && buckets_[next_].ready_layer >= layer) {
    const GradientBucket& bucket = buckets_[next_++];
    float* slice = gradient_ + bucket.begin;
    nboxRequest_t request = nullptr;
    Check(nboxAllReduce(slice, slice, bucket.end - bucket.begin, nboxFloat32, nboxSum, comm_,
                        &request),
          "nboxAllReduce", comm_);
    requests_.push_back(request);
  }
}

void GradientAllReduce::Finish() {
  if (next_ != buckets_.size()) throw std::logic_error("Finish before backward reached layer 0");
  // Operations of a communicator complete in call order: waiting for the last one is enough,
  // but each request must be released, so wait for all of them in order.
  for (nboxRequest_t request : requests_) Check(nboxWait(request), "nboxWait", comm_);
  requests_.clear();
}

}  // namespace nbox::train
