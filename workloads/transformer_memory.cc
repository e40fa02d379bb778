#include "workloads/transformer_memory.h"

#include <algorithm>

#include "workloads/transformer_program.h"

namespace nbox::work {
namespace {

constexpr double kOptimizerBytesPerParameter = 12;  // fp32 master weights, Adam's m and v
constexpr double kTokenIdBytes = 8;                 // int64 token ids
constexpr double kLogitBytes = 4;                   // fp32 logits of the cross entropy

// Tokens of one micro-batch on one rank: with context parallelism it holds s / c of each
// sequence.
double TokensPerMicrobatch(const TransformerConfig& c) {
  return static_cast<double>(c.shape.seq_len) / c.parallel.context * c.micro_batch;
}

constexpr int kEveryChunk = -1;

// The most passes (a micro-batch through one model chunk) whose forward has run and whose
// backward has not, over stage `stage`'s schedule, of chunk `chunk` or of kEveryChunk: what
// their activations are kept for.
int PeakPassesInFlight(const TransformerConfig& c, int stage, int chunk) {
  int in_flight = 0;
  int peak = 0;
  for (const PipelineStep& step : ScheduleStage(PipelineShapeOf(c, stage)).steps) {
    if (step.kind == PipelineStep::Kind::kExchange) continue;
    if (chunk != kEveryChunk && step.chunk != chunk) continue;
    in_flight += step.kind == PipelineStep::Kind::kForward ? 1 : -1;
    peak = std::max(peak, in_flight);
  }
  return peak;
}

// Layers' worth of activations stage `stage` holds at its peak, each pass of the stage's layers
// or, interleaved, of a chunk's L / (p v). GPipe holds all m passes; 1F1B its warm-up's and the
// one before its first backward (on stage 0 interleaved: L (1 + (p - 1) / (p v)) layers, as
// Korthikanti et al. give).
double LayersInFlight(const TransformerConfig& c, const StageContext& stage) {
  const int v = c.virtual_stages;
  const double layers_per_pass =
      v == 1 ? stage.layers : static_cast<double>(c.shape.layers) / (c.parallel.pipeline * v);
  return PeakPassesInFlight(c, stage.stage, kEveryChunk) * layers_per_pass;
}

}  // namespace

double LayerActivationBytes(const TransformerConfig& c) {
  const double t = c.parallel.tensor;
  const bool sp = c.sequence_parallel && c.parallel.tensor > 1;
  const double sbh = TokensPerMicrobatch(c) * c.shape.hidden;
  const double scale = c.activation_bytes / 2.0;  // the table counts 16-bit activations
  // Only the layer's input is kept (sharded along the sequence with sequence parallelism).
  if (c.recompute == Recompute::kFull) return 2 * sbh / (sp ? t : 1) * scale;
  // s b h times: 10 of norm and projection inputs and dropout masks, which tensor parallelism
  // does not split; 8 of the attention's query, key, value and output-projection inputs; and the
  // MLP's, which it splits. Korthikanti et al.'s GeLU MLP of width 4h keeps 16 (its activation's
  // and its second projection's inputs, 2 s b f bytes each: 4 f / h); a gated (SwiGLU) MLP also
  // keeps its gate's half (6 f / h). Sequence parallelism splits all of them.
  const double mlp = (c.shape.gated_mlp ? 6.0 : 4.0) * c.shape.ffn / c.shape.hidden;
  const double split = 8 + mlp;  // 24 for their GPT layer
  const double linear = sp ? (10 + split) / t : 10 + split / t;
  // 5 a s^2 b of attention scores, softmax and its dropout, split by heads, which neither flash
  // attention (it recomputes them block by block) nor selective recomputation keeps. With
  // context parallelism each of the rank's s / c queries still scores all s keys.
  const bool scores_kept = !c.flash_attention && c.recompute != Recompute::kSelective;
  const double attention =
      scores_kept ? 5.0 * c.shape.heads * c.shape.seq_len / (c.shape.hidden * t) : 0;
  return sbh * (linear + attention) * scale;
}

double EmbeddingActivationBytes(const TransformerConfig& c) {
  const double tokens = TokensPerMicrobatch(c);
  // The dropout follows the scatter to the sequence-parallel region: its mask is split.
  const double shard = c.sequence_parallel ? c.parallel.tensor : 1;
  return kTokenIdBytes * tokens + tokens * c.shape.hidden / shard;
}

double OutputActivationBytes(const TransformerConfig& c) {
  const double tokens = TokensPerMicrobatch(c);
  const double shard = c.sequence_parallel ? c.parallel.tensor : 1;
  // The final norm's input and the output layer's (sequence-parallel: each rank keeps its
  // shard and gathers it again in the backward), and the logits of the rank's V / t words,
  // which the vocabulary-parallel cross entropy keeps in fp32 for its backward. With sequence
  // parallelism this is Megatron's 4 s b h (1 + V / h) / t.
  const double inputs = 2.0 * tokens * c.shape.hidden * c.activation_bytes / shard;
  return inputs + kLogitBytes * tokens * c.shape.vocab / c.parallel.tensor;
}

std::vector<StageMemory> EstimateStageMemory(const TransformerConfig& c) {
  ValidateTransformerConfig(c);
  // Dense parameters are partitioned over the ranks that reduce their gradients: data x context.
  const double d = static_cast<double>(c.parallel.data) * c.parallel.context;
  // Experts over the ranks that hold the same ones: expert data x context.
  const double expert_data =
      static_cast<double>(c.parallel.data) * c.parallel.context / c.parallel.expert;
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
    // The embedding is the first virtual stage's (stage 0, chunk 0), the output layer the
    // last's (stage p - 1, chunk v - 1).
    if (k == 0) {
      m.embedding_activations_bytes = PeakPassesInFlight(c, k, 0) * EmbeddingActivationBytes(c);
    }
    if (k == c.parallel.pipeline - 1) {
      m.output_activations_bytes =
          PeakPassesInFlight(c, k, c.virtual_stages - 1) * OutputActivationBytes(c);
    }
    if (!c.shape.IsMoe()) {
      m.activations_bytes = layers * LayerActivationBytes(c) + m.embedding_activations_bytes +
                            m.output_activations_bytes;
    }
    stages.push_back(m);
  }
  return stages;
}

}  // namespace nbox::work
