// Published models. Every number below is quoted from the source named in the preset; the
// table in workloads/README.md repeats them with the same sources.
//
// Forward FLOPs per sample:
//   CNNs: 2 x the published multiply-adds (papers and torchvision count one multiply-add
//         as one "FLOP").
//   Transformers: 2 x parameters x tokens per sample (Kaplan et al. 2020, "Scaling Laws for
//         Neural Language Models", Sec. 2.1: C_forward ~ 2N + 2 n_layer n_ctx d_attn). The
//         attention term 2 n_layer n_ctx d_attn is omitted, and N is the full published count
//         (embeddings included; the token embedding doubles as the output projection in GPT-2
//         and BERT's masked-LM head, so its 2 FLOPs per parameter per token are real).
#include <string>
#include <vector>

#include "workloads/ddp.h"

namespace nbox::work {
namespace {

double CnnForwardFlops(double multiply_adds) {
  return 2.0 * multiply_adds;
}

double TransformerForwardFlops(uint64_t parameters, int tokens_per_sample) {
  return 2.0 * static_cast<double>(parameters) * tokens_per_sample;
}

ModelSpec Preset(std::string name, uint64_t parameters, int layers, double forward_flops,
                 std::string source) {
  ModelSpec spec;
  spec.name = std::move(name);
  spec.parameters = parameters;
  spec.layers = layers;
  spec.forward_flops_per_sample = forward_flops;
  spec.gradient_bytes_per_param = 4;
  spec.source = std::move(source);
  return spec;
}

// BERT's sequence length: Devlin et al. pre-train 90% of the steps at 128 tokens and the last
// 10% at 512 (Appendix A.2); 128 is the length most of the training runs at.
constexpr int kBertTokens = 128;
// GPT-2's context: 1024 tokens (Radford et al. 2019, Sec. 2.3).
constexpr int kGpt2Tokens = 1024;

const std::vector<ModelSpec>& Presets() {
  static const std::vector<ModelSpec> presets = {
      Preset("resnet50", 25557032, 50, CnnForwardFlops(4.089e9),
             "ResNet-50 (He et al. 2016, 'Deep Residual Learning for Image Recognition', "
             "arXiv:1512.03385): 50 weight layers (49 conv + 1 fc). Parameters 25,557,032 and "
             "4.089e9 multiply-adds at 224x224 from torchvision's "
             "ResNet50_Weights.IMAGENET1K_V1 metadata (num_params, _ops; torchvision's GFLOPS "
             "count a multiply-add once). torchvision's ResNet-50 is v1.5 (stride 2 in the 3x3 "
             "conv); He et al. Table 1 gives 3.8e9 for v1. Forward FLOPs = 2 x multiply-adds."),
      Preset("resnet152", 60192808, 152, CnnForwardFlops(11.3e9),
             "ResNet-152 (He et al. 2016, arXiv:1512.03385): 11.3e9 multiply-adds at 224x224 "
             "(Table 1, 'FLOPs', counted as multiply-adds per Sec. 3.3); 152 weight layers "
             "(1 + 150 conv in 50 bottleneck blocks + 1 fc). Parameters 60,192,808 from "
             "torchvision's ResNet152_Weights.IMAGENET1K_V1 metadata. Forward FLOPs = 2 x "
             "multiply-adds."),
      Preset("bert-base", 110000000, 12, TransformerForwardFlops(110000000, kBertTokens),
             "BERT-BASE (Devlin et al. 2019, arXiv:1810.04805, Sec. 3): L=12 transformer "
             "blocks (the layers here), H=768, A=12, 110M parameters. Sequence length 128 (90% "
             "of pre-training steps, Appendix A.2). Forward FLOPs = 2 x parameters x 128 "
             "(Kaplan et al. 2020; attention term omitted)."),
      Preset("bert-large", 340000000, 24, TransformerForwardFlops(340000000, kBertTokens),
             "BERT-LARGE (Devlin et al. 2019, arXiv:1810.04805, Sec. 3): L=24 transformer "
             "blocks (the layers here), H=1024, A=16, 340M parameters. Sequence length 128 "
             "(90% of pre-training steps, Appendix A.2). Forward FLOPs = 2 x parameters x 128 "
             "(Kaplan et al. 2020; attention term omitted)."),
      Preset("gpt2", 124439808, 12, TransformerForwardFlops(124439808, kGpt2Tokens),
             "GPT-2 small (Radford et al. 2019, 'Language Models are Unsupervised Multitask "
             "Learners', Table 2): 12 transformer blocks (the layers here), d_model 768, "
             "context 1024 tokens. The paper lists 117M parameters; the released checkpoint "
             "(Hugging Face openai-community/gpt2, model card: 124M) has 124,439,808 with the "
             "token embedding tied to the output layer. Forward FLOPs = 2 x parameters x 1024 "
             "(Kaplan et al. 2020; attention term omitted)."),
      Preset("gpt2-xl", 1557611200, 48, TransformerForwardFlops(1557611200, kGpt2Tokens),
             "GPT-2 XL (Radford et al. 2019, Table 2): 48 transformer blocks (the layers "
             "here), d_model 1600, context 1024 tokens. The paper lists 1542M parameters; the "
             "released checkpoint (Hugging Face openai-community/gpt2-xl, model card: 1.5B) "
             "has 1,557,611,200. Forward FLOPs = 2 x parameters x 1024 (Kaplan et al. 2020; "
             "attention term omitted)."),
  };
  return presets;
}

}  // namespace

const ModelSpec* FindModelPreset(std::string_view name) {
  for (const ModelSpec& spec : Presets()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::vector<std::string> ModelPresetNames() {
  std::vector<std::string> names;
  for (const ModelSpec& spec : Presets()) names.push_back(spec.name);
  return names;
}

}  // namespace nbox::work
