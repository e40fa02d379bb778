#include "workloads/transformer_program.h"

#include <map>
#include <string>
#include <utility>

#include "workloads/gradient_buckets.h"
#include "workloads/ops.h"

namespace nbox::work {
namespace {

using Coll = coll::CollectiveOp;  // the operation; CollectiveOp() builds the op that issues it
using coll::StepKind;

// Builds one stage's program, iteration by iteration. Names: "F3" is micro-batch 3's forward,
// "B3" its backward, "R3" its forward run again before the backward (full recomputation), "L12"
// model layer 12; communication labels carry the same, so a report groups the ranks' parts of
// one collective.
class StageBuilder {
 public:
  StageBuilder(const TransformerConfig& config, const StageContext& stage)
      : c_(config),
        st_(stage),
        t_(config.parallel.tensor),
        p_(config.parallel.pipeline),
        d_(config.parallel.data),
        e_(config.parallel.expert),
        m_(config.Microbatches()),
        first_(stage.stage == 0),
        last_(stage.stage == config.parallel.pipeline - 1),
        sp_(config.sequence_parallel && config.parallel.tensor > 1),
        tokens_(static_cast<double>(config.micro_batch) * config.shape.seq_len),
        activation_(static_cast<uint64_t>(config.micro_batch) * config.shape.seq_len *
                    config.shape.hidden * config.activation_bytes) {
    PlanGradients();
  }

  RankProgram Build() {
    program_.iterations = c_.iterations;
    for (it_ = 0; it_ < c_.iterations; ++it_) {
      program_.ops.push_back(MarkerOp(OpKind::kIterationBegin, it_));
      if (c_.schedule == PipelineSchedule::kGPipe) {
        GPipe();
      } else {
        OneFOneB();
      }
      Finish();
      program_.ops.push_back(MarkerOp(OpKind::kIterationEnd, it_));
    }
    return std::move(program_);
  }

 private:
  // --- helpers ------------------------------------------------------------------------------

  uint32_t Push(Op op) {
    program_.ops.push_back(std::move(op));
    return static_cast<uint32_t>(program_.ops.size() - 1);
  }

  void Wait(uint32_t op) { Push(WaitOp(it_, op)); }

  void Compute(std::string label, double seconds) {
    if (seconds > 0) Push(ComputeOp(it_, std::move(label), seconds, mb_));
  }

  double Matmul(double flops) const { return c_.compute.Seconds(ComputeKind::kMatmul, flops); }

  // A tensor-parallel collective the compute stream waits for (Megatron's f and g).
  void Tp(const std::string& label, Coll op, uint64_t bytes) {
    if (t_ == 1) return;
    Wait(Push(CollectiveOp(it_, label, op, bytes, kTensorSlot, kTpStream, mb_)));
  }

  // The collective after a column-then-row parallel block: all-reduce, or reduce-scatter with
  // sequence parallelism; and the one before it (nothing, or all-gather).
  void TpAfter(const std::string& label) {
    Tp(label + (sp_ ? " rs" : " ar"), sp_ ? Coll::kReduceScatter : Coll::kAllReduce, activation_);
  }
  void TpBefore(const std::string& label) {
    if (sp_) Tp(label + " ag", Coll::kAllGather, activation_);
  }

  std::string Mb(char pass) const { return std::string(1, pass) + std::to_string(mb_); }
  static std::string L(int layer) { return " L" + std::to_string(layer); }

  // A point-to-point group with the neighbouring stages, waited for (Megatron's _communicate).
  void Pipeline(const std::string& label, std::vector<coll::Transfer> transfers) {
    if (transfers.empty()) return;
    Wait(Push(TransfersOp(it_, label, std::move(transfers), kPipelineSlot, kPpStream, mb_)));
  }

