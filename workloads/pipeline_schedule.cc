#include "workloads/pipeline_schedule.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

namespace nbox::work {
namespace {

// Builds one stage's steps. Transfer flags name the neighbour: with interleaving the last
// stage's next is the first (its chunk j feeds chunk j + 1 there), as Megatron's ring of
// pipeline ranks.
class ScheduleBuilder {
 public:
  explicit ScheduleBuilder(const PipelineShape& shape)
      : shape_(shape),
        p_(shape.stages),
        v_(shape.virtual_stages),
        m_(shape.microbatches),
        first_stage_(shape.stage == 0),
        last_stage_(shape.stage == shape.stages - 1) {}

  StageSchedule Build() && {
    if (shape_.schedule == PipelineSchedule::kGPipe) {
      GPipe();
    } else if (v_ > 1) {
      InterleavedOneFOneB();
    } else {
      OneFOneB();
    }
    return std::move(out_);
  }

 private:
  struct Transfers {
    bool send_next = false;
    bool send_prev = false;
    bool recv_prev = false;
    bool recv_next = false;
  };
  // The group of the transfers named.
  static Transfers With(std::initializer_list<bool Transfers::*> flags) {
    Transfers t;
    for (bool Transfers::*flag : flags) t.*flag = true;
    return t;
  }

  void Run(PipelineStep::Kind kind, int microbatch, int chunk = 0) {
    PipelineStep step;
    step.kind = kind;
    step.microbatch = microbatch;
    step.chunk = chunk;
    out_.steps.push_back(std::move(step));
  }
  void Forward(int microbatch, int chunk = 0) {
    Run(PipelineStep::Kind::kForward, microbatch, chunk);
  }
  void Backward(int microbatch, int chunk = 0) {
    Run(PipelineStep::Kind::kBackward, microbatch, chunk);
  }

  void Exchange(std::string label, int microbatch, Transfers t) {
    if (!t.send_next && !t.send_prev && !t.recv_prev && !t.recv_next) return;
    PipelineStep step;
    step.kind = PipelineStep::Kind::kExchange;
    step.microbatch = microbatch;
    step.send_next = t.send_next;
    step.send_prev = t.send_prev;
    step.recv_prev = t.recv_prev;
    step.recv_next = t.recv_next;
    step.label = std::move(label);
    out_.steps.push_back(std::move(step));
  }

  std::string F(int microbatch, int chunk = 0) const {
    return PassLabel('F', microbatch, chunk, v_);
  }
  std::string B(int microbatch, int chunk = 0) const {
    return PassLabel('B', microbatch, chunk, v_);
  }

  // The forward of micro-batch i with its input from the previous stage and its output to the
  // next (GPipe and 1F1B's warm-up), and the backward with its gradients the other way.
  void ForwardWithExchanges(int i) {
    if (!first_stage_) Exchange(F(i) + " recv", i, With({&Transfers::recv_prev}));
    Forward(i);
    if (!last_stage_) Exchange(F(i) + " send", i, With({&Transfers::send_next}));
  }
  void BackwardWithExchanges(int i) {
    if (!last_stage_) Exchange(B(i) + " recv", i, With({&Transfers::recv_next}));
    Backward(i);
    if (!first_stage_) Exchange(B(i) + " send", i, With({&Transfers::send_prev}));
  }

  void GPipe() {
    out_.last_backward = 0;  // backwards run in reverse micro-batch order
    for (int i = 0; i < m_; ++i) ForwardWithExchanges(i);
    for (int i = m_ - 1; i >= 0; --i) BackwardWithExchanges(i);
  }

  // Megatron-LM's forward_backward_pipelining_without_interleaving.
  void OneFOneB() {
    out_.last_backward = m_ - 1;
    const int warmup = WarmupSteps(shape_);
    const int steady = m_ - warmup;
    for (int i = 0; i < warmup; ++i) ForwardWithExchanges(i);
    if (steady > 0 && !first_stage_)
      Exchange(F(warmup) + " recv", warmup, With({&Transfers::recv_prev}));
    for (int k = 0; k < steady; ++k) {
      const int f = warmup + k;
      Forward(f);
      // send_forward_recv_backward: the activation out, the gradient of micro-batch k in.
      if (!last_stage_) {
        Exchange(F(f) + " send B" + std::to_string(k) + " recv", f,
                 With({&Transfers::send_next, &Transfers::recv_next}));
      }
      Backward(k);
      if (first_stage_) continue;
      if (k == steady - 1) {
        Exchange(B(k) + " send", k, With({&Transfers::send_prev}));
      } else {
        // send_backward_recv_forward: the gradient out, the next activation in.
        Exchange(B(k) + " send F" + std::to_string(f + 1) + " recv", k,
                 With({&Transfers::send_prev, &Transfers::recv_prev}));
      }
    }
    for (int i = steady; i < m_; ++i) BackwardWithExchanges(i);
  }

