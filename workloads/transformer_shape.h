// The shape of a decoder-only transformer (GPT, Llama, Mixtral), what it holds and what it
// computes: parameter counts and FLOPs per token, from the shape alone, and published presets
// (workloads/README.md, "Transformer presets", gives each one's source).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nbox::work {

struct TransformerShape {
  std::string name;
  std::string source;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // grouped-query attention; 0 = heads (multi-head attention)
  // Elements of each head's queries, keys and values (Megatron's kv_channels); 0 = hidden /
  // heads. GPT-3 1.3B has 24 heads of 128 on a hidden size of 2048.
  int head_dim = 0;
  // Multi-head latent attention (DeepSeek-V2/V3), when kv_lora_rank > 0: queries through a
  // rank-q_lora_rank bottleneck (0: a full projection), keys and values up-projected from a
  // kv_lora_rank latent; per head, queries and keys of qk_head_dim + qk_rope_dim, values of
  // v_head_dim. Every head has its keys and values (kv_heads = heads).
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_head_dim = 0;
  int qk_rope_dim = 0;
  int v_head_dim = 0;
  int ffn = 0;  // hidden size of the MLP (of one expert's, in an MoE layer)
  int vocab = 0;
  int seq_len = 0;
  bool gated_mlp = false;        // SwiGLU: three matrices (Llama, Mixtral); else two (GPT)
  bool tied_embeddings = false;  // the output layer reuses the input embedding (GPT-3)
  // Biases on the linear layers (GPT-3, Megatron's add_bias_linear): QKV, the attention's
  // output, the MLP's matrices and each expert's; none on MLA's projections or the router.
  bool linear_bias = false;
  bool learned_positions = false;  // a seq_len x hidden position table (GPT-3); else rotary
  int experts = 0;                 // experts per MoE layer; 0 = dense
  int top_k = 0;                   // experts each token goes to
  // MoE: hidden size of the shared expert every token also goes through (DeepSeekMoE's and
  // Qwen-MoE's; Megatron-core's moe_shared_expert_intermediate_size); 0 = none.
  int shared_expert_ffn = 0;
  // MoE: layers 0, k, 2k, ... are MoE layers, the others dense (Megatron-core's int
  // moe_layer_freq; Switch Transformer's every other layer, Llama 4 Maverick's); 1 = all.
  int moe_layer_freq = 1;
  // MoE: its first layers are dense (DeepSeek's first_k_dense_replace); 0 = none.
  int first_dense_layers = 0;
  // MoE: the MLP width of its dense layers (Llama 4's intermediate_size_mlp, DeepSeek's
  // intermediate_size); 0 = ffn.
  int dense_ffn = 0;

  bool IsMoe() const { return experts > 0; }
  bool IsMoeLayer(int layer) const {
    return IsMoe() && layer >= first_dense_layers && layer % moe_layer_freq == 0;
  }
  int DenseFfn() const { return IsMoe() && dense_ffn > 0 ? dense_ffn : ffn; }
  int KvHeads() const { return kv_heads > 0 && !IsMla() ? kv_heads : heads; }
  bool IsMla() const { return kv_lora_rank > 0; }
  // Elements per head of a query or key, and of a value: h / heads without MLA.
  int QkHeadDim() const { return IsMla() ? qk_head_dim + qk_rope_dim : HeadDim(); }
  int VHeadDim() const { return IsMla() ? v_head_dim : HeadDim(); }
  int HeadDim() const { return head_dim > 0 ? head_dim : hidden / heads; }
  // Parameters of one layer: attention (QKV, output), the MLP or the experts and router, norms.
  uint64_t AttentionParameters() const;
  uint64_t MlpParameters() const;  // one MLP of width ffn (one expert)
  uint64_t LayerParameters(int layer) const;
  // What of a layer every tensor-parallel rank holds whole, as Megatron splits neither: its two
  // norms and an MoE layer's router.
  uint64_t ReplicatedLayerParameters(int layer) const;
  uint64_t ExpertParameters(int layer) const;  // the layer's routed experts (0 in a dense layer)
  uint64_t SharedExpertParameters() const;     // the shared expert of one layer (0 without)
  uint64_t EmbeddingParameters() const;        // the input embedding (and position table)
  uint64_t PositionParameters() const;  // the learned position table (0 with rotary); not split
  uint64_t OutputParameters() const;    // the output layer (0 when tied)
  uint64_t Parameters() const;          // the whole model

  // Forward FLOPs per token of one layer's parts (2 FLOPs per multiply-add; Narayanan et al.
  // 2021, Eq. 3, generalised to GQA and gated MLPs), over a sequence of seq_len tokens.
  double AttentionLinearFlopsPerToken() const;  // QKV and output projections
  // QK^T and attention x V over s keys: 2 s heads (QkHeadDim + VHeadDim), 4 s h without MLA.
  double AttentionScoreFlopsPerToken() const;
  double MlpFlopsPerToken() const;           // one MLP of width ffn (one expert)
  double DenseMlpFlopsPerToken() const;      // a dense layer's MLP (width DenseFfn())
  double SharedExpertFlopsPerToken() const;  // the shared expert (0 without)
  double RouterFlopsPerToken() const;        // MoE gate: 2 h E
  double LogitsFlopsPerToken() const;        // output layer: 2 h V
  // The whole model's forward FLOPs per token as nbox computes them: every layer's attention
  // and MLP (an MoE layer's router, top_k experts and shared expert), and the logits.
  double ModelFlopsPerToken() const;
};

// Throws std::invalid_argument naming the field: sizes at least 1, hidden a multiple of heads
// (unless head_dim says the heads' width),
// heads a multiple of kv_heads, top_k in 1..experts for an MoE, a shared expert only in one.
void ValidateTransformerShape(const TransformerShape& shape);

// Presets by name ("gpt3-13b", "llama3-8b", "mixtral-8x7b", ...); nullptr for an unknown name.
const TransformerShape* FindTransformerPreset(std::string_view name);
std::vector<std::string> TransformerPresetNames();

}  // namespace nbox::work
