// How a transformer job trains (workloads/README.md, "Transformer jobs"): its shape, its
// parallelism, its schedule and data-parallel mode, and the rules a configuration must meet.
// transformer.h builds the job's programs from it.
#pragma once

#include <cstdint>
#include <optional>

#include "workloads/compute_model.h"
#include "workloads/parallel_layout.h"
#include "workloads/pipeline_schedule.h"
#include "workloads/transformer_kernels.h"
#include "workloads/transformer_shape.h"

namespace nbox::work {

// Activation recomputation (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models"; Megatron's --recompute-granularity): what a layer's backward runs again
// of its forward, for the activations it did not keep.
enum class Recompute {
  kNone,
  kSelective,  // the core attention (scores, softmax, values): its FLOPs, no communication
  kFull,       // the whole layer's forward, tensor-parallel and expert communication included
};

enum class DataParallelMode {
  kDdp,    // bucketed gradient all-reduce during the last micro-batch's backward
  kZero1,  // gradient reduce-scatter after the backward, parameter all-gather after the step
  kZero2,  // bucketed reduce-scatter during the last backward, parameter all-gather after it
  kFsdp,   // per layer: parameter all-gather before forward and backward, gradient
           // reduce-scatter after backward, every micro-batch
};

// How context-parallel attention moves keys and values (Megatron-core's --cp-comm-type).
enum class ContextParallelComm {
  kP2p,        // a ring of point-to-point exchanges, each overlapping a block of attention
  kAllGather,  // keys and values all-gathered before the attention, gradients reduce-scattered
  kA2a,        // DeepSpeed-Ulysses: all-to-alls from sequence to head shards and back
  kA2aP2p,     // hierarchical: Ulysses within groups of context_a2a ranks, a ring across them
};

struct TransformerConfig {
  TransformerShape shape;
  ParallelDims parallel;
  int micro_batch = 1;   // sequences per micro-batch
  int global_batch = 0;  // sequences per iteration; 0 = micro_batch x data (one micro-batch)
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  // Model chunks per pipeline rank: > 1 runs Megatron's interleaved 1F1B (virtual pipeline
  // stages, Narayanan et al. 2021, Sec. 2.2.2).
  int virtual_stages = 1;
  DataParallelMode data_parallel_mode = DataParallelMode::kDdp;
  // zero1 and zero2 (Megatron's distributed optimizer): the updated parameters are gathered
  // during the next iteration's first forward, bucket by bucket, each issued when the forward
  // reaches the one before it (overlap_param_gather); false: after the step, all waited for.
  bool overlap_param_gather = false;
  // ddp, zero1, zero2: the gradients are reduced bucket by bucket during the last
  // micro-batch's backward (Megatron's overlap_grad_reduce); false: after the whole backward.
  // Unset: the mode's default (OverlapsGradientReduction). fsdp reduces layer by layer.
  std::optional<bool> overlap_grad_reduce;
  // Transformer Engine's tensor-parallel communication overlap (Megatron's tp_comm_overlap,
  // needs sequence_parallel): each block's all-gather and reduce-scatter beside its GEMMs.
  bool tp_comm_overlap = false;
  // The cross entropy's kernels (per operation; transformer_kernels.h counts their bytes).
  CrossEntropyKernels cross_entropy = CrossEntropyKernels::kUnfused;
  // MoE with a shared expert: its projections run while the token all-to-alls do
  // (Megatron-core's moe_shared_expert_overlap); false: after the combine.
  bool shared_expert_overlap = false;
  bool sequence_parallel = false;  // Korthikanti et al. 2022: TP all-reduce -> AG + RS
  ContextParallelComm context_parallel_comm = ContextParallelComm::kP2p;
  // kA2aP2p: consecutive context ranks per all-to-all group (Megatron-core's
  // hierarchical_context_parallel_sizes [a, c / a]); 1 < a < c, a divides c.
  int context_a2a = 0;
  Recompute recompute = Recompute::kNone;
  // The attention keeps no s x s scores (flash attention, Megatron-core's default backend);
  // false: it keeps them, as Korthikanti et al. count (the memory estimate only).
  bool flash_attention = true;
  ComputeModel compute;
  double backward_to_forward = 2.0;  // backward FLOPs per forward FLOP
  uint32_t activation_bytes = 2;     // bf16 activations between stages and in TP/EP
  uint32_t parameter_bytes = 2;      // bf16 weights, as ZeRO and FSDP all-gather them
  uint32_t gradient_bytes = 2;       // gradient reduction in bf16 (Megatron-core's default)
  uint64_t bucket_bytes = 25ull << 20;
  double optimizer_s = 0;
  int iterations = 3;
  double routing_skew = 0;            // MoE: 0 = balanced routing (moe_routing.h)
  double expert_capacity_factor = 0;  // MoE: 0 = dropless; > 0 = C (moe_routing.h)
  bool pad_to_capacity = false;       // MoE: every expert receives its capacity
  uint64_t seed = 1;

  // m = global batch / (micro_batch x data); 0 when the sizes are not set.
  int Microbatches() const;
  // Model FLOPs of one iteration: the global batch's tokens through the model's forward and
  // backward (backward_to_forward times the forward), without recomputation, padding or
  // dropped tokens (what MFU divides by the time and the GPUs' peak).
  double ModelFlopsPerIteration() const;
};

// Throws std::invalid_argument naming the field ("TransformerConfig.global_batch: ...").
void ValidateTransformerConfig(const TransformerConfig& config);

}  // namespace nbox::work