  uint64_t PipelineBytes() const { return sp_ ? activation_ / t_ : activation_; }
  coll::Transfer SendNext() const { return {StepKind::kSend, st_.stage + 1, PipelineBytes()}; }
  coll::Transfer RecvNext() const { return {StepKind::kRecv, st_.stage + 1, PipelineBytes()}; }
  coll::Transfer SendPrev() const { return {StepKind::kSend, st_.stage - 1, PipelineBytes()}; }
  coll::Transfer RecvPrev() const { return {StepKind::kRecv, st_.stage - 1, PipelineBytes()}; }

  // --- gradients and parameters per layer ---------------------------------------------------

  // Bytes of gradients (and parameters, in parameter_bytes) this rank holds per stage layer,
  // dense parts (reduced over the data-parallel group) and experts (over the expert-data
  // group). The input embedding rides with the stage's lowest layer (its gradient is ready
  // last), the untied output layer with its highest (ready first).
  void PlanGradients() {
    const TransformerShape& s = c_.shape;
    for (int i = 0; i < st_.layers; ++i) {
      uint64_t dense = (s.LayerParameters() - s.ExpertParameters()) / t_;
      if (first_ && i == 0) dense += s.EmbeddingParameters() / t_;
      if (last_ && i == st_.layers - 1) dense += (s.OutputParameters() + s.hidden) / t_;
      dense_params_.push_back(dense);
      expert_params_.push_back(s.ExpertParameters() / e_);
    }
    auto bucket = [this](const std::vector<uint64_t>& params, int group) {
      std::vector<uint64_t> bytes;
      for (uint64_t p : params) bytes.push_back(p * c_.gradient_bytes);
      if (group == 1 || bytes.empty()) return std::vector<GradientBucket>{};
      return AssignGradientBuckets(bytes, c_.bucket_bytes, c_.bucket_bytes, BucketClosing::kAtCap);
    };
    dense_buckets_ = bucket(dense_params_, d_);
    expert_buckets_ =
        c_.shape.IsMoe() ? bucket(expert_params_, d_ / e_) : std::vector<GradientBucket>{};
  }

  // The gradient reduction of one bucket: all-reduce (ddp) or reduce-scatter (ZeRO).
  void ReduceBucket(const std::string& what, const GradientBucket& bucket, int slot) {
    const bool zero = c_.data_parallel_mode != DataParallelMode::kDdp;
    Push(CollectiveOp(
        it_,
        what + " grads L" + std::to_string(st_.first_layer + bucket.last_ready_layer) +
            (zero ? " rs" : " ar"),
        zero ? Coll::kReduceScatter : Coll::kAllReduce, bucket.bytes, slot, kDpStream));
  }

  // Buckets whose lowest layer is stage layer `i` close after its backward.
  void CloseBuckets(int i) {
    for (const GradientBucket& b : dense_buckets_) {
      if (b.last_ready_layer == i) ReduceBucket("dp", b, kDataSlot);
    }
    for (const GradientBucket& b : expert_buckets_) {
      if (b.last_ready_layer == i) ReduceBucket("edp", b, kExpertDataSlot);
    }
  }

  // --- FSDP ---------------------------------------------------------------------------------

  void FsdpGather(char pass, int i) {
    if (d_ > 1) {
      fsdp_gathers_[{pass, i}] =
          Push(CollectiveOp(it_, Mb(pass) + L(st_.first_layer + i) + " fsdp ag", Coll::kAllGather,
                            dense_params_[i] * c_.parameter_bytes, kDataSlot, kDpStream, mb_));
    }
  }

  // Before stage layer i's compute: the next layer's parameters are gathered ahead (one
  // layer of prefetch, as FSDP's default), and this layer's must be there.
  void FsdpBeforeLayer(char pass, int i, int next) {
    if (c_.data_parallel_mode != DataParallelMode::kFsdp || d_ == 1) return;
    if (next >= 0 && next < st_.layers) FsdpGather(pass, next);
    Wait(fsdp_gathers_.at({pass, i}));
  }

  // --- one micro-batch ----------------------------------------------------------------------

