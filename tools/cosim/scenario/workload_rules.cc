#include "tools/cosim/scenario/workload_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/cosim/scenario/dlrm_keys.h"
#include "tools/cosim/scenario/key_schema.h"
#include "tools/cosim/scenario/nccl_tests_keys.h"
#include "tools/cosim/scenario/transformer_keys.h"
#include "tools/cosim/scenario/workload_config.h"
#include "workloads/gpu_preset.h"
#include "workloads/transformer_shape.h"

namespace nbox::scenario {
namespace {

// Keys that only the DDP kind reads, and batch_per_rank, which DDP and DLRM read.
const std::vector<std::string> kDdpOnlyKeys = {"workload.parameters", "workload.flops_per_sample",
                                               "workload.trace", "workload.trace_scaling",
                                               "workload.trace_replica"};
const std::string kBatchPerRank = "workload.batch_per_rank";
// Keys that only the MoE kind reads, among the transformer keys.
const std::vector<std::string> kMoeOnlyKeys = {"workload.experts",
                                               "workload.top_k",
                                               "workload.shared_expert_ffn",
                                               "workload.expert_parallel",
                                               "workload.routing_skew",
                                               "workload.expert_capacity_factor",
                                               "workload.pad_to_capacity",
                                               "workload.moe_layer_freq",
                                               "workload.first_dense_layers",
                                               "workload.dense_ffn",
                                               "workload.shared_expert_overlap"};

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

// The keys of `specs` but gradient_bytes and activation_bytes, which several kinds read.
std::vector<std::string> KindKeys(const std::vector<KeySpec>& specs) {
  std::vector<std::string> keys;
  for (const KeySpec& key : specs) {
    const std::string name = key.FullName();
    if (name != "workload.gradient_bytes" && name != "workload.activation_bytes") {
      keys.push_back(name);
    }
  }
  return keys;
}

// Every [workload] key but workload.kind and `used`.
std::vector<std::string> WorkloadKeysBut(const std::vector<std::string>& used) {
  std::vector<std::string> others;
  for (const KeySpec& key : ScenarioKeys()) {
    const std::string name = key.FullName();
    if (key.section == "workload" && name != "workload.kind" &&
        std::find(used.begin(), used.end(), name) == used.end()) {
      others.push_back(name);
    }
  }
  return others;
}

// The generator's own validation, its field names turned into the keys that set them.
void CheckByGenerator(RuleContext& context, void (*validate)(const Scenario&)) {
  try {
    validate(context.scenario());
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    const size_t colon = what.find(": ");
    const std::string key = KeyOfField(what.substr(0, colon));
    context.Fail(key.empty() || colon == std::string::npos
                     ? what
                     : fmt::format("{}: {}", context.Describe(key), what.substr(colon + 2)));
  }
}

// A model that is neither custom nor a preset of the kind.
bool RefusePreset(RuleContext& context, bool known, const std::vector<std::string>& presets) {
  if (known) return false;
  context.Fail(fmt::format("{} is not a model of {}: choose one of {} or custom",
                           context.Describe("workload.model"), context.Describe("workload.kind"),
                           fmt::join(presets, ", ")));
  return true;
}

// A custom model: every shape key must be given. False (and the run refused) when some are not.
bool RequireShapeKeys(RuleContext& context, const std::vector<std::string>& keys) {
  std::vector<std::string> missing;
  for (const std::string& key : keys) {
    if (!context.Given("workload." + key)) missing.push_back(key);
  }
  if (missing.empty()) return true;
  context.Fail(fmt::format("{} with {} requires the shape keys; missing: workload.{}",
                           context.Describe("workload.model"), context.Describe("workload.kind"),
                           fmt::join(missing, ", workload.")));
  return false;
}

void CheckDlrm(RuleContext& context) {
  const WorkloadSection& w = context.scenario().workload;
  if (w.model == "custom") {
    if (!RequireShapeKeys(context, {"tables", "embedding_dim", "pooling", "dense_features",
                                    "bottom_mlp", "top_mlp"})) {
      return;
    }
  } else if (RefusePreset(context, work::FindDlrmPreset(w.model) != nullptr,
                          work::DlrmPresetNames())) {
    return;
  }
  // Both keys may come from the preset, so the message says where each width comes from.
  const work::DlrmShape shape = DlrmConfigOf(context.scenario()).shape;
  if (!shape.bottom_mlp.empty() && shape.bottom_mlp.back() != shape.embedding_dim) {
    auto origin = [&](const char* key) {
      return context.Given(key) ? context.Describe(key)
                                : fmt::format("{} of {}", key, context.Describe("workload.model"));
    };
    context.Fail(fmt::format(
        "the bottom MLP's last width ({}, {}) must equal the embedding dimension ({}, {}): the "
        "interaction takes dot products of the two",
        shape.bottom_mlp.back(), origin("workload.bottom_mlp"), shape.embedding_dim,
        origin("workload.embedding_dim")));
    return;
  }
  CheckByGenerator(context, [](const Scenario& s) { work::ValidateDlrmConfig(DlrmConfigOf(s)); });
}

// workload.compute = model (and profile, which falls back on it for shapes the profile did not
// measure) needs a GPU preset that has tensor cores of workload.precision and, when named, the
// attention kernel measured; workload.gpu, workload.precision and the loss's and attention's
// kernels mean nothing to compute = util. False when refused.
bool CheckComputeModel(RuleContext& context) {
  const WorkloadSection& w = context.scenario().workload;
  if (w.compute == ComputeChoice::kUtil) {
    for (const char* key : {"workload.gpu", "workload.precision", "workload.cross_entropy",
                            "workload.attention_kernel"}) {
      const ValueKind& value = KeyByFullName(key).value;
      if (context.Given(key) && value.format(context.scenario()) != value.format(Scenario{})) {
        context.Fail(
            fmt::format("{} is not used by {}: set workload.compute = model or profile "
                        "to time compute per operation on a GPU preset",
                        context.Describe(key), context.Describe("workload.compute")));
        return false;
      }
    }
    return true;
  }
  const work::GpuPreset* gpu = work::FindGpuPreset(w.gpu);
  if (gpu == nullptr) {
    context.Fail(fmt::format("{} times compute on a GPU preset: set workload.gpu to one of {}",
                             context.Describe("workload.compute"),
                             fmt::join(work::GpuPresetNames(), ", ")));
    return false;
  }
  if (w.precision == work::Precision::kFp8 && !(gpu->achievable_fp8_flops > 0)) {
    context.Fail(fmt::format("{} with {}: the {} has no FP8 tensor cores",
                             context.Describe("workload.precision"),
                             context.Describe("workload.gpu"), gpu->description));
    return false;
  }
  if (w.attention_kernel != work::AttentionKernel::kAuto) {
    if (!w.flash_attention) {
      context.Fail(
          fmt::format("{} times the fused attention kernel, but {} runs attention "
                      "unfused: drop the kernel or set flash_attention = on",
                      context.Describe("workload.attention_kernel"),
                      context.Describe("workload.flash_attention")));
      return false;
    }
    if (gpu->AttentionOf(w.attention_kernel) == nullptr) {
      context.Fail(
          fmt::format("{} was not measured on the {} ({}): its measured kernels are {}, "
                      "or set attention_kernel = auto",
                      context.Describe("workload.attention_kernel"), gpu->description,
                      context.Describe("workload.gpu"), gpu->AttentionKernelNames()));
      return false;
    }
  }
  return true;
}

// The generator's own validation, its field names turned into the keys that set them.
void CheckTransformer(RuleContext& context) {
  const Scenario& s = context.scenario();
  const WorkloadSection& w = s.workload;
  const bool moe = w.kind == "moe";
  if (w.model == "custom") {
    std::vector<std::string> keys = {"layers", "hidden", "heads", "ffn", "vocab", "seq_len"};
    if (moe) keys.insert(keys.end(), {"experts", "top_k"});
    if (!RequireShapeKeys(context, keys)) return;
  } else {
    const work::TransformerShape* preset = work::FindTransformerPreset(w.model);
    if (RefusePreset(context, preset != nullptr, work::TransformerPresetNames())) return;
    if (preset->IsMoe() != moe && !(moe && context.Given("workload.experts"))) {
      context.Fail(fmt::format("{} is a {} model; use workload.kind = {}",
                               context.Describe("workload.model"),
                               preset->IsMoe() ? "mixture-of-experts" : "dense",
                               preset->IsMoe() ? "moe" : "transformer"));
      return;
    }
  }
  if (!moe) RefuseUnused(context, kMoeOnlyKeys);
  const int model_parallel = w.tensor_parallel * w.context_parallel * w.pipeline_parallel;
  const int world = s.job.world_size;
  if (w.data_parallel == 0 && world % model_parallel != 0) {
    context.Fail(fmt::format(
        "{} is not a multiple of tensor x context x pipeline = {} ({}, {}, {}), so no "
        "data-parallel size fits",
        context.Describe("job.world_size"), model_parallel,
        context.Describe("workload.tensor_parallel"), context.Describe("workload.context_parallel"),
        context.Describe("workload.pipeline_parallel")));
    return;
  }
  if (w.data_parallel > 0 && model_parallel * w.data_parallel != world) {
    context.Fail(fmt::format(
        "tensor x context x pipeline x data = {} ({}, {}, {}, {}) must equal {}",
        model_parallel * w.data_parallel, context.Describe("workload.tensor_parallel"),
        context.Describe("workload.context_parallel"),
        context.Describe("workload.pipeline_parallel"), context.Describe("workload.data_parallel"),
        context.Describe("job.world_size")));
    return;
  }
  if (!CheckComputeModel(context)) return;
  CheckByGenerator(context, [](const Scenario& scenario) {
    work::ValidateTransformerConfig(TransformerConfigOf(scenario));
  });
}

}  // namespace

void CheckWorkloadKind(RuleContext& context) {
  WorkloadSection& w = context.scenario().workload;
  const std::vector<std::string> nccl_tests_keys = KindKeys(NcclTestsKeys());
  if (w.kind == "chakra") {
    // The traces say everything but where they are, how often they run, and how fast a GPU
    // runs a compute node that records only its work.
    RefuseUnused(context, WorkloadKeysBut({"workload.trace_dir", "workload.trace_prefix",
                                           "workload.iterations", "workload.gpu_peak",
                                           "workload.gpu_util", "workload.gpu_memory_bw"}));
    // A trace runs once unless iterations says how often (the other kinds' default is 3).
    if (!context.Given("workload.iterations")) context.scenario().workload.iterations = 1;
    return;
  }
  RefuseUnused(context, {"workload.trace_prefix"});
  if (w.kind == work::kNcclTestsKind) {
    // The sweep is one collective with no model around it: only its own keys apply.
    std::vector<std::string> used = nccl_tests_keys;
    used.push_back("workload.iterations");
    RefuseUnused(context, WorkloadKeysBut(used));
    CheckByGenerator(context, [](const Scenario& scenario) {
      work::NcclTestsSizes(NcclTestsConfigOf(scenario), scenario.job.world_size);
    });
    return;
  }
  RefuseUnused(context, nccl_tests_keys);
  const std::vector<std::string> transformer_keys = KindKeys(TransformerKeys());
  const std::vector<std::string> dlrm_keys = KindKeys(DlrmKeys());
  if (w.kind == "ddp") {
    RefuseUnused(context, transformer_keys);
    RefuseUnused(context, dlrm_keys);
    if (w.model != "custom" && w.model != "trace" && work::FindModelPreset(w.model) == nullptr) {
      context.Fail(fmt::format("{} is not a model of {}: choose one of {}, custom or trace",
                               context.Describe("workload.model"),
                               context.Describe("workload.kind"),
                               fmt::join(work::ModelPresetNames(), ", ")));
    }
    for (const char* key : {"workload.trace_scaling", "workload.trace_replica"}) {
      const ValueKind& value = KeyByFullName(key).value;
      if (w.model != "trace" && context.Given(key) &&
          value.format(context.scenario()) != value.format(Scenario{})) {
        context.Fail(fmt::format("{} is used only with workload.model = trace, got {}",
                                 context.Describe(key), context.Describe("workload.model")));
      }
    }
    return;
  }
  RefuseUnused(context, kDdpOnlyKeys);
  if (w.kind == "dlrm") {
    RefuseUnused(context, transformer_keys);
    CheckDlrm(context);
    return;
  }
  RefuseUnused(context, dlrm_keys);
  RefuseUnused(context, {kBatchPerRank});
  CheckTransformer(context);
}

}  // namespace nbox::scenario
