#include "workloads/transformer_kernels.h"

namespace nbox::work {

std::vector<Gemm> AttentionLinearGemms(const TransformerShape& s, double tokens, int t) {
  const double h = s.hidden;
  const double heads = s.heads;
  if (s.IsMla()) {
    // DeepSeek-V2 Sec. 2.1, each projection split t ways as nbox splits MLA (README): queries
    // through W_DQ and W_UQ (or one W_Q), the latent and shared rotary key through W_DKV and
    // W_KR, keys and values up through W_UK and W_UV, the output through W_O.
    const double q_out = heads * s.QkHeadDim();
    std::vector<Gemm> gemms;
    if (s.q_lora_rank > 0) {
      gemms.push_back({tokens, s.q_lora_rank / static_cast<double>(t), h});
      gemms.push_back({tokens, q_out / t, static_cast<double>(s.q_lora_rank)});
    } else {
      gemms.push_back({tokens, q_out / t, h});
    }
    gemms.push_back({tokens, (s.kv_lora_rank + s.qk_rope_dim) / static_cast<double>(t), h});
    gemms.push_back(
        {tokens, heads * (s.qk_head_dim + s.v_head_dim) / t, static_cast<double>(s.kv_lora_rank)});
    gemms.push_back({tokens, h, heads * s.v_head_dim / t});
    return gemms;
  }
  const double kv = static_cast<double>(s.KvHeads()) * s.QkHeadDim();
  const double q = heads * s.QkHeadDim();
  return {{tokens, (q + 2 * kv) / t, h}, {tokens, h, q / t}};
}

std::vector<Gemm> MlpGemms(const TransformerShape& s, double tokens, int t, int width) {
  const double w = width;
  return {{tokens, (s.gated_mlp ? 2 * w : w) / t, static_cast<double>(s.hidden)},
          {tokens, static_cast<double>(s.hidden), w / t}};
}

Gemm LogitsGemm(const TransformerShape& s, double tokens, int t) {
  return {tokens, static_cast<double>(s.vocab) / t, static_cast<double>(s.hidden)};
}

Gemm RouterGemm(const TransformerShape& s, double tokens) {
  return {tokens, static_cast<double>(s.experts), static_cast<double>(s.hidden)};
}

std::vector<Gemm> BackwardGemms(const std::vector<Gemm>& forward) {
  std::vector<Gemm> backward;
  for (const Gemm& g : forward) {
    backward.push_back({g.m, g.k, g.n, g.count});  // dgrad: dY W^T (dY cast here)
    Gemm wgrad{g.k, g.n, g.m, g.count};            // wgrad: X^T dY (X cast in the forward)
    wgrad.casts_input = false;
    backward.push_back(wgrad);
  }
  return backward;
}

AttentionCall CoreAttention(const TransformerShape& s, double batch, double queries, double keys,
                            int t, bool flash) {
  AttentionCall call;
  call.batch = batch;
  call.heads = static_cast<double>(s.heads) / t;
  call.head_dim = s.QkHeadDim();
  call.value_dim = s.VHeadDim();
  call.queries = queries;
  call.keys = keys;
  call.causal = true;  // decoder-only language models
  call.flash = flash;
  return call;
}

CrossEntropyPasses CrossEntropyPerLogit(CrossEntropyKernels kernels) {
  switch (kernels) {
    case CrossEntropyKernels::kUnfused:
      return {38, 6, 14, 2};
    case CrossEntropyKernels::kFused:
      return {22, 3, 6, 1};
    case CrossEntropyKernels::kTe:
      return {6, 2, 4, 1};
  }
  return {};
}

LayerMemoryPasses LayerMemory(const TransformerShape& s, int t, bool sequence_parallel,
                              int mlp_width, double element_bytes) {
  const double h = s.hidden;
  // Elements per token: a norm reads and writes h; a bias-dropout-add reads the block's output
  // and the residual and writes the sum (3 h) and a one-byte dropout mask (h / 2 elements).
  const double replicated_share = sequence_parallel ? 1.0 / t : 1.0;
  const double norm = 2 * h * replicated_share;
  const double dropout_add = 3.5 * h * replicated_share;
  const bool rotary = !s.learned_positions;
  const double rotary_elements = rotary ? 2.0 * (s.heads + s.KvHeads()) * s.QkHeadDim() / t : 0;
  const double w = static_cast<double>(mlp_width) / t;
  const double activation = s.gated_mlp ? 3 * w : 2 * w;  // SwiGLU reads two halves
  LayerMemoryPasses passes;
  passes.attention_bytes_per_token = element_bytes * (norm + rotary_elements + dropout_add);
  passes.mlp_bytes_per_token = element_bytes * (norm + activation + dropout_add);
  passes.attention_kernels = rotary ? 3 : 2;
  passes.mlp_kernels = 3;
  return passes;
}

}  // namespace nbox::work