  // The core attention of one micro-batch on this rank (scores, softmax, values: its heads).
  double CoreAttentionSeconds() const {
    return c_.compute.Seconds(ComputeKind::kAttention,
                              tokens_ * c_.shape.AttentionScoreFlopsPerToken() / t_);
  }

  // Stage layer i's forward, as the forward pass ('F') runs it or as a full recomputation ('R')
  // runs it again before the layer's backward: the same compute and communication, on the
  // parameters the backward has gathered already (FSDP).
  void LayerForward(int i, char pass = 'F') {
    const int layer = st_.first_layer + i;
    const std::string name = Mb(pass) + L(layer);
    if (pass == 'F') FsdpBeforeLayer('F', i, i + 1);
    TpBefore(name + " attn");
    const TransformerShape& s = c_.shape;
    Compute(name + " attn",
            Matmul(tokens_ * s.AttentionLinearFlopsPerToken() / t_) + CoreAttentionSeconds());
    TpAfter(name + " attn");
    if (s.IsMoe()) {
      MoeForward(i, name);
      return;
    }
    TpBefore(name + " mlp");
    Compute(name + " mlp", Matmul(tokens_ * s.MlpFlopsPerToken() / t_));
    TpAfter(name + " mlp");
  }

  void LayerBackward(int i) {
    const int layer = st_.first_layer + i;
    const std::string name = Mb('B') + L(layer);
    const double ratio = c_.backward_to_forward;
    FsdpBeforeLayer('B', i, i - 1);
    if (c_.recompute == Recompute::kFull) LayerForward(i, 'R');
    const TransformerShape& s = c_.shape;
    if (s.IsMoe()) {
      MoeBackward(i, name);
    } else {
      TpBefore(name + " mlp");
      Compute(name + " mlp", ratio * Matmul(tokens_ * s.MlpFlopsPerToken() / t_));
      TpAfter(name + " mlp");
    }
    TpBefore(name + " attn");
    // Selective recomputation redoes the core attention, which needs no communication: it
    // sits between the column-parallel QKV and the row-parallel projection.
    if (c_.recompute == Recompute::kSelective) {
      Compute(name + " attn recompute", CoreAttentionSeconds());
    }
    Compute(name + " attn", ratio * (Matmul(tokens_ * s.AttentionLinearFlopsPerToken() / t_) +
                                     CoreAttentionSeconds()));
    TpAfter(name + " attn");
    if (c_.data_parallel_mode == DataParallelMode::kFsdp && d_ > 1) {
      Push(CollectiveOp(it_, name + " fsdp rs", Coll::kReduceScatter,
                        dense_params_[i] * c_.gradient_bytes, kDataSlot, kDpStream, mb_));
    }
    const bool overlapped = c_.data_parallel_mode == DataParallelMode::kDdp ||
                            c_.data_parallel_mode == DataParallelMode::kZero2;
    if (overlapped && mb_ == last_backward_) CloseBuckets(i);
  }

  // Tokens each tensor-parallel rank routes: its sequence share with sequence parallelism
  // (Megatron-core needs it with tensor and expert parallelism together).
  double RoutedTokens() const { return sp_ ? tokens_ / t_ : tokens_; }

  void ExpertAllToAll(const std::string& label, const AllToAllCounts& counts) {
    if (e_ == 1) return;
    Wait(Push(AllToAllVOp(it_, label, counts, kExpertSlot, kEpStream, mb_)));
  }

  double ExpertSeconds(int i) const {
    const int layer = st_.first_layer + i;
    const double tokens =
        e_ == 1 ? RoutedTokens() * c_.shape.top_k
                : static_cast<double>(
                      (*st_.expert_tokens)[static_cast<size_t>(it_)][static_cast<size_t>(layer)]);
    return Matmul(tokens * c_.shape.MlpFlopsPerToken());
  }

  void MoeForward(int i, const std::string& name) {
    const int layer = st_.first_layer + i;
    Compute(name + " router", Matmul(RoutedTokens() * c_.shape.RouterFlopsPerToken()));
    ExpertAllToAll(name + " dispatch", Counts(st_.dispatch, layer));
    Compute(name + " experts", ExpertSeconds(i));
    ExpertAllToAll(name + " combine", Counts(st_.combine, layer));
  }

