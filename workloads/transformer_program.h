// The program of one pipeline stage of a transformer job (transformer.h): its micro-batches'
// forwards and backwards in the schedule's order, with the tensor-, pipeline-, expert- and
// data-parallel communication each one needs. Internal to MakeTransformerJob.
#pragma once

#include <vector>

#include "workloads/program.h"
#include "workloads/transformer.h"

namespace nbox::work {

// Communicator slots of every rank of a transformer job, and its streams.
enum TransformerSlot : int {
  kWorldSlot = 0,
  kTensorSlot,
  kPipelineSlot,
  kDataSlot,
  kModelParallelSlot,  // tensor x pipeline ranks of one replica: the gradient-norm all-reduce
  kEmbeddingSlot,      // first and last stage: tied embedding gradients
  kExpertSlot,
  kExpertDataSlot,
  kSlotCount,
};

enum TransformerStream : int { kTpStream = 0, kPpStream, kDpStream, kEpStream, kStreamCount };

struct StageContext {
  int stage = 0;
  int first_layer = 0;  // the stage's layers: first_layer .. first_layer + layers - 1
  int layers = 0;
  // MoE: all-to-all-v sizes of every (iteration, layer of the model), dispatch and combine
  // (its transpose), and the tokens this rank's experts receive, all in bytes or tokens.
  const std::vector<std::vector<AllToAllCounts>>* dispatch = nullptr;
  const std::vector<std::vector<AllToAllCounts>>* combine = nullptr;
  const std::vector<std::vector<uint64_t>>* expert_tokens = nullptr;  // [iteration][layer]
};

RankProgram MakeStageProgram(const TransformerConfig& config, const StageContext& stage);

}  // namespace nbox::work
