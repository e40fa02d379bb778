// The order in which one pipeline stage runs its micro-batches: forwards, backwards and the
// exchanges of activations and gradients with the neighbouring stages, for GPipe, Megatron's
// 1F1B and its interleaved 1F1B (workloads/README.md, "Pipeline parallelism" and "Interleaved
// 1F1B", states the rules and their sources). Schedule arithmetic only: the transformer's
// program builder (transformer_program.cc) turns each step into ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nbox::work {

enum class PipelineSchedule {
  kGPipe,     // every micro-batch's forward, then every backward (in reverse order)
  kOneFOneB,  // Megatron's 1F1B (PipeDream-Flush): warm-up, one forward one backward, cool-down
};

// The shape of a pipeline, from one stage's point of view.
struct PipelineShape {
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  int stages = 1;          // p
  int virtual_stages = 1;  // v: model chunks per stage (> 1: interleaved 1F1B)
  int microbatches = 1;    // m
  int stage = 0;           // this stage, 0 .. p - 1
};

struct PipelineStep {
  enum class Kind : uint8_t { kForward, kBackward, kExchange };
  Kind kind = Kind::kForward;
  // kForward, kBackward: the micro-batch and model chunk it runs; kExchange: the micro-batch
  // the exchange belongs to (the step next to it).
  int microbatch = 0;
  int chunk = 0;
  // kExchange: one transfer group with the neighbouring stages (Megatron batches each one), its
  // transfers in this order, and its label ("F3 send B0 recv").
  bool send_next = false;  // activations to the next stage
  bool send_prev = false;  // gradients to the previous stage
  bool recv_prev = false;  // activations from the previous stage
  bool recv_next = false;  // gradients from the next stage
  std::string label;
};

struct StageSchedule {
  std::vector<PipelineStep> steps;
  int last_backward = 0;  // the micro-batch whose backward is each chunk's last
};

// Stage `shape.stage`'s steps. Exchanges with no transfer are left out.
StageSchedule ScheduleStage(const PipelineShape& shape);

// The forward steps the stage runs before its first backward in 1F1B (Megatron's
// num_warmup_microbatches): min(p - s - 1, m); interleaved, of the m v chunk steps,
// (p - s - 1) 2 + (v - 1) p, or all of them when m = p.
int WarmupSteps(const PipelineShape& shape);

// "F3" (pass 'F', micro-batch 3), or "F3c1" for chunk 1's with interleaving (v > 1): how ops
// and exchanges name the pass they belong to.
std::string PassLabel(char pass, int microbatch, int chunk, int virtual_stages);

}  // namespace nbox::work
