#include "workloads/transformer_program.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "workloads/even_split.h"
#include "workloads/gradient_buckets.h"
#include "workloads/ops.h"
#include "workloads/transformer_kernels.h"

namespace nbox::work {
namespace {

using Coll = coll::CollectiveOp;  // the operation; CollectiveOp() builds the op that issues it
using coll::StepKind;

// The layers a rank runs as one pipeline stage: all of its stage's, or with interleaving one of
// its v chunks, virtual stage j p + stage of p v (Narayanan et al. 2021, Sec. 2.2.2), with the
// gradient buckets of its layers (each chunk is a model of its own to DDP, as in Megatron).
struct ModelChunk {
  int index = 0;        // j
  int first_layer = 0;  // model layers first_layer .. first_layer + layers - 1
  int layers = 0;
  bool first = false;                  // virtual stage 0: the embedding
  bool last = false;                   // the last virtual stage: the logits and the loss
  std::vector<uint64_t> dense_params;  // per chunk layer, this rank's share
  std::vector<uint64_t> expert_params;
  std::vector<GradientBucket> dense_buckets;
  std::vector<GradientBucket> expert_buckets;
  // overlap_param_gather, this iteration: the micro-batch whose forward waits for the gathers
  // (the chunk's first; -1 before it), and per bucket list (dense, experts) how many buckets in
  // forward order it has waited for and the gather issued last.
  int gathering_microbatch = -1;
  size_t gathers_waited[2] = {0, 0};
  uint32_t last_gather[2] = {0, 0};
};

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
        cp_(config.parallel.context),
        dc_(config.parallel.data * config.parallel.context),
        v_(config.virtual_stages),
        first_stage_(stage.stage == 0),
        last_stage_(stage.stage == config.parallel.pipeline - 1),
        sp_(config.sequence_parallel && config.parallel.tensor > 1),
        tokens_(static_cast<double>(config.micro_batch) * config.shape.seq_len /
                config.parallel.context),
        activation_(static_cast<uint64_t>(config.micro_batch) * config.shape.seq_len /
                    static_cast<uint64_t>(config.parallel.context) * config.shape.hidden *
                    config.activation_bytes) {
    MakeChunks();
    for (ModelChunk& chunk : chunks_) PlanGradients(chunk);
    ch_ = &chunks_.front();
  }

  StageParameters Parameters() const {
    StageParameters sum;
    for (const ModelChunk& chunk : chunks_) {
      for (uint64_t p : chunk.dense_params) sum.dense += p;
      for (uint64_t p : chunk.expert_params) sum.experts += p;
    }
    return sum;
  }

