#include "workloads/transformer_shape.h"

#include <stdexcept>
#include <tuple>

namespace nbox::work {
namespace {

using U = uint64_t;

[[noreturn]] void Reject(const std::string& field, const std::string& problem) {
  throw std::invalid_argument("TransformerShape." + field + ": " + problem);
}

// Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1 (layers, d_model,
// heads; context 2048; d_ff = 4 d_model), with GPT-2's 50257-token vocabulary (Radford et al.
// 2019) and its learned positions and tied input/output embeddings.
TransformerShape Gpt3(std::string name, int layers, int hidden, int heads) {
  TransformerShape s;
  s.name = std::move(name);
  s.source = "Brown et al. 2020 (GPT-3) Table 2.1; vocabulary and embeddings as GPT-2";
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.ffn = 4 * hidden;
  s.vocab = 50257;
  s.seq_len = 2048;
  s.tied_embeddings = true;
  s.learned_positions = true;
  s.linear_bias = true;
  return s;
}

// A Llama-family model: SwiGLU MLP, rotary positions, untied output layer.
TransformerShape Llama(std::string name, std::string source, int layers, int hidden, int heads,
                       int kv_heads, int ffn, int vocab, int seq_len) {
  TransformerShape s;
  s.name = std::move(name);
  s.source = std::move(source);
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.ffn = ffn;
  s.vocab = vocab;
  s.seq_len = seq_len;
  s.gated_mlp = true;
  return s;
}

// An MLP of `width` hidden units: two matrices, three gated; with linear biases, the first
// matrices' (width each) and the last's (hidden).
U MlpParametersOfWidth(const TransformerShape& s, int width) {
  const U h = static_cast<U>(s.hidden);
  const U w = static_cast<U>(width);
  const U first = s.gated_mlp ? 2u : 1u;
  return (first + 1) * h * w + (s.linear_bias ? first * w + h : 0);
}

const std::vector<TransformerShape>& Presets() {
  static const std::vector<TransformerShape> presets = [] {
    std::vector<TransformerShape> p;
    // Table 2.1: 24 heads of d_head 128 on d_model 2048 (the heads' width is not d_model).
    TransformerShape gpt3_1_3b = Gpt3("gpt3-1.3b", 24, 2048, 24);
    gpt3_1_3b.head_dim = 128;
    p.push_back(gpt3_1_3b);
    p.push_back(Gpt3("gpt3-2.7b", 32, 2560, 32));
    p.push_back(Gpt3("gpt3-6.7b", 32, 4096, 32));
    // Table 2.1 gives d_model 5140 but 40 heads of d_head 128, which is 5120: 5120 here, as
    // Megatron-LM's GPT-3 13B configurations use (5140 is not a whole number of heads).
    p.push_back(Gpt3("gpt3-13b", 40, 5120, 40));
    p.push_back(Gpt3("gpt3-175b", 96, 12288, 96));
    p.push_back(Llama("llama2-7b",
                      "Touvron et al. 2023 (Llama 2) Table 1; meta-llama/Llama-2-7b-hf "
                      "config.json",
                      32, 4096, 32, 32, 11008, 32000, 4096));
    p.push_back(Llama("llama2-70b",
                      "Touvron et al. 2023 (Llama 2) Table 1; meta-llama/Llama-2-70b-hf "
                      "config.json",
                      80, 8192, 64, 8, 28672, 32000, 4096));
    p.push_back(Llama("llama3-8b",
                      "Meta Llama 3 model card; meta-llama/Meta-Llama-3-8B config.json", 32, 4096,
                      32, 8, 14336, 128256, 8192));
    p.push_back(Llama("llama3-70b",
                      "Meta Llama 3 model card; meta-llama/Meta-Llama-3-70B config.json", 80, 8192,
                      64, 8, 28672, 128256, 8192));
    TransformerShape mixtral = Llama("mixtral-8x7b",
                                     "Jiang et al. 2024 (Mixtral of Experts) Table 1; "
                                     "mistralai/Mixtral-8x7B-v0.1 config.json",
                                     32, 4096, 32, 8, 14336, 32000, 32768);
    mixtral.experts = 8;
    mixtral.top_k = 2;
    p.push_back(mixtral);
    // 60 routed experts of width 1408, top-4, and a shared expert of width 5632; multi-head
    // attention. Its q, k, v biases and the shared expert's sigmoid gate (h weights) are not
    // counted (biases never are; the gate is 0.003% of the parameters).
    TransformerShape qwen_moe = Llama("qwen1.5-moe-a2.7b",
                                      "Qwen team 2024 (Qwen1.5-MoE, 14.3B total, 2.7B active); "
                                      "Qwen/Qwen1.5-MoE-A2.7B config.json",
                                      24, 2048, 16, 16, 1408, 151936, 8192);
    qwen_moe.experts = 60;
    qwen_moe.top_k = 4;
    qwen_moe.shared_expert_ffn = 5632;
    p.push_back(qwen_moe);
    // DeepSeekMoE 16B (Dai et al. 2024): 64 fine-grained experts of width 1408, top-6, two
    // shared ones (one shared MLP of 2 x 1408, as Megatron-core counts them), its first layer
    // dense with an MLP of 10944; multi-head attention.
    TransformerShape deepseek_moe = Llama("deepseek-moe-16b",
                                          "Dai et al. 2024 (DeepSeekMoE, 16.4B total, 2.8B "
                                          "active); deepseek-ai/deepseek-moe-16b-base config.json",
                                          28, 2048, 16, 16, 1408, 102400, 4096);
    deepseek_moe.experts = 64;
    deepseek_moe.top_k = 6;
    deepseek_moe.shared_expert_ffn = 2 * 1408;
    deepseek_moe.first_dense_layers = 1;
    deepseek_moe.dense_ffn = 10944;
    p.push_back(deepseek_moe);
    // DeepSeek-V3 (DeepSeek-AI 2024, 671B total, 37B active; its multi-token-prediction module
    // not counted): multi-head latent attention, 256 experts of width 2048, top-8, one shared,
    // the first 3 layers dense with an MLP of 18432; 4096-token pre-training sequences.
    TransformerShape deepseek_v3 = Llama("deepseek-v3",
                                         "DeepSeek-AI 2024 (DeepSeek-V3 technical report); "
                                         "deepseek-ai/DeepSeek-V3 config.json",
                                         61, 7168, 128, 128, 2048, 129280, 4096);
    deepseek_v3.q_lora_rank = 1536;
    deepseek_v3.kv_lora_rank = 512;
    deepseek_v3.qk_head_dim = 128;
    deepseek_v3.qk_rope_dim = 64;
    deepseek_v3.v_head_dim = 128;
    deepseek_v3.experts = 256;
    deepseek_v3.top_k = 8;
    deepseek_v3.shared_expert_ffn = 2048;
    deepseek_v3.first_dense_layers = 3;
    deepseek_v3.dense_ffn = 18432;
    p.push_back(deepseek_v3);
    // Llama 4: 48 layers, top-1 routing with a shared expert as wide as a routed one (8192);
    // Maverick's MoE layers alternate with dense ones of width 16384 (interleave_moe_layer_step
    // 2: its odd layers; nbox's moe_layer_freq puts them on the even ones, Megatron's int form,
    // which gives every stage of an even number of layers the same mix).
    for (const auto& [name, experts, freq] :
         {std::tuple{"llama4-scout", 16, 1}, std::tuple{"llama4-maverick", 128, 2}}) {
      TransformerShape llama4 =
          Llama(name,
                std::string("Meta Llama 4 model card (Scout 109B, Maverick 400B total, 17B "
                            "active); meta-llama/Llama-4-") +
                    (freq == 1 ? "Scout-17B-16E" : "Maverick-17B-128E") + " config.json",
                48, 5120, 40, 8, 8192, 202048, 8192);
      llama4.experts = experts;
      llama4.top_k = 1;
      llama4.shared_expert_ffn = 8192;
      llama4.moe_layer_freq = freq;
      llama4.dense_ffn = 16384;
      p.push_back(llama4);
    }
    return p;
  }();
  return presets;
}

}  // namespace

uint64_t TransformerShape::AttentionParameters() const {
  const U h = static_cast<U>(hidden);
  if (IsMla()) {
    // DeepSeek-V2 Sec. 2.1: W_DQ, its norm and W_UQ (or one W_Q); W_DKV with the shared rotary
    // key W_KR, its norm, and W_UK, W_UV; W_O.
    const U n = static_cast<U>(heads);
    const U q_out = n * static_cast<U>(QkHeadDim());
    const U q_lora = static_cast<U>(q_lora_rank);
    const U kv_lora = static_cast<U>(kv_lora_rank);
    const U query = q_lora > 0 ? h * q_lora + q_lora + q_lora * q_out : h * q_out;
    const U key_value = h * (kv_lora + static_cast<U>(qk_rope_dim)) + kv_lora +
                        kv_lora * n * static_cast<U>(qk_head_dim + v_head_dim);
    return query + key_value + n * static_cast<U>(v_head_dim) * h;
  }
  const U head = static_cast<U>(HeadDim());
  const U q = static_cast<U>(heads) * head;
  const U kv = static_cast<U>(KvHeads()) * head;
  return h * (q + 2 * kv) + q * h + (linear_bias ? q + 2 * kv + h : 0);
}

uint64_t TransformerShape::MlpParameters() const {
  return MlpParametersOfWidth(*this, ffn);
}

uint64_t TransformerShape::ExpertParameters(int layer) const {
  return IsMoeLayer(layer) ? static_cast<U>(experts) * MlpParameters() : 0;
}

uint64_t TransformerShape::SharedExpertParameters() const {
  return IsMoe() ? MlpParametersOfWidth(*this, shared_expert_ffn) : 0;
}

uint64_t TransformerShape::LayerParameters(int layer) const {
  const U h = static_cast<U>(hidden);
  const U mlp = IsMoeLayer(layer) ? ExpertParameters(layer) + h * static_cast<U>(experts) +
                                        SharedExpertParameters()
                                  : MlpParametersOfWidth(*this, DenseFfn());
  return AttentionParameters() + mlp + 2 * h;  // two norms
}

uint64_t TransformerShape::ReplicatedLayerParameters(int layer) const {
  const U h = static_cast<U>(hidden);
  // A row-parallel layer's bias is added after the reduction, whole on every rank: the
  // attention's output and the MLP's last matrix (in an MoE layer, the shared expert's; each
  // routed expert's is split with its expert).
  U row_biases = 0;
  if (linear_bias) {
    if (!IsMla()) row_biases += h;
    if (!IsMoeLayer(layer) || shared_expert_ffn > 0) row_biases += h;
  }
  return 2 * h + (IsMoeLayer(layer) ? h * static_cast<U>(experts) : 0) + row_biases;
}

uint64_t TransformerShape::EmbeddingParameters() const {
  return static_cast<U>(vocab) * static_cast<U>(hidden) + PositionParameters();
}

uint64_t TransformerShape::PositionParameters() const {
  return learned_positions ? static_cast<U>(seq_len) * static_cast<U>(hidden) : 0;
}

uint64_t TransformerShape::OutputParameters() const {
  return tied_embeddings ? 0 : static_cast<U>(vocab) * static_cast<U>(hidden);
}

uint64_t TransformerShape::Parameters() const {
  U sum = EmbeddingParameters() + OutputParameters() + static_cast<U>(hidden);  // final norm
  for (int layer = 0; layer < layers; ++layer) sum += LayerParameters(layer);
  return sum;
}

double TransformerShape::AttentionLinearFlopsPerToken() const {
  return 2.0 * static_cast<double>(AttentionParameters());
}

double TransformerShape::AttentionScoreFlopsPerToken() const {
  return 2.0 * seq_len * heads * static_cast<double>(QkHeadDim() + VHeadDim());
}

double TransformerShape::MlpFlopsPerToken() const {
  return 2.0 * static_cast<double>(MlpParameters());
}

double TransformerShape::DenseMlpFlopsPerToken() const {
  return 2.0 * static_cast<double>(MlpParametersOfWidth(*this, DenseFfn()));
}

double TransformerShape::SharedExpertFlopsPerToken() const {
  return 2.0 * static_cast<double>(SharedExpertParameters());
}

double TransformerShape::RouterFlopsPerToken() const {
  return 2.0 * static_cast<double>(hidden) * experts;
}

double TransformerShape::ModelFlopsPerToken() const {
  double flops = LogitsFlopsPerToken();
  for (int layer = 0; layer < layers; ++layer) {
    flops += AttentionLinearFlopsPerToken() + AttentionScoreFlopsPerToken();
    flops += IsMoeLayer(layer)
                 ? RouterFlopsPerToken() + top_k * MlpFlopsPerToken() + SharedExpertFlopsPerToken()
                 : DenseMlpFlopsPerToken();
  }
  return flops;
}

double TransformerShape::LogitsFlopsPerToken() const {
  return 2.0 * static_cast<double>(hidden) * vocab;
}

void ValidateTransformerShape(const TransformerShape& s) {
  const std::pair<const char*, int> sizes[] = {{"layers", s.layers}, {"hidden", s.hidden},
                                               {"heads", s.heads},   {"ffn", s.ffn},
                                               {"vocab", s.vocab},   {"seq_len", s.seq_len}};
  for (const auto& [field, value] : sizes) {
    if (value < 1) Reject(field, "must be at least 1, got " + std::to_string(value));
  }
  if (s.head_dim < 0) Reject("head_dim", "must be at least 0, got " + std::to_string(s.head_dim));
  if (s.head_dim == 0 && s.hidden % s.heads != 0) {
    Reject("hidden", std::to_string(s.hidden) + " is not a multiple of heads (" +
                         std::to_string(s.heads) + ")");
  }
  if (s.kv_lora_rank < 0 || s.q_lora_rank < 0 || s.qk_rope_dim < 0 ||
      (s.IsMla() && (s.qk_head_dim < 1 || s.v_head_dim < 1)) ||
      (!s.IsMla() &&
       (s.q_lora_rank > 0 || s.qk_head_dim > 0 || s.qk_rope_dim > 0 || s.v_head_dim > 0))) {
    Reject("kv_lora_rank", std::to_string(s.kv_lora_rank) +
                               ": multi-head latent attention needs kv_lora_rank, qk_head_dim and "
                               "v_head_dim above 0 (q_lora_rank and qk_rope_dim 0 or more); "
                               "without it, none of them");
  }
  if (s.kv_heads < 0 || (s.kv_heads > 0 && s.heads % s.kv_heads != 0)) {
    Reject("kv_heads", std::to_string(s.kv_heads) + " must be 0 (= heads) or divide heads (" +
                           std::to_string(s.heads) + ")");
  }
  if (s.experts < 0)
    Reject("experts", "must be 0 (dense) or more, got " + std::to_string(s.experts));
  if (s.IsMoe() && (s.top_k < 1 || s.top_k > s.experts)) {
    Reject("top_k", std::to_string(s.top_k) + " must be in 1.." + std::to_string(s.experts));
  }
  if (s.moe_layer_freq < 1 || (s.moe_layer_freq > 1 && !s.IsMoe())) {
    Reject("moe_layer_freq", std::to_string(s.moe_layer_freq) +
                                 ": every k-th layer an MoE layer needs k >= 1, and experts");
  }
  if (s.first_dense_layers < 0 || (s.first_dense_layers > 0 && !s.IsMoe()) ||
      s.first_dense_layers >= s.layers) {
    Reject("first_dense_layers", std::to_string(s.first_dense_layers) +
                                     ": the dense layers before the MoE ones are 0 or more, fewer "
                                     "than the layers (" +
                                     std::to_string(s.layers) + "), in an MoE model");
  }
  if (s.IsMoe()) {
    bool any = false;
    for (int layer = 0; layer < s.layers && !any; ++layer) any = s.IsMoeLayer(layer);
    if (!any) {
      Reject("moe_layer_freq", std::to_string(s.moe_layer_freq) + " with first_dense_layers " +
                                   std::to_string(s.first_dense_layers) + " leaves none of the " +
                                   std::to_string(s.layers) + " layers an MoE layer");
    }
  }
  if (s.dense_ffn < 0 || (s.dense_ffn > 0 && !s.IsMoe())) {
    Reject("dense_ffn", std::to_string(s.dense_ffn) +
                            ": the dense layers' own MLP width is 0 (= ffn) or more, in an MoE "
                            "model");
  }
  if (s.shared_expert_ffn < 0 || (s.shared_expert_ffn > 0 && !s.IsMoe())) {
    Reject("shared_expert_ffn",
           std::to_string(s.shared_expert_ffn) +
               ": a shared expert's width is 0 (none) or more, and needs experts");
  }
}

const TransformerShape* FindTransformerPreset(std::string_view name) {
  for (const TransformerShape& shape : Presets()) {
    if (shape.name == name) return &shape;
  }
  return nullptr;
}

std::vector<std::string> TransformerPresetNames() {
  std::vector<std::string> names;
  for (const TransformerShape& shape : Presets()) names.push_back(shape.name);
  return names;
}

}  // namespace nbox::work
