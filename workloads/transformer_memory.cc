#include "workloads/transformer_memory.h"

#include <algorithm>
#include <vector>

#include "workloads/moe_routing.h"
#include "workloads/transformer_program.h"

namespace nbox::work {
namespace {

constexpr double kOptimizerBytesPerParameter = 12;  // fp32 master weights, Adam's m and v
constexpr double kTokenIdBytes = 8;                 // int64 token ids
constexpr double kLogitBytes = 4;                   // fp32 logits of the cross entropy
constexpr double kRouterProbabilityBytes = 4;       // the router's fp32 softmax output

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

bool SequenceParallel(const TransformerConfig& c) {
  return c.sequence_parallel && c.parallel.tensor > 1;
}

// The table counts 16-bit activations.
double Scale(const TransformerConfig& c) {
  return c.activation_bytes / 2.0;
}

// What full recomputation keeps of a layer: its input (sharded along the sequence with
// sequence parallelism).
double LayerInputBytes(const TransformerConfig& c) {
  const double t = SequenceParallel(c) ? c.parallel.tensor : 1;
  return 2 * TokensPerMicrobatch(c) * c.shape.hidden / t * Scale(c);
}

// The layer's attention half with its two norms. s b h times: 7 of the norms' inputs (4), the
// attention's input (2) and its dropout's mask (1), which tensor parallelism does not split, and
// 8 of the query, key, value and output-projection inputs, which it does; sequence parallelism
// splits all of them. Then 5 a s^2 b of attention scores, softmax and its dropout, split by
// heads, which neither flash attention (it recomputes them block by block) nor selective
// recomputation keeps. With context parallelism each of the rank's s / c queries still scores
// all s keys.
double AttentionActivationBytes(const TransformerConfig& c) {
  const double t = c.parallel.tensor;
  const double sbh = TokensPerMicrobatch(c) * c.shape.hidden;
  const double linear = SequenceParallel(c) ? (7 + 8) / t : 7 + 8 / t;
  const bool scores_kept = !c.flash_attention && c.recompute != Recompute::kSelective;
  const double scores =
      scores_kept ? 5.0 * c.shape.heads * c.shape.seq_len / (c.shape.hidden * t) : 0;
  return sbh * (linear + scores) * Scale(c);
}

// Bytes per token of the activations past its input of one MLP of width f: Korthikanti et
// al.'s GeLU MLP of width 4h keeps 16 h (its activation's and its second projection's inputs,
// 2 f bytes each: 4 f); a gated (SwiGLU) MLP also keeps its gate's half (6 f), in 16-bit.
double MlpActivationBytesPerToken(const TransformerConfig& c, int f) {
  return (c.shape.gated_mlp ? 6.0 : 4.0) * f;
}

// The dense MLP's half: its input (2 s b h) and its dropout's mask (s b h), which tensor
// parallelism does not split, and its activations, which it does; sequence parallelism splits
// all of them.
double DenseMlpActivationBytes(const TransformerConfig& c) {
  const double t = c.parallel.tensor;
  const double tokens = TokensPerMicrobatch(c);
  const double unsplit = 3 * tokens * c.shape.hidden / (SequenceParallel(c) ? t : 1);
  return (unsplit + tokens * MlpActivationBytesPerToken(c, c.shape.DenseFfn()) / t) * Scale(c);
}

// Bytes per layer of an MoE model's stage `stage`. An MoE layer's (ExpertLayerActivationBytes)
// depend on the tokens the routing of its (iteration, layer) gives the rank; a dense layer's
// among them (moe_layer_freq, first_dense_layers) do not. The mean over the stage's layers for
// the iteration and expert rank (place in the expert-parallel group) whose layers keep the
// most: times the layers in flight, exactly what that rank holds without interleaving (every
// micro-batch of an iteration routes alike), and the chunks' mean with it.
double ExpertLayerBytesAtPeak(const TransformerConfig& c, int stage) {
  const MoeRouting routing = ExpertRoutingOf(c);
  const auto g = static_cast<size_t>(routing.group);
  double worst = 0;
  int layers = 0;
  for (int it = 0; it < c.iterations; ++it) {
    std::vector<double> sum(g, 0.0);
    layers = 0;
    for (const LayerRange& range : ChunkLayersOf(c, stage)) {
      for (int layer = range.first; layer < range.first + range.count; ++layer, ++layers) {
        if (!c.shape.IsMoeLayer(layer)) {
          for (double& bytes : sum) bytes += LayerActivationBytes(c);
          continue;
        }
        const std::vector<uint64_t> counts = RouteTokens(routing, it, layer);
        for (size_t r = 0; r < g; ++r) {
          ExpertLayerTokens tokens;
          tokens.routed = static_cast<double>(routing.tokens_per_rank);
          for (size_t j = 0; j < g; ++j) {
            tokens.sent += static_cast<double>(counts[r * g + j]);
            tokens.received += static_cast<double>(counts[j * g + r]);
          }
          sum[r] += ExpertLayerActivationBytes(c, tokens);
        }
      }
    }
    worst = std::max(worst, *std::max_element(sum.begin(), sum.end()));
  }
  return layers == 0 ? 0 : worst / layers;
}

}  // namespace

double LayerActivationBytes(const TransformerConfig& c) {
  if (c.recompute == Recompute::kFull) return LayerInputBytes(c);
  return AttentionActivationBytes(c) + DenseMlpActivationBytes(c);
}

double ExpertLayerActivationBytes(const TransformerConfig& c, const ExpertLayerTokens& tokens) {
  if (c.recompute == Recompute::kFull) return LayerInputBytes(c);
  const double h = c.shape.hidden;
  // Per routed token: the router's input (2 h, which the dispatch also reads), the dropout's
  // mask after the layer (h) and the router's probabilities. Per received assignment: the
  // expert's input (2 h) and its MLP's activations (whole experts: no tensor split). Per sent
  // assignment: the expert's output back at the token's rank, which the combine weights by its
  // probability (2 h). A shared expert keeps its MLP's activations for every token of the
  // micro-batch, split over the tensor ranks as the dense MLP's (its input is the router's).
  const double router =
      tokens.routed * (3 * h * Scale(c) + kRouterProbabilityBytes * c.shape.experts);
  const double experts =
      tokens.received * (2 * h + MlpActivationBytesPerToken(c, c.shape.ffn)) * Scale(c);
  const double combine = tokens.sent * 2 * h * Scale(c);
  const double shared = TokensPerMicrobatch(c) *
                        MlpActivationBytesPerToken(c, c.shape.shared_expert_ffn) /
                        c.parallel.tensor * Scale(c);
  return AttentionActivationBytes(c) + router + experts + combine + shared;
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
  const DataParallelMode mode = c.data_parallel_mode;
  const bool shard_optimizer = mode != DataParallelMode::kDdp;
  const bool shard_gradients = mode == DataParallelMode::kZero2 || mode == DataParallelMode::kFsdp;
  const bool shard_weights = mode == DataParallelMode::kFsdp;
  // Bytes per rank of `per_parameter` bytes for each parameter, partitioned or not.
  auto held = [&](const StageParameters& p, double per_parameter, bool sharded) {
    return per_parameter * ParametersHeld(c, p, sharded);
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
    const double per_layer =
        c.shape.IsMoe() ? ExpertLayerBytesAtPeak(c, k) : LayerActivationBytes(c);
    m.activations_bytes =
        layers * per_layer + m.embedding_activations_bytes + m.output_activations_bytes;
    stages.push_back(m);
  }
  return stages;
}

}  // namespace nbox::work