  RankProgram Build() {
    program_.iterations = c_.iterations;
    const StageSchedule schedule = ScheduleStage(PipelineShapeOf(c_, st_.stage));
    last_backward_ = schedule.last_backward;
    for (it_ = 0; it_ < c_.iterations; ++it_) {
      program_.ops.push_back(MarkerOp(OpKind::kIterationBegin, it_));
      StartParameterGathers();
      for (const PipelineStep& step : schedule.steps) Run(step);
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

  void Compute(std::string label, const ComputeCost& cost) {
    if (cost.total() <= 0) return;
    Op op = ComputeOp(it_, std::move(label), cost.total(), mb_);
    op.cost = cost;
    Push(std::move(op));
  }

  // --- compute, per operation or by utilisation (compute_model.h) ---------------------------

  bool PerOperation() const { return c_.compute.mode == ComputeModel::Mode::kModel; }

  // GEMMs of a forward, and of their backward: per operation, each one's two gradient
  // products; by utilisation, backward_to_forward times the forward.
  ComputeCost Forward(const std::vector<Gemm>& gemms) const { return c_.compute.Gemms(gemms); }
  ComputeCost Backward(const std::vector<Gemm>& gemms) const {
    return PerOperation() ? c_.compute.Gemms(BackwardGemms(gemms))
                          : Forward(gemms) * c_.backward_to_forward;
  }

  // The memory-bound kernels of one layer part's forward or backward on this rank's tokens.
  ComputeCost MemoryPasses(double bytes_per_token, int kernels, bool backward) const {
    const double factor = backward ? kBackwardMemoryFactor : 1;
    return c_.compute.MemoryBound(factor * bytes_per_token * tokens_,
                                  static_cast<int>(factor) * kernels);
  }
  LayerMemoryPasses Passes(int mlp_width) const {
    return LayerMemory(c_.shape, t_, sp_, mlp_width, c_.activation_bytes);
  }
  ComputeCost AttentionMemory(bool backward) const {
    const LayerMemoryPasses p = Passes(c_.shape.DenseFfn());
    return MemoryPasses(p.attention_bytes_per_token, p.attention_kernels, backward);
  }
  ComputeCost MlpMemory(int width, bool backward) const {
    const LayerMemoryPasses p = Passes(width);
    return MemoryPasses(p.mlp_bytes_per_token, p.mlp_kernels, backward);
  }

  // The output layer (in BF16: Megatron's own linear layer, outside Transformer Engine's FP8)
  // and, per operation, the cross entropy over this rank's logits.
  ComputeCost LogitsForward() const {
    return c_.compute.InBf16().Gemms({LogitsGemm(c_.shape, tokens_, t_)}) + Loss(false);
  }
  ComputeCost LogitsBackward() const {
    const std::vector<Gemm> gemm = {LogitsGemm(c_.shape, tokens_, t_)};
    const ComputeCost gemms = PerOperation() ? c_.compute.InBf16().Gemms(BackwardGemms(gemm))
                                             : Forward(gemm) * c_.backward_to_forward;
    return gemms + Loss(true);
  }
  ComputeCost Loss(bool backward) const {
    if (!PerOperation()) return {};
    const CrossEntropyPasses loss = CrossEntropyPerLogit(c_.cross_entropy);
    const double logits = tokens_ * c_.shape.vocab / t_;
    return backward ? c_.compute.MemoryBound(loss.backward_bytes_per_logit * logits,
                                             loss.backward_kernels)
                    : c_.compute.MemoryBound(loss.forward_bytes_per_logit * logits,
                                             loss.forward_kernels);
  }

  std::vector<Gemm> AttentionLinear() const { return AttentionLinearGemms(c_.shape, tokens_, t_); }
  std::vector<Gemm> DenseMlp() const {
    return MlpGemms(c_.shape, tokens_, t_, c_.shape.DenseFfn());
  }

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

  // --- tensor-parallel communication overlap (Transformer Engine's userbuffers) -------------

  bool OverlapsTp() const { return sp_ && c_.tp_comm_overlap; }

  // A GEMM's two backward products apart: the input's gradient and the weight's (by
  // utilisation, half of backward_to_forward times the forward each).
  ComputeCost DataGradient(const Gemm& g) const {
    return PerOperation() ? c_.compute.Gemms({BackwardGemms({g})[0]})
                          : Forward({g}) * (c_.backward_to_forward / 2);
  }
  ComputeCost WeightGradient(const Gemm& g) const {
    return PerOperation() ? c_.compute.Gemms({BackwardGemms({g})[1]})
                          : Forward({g}) * (c_.backward_to_forward / 2);
  }

  // A GEMM's cost while a Transformer Engine communication kernel holds kOverlapSms of the SMs
  // (its pipelined and bulk overlaps; set_sm_margin): compute-bound work slows by the share of
  // SMs it lost. By utilisation the SMs are not known and nothing changes.
  ComputeCost OnSmsLeft(ComputeCost cost) const {
    if (!PerOperation()) return cost;
    const double sms = c_.compute.gpu->sms;
    cost.gemm_s *= sms / (sms - kOverlapSms);
    return cost;
  }

  // A sequence-parallel block with its all-gather beside its leading GEMM and its
  // reduce-scatter beside its trailing GEMMs, as Transformer Engine's userbuffers run them by
  // default (transformer_engine/pytorch/module/base.py, initialize_ub): the all-gather as a
  // ring exchange over the copy engines in t chunks, so the leading GEMM's own chunk (1/t of
  // it) needs nothing gathered and the rest runs while the other chunks arrive; `middle` issues
  // what lies between; `before` must be done before the reduction can start, and `beside`
  // runs with it, on the SMs the reduction leaves (OnSmsLeft).
  void OverlappedTpBlock(const std::string& name, const ComputeCost& lead,
                         const std::function<void()>& middle, const ComputeCost& before,
                         const ComputeCost& beside) {
    const double own = 1.0 / t_;
    const uint32_t gather = Push(CollectiveOp(it_, name + " ag", Coll::kAllGather, activation_,
                                              kTensorSlot, kTpStream, mb_));
    Compute(name + " lead", lead * (1 - own));
    Wait(gather);
    Compute(name + " lead chunk", lead * own);
    middle();
    Compute(name + " before rs", before);
    const uint32_t reduce = Push(CollectiveOp(it_, name + " rs", Coll::kReduceScatter, activation_,
                                              kTensorSlot, kTpStream, mb_));
    Compute(name + " beside rs", OnSmsLeft(beside));
    Wait(reduce);
  }

  // The forward's trailing GEMM beside its reduce-scatter, pipelined in kPipelineSplits chunks:
  // the first chunk before the reduction starts, the rest beside it; all of them on the SMs the
  // reduction's kernel leaves (set_sm_margin holds them for the whole GEMM).
  void OverlappedTpForward(const std::string& name, const ComputeCost& lead,
                           const std::function<void()>& middle, const ComputeCost& tail) {
    const ComputeCost slowed = OnSmsLeft(tail);
    OverlappedTpBlock(name, lead, middle, slowed * (1.0 / kPipelineSplits),
                      tail * (1 - 1.0 / kPipelineSplits));
  }

  // "F3", or "F3c1" for chunk 1's with interleaving.
  std::string Mb(char pass) const { return PassLabel(pass, mb_, ch_->index, v_); }
  static std::string L(int layer) { return " L" + std::to_string(layer); }

  uint64_t PipelineBytes() const { return sp_ ? activation_ / t_ : activation_; }

  // One step of the stage's schedule: a micro-batch's forward or backward on one chunk, or a
  // point-to-point group with the neighbouring stages, waited for (Megatron's _communicate).
  // With interleaving the last stage's next is the first (its chunk j feeds chunk j + 1 there),
  // as Megatron's ring of pipeline ranks.
  void Run(const PipelineStep& step) {
    switch (step.kind) {
      case PipelineStep::Kind::kForward:
        ch_ = &chunks_[static_cast<size_t>(step.chunk)];
        Forward(step.microbatch);
        return;
      case PipelineStep::Kind::kBackward:
        ch_ = &chunks_[static_cast<size_t>(step.chunk)];
        Backward(step.microbatch);
        return;
      case PipelineStep::Kind::kExchange:
        break;
    }
    mb_ = step.microbatch;
    const int next = (st_.stage + 1) % p_;
    const int prev = (st_.stage + p_ - 1) % p_;
    const uint64_t bytes = PipelineBytes();
    std::vector<coll::Transfer> transfers;
    if (step.send_next) transfers.push_back({StepKind::kSend, next, bytes});
    if (step.send_prev) transfers.push_back({StepKind::kSend, prev, bytes});
    if (step.recv_prev) transfers.push_back({StepKind::kRecv, prev, bytes});
    if (step.recv_next) transfers.push_back({StepKind::kRecv, next, bytes});
    Wait(Push(TransfersOp(it_, step.label, std::move(transfers), kPipelineSlot, kPpStream, mb_)));
  }

  // --- gradients and parameters per layer ---------------------------------------------------

  // Bytes of gradients (and parameters, in parameter_bytes) this rank holds per stage layer,
  // dense parts (reduced over the data-parallel group) and experts (over the expert-data
  // group). The input embedding rides with the stage's lowest layer (its gradient is ready
  // last), the untied output layer with its highest (ready first). Megatron splits the
  // matrices and the vocabulary over the tensor ranks and gives each the norms, routers and
  // position table whole.
  void PlanGradients(ModelChunk& chunk) {
    const TransformerShape& s = c_.shape;
    for (int i = 0; i < chunk.layers; ++i) {
      const int layer = chunk.first_layer + i;
      const uint64_t whole = s.ReplicatedLayerParameters(layer);
      uint64_t dense = (s.LayerParameters(layer) - s.ExpertParameters(layer) - whole) / t_ + whole;
      if (chunk.first && i == 0) {
        dense += (s.EmbeddingParameters() - s.PositionParameters()) / t_ + s.PositionParameters();
      }
      if (chunk.last && i == chunk.layers - 1) dense += s.OutputParameters() / t_ + s.hidden;
      chunk.dense_params.push_back(dense);
      chunk.expert_params.push_back(s.ExpertParameters(layer) / e_);
    }
    auto bucket = [this](const std::vector<uint64_t>& params, int group) {
      std::vector<uint64_t> bytes;
      for (uint64_t p : params) bytes.push_back(p * c_.gradient_bytes);
      if (group == 1 || bytes.empty()) return std::vector<GradientBucket>{};
      return WithoutEmptyLayers(
          AssignGradientBuckets(bytes, c_.bucket_bytes, c_.bucket_bytes, BucketClosing::kAtCap),
          bytes);
    };
    chunk.dense_buckets = bucket(chunk.dense_params, dc_);
    chunk.expert_buckets = c_.shape.IsMoe() ? bucket(chunk.expert_params, d_ / e_ * cp_)
                                            : std::vector<GradientBucket>{};
  }

  // The stage's chunks (ChunkLayersOf); the first holds the embedding on stage 0, the last the
  // output layer on stage p - 1.
  void MakeChunks() {
    const std::vector<LayerRange> ranges = ChunkLayersOf(c_, st_.stage);
    for (int j = 0; j < static_cast<int>(ranges.size()); ++j) {
      const int virtual_stage = j * p_ + st_.stage;
      ModelChunk& chunk = chunks_.emplace_back();
      chunk.index = j;
      chunk.first_layer = ranges[static_cast<size_t>(j)].first;
      chunk.layers = ranges[static_cast<size_t>(j)].count;
      chunk.first = virtual_stage == 0;
      chunk.last = virtual_stage == p_ * v_ - 1;
    }
  }

  // The gradient reduction of one bucket: all-reduce (ddp) or reduce-scatter (ZeRO).
  void ReduceBucket(const std::string& what, const GradientBucket& bucket, int slot) {
    const bool zero = c_.data_parallel_mode != DataParallelMode::kDdp;
    Push(CollectiveOp(
        it_,
        what + " grads L" + std::to_string(ch_->first_layer + bucket.last_ready_layer) +
            (zero ? " rs" : " ar"),
        zero ? Coll::kReduceScatter : Coll::kAllReduce, bucket.bytes, slot, kDpStream));
  }

  // Whether buckets are reduced as the last micro-batch's backward closes them, unless
  // overlap_grad_reduce says otherwise: for ddp and zero2 (PyTorch's DDP and ZeRO-2 reduce
  // from the autograd hooks), not for zero1 (Megatron-core's default). fsdp reduces layer by
  // layer, neither way.
  bool OverlapsGradientReduction() const {
    switch (c_.data_parallel_mode) {
      case DataParallelMode::kDdp:
      case DataParallelMode::kZero2:
        return c_.overlap_grad_reduce.value_or(true);
      case DataParallelMode::kZero1:
        return c_.overlap_grad_reduce.value_or(false);
      case DataParallelMode::kFsdp:
        return false;
    }
    return false;
  }

  // Buckets whose lowest layer is stage layer `i` close after its backward.
  void CloseBuckets(int i) {
    for (const GradientBucket& b : ch_->dense_buckets) {
      if (b.last_ready_layer == i) ReduceBucket("dp", b, kDataSlot);
    }
    for (const GradientBucket& b : ch_->expert_buckets) {
      if (b.last_ready_layer == i) ReduceBucket("edp", b, kExpertDataSlot);
    }
  }

  // --- FSDP ---------------------------------------------------------------------------------

  void FsdpGather(char pass, int i) {
    if (dc_ > 1) {
      fsdp_gathers_[{pass, i}] =
          Push(CollectiveOp(it_, Mb(pass) + L(ch_->first_layer + i) + " fsdp ag", Coll::kAllGather,
                            ch_->dense_params[i] * c_.parameter_bytes, kDataSlot, kDpStream, mb_));
    }
  }

  // Before stage layer i's compute: the next layer's parameters are gathered ahead (one
  // layer of prefetch, as FSDP's default), and this layer's must be there.
  void FsdpBeforeLayer(char pass, int i, int next) {
    if (c_.data_parallel_mode != DataParallelMode::kFsdp || dc_ == 1) return;
    if (next >= 0 && next < ch_->layers) FsdpGather(pass, next);
    Wait(fsdp_gathers_.at({pass, i}));
  }

  // --- overlapped parameter gathers (distributed optimizer) ---------------------------------

  // The gathers of iteration it_ - 1's updated parameters run in iteration it_'s first forward of
  // each chunk; iteration 0 starts from whole parameters.
  bool OverlapsParameterGathers() const { return c_.overlap_param_gather && it_ > 0; }

  // The chunk's buckets of kind `kind` (0 dense, 1 experts) in forward order: issue order
  // reversed (bucket 0 holds the last layers).
  const GradientBucket* BucketInForwardOrder(int kind, size_t k) const {
    const auto& buckets = kind == 0 ? ch_->dense_buckets : ch_->expert_buckets;
    return k < buckets.size() ? &buckets[buckets.size() - 1 - k] : nullptr;
  }

  // The all-gather of one bucket's updated parameter shards (kind 0 dense, 1 experts).
  uint32_t PushParameterGather(const GradientBucket& b, int kind) {
    return Push(CollectiveOp(it_,
                             std::string(kind == 0 ? "dp" : "edp") + " params L" +
                                 std::to_string(ch_->first_layer + b.last_ready_layer) + " ag",
                             Coll::kAllGather, b.bytes / c_.gradient_bytes * c_.parameter_bytes,
                             kind == 0 ? kDataSlot : kExpertDataSlot, kDpStream));
  }

  // Issues the all-gather of the k-th bucket in forward order, if there is one.
  void IssueParameterGather(int kind, size_t k) {
    if (const GradientBucket* b = BucketInForwardOrder(kind, k)) {
      ch_->last_gather[kind] = PushParameterGather(*b, kind);
    }
  }

  // The chunk's first buckets (its first layer's, with the embedding), dense and experts.
  void IssueFirstParameterGathers() {
    ch_->gathers_waited[0] = ch_->gathers_waited[1] = 0;
    IssueParameterGather(0, 0);
    IssueParameterGather(1, 0);
  }

  // At the iteration's start: the first chunk's first buckets, as Megatron's distributed
  // optimizer issues them in zero_grad before the forward; a later chunk's wait for its first
  // forward (as the interleaved schedule's param_sync_func issues them, ahead of that chunk).
  void StartParameterGathers() {
    for (ModelChunk& chunk : chunks_) chunk.gathering_microbatch = -1;
    if (!OverlapsParameterGathers()) return;
    ch_ = &chunks_.front();
    IssueFirstParameterGathers();
  }

  // Before stage layer i's first forward this iteration: wait for the gather of the bucket that
  // begins at it, then issue the next one (Megatron's finish_param_sync dispatches the next
  // bucket's gather when the forward waits on one).
  void GatheredBeforeLayer(int i) {
    if (!OverlapsParameterGathers() || mb_ != ch_->gathering_microbatch) return;
    for (int kind : {0, 1}) {
      size_t& k = ch_->gathers_waited[kind];
      const GradientBucket* b = BucketInForwardOrder(kind, k);
      if (b == nullptr || b->last_ready_layer != i) continue;
      Wait(ch_->last_gather[kind]);
      IssueParameterGather(kind, ++k);
    }
  }

  // --- one micro-batch ----------------------------------------------------------------------

  // The core attention of one micro-batch on this rank (scores, softmax, values: its heads),
  // its s / c queries against the whole sequence's keys; its backward by utilisation is
  // backward_to_forward times the forward.
  ComputeCost CoreAttention(bool backward) const {
    const AttentionCall call =
        work::CoreAttention(c_.shape, c_.micro_batch, tokens_ / c_.micro_batch, c_.shape.seq_len,
                            t_, c_.flash_attention);
    if (PerOperation()) return c_.compute.Attention(call, backward);
    const ComputeCost forward = c_.compute.Attention(call, false);
    return backward ? forward * c_.backward_to_forward : forward;
  }

  // --- context parallelism -------------------------------------------------------------------

  // Bytes of this rank's keys and values for one micro-batch: its s / c tokens, the key/value
  // heads of its tensor-parallel share, a key and a value each (h / heads elements apiece; with
  // MLA the up-projected ones, QkHeadDim and VHeadDim). A share below one head (t above the
  // key/value heads, which Megatron does not allow) is counted as one whole head.
  uint64_t KeyValueBytes() const {
    const auto heads = static_cast<uint64_t>((c_.shape.KvHeads() + t_ - 1) / t_);
    return static_cast<uint64_t>(tokens_) * heads *
           static_cast<uint64_t>(c_.shape.QkHeadDim() + c_.shape.VHeadDim()) * c_.activation_bytes;
  }

  // The ranks of the context ring (kContextSlot) and this rank's place in it: all c, or with
  // a2a+p2p the c / a blocks' ranks at this rank's place in its block.
  bool Hierarchical() const { return c_.context_parallel_comm == ContextParallelComm::kA2aP2p; }
  int RingSize() const { return Hierarchical() ? cp_ / c_.context_a2a : cp_; }
  int RingPosition() const { return Hierarchical() ? st_.context / c_.context_a2a : st_.context; }

  // The core attention with the sequence over the ring's n ranks, as Megatron-core runs it
  // (Transformer Engine's ring of point-to-point exchanges): n steps, each on the keys and values
  // of one rank's chunk, and n - 1 exchanges around the ring, each sending the block in hand to
  // the next rank and receiving the next block from the previous one while the step before it
  // computes. The forward moves keys and values; the backward keys, values and their gradients
  // (`bytes` twice the keys and values).
  void ContextRing(const std::string& name, const ComputeCost& cost, uint64_t bytes) {
    const int n = RingSize();
    const int next = (RingPosition() + 1) % n;
    const int prev = (RingPosition() + n - 1) % n;
    for (int k = 0; k < n; ++k) {
      const bool exchange = k < n - 1;
      uint32_t op = 0;
      if (exchange) {
        op = Push(TransfersOp(it_, name + " kv" + std::to_string(k),
                              {{StepKind::kSend, next, bytes}, {StepKind::kRecv, prev, bytes}},
                              kContextSlot, kCpStream, mb_));
      }
      Compute(name + " block" + std::to_string(k), cost * (1.0 / n));
      if (exchange) Wait(op);
    }
  }

  // A context-parallel collective the attention waits for, over all c ranks or (a2a+p2p) the
  // rank's all-to-all block.
  void Cp(const std::string& label, Coll op, uint64_t bytes, int slot = kContextSlot) {
    Wait(Push(CollectiveOp(it_, label, op, bytes, slot, kCpStream, mb_)));
  }

  // DeepSpeed-Ulysses' all-to-alls (each rank's send buffer): its s / c tokens' queries, keys
  // and values of its tensor share of the heads, and the attention's output, h / t wide (with
  // MLA, of heads x v_head_dim and the up-projected widths). With
  // a2a+p2p the same buffers over the rank's block, which then holds a s / c tokens of 1 / a of
  // those heads: its ring blocks are KeyValueBytes() still.
  uint64_t QkvBytes() const {
    const TransformerShape& s = c_.shape;
    const auto elements = static_cast<uint64_t>(
        ((s.heads + s.KvHeads()) * s.QkHeadDim() + s.KvHeads() * s.VHeadDim()) / t_);
    return static_cast<uint64_t>(tokens_) * elements * c_.activation_bytes;
  }
  uint64_t AttentionOutputBytes() const {
    const auto width = static_cast<uint64_t>(c_.shape.heads * c_.shape.VHeadDim() / t_);
    return static_cast<uint64_t>(tokens_) * width * c_.activation_bytes;
  }

  // The core attention of a forward (or of its recomputation) with the sequence over c ranks,
  // as context_parallel_comm says: around the ring, after an all-gather of every rank's keys
  // and values, between Ulysses' all-to-alls (to a 1/c share of the heads for the whole
  // sequence, and back), or (a2a+p2p) around the ring across blocks between all-to-alls within
  // each block (Transformer Engine's hierarchical context parallelism: the all-to-alls on the
  // block's fast links, say NVLink, the ring across them).
  void CoreAttentionForward(const std::string& name) {
    const ComputeCost seconds = CoreAttention(false);
    if (cp_ == 1) {
      Compute(name, seconds);
      return;
    }
    switch (c_.context_parallel_comm) {
      case ContextParallelComm::kP2p:
        ContextRing(name, seconds, KeyValueBytes());
        return;
      case ContextParallelComm::kAllGather:
        Cp(name + " kv ag", Coll::kAllGather, cp_ * KeyValueBytes());
        Compute(name, seconds);
        return;
      case ContextParallelComm::kA2a:
        Cp(name + " qkv a2a", Coll::kAllToAll, QkvBytes());
        Compute(name, seconds);
        Cp(name + " out a2a", Coll::kAllToAll, AttentionOutputBytes());
        return;
      case ContextParallelComm::kA2aP2p:
        Cp(name + " qkv a2a", Coll::kAllToAll, QkvBytes(), kContextA2aSlot);
        ContextRing(name, seconds, KeyValueBytes());
        Cp(name + " out a2a", Coll::kAllToAll, AttentionOutputBytes(), kContextA2aSlot);
        return;
    }
  }

  // Its backward (c > 1): the ring passes keys, values and their gradients; the all-gather
  // variant gathers the keys and values again (a rank keeps only its own) and reduce-scatters
  // their gradients; Ulysses retraces its all-to-alls (a2a+p2p: around its ring).
  void CoreAttentionBackward(const std::string& name, const ComputeCost& seconds) {
    switch (c_.context_parallel_comm) {
      case ContextParallelComm::kP2p:
        ContextRing(name, seconds, 2 * KeyValueBytes());
        return;
      case ContextParallelComm::kAllGather:
        Cp(name + " kv ag", Coll::kAllGather, cp_ * KeyValueBytes());
        Compute(name, seconds);
        Cp(name + " dkv rs", Coll::kReduceScatter, cp_ * KeyValueBytes());
        return;
      case ContextParallelComm::kA2a:
        Cp(name + " out a2a", Coll::kAllToAll, AttentionOutputBytes());
        Compute(name, seconds);
        Cp(name + " qkv a2a", Coll::kAllToAll, QkvBytes());
        return;
      case ContextParallelComm::kA2aP2p:
        Cp(name + " out a2a", Coll::kAllToAll, AttentionOutputBytes(), kContextA2aSlot);
        ContextRing(name, seconds, 2 * KeyValueBytes());
        Cp(name + " qkv a2a", Coll::kAllToAll, QkvBytes(), kContextA2aSlot);
        return;
    }
  }

  // Stage layer i's forward, as the forward pass ('F') runs it or as a full recomputation ('R')
  // runs it again before the layer's backward: the same compute and communication, on the
  // parameters the backward has gathered already (FSDP).
  void LayerForward(int i, char pass = 'F') {
    const int layer = ch_->first_layer + i;
    const std::string name = Mb(pass) + L(layer);
    if (pass == 'F') {
      FsdpBeforeLayer('F', i, i + 1);
      if (i > 0) GatheredBeforeLayer(i);
    }
    const TransformerShape& s = c_.shape;
    if (OverlapsTp()) {
      // The QKV projection beside the all-gather, the output projection beside the
      // reduce-scatter; a latent attention's other projections in between.
      const std::vector<Gemm> gemms = AttentionLinear();
      const std::vector<Gemm> inner(gemms.begin() + 1, gemms.end() - 1);
      OverlappedTpForward(
          name + " attn", Forward({gemms.front()}),
          [&] {
            const ComputeCost rest = Forward(inner) + AttentionMemory(false);
            if (cp_ == 1) {
              Compute(name + " attn", rest + CoreAttention(false));
            } else {
              Compute(name + " attn", rest);
              CoreAttentionForward(name + " attn core");
            }
          },
          Forward({gemms.back()}));
    } else {
      LayerAttentionForward(name);
    }
    if (s.IsMoeLayer(layer)) {
      MoeForward(i, name);
      return;
    }
    if (OverlapsTp()) {
      const std::vector<Gemm> mlp = DenseMlp();
      OverlappedTpForward(
          name + " mlp", Forward({mlp.front()}),
          [&] { Compute(name + " mlp", MlpMemory(s.DenseFfn(), false)); }, Forward({mlp.back()}));
      return;
    }
    TpBefore(name + " mlp");
    Compute(name + " mlp", Forward(DenseMlp()) + MlpMemory(s.DenseFfn(), false));
    TpAfter(name + " mlp");
  }

  // The attention block's forward with its tensor-parallel collectives waited for around it.
  void LayerAttentionForward(const std::string& name) {
    TpBefore(name + " attn");
    const ComputeCost linear = Forward(AttentionLinear()) + AttentionMemory(false);
    if (cp_ == 1) {
      Compute(name + " attn", linear + CoreAttention(false));
    } else {
      // The projections first (serial on one stream, the sum is the same), then the ring.
      Compute(name + " attn", linear);
      CoreAttentionForward(name + " attn core");
    }
    TpAfter(name + " attn");
  }

  void LayerBackward(int i) {
    const int layer = ch_->first_layer + i;
    const std::string name = Mb('B') + L(layer);
    FsdpBeforeLayer('B', i, i - 1);
    if (c_.recompute == Recompute::kFull) LayerForward(i, 'R');
    const TransformerShape& s = c_.shape;
    if (s.IsMoeLayer(layer)) {
      MoeBackward(i, name);
    } else if (OverlapsTp()) {
      // The second projection's input gradient beside the all-gather of the output gradient;
      // the first's weight gradient beside the reduce-scatter of its input gradient (bulk).
      const std::vector<Gemm> mlp = DenseMlp();
      OverlappedTpBlock(
          name + " mlp", DataGradient(mlp.back()),
          [&] {
            Compute(name + " mlp", WeightGradient(mlp.back()) + MlpMemory(s.DenseFfn(), true));
          },
          DataGradient(mlp.front()), WeightGradient(mlp.front()));
    } else {
      TpBefore(name + " mlp");
      Compute(name + " mlp", Backward(DenseMlp()) + MlpMemory(s.DenseFfn(), true));
      TpAfter(name + " mlp");
    }
    if (OverlapsTp()) {
      const std::vector<Gemm> gemms = AttentionLinear();
      const std::vector<Gemm> inner(gemms.begin() + 1, gemms.end() - 1);
      OverlappedTpBlock(
          name + " attn", DataGradient(gemms.back()),
          [&] {
            if (c_.recompute == Recompute::kSelective) {
              CoreAttentionForward(name + " attn recompute");
            }
            const ComputeCost rest =
                WeightGradient(gemms.back()) + Backward(inner) + AttentionMemory(true);
            if (cp_ == 1) {
              Compute(name + " attn", rest + CoreAttention(true));
            } else {
              CoreAttentionBackward(name + " attn core", CoreAttention(true));
              Compute(name + " attn", rest);
            }
          },
          DataGradient(gemms.front()), WeightGradient(gemms.front()));
    } else {
      LayerAttentionBackward(name);
    }
    if (c_.data_parallel_mode == DataParallelMode::kFsdp && dc_ > 1) {
      Push(CollectiveOp(it_, name + " fsdp rs", Coll::kReduceScatter,
                        ch_->dense_params[i] * c_.gradient_bytes, kDataSlot, kDpStream, mb_));
    }
    if (OverlapsGradientReduction() && mb_ == last_backward_) CloseBuckets(i);
  }

  // The attention block's backward with its tensor-parallel collectives waited for around it.
  void LayerAttentionBackward(const std::string& name) {
    TpBefore(name + " attn");
    // Selective recomputation redoes the core attention, which needs no tensor-parallel
    // communication: it sits between the column-parallel QKV and the row-parallel projection.
    // With context parallelism it runs its ring again, as the checkpointed attention does.
    if (c_.recompute == Recompute::kSelective) CoreAttentionForward(name + " attn recompute");
    const ComputeCost linear = Backward(AttentionLinear()) + AttentionMemory(true);
    if (cp_ == 1) {
      Compute(name + " attn", linear + CoreAttention(true));
    } else {
      CoreAttentionBackward(name + " attn core", CoreAttention(true));
      Compute(name + " attn", linear);
    }
    TpAfter(name + " attn");
  }

  // Tokens each tensor-parallel rank routes: its sequence share with sequence parallelism
  // (Megatron-core needs it with tensor and expert parallelism together).
  double RoutedTokens() const { return sp_ ? tokens_ / t_ : tokens_; }

  // An expert all-to-all, and `beside` (compute of the shared expert's, or nothing) while it
  // runs; the compute stream then waits for it.
  void ExpertAllToAll(const std::string& label, const AllToAllCounts& counts,
                      const std::function<void()>& beside = {}) {
    const std::optional<uint32_t> op =
        e_ == 1 ? std::nullopt
                : std::optional<uint32_t>(
                      Push(AllToAllVOp(it_, label, counts, kExpertSlot, kEpStream, mb_)));
    if (beside) beside();
    if (op) Wait(*op);
  }

  // The routed experts' MLPs on the tokens this rank received (a grouped GEMM over its
  // experts, whole: experts are not split over the tensor ranks here).
  std::vector<Gemm> ExpertGemms(int i) const {
    const int layer = ch_->first_layer + i;
    const double tokens = static_cast<double>(
        (*st_.expert_tokens)[static_cast<size_t>(it_)][static_cast<size_t>(layer)]);
    return MlpGemms(c_.shape, tokens, 1, c_.shape.ffn);
  }
  std::vector<Gemm> Router() const { return {RouterGemm(c_.shape, RoutedTokens())}; }

  void MoeForward(int i, const std::string& name) {
    const int layer = ch_->first_layer + i;
    const bool overlap = SharedExpertOverlapped();
    Compute(name + " router", Forward(Router()));
    if (overlap) TpBefore(name + " shared");
    ExpertAllToAll(name + " dispatch", Counts(st_.dispatch, layer),
                   SharedExpertBeside(name + " shared fc1", false, kSharedFirst));
    Compute(name + " experts", Forward(ExpertGemms(i)) + MlpMemory(c_.shape.ffn, false));
    ExpertAllToAll(name + " combine", Counts(st_.combine, layer),
                   SharedExpertBeside(name + " shared fc2", false, kSharedSecond));
    if (overlap) {
      TpAfter(name + " shared");
    } else {
      SharedExpert(name, false);
    }
  }

  // Which of the shared expert's projections: its first (gate and up, or the one up), its
  // second (down), or both.
  enum SharedExpertPart { kSharedFirst, kSharedSecond, kSharedBoth };

  // The shared expert: a dense MLP on the rank's tokens beside the routed experts, split over
  // the tensor ranks as the dense layer's is (Megatron-core's SharedExpertMLP), its output added
  // to theirs; its forward or its backward.
  void SharedExpert(const std::string& name, bool backward) {
    if (c_.shape.shared_expert_ffn == 0) return;
    TpBefore(name + " shared");
    SharedExpertCompute(name + " shared", backward, kSharedBoth);
    TpAfter(name + " shared");
  }

  // With shared_expert_overlap (Megatron-core's moe_shared_expert_overlap) the shared expert's
  // first projection runs while the dispatch's all-to-all does, its second while the
  // combine's does (the backward mirrors them).
  bool SharedExpertOverlapped() const {
    return c_.shared_expert_overlap && c_.shape.shared_expert_ffn > 0;
  }
  // What runs beside an all-to-all: that part of the shared expert when it overlaps them.
  std::function<void()> SharedExpertBeside(const std::string& label, bool backward,
                                           SharedExpertPart part) {
    if (!SharedExpertOverlapped()) return {};
    return [this, label, backward, part] { SharedExpertCompute(label, backward, part); };
  }
  void SharedExpertCompute(const std::string& label, bool backward, SharedExpertPart part) {
    // Its first projection (gate and up, or the one up) and its second (down).
    const std::vector<Gemm> both = MlpGemms(c_.shape, tokens_, t_, c_.shape.shared_expert_ffn);
    std::vector<Gemm> gemms = both;
    if (part == kSharedFirst) gemms = {both[0]};
    if (part == kSharedSecond) gemms = {both[1]};
    Compute(label, backward ? Backward(gemms) : Forward(gemms));
  }

  void MoeBackward(int i, const std::string& name) {
    const int layer = ch_->first_layer + i;
    const bool overlap = SharedExpertOverlapped();
    if (overlap) {
      TpBefore(name + " shared");
    } else {
      SharedExpert(name, true);
    }
    // Gradients retrace the combine (token owners to experts: the dispatch pattern), then the
    // dispatch (experts to owners: the combine pattern).
    ExpertAllToAll(name + " combine", Counts(st_.dispatch, layer),
                   SharedExpertBeside(name + " shared fc2", true, kSharedSecond));
    Compute(name + " experts", Backward(ExpertGemms(i)) + MlpMemory(c_.shape.ffn, true));
    ExpertAllToAll(name + " dispatch", Counts(st_.combine, layer),
                   SharedExpertBeside(name + " shared fc1", true, kSharedFirst));
    if (overlap) TpAfter(name + " shared");
    Compute(name + " router", Backward(Router()));
  }

  AllToAllCounts Counts(const std::vector<std::vector<AllToAllCounts>>* table, int layer) const {
    return table == nullptr ? nullptr
                            : (*table)[static_cast<size_t>(it_)][static_cast<size_t>(layer)];
  }

  void Forward(int mb) {
    mb_ = mb;
    if (c_.data_parallel_mode == DataParallelMode::kFsdp) FsdpGather('F', 0);
    if (OverlapsParameterGathers() && ch_->gathering_microbatch < 0) {
      // The chunk's first forward this iteration waits for the parameters the last step
      // updated, bucket by bucket.
      ch_->gathering_microbatch = mb;
      if (ch_ != &chunks_.front()) IssueFirstParameterGathers();  // the first's at the start
      GatheredBeforeLayer(0);
    }
    // The vocabulary-parallel embedding sums its shards: an all-reduce (a reduce-scatter with
    // sequence parallelism).
    if (ch_->first) TpAfter(Mb('F') + " embedding");
    for (int i = 0; i < ch_->layers; ++i) LayerForward(i);
    if (ch_->last) {
      const std::string name = Mb('F') + " logits";
      TpBefore(name);
      Compute(name, LogitsForward());
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
    if (c_.data_parallel_mode == DataParallelMode::kFsdp) FsdpGather('B', ch_->layers - 1);
    if (ch_->last) {
      const std::string name = Mb('B') + " logits";
      Compute(name, LogitsBackward());
      TpAfter(name);
    }
    for (int i = ch_->layers - 1; i >= 0; --i) LayerBackward(i);
    if (ch_->first) TpBefore(Mb('B') + " embedding");
  }

  // --- end of the iteration -----------------------------------------------------------------

  // The optimizer step: per operation, Adam over the parameters whose state this rank holds
  // (a shard of them unless plain DDP); by utilisation, workload.optimizer_s.
  ComputeCost OptimizerStep() const {
    if (!PerOperation()) {
      ComputeCost cost;
      cost.optimizer_s = c_.optimizer_s;
      return cost;
    }
    const bool sharded = c_.data_parallel_mode != DataParallelMode::kDdp;
    return c_.compute.Optimizer(kAdamBytesPerParameter * ParametersHeld(c_, Parameters(), sharded),
                                kAdamKernels);
  }

  void Finish() {
    mb_ = -1;
    if (c_.data_parallel_mode != DataParallelMode::kFsdp && !OverlapsGradientReduction()) {
      for (ModelChunk& chunk : chunks_) {
        ch_ = &chunk;
        for (int i = chunk.layers - 1; i >= 0; --i) CloseBuckets(i);
      }
    }
    Push(WaitStreamOp(it_, kDpStream));
    const TransformerShape& s = c_.shape;
    if (s.tied_embeddings && p_ > 1 && (first_stage_ || last_stage_)) {
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
    Compute("optimizer", OptimizerStep());
    const bool zero = c_.data_parallel_mode == DataParallelMode::kZero1 ||
                      c_.data_parallel_mode == DataParallelMode::kZero2;
    if (zero && !c_.overlap_param_gather) {
      // The updated parameter shards, gathered bucket by bucket for the next forward.
      for (ModelChunk& chunk : chunks_) {
        ch_ = &chunk;
        for (const GradientBucket& b : chunk.dense_buckets) PushParameterGather(b, 0);
        for (const GradientBucket& b : chunk.expert_buckets) PushParameterGather(b, 1);
      }
      Push(WaitStreamOp(it_, kDpStream));
    }
  }

  const TransformerConfig& c_;
  const StageContext& st_;
  const int t_, p_, d_, e_, cp_, dc_, v_;  // dc_: the gradient group, data x context
  const bool first_stage_, last_stage_, sp_;
  const double tokens_;        // tokens of one micro-batch on this rank (s b / c)
  const uint64_t activation_;  // bytes of one micro-batch's activations, b x s / c x h
  std::vector<ModelChunk> chunks_;
  ModelChunk* ch_ = nullptr;  // the chunk whose layers the ops being built belong to
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

StageParameters ParametersOf(const TransformerConfig& config, const StageContext& stage) {
  return StageBuilder(config, stage).Parameters();
}

double ParametersHeld(const TransformerConfig& c, const StageParameters& p, bool sharded) {
  if (!sharded) return static_cast<double>(p.dense + p.experts);
  const double dense_group = static_cast<double>(c.parallel.data) * c.parallel.context;
  const double expert_group = dense_group / c.parallel.expert;
  return static_cast<double>(p.dense) / dense_group + static_cast<double>(p.experts) / expert_group;
}

PipelineShape PipelineShapeOf(const TransformerConfig& config, int stage) {
  PipelineShape shape;
  shape.schedule = config.schedule;
  shape.stages = config.parallel.pipeline;
  shape.virtual_stages = config.virtual_stages;
  shape.microbatches = config.Microbatches();
  shape.stage = stage;
  return shape;
}

StageContext StageOf(const TransformerConfig& config, int stage) {
  StageContext context;
  context.stage = stage;
  // Megatron needs the layers to divide; nbox allows it and says so.
  const std::vector<uint64_t> per_stage =
      SplitEvenly(static_cast<uint64_t>(config.shape.layers), config.parallel.pipeline);
  for (int s = 0; s < stage; ++s)
    context.first_layer += static_cast<int>(per_stage[static_cast<size_t>(s)]);
  context.layers = static_cast<int>(per_stage[static_cast<size_t>(stage)]);
  return context;
}

std::vector<LayerRange> ChunkLayersOf(const TransformerConfig& config, int stage) {
  const int v = config.virtual_stages;
  if (v == 1) {
    const StageContext context = StageOf(config, stage);
    return {{context.first_layer, context.layers}};
  }
  // ValidateTransformerConfig checks that p v divides the layers.
  const int p = config.parallel.pipeline;
  const int per_chunk = config.shape.layers / (p * v);
  std::vector<LayerRange> ranges;
  for (int j = 0; j < v; ++j) ranges.push_back({(j * p + stage) * per_chunk, per_chunk});
  return ranges;
}

MoeRouting ExpertRoutingOf(const TransformerConfig& c) {
  MoeRouting routing;
  routing.experts = c.shape.experts;
  routing.top_k = c.shape.top_k;
  routing.group = c.parallel.expert;
  const bool sp = c.sequence_parallel && c.parallel.tensor > 1;
  routing.tokens_per_rank = static_cast<uint64_t>(c.micro_batch) * c.shape.seq_len /
                            static_cast<uint64_t>(c.parallel.context) /
                            static_cast<uint64_t>(sp ? c.parallel.tensor : 1);
  routing.skew = c.routing_skew;
  routing.seed = c.seed;
  routing.capacity_factor = c.expert_capacity_factor;
  routing.pad_to_capacity = c.pad_to_capacity;
  return routing;
}

}  // namespace nbox::work
