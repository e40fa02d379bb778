// Data-parallel training (PyTorch DDP): forward, backward with gradient buckets all-reduced
// as soon as their layers' gradients are ready, then the optimizer step.
//
// The model is a stack of `layers` equal layers: parameters and forward FLOPs are spread
// evenly over them (SplitEvenly: whole shares, remainders to the lowest layers, sums exact).
// workloads/README.md describes the model, the presets and their sources.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/compute_model.h"
#include "workloads/gradient_buckets.h"
#include "workloads/program.h"

namespace nbox::work {

struct ModelSpec {
  std::string name;
  uint64_t parameters = 0;                // published parameter count
  int layers = 0;                         // parameters and FLOPs are spread evenly over these
  double forward_flops_per_sample = 0;    // FLOPs (not multiply-adds) of one forward pass;
                                          // a whole number (rounded to the nearest FLOP)
  uint32_t gradient_bytes_per_param = 4;  // fp32 gradients
  std::string source;                     // where the numbers come from
};

// Presets: published models. Returns nullptr for an unknown name (names are lower case, as
// listed by ModelPresetNames, e.g. "resnet152", "bert-large", "gpt2-xl").
const ModelSpec* FindModelPreset(std::string_view name);
// Every preset name, in a fixed order.
std::vector<std::string> ModelPresetNames();

struct DdpConfig {
  ModelSpec model;
  int batch_per_rank = 32;
  ComputeModel compute;                 // layers are matmul work
  double backward_to_forward = 2.0;     // backward FLOPs per forward FLOP
  uint64_t bucket_bytes = 25ull << 20;  // PyTorch's bucket_cap_mb = 25 (MiB)
  // Cap of the first bucket (the last layers' gradients, ready first). PyTorch's default is
  // 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES), so the first all-reduce starts early. Set it
  // equal to bucket_bytes for no special first bucket.
  uint64_t first_bucket_bytes = 1ull << 20;
  BucketClosing bucket_closing = BucketClosing::kAtCap;  // kAtCap is PyTorch's rule
  double optimizer_s = 0;  // optimizer step after the gradients are reduced
  int iterations = 3;
};

// Throws std::invalid_argument naming the first bad field ("DdpConfig.batch_per_rank must be
// >= 1 (got 0)"). MakeDdpProgram calls it; callers may call it early to report errors.
void ValidateDdpConfig(const DdpConfig& config);

// The same program for every rank. Per iteration i (0-based):
//   IterationBegin; "fwd L0" .. "fwd L<L-1>"; "bwd L<L-1>" .. "bwd L0", each bucket's
//   "allreduce bucket <b>" right after the backward of its last-ready (lowest) layer;
//   WaitCollectives; "optimizer" if optimizer_s > 0; IterationEnd.
// A layer's forward takes compute.Seconds(kMatmul, layer_flops * batch_per_rank);
// its backward takes backward_to_forward times that. Throws std::invalid_argument on a bad
// config.
RankProgram MakeDdpProgram(const DdpConfig& config);

}  // namespace nbox::work
