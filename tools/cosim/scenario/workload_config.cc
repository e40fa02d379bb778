#include "tools/cosim/scenario/workload_config.h"

#include <memory>
#include <stdexcept>
#include <utility>

#include "workloads/kernel_profile.h"

namespace nbox::scenario {
namespace {

// A shape key overrides the preset's value when given (non-zero).
void Override(int& field, int value) {
  if (value > 0) field = value;
}

// Generator fields and the keys that set them.
const std::pair<std::string_view, std::string_view> kFieldKeys[] = {
    {"NcclTestsConfig.min_bytes", "workload.min_bytes"},
    {"NcclTestsConfig.max_bytes", "workload.max_bytes"},
    {"NcclTestsConfig.step_factor", "workload.step_factor"},
    {"NcclTestsConfig.warmup", "workload.warmup"},
    {"NcclTestsConfig.iterations", "workload.iterations"},
    {"TransformerConfig.micro_batch", "workload.micro_batch"},
    {"TransformerConfig.global_batch", "workload.global_batch"},
    {"TransformerConfig.virtual_stages", "workload.virtual_stages"},
    {"TransformerConfig.sequence_parallel", "workload.sequence_parallel"},
    {"TransformerConfig.parallel.tensor", "workload.tensor_parallel"},
    {"TransformerConfig.parallel.pipeline", "workload.pipeline_parallel"},
    {"TransformerConfig.parallel.expert", "workload.expert_parallel"},
    {"TransformerConfig.parallel.context", "workload.context_parallel"},
    {"TransformerConfig.context_parallel_comm", "workload.context_parallel_comm"},
    {"TransformerConfig.context_a2a", "workload.context_a2a"},
    {"TransformerConfig.gradient_bytes", "workload.gradient_bytes"},
    {"TransformerConfig.bucket_bytes", "workload.bucket"},
    {"TransformerConfig.routing_skew", "workload.routing_skew"},
    {"TransformerConfig.expert_capacity_factor", "workload.expert_capacity_factor"},
    {"TransformerConfig.pad_to_capacity", "workload.pad_to_capacity"},
    {"TransformerConfig.overlap_param_gather", "workload.overlap_param_gather"},
    {"TransformerConfig.overlap_grad_reduce", "workload.overlap_grad_reduce"},
    {"TransformerConfig.tp_comm_overlap", "workload.tp_comm_overlap"},
    {"TransformerConfig.shared_expert_overlap", "workload.shared_expert_overlap"},
    {"ParallelDims.tensor", "workload.tensor_parallel"},
    {"ParallelDims.pipeline", "workload.pipeline_parallel"},
    {"ParallelDims.data", "workload.data_parallel"},
    {"ParallelDims.expert", "workload.expert_parallel"},
    {"ParallelDims.context", "workload.context_parallel"},
    {"ParallelDims.order", "workload.order"},
    {"TransformerShape.layers", "workload.layers"},
    {"TransformerShape.hidden", "workload.hidden"},
    {"TransformerShape.heads", "workload.heads"},
    {"TransformerShape.kv_heads", "workload.kv_heads"},
    {"TransformerShape.q_lora_rank", "workload.q_lora_rank"},
    {"TransformerShape.kv_lora_rank", "workload.kv_lora_rank"},
    {"TransformerShape.qk_head_dim", "workload.qk_head_dim"},
    {"TransformerShape.qk_rope_dim", "workload.qk_rope_dim"},
    {"TransformerShape.v_head_dim", "workload.v_head_dim"},
    {"TransformerShape.head_dim", "workload.head_dim"},
    {"TransformerShape.ffn", "workload.ffn"},
    {"TransformerShape.vocab", "workload.vocab"},
    {"TransformerShape.seq_len", "workload.seq_len"},
    {"TransformerShape.experts", "workload.experts"},
    {"TransformerShape.top_k", "workload.top_k"},
    {"TransformerShape.shared_expert_ffn", "workload.shared_expert_ffn"},
    {"TransformerShape.moe_layer_freq", "workload.moe_layer_freq"},
    {"TransformerShape.first_dense_layers", "workload.first_dense_layers"},
    {"TransformerShape.dense_ffn", "workload.dense_ffn"},
    {"DlrmShape.dense_features", "workload.dense_features"},
    {"DlrmShape.tables", "workload.tables"},
    {"DlrmShape.embedding_dim", "workload.embedding_dim"},
    {"DlrmShape.pooling", "workload.pooling"},
    {"DlrmShape.bottom_mlp", "workload.bottom_mlp"},
    {"DlrmShape.top_mlp", "workload.top_mlp"},
    {"DlrmConfig.compute.memory_bytes_per_s", "workload.gpu_memory_bw"},
    {"DlrmConfig.gradient_bytes", "workload.gradient_bytes"},
};

}  // namespace

work::DdpConfig DdpConfigOf(const Scenario& s) {
  const WorkloadSection& w = s.workload;
  work::DdpConfig c;
  if (w.model == "custom") {
    c.model.name = "custom";
    c.model.source = "scenario file";
  } else {
    const work::ModelSpec* preset = work::FindModelPreset(w.model);
    if (preset == nullptr) {
      throw std::invalid_argument("workload.model = " + w.model + " is not a ddp model");
    }
    c.model = *preset;
  }
  if (w.parameters > 0) c.model.parameters = w.parameters;
  if (w.layers > 0) c.model.layers = w.layers;
  if (w.flops_per_sample > 0) c.model.forward_flops_per_sample = w.flops_per_sample;
  if (w.gradient_bytes > 0)
    c.model.gradient_bytes_per_param = static_cast<uint32_t>(w.gradient_bytes);
  c.batch_per_rank = w.batch_per_rank;
  c.compute.peak_flops = w.gpu_peak_flops;
  c.compute.utilization = w.gpu_util;
  c.backward_to_forward = w.backward_ratio;
  c.bucket_bytes = w.bucket_bytes;
  c.optimizer_s = w.optimizer_s;
  c.iterations = w.iterations;
  return c;
}

work::TransformerConfig TransformerConfigOf(const Scenario& s) {
  const WorkloadSection& w = s.workload;
  work::TransformerConfig c;
  if (w.model == "custom") {
    c.shape.name = "custom";
    c.shape.source = "scenario file";
    c.shape.gated_mlp = true;  // Llama's SwiGLU, the common choice of new models
  } else {
    const work::TransformerShape* preset = work::FindTransformerPreset(w.model);
    if (preset == nullptr) {
      throw std::invalid_argument("workload.model = " + w.model + " is not a " + w.kind + " model");
    }
    c.shape = *preset;
  }
  Override(c.shape.layers, w.layers);
  Override(c.shape.hidden, w.hidden);
  Override(c.shape.heads, w.heads);
  Override(c.shape.kv_heads, w.kv_heads);
  Override(c.shape.q_lora_rank, w.q_lora_rank);
  Override(c.shape.kv_lora_rank, w.kv_lora_rank);
  Override(c.shape.qk_head_dim, w.qk_head_dim);
  Override(c.shape.qk_rope_dim, w.qk_rope_dim);
  Override(c.shape.v_head_dim, w.v_head_dim);
  Override(c.shape.head_dim, w.head_dim);
  if (w.mlp != MlpChoice::kPreset) c.shape.gated_mlp = w.mlp == MlpChoice::kSwiglu;
  if (w.tied_embeddings != PresetOnOff::kPreset) {
    c.shape.tied_embeddings = w.tied_embeddings == PresetOnOff::kOn;
  }
  if (w.bias != PresetOnOff::kPreset) c.shape.linear_bias = w.bias == PresetOnOff::kOn;
  Override(c.shape.ffn, w.ffn);
  Override(c.shape.vocab, w.vocab);
  Override(c.shape.seq_len, w.seq_len);
  Override(c.shape.experts, w.experts);
  Override(c.shape.top_k, w.top_k);
  Override(c.shape.shared_expert_ffn, w.shared_expert_ffn);
  Override(c.shape.moe_layer_freq, w.moe_layer_freq);
  Override(c.shape.first_dense_layers, w.first_dense_layers);
  Override(c.shape.dense_ffn, w.dense_ffn);
  c.parallel.tensor = w.tensor_parallel;
  c.parallel.pipeline = w.pipeline_parallel;
  c.parallel.context = w.context_parallel;
  const int model_parallel = w.tensor_parallel * w.context_parallel * w.pipeline_parallel;
  c.parallel.data = w.data_parallel > 0 ? w.data_parallel : s.job.world_size / model_parallel;
  c.parallel.expert = w.expert_parallel;
  c.parallel.order = w.order;
  c.micro_batch = w.micro_batch;
  c.global_batch = w.global_batch;
  c.schedule = w.schedule;
  c.virtual_stages = w.virtual_stages;
  c.data_parallel_mode = w.data_parallel_mode;
  c.sequence_parallel = w.sequence_parallel;
  c.flash_attention = w.flash_attention;
  c.overlap_param_gather = w.overlap_param_gather;
  c.overlap_grad_reduce = w.overlap_grad_reduce;
  c.cross_entropy = w.cross_entropy;
  c.tp_comm_overlap = w.tp_comm_overlap;
  c.shared_expert_overlap = w.shared_expert_overlap;
  c.context_parallel_comm = w.context_parallel_comm;
  c.context_a2a = w.context_a2a;
  c.recompute = w.recompute;
  c.compute.peak_flops = w.gpu_peak_flops;
  c.compute.utilization = w.gpu_util;
  c.compute.attention_utilization = w.gpu_util_attention;
  if (w.compute != ComputeChoice::kUtil) {
    c.compute.mode = work::ComputeModel::Mode::kModel;
    c.compute.gpu = work::FindGpuPreset(w.gpu);
    c.compute.precision = w.precision;
    c.compute.attention_kernel = w.attention_kernel;
  }
  if (w.compute == ComputeChoice::kProfile) {
    c.compute.profile =
        std::make_shared<const work::KernelProfile>(work::ReadKernelProfile(w.compute_profile));
  }
  c.backward_to_forward = w.backward_ratio;
  c.activation_bytes = static_cast<uint32_t>(w.activation_bytes);
  c.parameter_bytes = static_cast<uint32_t>(w.activation_bytes);
  c.gradient_bytes = w.gradient_bytes > 0 ? static_cast<uint32_t>(w.gradient_bytes) : 2;
  c.bucket_bytes = w.bucket_bytes;
  c.optimizer_s = w.optimizer_s;
  c.iterations = w.iterations;
  c.routing_skew = w.routing_skew;
  c.expert_capacity_factor = w.expert_capacity_factor;
  c.pad_to_capacity = w.pad_to_capacity;
  c.seed = s.job.seed;
  return c;
}

work::DlrmConfig DlrmConfigOf(const Scenario& s) {
  const WorkloadSection& w = s.workload;
  work::DlrmConfig c;
  if (w.model == "custom") {
    c.shape.name = "custom";
    c.shape.source = "scenario file";
  } else {
    const work::DlrmShape* preset = work::FindDlrmPreset(w.model);
    if (preset == nullptr) {
      throw std::invalid_argument("workload.model = " + w.model + " is not a dlrm model");
    }
    c.shape = *preset;
  }
  Override(c.shape.tables, w.tables);
  Override(c.shape.embedding_dim, w.embedding_dim);
  Override(c.shape.pooling, w.pooling);
  Override(c.shape.dense_features, w.dense_features);
  if (!w.bottom_mlp.empty()) c.shape.bottom_mlp = w.bottom_mlp;
  if (!w.top_mlp.empty()) c.shape.top_mlp = w.top_mlp;
  c.world_size = s.job.world_size;
  c.batch_per_rank = w.batch_per_rank;
  c.compute.peak_flops = w.gpu_peak_flops;
  c.compute.utilization = w.gpu_util;
  c.compute.memory_bytes_per_s = w.gpu_memory_bw;
  c.backward_to_forward = w.backward_ratio;
  c.embedding_bytes = static_cast<uint32_t>(w.activation_bytes);
  c.gradient_bytes = w.gradient_bytes > 0 ? static_cast<uint32_t>(w.gradient_bytes) : 4;
  c.bucket_bytes = w.bucket_bytes;
  c.optimizer_s = w.optimizer_s;
  c.iterations = w.iterations;
  return c;
}

work::NcclTestsConfig NcclTestsConfigOf(const Scenario& s) {
  const WorkloadSection& w = s.workload;
  work::NcclTestsConfig c;
  c.collective = w.nccl_collective;
  c.min_bytes = w.min_bytes;
  c.max_bytes = w.max_bytes;
  c.step_factor = static_cast<uint64_t>(w.step_factor);
  c.warmup = w.warmup;
  c.iterations = w.iterations;
  return c;
}

std::string KeyOfField(std::string_view field) {
  for (const auto& [name, key] : kFieldKeys) {
    if (name == field) return std::string(key);
  }
  return "";
}

}  // namespace nbox::scenario