  void MoeBackward(int i, const std::string& name) {
    const int layer = st_.first_layer + i;
    const double ratio = c_.backward_to_forward;
    // Gradients retrace the combine (token owners to experts: the dispatch pattern), then the
    // dispatch (experts to owners: the combine pattern).
    ExpertAllToAll(name + " combine", Counts(st_.dispatch, layer));
    Compute(name + " experts", ratio * ExpertSeconds(i));
    ExpertAllToAll(name + " dispatch", Counts(st_.combine, layer));
    Compute(name + " router", ratio * Matmul(RoutedTokens() * c_.shape.RouterFlopsPerToken()));
  }

  AllToAllCounts Counts(const std::vector<std::vector<AllToAllCounts>>* table, int layer) const {
    return table == nullptr ? nullptr
                            : (*table)[static_cast<size_t>(it_)][static_cast<size_t>(layer)];
  }

  void Forward(int mb) {
    mb_ = mb;
    if (c_.data_parallel_mode == DataParallelMode::kFsdp) FsdpGather('F', 0);
    // The vocabulary-parallel embedding sums its shards: an all-reduce (a reduce-scatter with
    // sequence parallelism).
    if (first_) TpAfter(Mb('F') + " embedding");
    for (int i = 0; i < st_.layers; ++i) LayerForward(i);
    if (last_) {
      const std::string name = Mb('F') + " logits";
      TpBefore(name);
      Compute(name, Matmul(tokens_ * c_.shape.LogitsFlopsPerToken() / t_));
      // Vocabulary-parallel cross entropy: max, target logit and sum of exponentials, each an
      // all-reduce of one fp32 per token (Megatron's _VocabParallelCrossEntropy).
      const auto per_token = static_cast<uint64_t>(tokens_) * 4;
      for (const char* what : {" max", " target", " sum"}) {
        Tp(name + what, Coll::kAllReduce, per_token);
      }
    }
  }

  void Backward(int mb) {
    mb_ = mb;
    if (c_.data_parallel_mode == DataParallelMode::kFsdp) FsdpGather('B', st_.layers - 1);
    if (last_) {
      const std::string name = Mb('B') + " logits";
      Compute(name, c_.backward_to_forward * Matmul(tokens_ * c_.shape.LogitsFlopsPerToken() / t_));
      TpAfter(name);
    }
    for (int i = st_.layers - 1; i >= 0; --i) LayerBackward(i);
    if (first_) TpBefore(Mb('B') + " embedding");
  }

  // --- schedules ----------------------------------------------------------------------------

  void GPipe() {
    last_backward_ = 0;  // backwards run in reverse micro-batch order
    for (int i = 0; i < m_; ++i) {
      mb_ = i;
      if (!first_) Pipeline(Mb('F') + " recv", {RecvPrev()});
      Forward(i);
      if (!last_) Pipeline(Mb('F') + " send", {SendNext()});
    }
    for (int i = m_ - 1; i >= 0; --i) {
      mb_ = i;
      if (!last_) Pipeline(Mb('B') + " recv", {RecvNext()});
      Backward(i);
      if (!first_) Pipeline(Mb('B') + " send", {SendPrev()});
    }
  }

