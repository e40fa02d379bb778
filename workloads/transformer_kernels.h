// The kernels of a transformer's parts on one tensor-parallel rank, as Megatron-core runs them
// with Transformer Engine: each linear layer's GEMM by shape (column-parallel QKV and first MLP
// projection, row-parallel output and second projection), the attention call, and the bytes the
// memory-bound kernels between them move. The per-operation compute model (compute_model.h)
// times them; workloads/README.md ("The per-operation compute model") counts every term.
//
// The GEMMs of a part add up to its FLOPs in transformer_shape.h (the part's ...FlopsPerToken()
// x tokens / t), but for multi-head latent attention's two small norms.
#pragma once

#include <vector>

#include "workloads/compute_model.h"
#include "workloads/transformer_shape.h"

namespace nbox::work {

// Forward GEMMs over `tokens` tokens on one of `t` tensor-parallel ranks.
std::vector<Gemm> AttentionLinearGemms(const TransformerShape& shape, double tokens, int t);
// An MLP of `width` (a dense layer's, one expert's, the shared expert's).
std::vector<Gemm> MlpGemms(const TransformerShape& shape, double tokens, int t, int width);
Gemm LogitsGemm(const TransformerShape& shape, double tokens, int t);
Gemm RouterGemm(const TransformerShape& shape, double tokens);

// A forward GEMM's two backward products: the gradient of its input (m x n times the weight's
// transpose) and of its weight (the input's transpose times m x n).
std::vector<Gemm> BackwardGemms(const std::vector<Gemm>& forward);

// The core attention of `batch` sequences of `queries` query tokens (s / c with context
// parallelism) against `keys` keys, on this rank's heads.
AttentionCall CoreAttention(const TransformerShape& shape, double batch, double queries,
                            double keys, int t, bool flash);

// Bytes the memory-bound kernels of one layer's forward move, per token, on one rank: the two
// norms and the two bias-dropout-residual adds (on a 1/t share of the tokens with sequence
// parallelism, else on every token), rotary embeddings on the rank's queries and keys, and the
// MLP's activation on its share of the width; `element_bytes` per element (2 for bf16). A
// backward moves twice as much (kBackwardMemoryFactor).
struct LayerMemoryPasses {
  double attention_bytes_per_token = 0;  // first norm, rotary, dropout-add
  double mlp_bytes_per_token = 0;        // second norm, activation, dropout-add
  int attention_kernels = 0;
  int mlp_kernels = 0;
};
LayerMemoryPasses LayerMemory(const TransformerShape& shape, int t, bool sequence_parallel,
                              int mlp_width, double element_bytes);
inline constexpr double kBackwardMemoryFactor = 2;

// The kernels that compute the loss: Megatron's cross_entropy_loss_fusion off, on with its own
// (native) fusion, or on with Transformer Engine's (cross_entropy_fusion_impl = te).
enum class CrossEntropyKernels { kUnfused, kFused, kTe };

// The cross entropy over this rank's vocabulary shard, per logit. Unfused
// (megatron/core/tensor_parallel/cross_entropy.py, Megatron-core's default, and Megatron-LM's of
// 2021): the forward casts the bf16 logits to fp32 (read 2, write 4), takes the max (read 4),
// subtracts it and exponentiates in place (read 4, write 4 each), sums (read 4) and divides by the
// sum in place (read 4, write 4): 38 bytes in 6 kernels; the backward multiplies the saved softmax
// by the loss's gradient in place (read 4, write 4) and casts it back to bf16 (read 4, write 2): 14
// bytes in 2 kernels. Fused (cross_entropy_loss_fusion,
// megatron/core/fusions/fused_cross_entropy.py: each jit-fused function one kernel): the cast
// with the max (read 2, write 4), the subtraction, exponent and sum (read 4, write 4), the
// division (read 4, write 4): 22 bytes in 3; the gradient with its cast (read 4, write 2): 6 in 1.
// Transformer Engine's (cross_entropy_fusion_impl = te, transformer_engine/common/triton/
// cross_entropy.py): an online softmax reads the bf16 logits (2), a second kernel reads them
// again and writes the gradient in their place (4): 6 bytes in 2; the backward scales it by the
// loss's gradient in place (read 2, write 2): 4 in 1.
struct CrossEntropyPasses {
  double forward_bytes_per_logit = 0;
  int forward_kernels = 0;
  double backward_bytes_per_logit = 0;
  int backward_kernels = 0;
};
CrossEntropyPasses CrossEntropyPerLogit(CrossEntropyKernels kernels);

// Transformer Engine's userbuffers defaults (transformer_engine/pytorch/module/base.py,
// initialize_ub): its pipelined and bulk overlaps run their communication kernel on 16 SMs,
// which the GEMM beside it does without; the pipelined reduce-scatter cuts its GEMM in 4.
inline constexpr int kOverlapSms = 16;
inline constexpr int kPipelineSplits = 4;

// The optimizer step's bytes per parameter of this rank's shard: Adam on fp32 master weights
// and moments (read the fp32 gradient, the master weight and both moments; write the three and
// the bf16 copy: 30 bytes), the gradient norm's read (4) and zeroing the gradient (4).
inline constexpr double kAdamBytesPerParameter = 38;
inline constexpr int kAdamKernels = 3;

}  // namespace nbox::work
