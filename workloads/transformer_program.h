// The program of one pipeline stage of a transformer job (transformer.h): its micro-batches'
// forwards and backwards in the schedule's order, with the tensor-, pipeline-, expert- and
// data-parallel communication each one needs. Internal to MakeTransformerJob.
#pragma once

#include <vector>

#include "workloads/moe_routing.h"
#include "workloads/program.h"
#include "workloads/transformer_config.h"

namespace nbox::work {

// Communicator slots of every rank of a transformer job, and its streams.
enum TransformerSlot : int {
  kWorldSlot = 0,
  kTensorSlot,
  kPipelineSlot,
  kDataSlot,           // data x context ranks: gradients and parameters
  kModelParallelSlot,  // tensor x pipeline ranks of one replica: the gradient-norm all-reduce
  kEmbeddingSlot,      // first and last stage: tied embedding gradients
  kExpertSlot,
  kExpertDataSlot,
  kContextSlot,  // only with context parallelism (c > 1): the ring of a sequence's ranks
  // Only with a2a+p2p: the all-to-all block of context ranks (kContextSlot is then the ring
  // across the blocks).
  kContextA2aSlot,
  kSlotCount,
};

// kCpStream exists only with context parallelism.
enum TransformerStream : int { kTpStream = 0, kPpStream, kDpStream, kEpStream, kCpStream };

struct StageContext {
  int stage = 0;
  int context = 0;      // the rank's place in its context-parallel group (its ring)
  int first_layer = 0;  // the stage's layers: first_layer .. first_layer + layers - 1
  int layers = 0;
  // MoE: all-to-all-v sizes of every (iteration, layer of the model), dispatch and combine
  // (its transpose), and the tokens this rank's experts receive, all in bytes or tokens.
  const std::vector<std::vector<AllToAllCounts>>* dispatch = nullptr;
  const std::vector<std::vector<AllToAllCounts>>* combine = nullptr;
  const std::vector<std::vector<uint64_t>>* expert_tokens = nullptr;  // [iteration][layer]
};

RankProgram MakeStageProgram(const TransformerConfig& config, const StageContext& stage);

// The parameters a rank of `stage` holds, over all its chunks: dense ones (this tensor rank's
// share, reduced over the data-parallel group) and experts' (over the expert-data group).
struct StageParameters {
  uint64_t dense = 0;
  uint64_t experts = 0;
};
StageParameters ParametersOf(const TransformerConfig& config, const StageContext& stage);
// Of a rank's parameters `p`, how many it holds state of when that state is `sharded` over the
// ranks that reduce the same gradients (ZeRO, FSDP): dense ones over data x context, experts
// over expert-data x context; all of them when not sharded.
double ParametersHeld(const TransformerConfig& config, const StageParameters& p, bool sharded);

// The shape of stage `stage`'s pipeline (pipeline_schedule.h).
PipelineShape PipelineShapeOf(const TransformerConfig& config, int stage);

// The stage's layers (split evenly, the first stages taking one more when they do not divide),
// without the MoE routing.
StageContext StageOf(const TransformerConfig& config, int stage);

// The model chunks of stage `stage`, in chunk order: its one chunk of StageOf's layers, or
// with interleaving (v > 1) chunk j holding virtual stage j p + stage's L / (p v) layers.
struct LayerRange {
  int first = 0;
  int count = 0;
};
std::vector<LayerRange> ChunkLayersOf(const TransformerConfig& config, int stage);

// How an MoE job routes tokens (moe_routing.h): over its expert-parallel group, each rank
// routing its s / c tokens of each sequence of a micro-batch (its tensor-parallel share of
// them with sequence parallelism).
MoeRouting ExpertRoutingOf(const TransformerConfig& config);

}  // namespace nbox::work
