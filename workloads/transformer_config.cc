#include "workloads/transformer_config.h"

#include <stdexcept>
#include <string>

namespace nbox::work {
namespace {

[[noreturn]] void Reject(const std::string& field, const std::string& problem) {
  throw std::invalid_argument("TransformerConfig." + field + ": " + problem);
}

}  // namespace

int TransformerConfig::Microbatches() const {
  const int per_step = micro_batch * parallel.data;
  const int batch = global_batch > 0 ? global_batch : per_step;
  return per_step > 0 ? batch / per_step : 0;
}

double TransformerConfig::ModelFlopsPerIteration() const {
  const double sequences = static_cast<double>(Microbatches()) * micro_batch * parallel.data;
  return sequences * shape.seq_len * shape.ModelFlopsPerToken() * (1 + backward_to_forward);
}

void ValidateTransformerConfig(const TransformerConfig& c) {
  ValidateTransformerShape(c.shape);
  ParallelLayout layout(c.parallel);  // checks the sizes and the order
  const TransformerShape& s = c.shape;
  const int t = c.parallel.tensor;
  if (s.heads % t != 0) {
    Reject("parallel.tensor", std::to_string(t) + " does not divide the heads (" +
                                  std::to_string(s.heads) +
                                  "): each tensor-parallel rank holds "
                                  "whole heads");
  }
  if (c.parallel.pipeline > s.layers) {
    Reject("parallel.pipeline", std::to_string(c.parallel.pipeline) + " stages for " +
                                    std::to_string(s.layers) + " layers");
  }
  if (c.micro_batch < 1) Reject("micro_batch", "must be at least 1");
  if (c.virtual_stages < 1) Reject("virtual_stages", "must be at least 1");
  if (c.virtual_stages > 1) {
    const int p = c.parallel.pipeline;
    const int v = c.virtual_stages;
    if (c.schedule != PipelineSchedule::kOneFOneB || p < 2) {
      Reject("virtual_stages", std::to_string(v) +
                                   ": interleaving needs the 1f1b schedule and at least 2 "
                                   "pipeline stages");
    }
    if (s.layers % (p * v) != 0) {
      Reject("virtual_stages", std::to_string(v) + " chunks on each of " + std::to_string(p) +
                                   " stages do not divide the " + std::to_string(s.layers) +
                                   " layers evenly");
    }
    if (c.Microbatches() % p != 0) {
      Reject("virtual_stages", "interleaving needs the micro-batches (" +
                                   std::to_string(c.Microbatches()) +
                                   ") to be a multiple of the pipeline stages (" +
                                   std::to_string(p) + "), as Megatron does");
    }
    if (c.data_parallel_mode == DataParallelMode::kFsdp) {
      Reject("virtual_stages", "interleaving with fsdp is not modelled");
    }
  }
  const int per_step = c.micro_batch * c.parallel.data;
  if (c.global_batch < 0 || (c.global_batch > 0 && c.global_batch % per_step != 0)) {
    Reject("global_batch", std::to_string(c.global_batch) +
                               " is not a multiple of micro_batch x data (" +
                               std::to_string(per_step) + ")");
  }
  if (c.parallel.expert > 1 && !s.IsMoe()) {
    Reject("parallel.expert", "expert parallelism needs a mixture-of-experts model");
  }
  if (s.IsMoe() && s.experts % c.parallel.expert != 0) {
    Reject("parallel.expert", std::to_string(c.parallel.expert) + " does not divide the experts (" +
                                  std::to_string(s.experts) + ")");
  }
  if (s.IsMoe() && c.parallel.expert > 1 && t > 1 && !c.sequence_parallel) {
    Reject("sequence_parallel",
           "must be on with tensor and expert parallelism together (Megatron-core requires it: "
           "each tensor-parallel rank routes its share of the sequence)");
  }
  const int cp = c.parallel.context;
  if (cp > 1 && s.seq_len % (2 * cp) != 0) {
    Reject("parallel.context", "seq_len (" + std::to_string(s.seq_len) +
                                   ") must be a multiple of "
                                   "2 x context (" +
                                   std::to_string(2 * cp) +
                                   "): each rank holds two of the sequence's 2 c chunks, as "
                                   "Megatron balances causal attention");
  }
  const bool hierarchical = c.context_parallel_comm == ContextParallelComm::kA2aP2p;
  if (hierarchical && (c.context_a2a < 2 || c.context_a2a >= cp || cp % c.context_a2a != 0)) {
    Reject("context_a2a", std::to_string(c.context_a2a) +
                              ": a2a+p2p needs all-to-all groups of a ranks, 1 < a < context (" +
                              std::to_string(cp) + ") and dividing it");
  }
  if (!hierarchical && c.context_a2a != 0) {
    Reject("context_a2a", "only a2a+p2p splits the context ranks into all-to-all groups");
  }
  // The ranks that split a tensor rank's heads between them: all c (a2a) or each group's a.
  const int head_split = hierarchical ? c.context_a2a : cp;
  if (cp > 1 && (c.context_parallel_comm == ContextParallelComm::kA2a || hierarchical) &&
      (s.heads % (t * head_split) != 0 || s.KvHeads() % (t * head_split) != 0)) {
    Reject("context_parallel_comm",
           "the all-to-alls split every tensor rank's heads over " + std::to_string(head_split) +
               " context ranks: heads (" + std::to_string(s.heads) + ") and key/value heads (" +
               std::to_string(s.KvHeads()) + ") must be multiples of tensor x " +
               std::to_string(head_split) + " (" + std::to_string(t * head_split) + ")");
  }
  if ((s.seq_len / cp) % t != 0 && c.sequence_parallel) {
    Reject("sequence_parallel", "seq_len / context (" + std::to_string(s.seq_len / cp) +
                                    ") must be a multiple of the tensor-parallel size");
  }
  if (c.activation_bytes < 1 || c.parameter_bytes < 1 || c.gradient_bytes < 1) {
    Reject("gradient_bytes", "activation, parameter and gradient bytes must be at least 1");
  }
  if (c.overlap_param_gather && c.data_parallel_mode != DataParallelMode::kZero1 &&
      c.data_parallel_mode != DataParallelMode::kZero2) {
    Reject("overlap_param_gather",
           "needs the distributed optimizer (data_parallel_mode zero1 or zero2), whose parameter "
           "all-gathers it overlaps");
  }
  if (c.overlap_grad_reduce.value_or(false) && c.data_parallel_mode == DataParallelMode::kFsdp) {
    Reject("overlap_grad_reduce",
           "applies to data_parallel_mode ddp, zero1 and zero2 (fsdp reduces layer by layer, "
           "after each layer's backward)");
  }
  if (c.tp_comm_overlap && !c.sequence_parallel) {
    Reject("tp_comm_overlap",
           "needs sequence_parallel (Transformer Engine overlaps the sequence-parallel "
           "all-gathers and reduce-scatters with the GEMMs beside them)");
  }
  if (c.shared_expert_overlap && s.shared_expert_ffn == 0) {
    Reject("shared_expert_overlap", "needs a shared expert (shape.shared_expert_ffn > 0)");
  }
  if (c.bucket_bytes < 1) Reject("bucket_bytes", "must be at least 1");
  if (!(c.backward_to_forward > 0)) Reject("backward_to_forward", "must be > 0");
  if (!(c.optimizer_s >= 0)) Reject("optimizer_s", "must be >= 0");
  if (c.iterations < 1) Reject("iterations", "must be at least 1");
  if (!(c.routing_skew >= 0)) Reject("routing_skew", "must be >= 0");
  if (!(c.expert_capacity_factor >= 0)) Reject("expert_capacity_factor", "must be >= 0");
  if (c.pad_to_capacity && c.expert_capacity_factor == 0) {
    Reject("pad_to_capacity", "needs an expert capacity (expert_capacity_factor > 0)");
  }
  ValidateComputeModel(c.compute, "TransformerConfig.compute");
}

}  // namespace nbox::work
