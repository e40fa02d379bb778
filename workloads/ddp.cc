#include "workloads/ddp.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "workloads/even_split.h"
#include "workloads/ops.h"

namespace nbox::work {
namespace {

// Larger FLOP counts would not fit the whole-number split in uint64_t; 1e18 FLOPs per sample
// is far beyond any model (a 1T-parameter transformer at 8k tokens is about 1.6e16).
constexpr double kMaxForwardFlopsPerSample = 1e18;

template <typename T>
[[noreturn]] void Reject(std::string_view field, std::string_view requirement, const T& got) {
  std::ostringstream message;
  message.precision(17);
  message << "DdpConfig." << field << " must be " << requirement << " (got " << got << ")";
  throw std::invalid_argument(message.str());
}

bool IsPositiveFinite(double value) {
  return std::isfinite(value) && value > 0;
}

}  // namespace

void ValidateDdpConfig(const DdpConfig& config) {
  const ModelSpec& model = config.model;
  if (model.layers < 1) Reject("model.layers", ">= 1", model.layers);
  if (model.parameters < static_cast<uint64_t>(model.layers)) {
    Reject("model.parameters",
           "at least one per layer (>= model.layers = " + std::to_string(model.layers) + ")",
           model.parameters);
  }
  if (model.gradient_bytes_per_param < 1) {
    Reject("model.gradient_bytes_per_param", ">= 1", model.gradient_bytes_per_param);
  }
  if (model.parameters > std::numeric_limits<uint64_t>::max() / model.gradient_bytes_per_param) {
    Reject("model.parameters",
           "small enough that parameters x gradient_bytes_per_param fits "
           "in 64 bits",
           model.parameters);
  }
  const double flops = model.forward_flops_per_sample;
  if (!std::isfinite(flops) || flops < model.layers || flops > kMaxForwardFlopsPerSample) {
    Reject("model.forward_flops_per_sample",
           "finite, at least one per layer (>= model.layers = " + std::to_string(model.layers) +
               ") and <= 1e18",
           flops);
  }
  if (config.batch_per_rank < 1) Reject("batch_per_rank", ">= 1", config.batch_per_rank);
  ValidateComputeModel(config.compute, "DdpConfig.compute");
  if (!IsPositiveFinite(config.backward_to_forward)) {
    Reject("backward_to_forward", "finite and > 0", config.backward_to_forward);
  }
  if (config.bucket_bytes < 1) Reject("bucket_bytes", ">= 1", config.bucket_bytes);
  if (config.first_bucket_bytes < 1) {
    Reject("first_bucket_bytes", ">= 1", config.first_bucket_bytes);
  }
  if (config.bucket_closing != BucketClosing::kAtCap &&
      config.bucket_closing != BucketClosing::kBelowCap) {
    Reject("bucket_closing", "kAtCap or kBelowCap", static_cast<int>(config.bucket_closing));
  }
  if (!std::isfinite(config.optimizer_s) || config.optimizer_s < 0) {
    Reject("optimizer_s", "finite and >= 0", config.optimizer_s);
  }
  if (config.iterations < 1) Reject("iterations", ">= 1", config.iterations);
}

RankProgram MakeDdpProgram(const DdpConfig& config) {
  ValidateDdpConfig(config);
  const ModelSpec& model = config.model;
  const int layers = model.layers;

  const std::vector<uint64_t> layer_params = SplitEvenly(model.parameters, layers);
  const std::vector<uint64_t> layer_flops =
      SplitEvenly(static_cast<uint64_t>(std::llround(model.forward_flops_per_sample)), layers);

  std::vector<uint64_t> layer_gradient_bytes(layer_params.size());
  std::vector<double> forward_s(layer_flops.size());
  for (size_t l = 0; l < layer_params.size(); ++l) {
    layer_gradient_bytes[l] = layer_params[l] * model.gradient_bytes_per_param;
    forward_s[l] = config.compute.Seconds(
        ComputeKind::kMatmul, static_cast<double>(layer_flops[l]) * config.batch_per_rank);
  }

  const std::vector<GradientBucket> buckets = AssignGradientBuckets(
      layer_gradient_bytes, config.first_bucket_bytes, config.bucket_bytes, config.bucket_closing);
  // bucket_closed_by[l]: the bucket whose all-reduce follows layer l's backward, or -1.
  std::vector<int> bucket_closed_by(static_cast<size_t>(layers), -1);
  for (size_t b = 0; b < buckets.size(); ++b) {
    bucket_closed_by[static_cast<size_t>(buckets[b].last_ready_layer)] = static_cast<int>(b);
  }

  RankProgram program;
  program.iterations = config.iterations;
  const bool has_optimizer = config.optimizer_s > 0;
  program.ops.reserve(static_cast<size_t>(config.iterations) *
                      (2 * static_cast<size_t>(layers) + buckets.size() + 4));
  for (int it = 0; it < config.iterations; ++it) {
    program.ops.push_back(MarkerOp(OpKind::kIterationBegin, it));
    for (int l = 0; l < layers; ++l) {
      program.ops.push_back(
          ComputeOp(it, "fwd L" + std::to_string(l), forward_s[static_cast<size_t>(l)]));
    }
    for (int l = layers - 1; l >= 0; --l) {
      const auto layer = static_cast<size_t>(l);
      program.ops.push_back(ComputeOp(it, "bwd L" + std::to_string(l),
                                      config.backward_to_forward * forward_s[layer]));
      const int bucket = bucket_closed_by[layer];
      if (bucket >= 0) {
        program.ops.push_back(CollectiveOp(it, "allreduce bucket " + std::to_string(bucket),
                                           coll::CollectiveOp::kAllReduce,
                                           buckets[static_cast<size_t>(bucket)].bytes));
      }
    }
    program.ops.push_back(WaitAllOp(it));
    if (has_optimizer) program.ops.push_back(ComputeOp(it, "optimizer", config.optimizer_s));
    program.ops.push_back(MarkerOp(OpKind::kIterationEnd, it));
  }
  return program;
}

}  // namespace nbox::work
