// What one GPU of each pipeline stage of a transformer job holds at its peak, by the closed
// forms of the literature (workloads/README.md, "Memory per GPU"): model states as ZeRO counts
// them (Rajbhandari et al. 2020: 2 bytes of bf16 weights, the gradients, 12 bytes of fp32
// master weights and Adam moments per parameter, each partitioned over the data-parallel group
// by the mode that shards it) and the activations a layer keeps per micro-batch as Korthikanti
// et al. 2022 count them (Table 2), times the micro-batches a stage holds in flight, with the
// embedding's on the first stage and the output layer's and the loss's logits on the last
// (as Megatron's theoretical_memory_usage.py counts them); a mixture-of-experts layer's MLP by
// nbox's count of the tensors its router, experts and combine keep, for the tokens the job's
// routing gives each rank. An estimate: nothing here is simulated, and what it leaves out is
// listed in the README.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/transformer_config.h"

namespace nbox::work {

struct StageMemory {
  int stage = 0;
  uint64_t parameters = 0;  // this rank's share, dense and experts
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  // All of the stage's activations at its peak, the two below included.
  double activations_bytes = 0;
  double layers_in_flight = 0;  // layers' worth of micro-batches stashed for their backward
  // The input embedding's (first stage) and the output layer's and logits' (last stage), for
  // the micro-batches in flight there; 0 on the other stages.
  double embedding_activations_bytes = 0;
  double output_activations_bytes = 0;

  double ModelStatesBytes() const { return weights_bytes + gradients_bytes + optimizer_bytes; }
};

// Bytes of activations one transformer layer keeps for one micro-batch on one tensor-parallel
// rank (Korthikanti et al. 2022, Table 2, for 16-bit activations; their MLP terms scaled to the
// MLP's width and gate).
double LayerActivationBytes(const TransformerConfig& config);

// The tokens of one micro-batch an MoE layer handles on one rank: those it routes (its
// sequence share), its assignments the experts keep (at most routed x top_k, fewer when the
// capacity drops some, padding included), and the assignments its own experts receive.
struct ExpertLayerTokens {
  double routed = 0;
  double sent = 0;
  double received = 0;
};

// Bytes of activations one MoE layer keeps for one micro-batch on one rank: the attention's as
// LayerActivationBytes counts them, and in place of the dense MLP the router's input and fp32
// probabilities, each received token's expert input and MLP activations, and each sent token's
// expert output, which the combine's weighting keeps for its backward.
double ExpertLayerActivationBytes(const TransformerConfig& config, const ExpertLayerTokens& tokens);

// Bytes the input embedding keeps for one micro-batch on one rank of the first stage: the token
// ids (8 bytes each) and the embedding dropout's mask (1 byte per element).
double EmbeddingActivationBytes(const TransformerConfig& config);

// Bytes the model's end keeps for one micro-batch on one rank of the last stage: the inputs of
// the final norm and of the output layer, and the cross entropy's fp32 logits of the rank's
// vocabulary shard.
double OutputActivationBytes(const TransformerConfig& config);

// One entry per pipeline stage.
std::vector<StageMemory> EstimateStageMemory(const TransformerConfig& config);

}  // namespace nbox::work