  // Step k's chunk (Megatron's get_model_chunk_id): groups of p steps per chunk, forwards from
  // chunk 0 up, backwards from the last chunk down. k may be negative (a step p - 1 back).
  int ChunkOf(int k, bool forward) const {
    const int group = p_ * v_;
    const int chunk = (((k % group) + group) % group) / p_;
    return forward ? chunk : v_ - 1 - chunk;
  }
  // Step k's micro-batch, (k / (p v)) p + k mod p.
  int MicrobatchOf(int k) const { return k / (p_ * v_) * p_ + k % p_; }
  // Virtual stage 0 (the embedding) and the last one (the logits): chunk j of stage s is
  // virtual stage j p + s.
  bool IsFirstVirtualStage(int chunk) const { return first_stage_ && chunk == 0; }
  bool IsLastVirtualStage(int chunk) const { return last_stage_ && chunk == v_ - 1; }

  // Megatron-LM's forward_backward_pipelining_with_interleaving (without overlap_p2p_comm):
  // the m v forward and backward steps of the rank's v chunks, in groups of p micro-batches
  // per chunk; every exchange with the neighbouring stages is one transfer group, as its
  // batched send_forward_recv_forward, send_forward_backward_recv_forward_backward and
  // send_backward_recv_backward are. Its rules, step by step: workloads/README.md.
  void InterleavedOneFOneB() {
    out_.last_backward = m_ - 1;  // each chunk's last backward is of the last micro-batch
    const int total = m_ * v_;
    const bool all_warmup = m_ == p_;
    const int warmup = WarmupSteps(shape_);
    const int remaining = total - warmup;
    // The first forward's input: none on the first stage (its chunk 0 is virtual stage 0).
    if (!first_stage_) {
      Exchange(F(MicrobatchOf(0), ChunkOf(0, true)) + " recv", MicrobatchOf(0),
               With({&Transfers::recv_prev}));
    }
    for (int k = 0; k < warmup; ++k) {
      const int chunk = ChunkOf(k, true);
      const int mb = MicrobatchOf(k);
      Forward(mb, chunk);
      Transfers t;
      t.send_next = !IsLastVirtualStage(chunk);
      t.recv_prev = !(first_stage_ && ChunkOf(k + 1, true) == 0) && k != total - 1;
      t.recv_next = k == warmup - 1 && !all_warmup && !last_stage_;
      Exchange(F(mb, chunk) + " send/recv", mb, t);
    }
    for (int k = 0; k < remaining; ++k) {
      const int forward = k + warmup;
      const int forward_chunk = ChunkOf(forward, true);
      const int forward_mb = MicrobatchOf(forward);
      Forward(forward_mb, forward_chunk);
      const int backward_chunk = ChunkOf(k, false);
      const int backward_mb = MicrobatchOf(k);
      Backward(backward_mb, backward_chunk);
      // The first stage runs p - 1 forwards ahead of the last: the input it waits for is of
      // the chunk p - 1 steps back, none when that was the last chunk; and the last stage's
      // gradients likewise.
      Transfers t;
      t.send_next = !IsLastVirtualStage(forward_chunk);
      t.send_prev = !IsFirstVirtualStage(backward_chunk);
      t.recv_prev =
          (!first_stage_ || ChunkOf(forward - (p_ - 1), true) != v_ - 1) && k != remaining - 1;
      t.recv_next = !last_stage_ || ChunkOf(k - (p_ - 1), false) != 0;
      Exchange(F(forward_mb, forward_chunk) + " " + B(backward_mb, backward_chunk) + " send/recv",
               backward_mb, t);
    }
    if (all_warmup && !last_stage_) {
      const int mb = MicrobatchOf(remaining);
      Exchange(B(mb, ChunkOf(remaining, false)) + " recv", mb, With({&Transfers::recv_next}));
    }
    for (int k = remaining; k < total; ++k) {
      const int chunk = ChunkOf(k, false);
      const int mb = MicrobatchOf(k);
      Backward(mb, chunk);
      Transfers t;
      t.send_prev = !IsFirstVirtualStage(chunk);
      t.recv_next = !(last_stage_ && ChunkOf(k + 1, false) == v_ - 1) && k != total - 1;
      Exchange(B(mb, chunk) + " send/recv", mb, t);
    }
  }

  const PipelineShape& shape_;
  const int p_, v_, m_;
  const bool first_stage_, last_stage_;
  StageSchedule out_;
};

}  // namespace

StageSchedule ScheduleStage(const PipelineShape& shape) {
  return ScheduleBuilder(shape).Build();
}

int WarmupSteps(const PipelineShape& shape) {
  const int p = shape.stages;
  const int m = shape.microbatches;
  const int v = shape.virtual_stages;
  if (v == 1) return std::min(p - shape.stage - 1, m);
  return m == p ? m * v : std::min((p - shape.stage - 1) * 2 + (v - 1) * p, m * v);
}

std::string PassLabel(char pass, int microbatch, int chunk, int virtual_stages) {
  return std::string(1, pass) + std::to_string(microbatch) +
         (virtual_stages > 1 ? "c" + std::to_string(chunk) : "");
}

}  // namespace nbox::work