  // Megatron-LM's forward_backward_pipelining_without_interleaving.
  void OneFOneB() {
    last_backward_ = m_ - 1;
    const int warmup = std::min(p_ - st_.stage - 1, m_);
    const int steady = m_ - warmup;
    for (int i = 0; i < warmup; ++i) {
      mb_ = i;
      if (!first_) Pipeline(Mb('F') + " recv", {RecvPrev()});
      Forward(i);
      if (!last_) Pipeline(Mb('F') + " send", {SendNext()});
    }
    if (steady > 0 && !first_) {
      mb_ = warmup;
      Pipeline(Mb('F') + " recv", {RecvPrev()});
    }
    for (int k = 0; k < steady; ++k) {
      const int f = warmup + k;
      Forward(f);
      // send_forward_recv_backward: the activation out, the gradient of micro-batch k in.
      mb_ = f;
      if (!last_)
        Pipeline(Mb('F') + " send B" + std::to_string(k) + " recv", {SendNext(), RecvNext()});
      Backward(k);
      mb_ = k;
      if (k == steady - 1) {
        if (!first_) Pipeline(Mb('B') + " send", {SendPrev()});
      } else if (!first_) {
        // send_backward_recv_forward: the gradient out, the next activation in.
        Pipeline(Mb('B') + " send F" + std::to_string(f + 1) + " recv", {SendPrev(), RecvPrev()});
      }
    }
    for (int i = steady; i < m_; ++i) {
      mb_ = i;
      if (!last_) Pipeline(Mb('B') + " recv", {RecvNext()});
      Backward(i);
      if (!first_) Pipeline(Mb('B') + " send", {SendPrev()});
    }
  }

  // --- end of the iteration -----------------------------------------------------------------

  void Finish() {
    mb_ = -1;
    if (c_.data_parallel_mode == DataParallelMode::kZero1) {
      for (int i = st_.layers - 1; i >= 0; --i) CloseBuckets(i);
    }
    Push(WaitStreamOp(it_, kDpStream));
    const TransformerShape& s = c_.shape;
    if (s.tied_embeddings && p_ > 1 && (first_ || last_)) {
      Wait(Push(CollectiveOp(it_, "embedding grads ar", Coll::kAllReduce,
                             static_cast<uint64_t>(s.vocab) * s.hidden / t_ * c_.gradient_bytes,
                             kEmbeddingSlot, kDpStream)));
    }
    if (t_ * p_ > 1) {
      // clip_grad: the squared norms of every model-parallel shard, one fp32 (Megatron's
      // get_grad_norm_fp32 all-reduces over the model-parallel group).
      Wait(Push(
          CollectiveOp(it_, "grad norm ar", Coll::kAllReduce, 4, kModelParallelSlot, kDpStream)));
    }
    Compute("optimizer", c_.optimizer_s);
    const bool zero = c_.data_parallel_mode == DataParallelMode::kZero1 ||
                      c_.data_parallel_mode == DataParallelMode::kZero2;
    if (zero) {
      // The updated parameter shards, gathered bucket by bucket for the next forward.
      auto gather = [this](const std::vector<GradientBucket>& buckets, int slot, const char* what) {
        for (const GradientBucket& b : buckets) {
          Push(CollectiveOp(it_,
                            std::string(what) + " params L" +
                                std::to_string(st_.first_layer + b.last_ready_layer) + " ag",
                            Coll::kAllGather, b.bytes / c_.gradient_bytes * c_.parameter_bytes,
                            slot, kDpStream));
        }
      };
      gather(dense_buckets_, kDataSlot, "dp");
      gather(expert_buckets_, kExpertDataSlot, "edp");
      Push(WaitStreamOp(it_, kDpStream));
    }
  }

  const TransformerConfig& c_;
  const StageContext& st_;
  const int t_, p_, d_, e_, m_;
  const bool first_, last_, sp_;
  const double tokens_;        // tokens of one micro-batch
  const uint64_t activation_;  // bytes of one micro-batch's activations, b x s x h
  std::vector<uint64_t> dense_params_;
  std::vector<uint64_t> expert_params_;
  std::vector<GradientBucket> dense_buckets_;
  std::vector<GradientBucket> expert_buckets_;
  std::map<std::pair<char, int>, uint32_t> fsdp_gathers_;  // (pass, stage layer) -> op
  RankProgram program_;
  int it_ = 0;
  int mb_ = -1;
  int last_backward_ = 0;
};

}  // namespace

RankProgram MakeStageProgram(const TransformerConfig& config, const StageContext& stage) {
  return StageBuilder(config, stage).Build();
}

}  // namespace nbox::work
