#include "tools/scenario/workload_rules.h"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tools/scenario/transformer_keys.h"
#include "tools/scenario/workload_config.h"
#include "workloads/transformer_shape.h"

namespace nbox::scenario {
namespace {

// Keys that only the DDP kind reads.
const std::vector<std::string> kDdpOnlyKeys = {"workload.parameters", "workload.flops_per_sample",
                                               "workload.batch_per_rank", "workload.trace"};
// Keys that only the MoE kind reads, among the transformer keys.
const std::vector<std::string> kMoeOnlyKeys = {"workload.experts", "workload.top_k",
                                               "workload.expert_parallel", "workload.routing_skew"};

// "workload.hidden = 4096 (line 6) is not used by workload.kind = ddp (line 3)". A key given
// at its default value changes nothing and passes (a scenario's settings read back whole).
void RefuseUnused(RuleContext& context, const std::vector<std::string>& keys) {
  static const Scenario defaults;
  for (const std::string& key : keys) {
    const ValueKind& value = KeyByFullName(key).value;
    if (context.Given(key) && value.format(context.scenario()) != value.format(defaults)) {
      context.Fail(fmt::format("{} is not used by {}", context.Describe(key),
                               context.Describe("workload.kind")));
    }
  }
}

std::vector<std::string> TransformerOnlyKeys() {
  std::vector<std::string> keys;
  for (const KeySpec& key : TransformerKeys()) {
    if (key.FullName() != "workload.gradient_bytes") keys.push_back(key.FullName());
  }
  return keys;
}

// The generator's own validation, its field names turned into the keys that set them.
void CheckTransformer(RuleContext& context) {
  const Scenario& s = context.scenario();
  const WorkloadSection& w = s.workload;
  const bool moe = w.kind == "moe";
  if (w.model == "custom") {
    std::vector<std::string> missing;
    for (const char* key : {"layers", "hidden", "heads", "ffn", "vocab", "seq_len"}) {
      if (!context.Given(std::string("workload.") + key)) missing.push_back(key);
    }
    if (moe) {
      for (const char* key : {"experts", "top_k"}) {
        if (!context.Given(std::string("workload.") + key)) missing.push_back(key);
      }
    }
    if (!missing.empty()) {
      context.Fail(fmt::format("{} with {} requires the shape keys; missing: workload.{}",
                               context.Describe("workload.model"),
                               context.Describe("workload.kind"),
                               fmt::join(missing, ", workload.")));
      return;
    }
  } else {
    const work::TransformerShape* preset = work::FindTransformerPreset(w.model);
    if (preset == nullptr) {
      context.Fail(fmt::format(
          "{} is not a model of {}: choose one of {} or custom", context.Describe("workload.model"),
          context.Describe("workload.kind"), fmt::join(work::TransformerPresetNames(), ", ")));
      return;
    }
    if (preset->IsMoe() != moe && !(moe && context.Given("workload.experts"))) {
      context.Fail(fmt::format("{} is a {} model; use workload.kind = {}",
                               context.Describe("workload.model"),
                               preset->IsMoe() ? "mixture-of-experts" : "dense",
                               preset->IsMoe() ? "moe" : "transformer"));
      return;
    }
  }
  if (!moe) RefuseUnused(context, kMoeOnlyKeys);
  const int model_parallel = w.tensor_parallel * w.pipeline_parallel;
  const int world = s.job.world_size;
  if (w.data_parallel == 0 && world % model_parallel != 0) {
    context.Fail(fmt::format(
        "{} is not a multiple of tensor x pipeline = {} ({}, {}), so no data-parallel size fits",
        context.Describe("job.world_size"), model_parallel,
        context.Describe("workload.tensor_parallel"),
        context.Describe("workload.pipeline_parallel")));
    return;
  }
  if (w.data_parallel > 0 && model_parallel * w.data_parallel != world) {
    context.Fail(fmt::format(
        "tensor x pipeline x data = {} ({}, {}, {}) must equal {}",
        model_parallel * w.data_parallel, context.Describe("workload.tensor_parallel"),
        context.Describe("workload.pipeline_parallel"), context.Describe("workload.data_parallel"),
        context.Describe("job.world_size")));
    return;
  }
  try {
    work::ValidateTransformerConfig(TransformerConfigOf(s));
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    const size_t colon = what.find(": ");
    const std::string key = KeyOfField(what.substr(0, colon));
    context.Fail(key.empty() || colon == std::string::npos
                     ? what
                     : fmt::format("{}: {}", context.Describe(key), what.substr(colon + 2)));
  }
}

}  // namespace

void CheckWorkloadKind(RuleContext& context) {
  const WorkloadSection& w = context.scenario().workload;
  if (w.kind == "ddp") {
    RefuseUnused(context, TransformerOnlyKeys());
    if (w.model != "custom" && w.model != "trace" && work::FindModelPreset(w.model) == nullptr) {
      context.Fail(fmt::format("{} is not a model of {}: choose one of {}, custom or trace",
                               context.Describe("workload.model"),
                               context.Describe("workload.kind"),
                               fmt::join(work::ModelPresetNames(), ", ")));
    }
    return;
  }
  RefuseUnused(context, kDdpOnlyKeys);
  CheckTransformer(context);
}

}  // namespace nbox::scenario
