#include "workloads/transformer_memory.h"

#include <algorithm>

#include "workloads/transformer_program.h"

namespace nbox::work {
namespace {

constexpr double kOptimizerBytesPerParameter = 12;  // fp32 master weights, Adam's m and v

// Layers' worth of activations stage `stage` holds at its peak: the micro-batches whose
// forward has run and whose backward has not. GPipe holds all m; 1F1B its warm-up's forward
// steps and the one before its first backward, each of the stage's layers or, interleaved, of
// a chunk's L / (p v) (on stage 0: L (1 + (p - 1) / (p v)), as Korthikanti et al. give).
double LayersInFlight(const TransformerConfig& c, const StageContext& stage) {
  const int m = c.Microbatches();
  if (c.schedule == PipelineSchedule::kGPipe) return static_cast<double>(m) * stage.layers;
  const int v = c.virtual_stages;
  const int steps = std::min(WarmupSteps(PipelineShapeOf(c, stage.stage)) + 1, m * v);
  const double layers_per_step =
      v == 1 ? stage.layers : static_cast<double>(c.shape.layers) / (c.parallel.pipeline * v);
  return steps * layers_per_step;
}

}  // namespace

double LayerActivationBytes(const TransformerConfig& c) {
  const double t = c.parallel.tensor;
  const bool sp = c.sequence_parallel && c.parallel.tensor > 1;
  // With context parallelism a rank keeps the activations of its s / c tokens; each of their
  // queries still scores all s keys.
  const double sbh =
      static_cast<double>(c.shape.seq_len) / c.parallel.context * c.micro_batch * c.shape.hidden;
  // Only the layer's input is kept (sharded along the sequence with sequence parallelism).
  if (c.recompute == Recompute::kFull) return 2 * sbh / (sp ? t : 1);
  // 34 s b h of linear-layer inputs, norms, GeLU and dropout masks, of which 24 are split by
  // tensor parallelism (all 34 with sequence parallelism), and 5 a s^2 b of attention scores,
  // softmax and its dropout, split by heads, which neither flash attention (it recomputes them
  // block by block) nor selective recomputation keeps.
  const double linear = sp ? 34 / t : 10 + 24 / t;
  const bool scores_kept = !c.flash_attention && c.recompute != Recompute::kSelective;
  const double attention =
      scores_kept ? 5.0 * c.shape.heads * c.shape.seq_len / (c.shape.hidden * t) : 0;
  return sbh * (linear + attention) * c.activation_bytes / 2;
}

std::vector<StageMemory> EstimateStageMemory(const TransformerConfig& c) {
  ValidateTransformerConfig(c);
  // Dense parameters are partitioned over the ranks that reduce their gradients: data x context.
  const double d = static_cast<double>(c.parallel.data) * c.parallel.context;
  const double expert_data = static_cast<double>(c.parallel.data) / c.parallel.expert;
  const DataParallelMode mode = c.data_parallel_mode;
  const bool shard_optimizer = mode != DataParallelMode::kDdp;
  const bool shard_gradients = mode == DataParallelMode::kZero2 || mode == DataParallelMode::kFsdp;
  const bool shard_weights = mode == DataParallelMode::kFsdp;
  // Bytes per rank of `per_parameter` bytes for each parameter, partitioned or not.
  auto held = [&](const StageParameters& p, double per_parameter, bool sharded) {
    return per_parameter * (sharded ? p.dense / d + p.experts / expert_data
                                    : static_cast<double>(p.dense + p.experts));
  };
  std::vector<StageMemory> stages;
  for (int k = 0; k < c.parallel.pipeline; ++k) {
    const StageContext context = StageOf(c, k);
    const StageParameters p = ParametersOf(c, context);
    StageMemory m;
    m.stage = k;
    m.parameters = p.dense + p.experts;
    m.weights_bytes = held(p, c.parameter_bytes, shard_weights);
    m.gradients_bytes = held(p, c.gradient_bytes, shard_gradients);
    m.optimizer_bytes = held(p, kOptimizerBytesPerParameter, shard_optimizer);
    const double layers = LayersInFlight(c, context);
    m.layers_in_flight = layers;
    if (!c.shape.IsMoe()) m.activations_bytes = layers * LayerActivationBytes(c);
    stages.push_back(m);
  }
  return stages;
}

}  // namespace nbox::work
