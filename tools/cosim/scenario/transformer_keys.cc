#include "tools/cosim/scenario/transformer_keys.h"

#include <stdexcept>

#include "tools/cosim/scenario/value_kinds.h"
#include "workloads/gpu_preset.h"
#include "workloads/parallel_layout.h"

namespace nbox::scenario {
namespace {

// workload.order: tp, dp, pp and optionally cp joined by '-', as ParallelLayout reads it.
ValueKind ParallelOrder(Field<WorkloadSection, std::string> field) {
  ValueKind kind;
  kind.expected = "tp, dp, pp and optionally cp joined by '-' in some order, such as tp-cp-dp-pp";
  kind.parse = [=](std::string_view text, Scenario& scenario) {
    work::ParallelDims dims;
    dims.order = std::string(text);
    try {
      work::ParallelLayout check(dims);
    } catch (const std::invalid_argument&) {
      return false;
    }
    field.In(scenario) = dims.order;
    return true;
  };
  kind.format = [=](const Scenario& scenario) { return field.In(scenario); };
  return kind;
}

// workload.gpu: a GPU preset, or none.
std::vector<std::string> GpuChoices() {
  std::vector<std::string> choices = {"none"};
  for (const std::string& name : work::GpuPresetNames()) choices.push_back(name);
  return choices;
}

}  // namespace

std::vector<KeySpec> TransformerKeys() {
  auto work = [](auto member) { return FieldOf(&Scenario::workload, member); };
  constexpr uint64_t kLarge = 1 << 24;
  return {
      {"workload", "hidden", "transformer, moe: hidden size (d_model); 0 = the preset's",
       WholeNumber(work(&WorkloadSection::hidden), 0, kLarge)},
      {"workload", "heads", "transformer, moe: attention heads; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::heads), 0, 65536)},
      {"workload", "kv_heads",
       "transformer, moe: key/value heads of grouped-query attention; 0 = the preset's (or "
       "heads)",
       WholeNumber(work(&WorkloadSection::kv_heads), 0, 65536)},
      {"workload", "kv_lora_rank",
       "transformer, moe: multi-head latent attention (DeepSeek-V2/V3) when above 0: the rank "
       "of the latent its keys and values are up-projected from (then qk_head_dim and "
       "v_head_dim are needed); 0 = the preset's (none)",
       WholeNumber(work(&WorkloadSection::kv_lora_rank), 0, kLarge)},
      {"workload", "q_lora_rank",
       "transformer, moe with kv_lora_rank: the rank of the queries' bottleneck; 0 = the "
       "preset's (none: a full query projection)",
       WholeNumber(work(&WorkloadSection::q_lora_rank), 0, kLarge)},
      {"workload", "qk_head_dim",
       "transformer, moe with kv_lora_rank: elements per head of a query and a key, besides "
       "their rotary part; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::qk_head_dim), 0, 65536)},
      {"workload", "qk_rope_dim",
       "transformer, moe with kv_lora_rank: the rotary part of each query and key head (the "
       "keys' shared over heads); 0 = the preset's",
       WholeNumber(work(&WorkloadSection::qk_rope_dim), 0, 65536)},
      {"workload", "v_head_dim",
       "transformer, moe with kv_lora_rank: elements per head of a value; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::v_head_dim), 0, 65536)},
      {"workload", "head_dim",
       "transformer, moe: elements per attention head (Megatron's kv_channels); 0 = the "
       "preset's, hidden / heads",
       WholeNumber(work(&WorkloadSection::head_dim), 0, 65536)},
      {"workload", "mlp",
       "transformer, moe: the MLP, gelu (GPT: two matrices of ffn) or swiglu (Llama: three), or "
       "the preset's (custom: swiglu)",
       EnumChoice(work(&WorkloadSection::mlp), {{MlpChoice::kPreset, "preset"},
                                                {MlpChoice::kGelu, "gelu"},
                                                {MlpChoice::kSwiglu, "swiglu"}})},
      {"workload", "tied_embeddings",
       "transformer, moe: on = the output layer reuses the input embedding (GPT), off = its own "
       "(Llama), or the preset's (custom: off)",
       EnumChoice(work(&WorkloadSection::tied_embeddings), {{PresetOnOff::kPreset, "preset"},
                                                            {PresetOnOff::kOn, "on"},
                                                            {PresetOnOff::kOff, "off"}})},
      {"workload", "bias",
       "transformer, moe: on = biases on the linear layers (GPT-3, Megatron's add_bias_linear: "
       "QKV, the attention's output, the MLP's and experts' matrices), off = none (Llama), or "
       "the preset's (custom: off); they add parameters, so gradients and optimizer state",
       EnumChoice(work(&WorkloadSection::bias), {{PresetOnOff::kPreset, "preset"},
                                                 {PresetOnOff::kOn, "on"},
                                                 {PresetOnOff::kOff, "off"}})},
      {"workload", "ffn",
       "transformer, moe: hidden size of the MLP (of one expert); 0 = the preset's",
       WholeNumber(work(&WorkloadSection::ffn), 0, kLarge)},
      {"workload", "vocab", "transformer, moe: vocabulary size; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::vocab), 0, kLarge)},
      {"workload", "seq_len", "transformer, moe: tokens per sequence; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::seq_len), 0, kLarge)},
      {"workload", "experts", "moe: experts per layer; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::experts), 0, 65536)},
      {"workload", "top_k", "moe: experts each token is routed to; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::top_k), 0, 65536)},
      {"workload", "shared_expert_ffn",
       "moe: hidden size of a shared expert every token also goes through, beside the routed "
       "ones (DeepSeekMoE, Qwen-MoE; Megatron-core's moe_shared_expert_intermediate_size); 0 = "
       "the preset's (none for a custom model)",
       WholeNumber(work(&WorkloadSection::shared_expert_ffn), 0, kLarge)},
      {"workload", "shared_expert_overlap",
       "moe with a shared expert: its first projection runs while the dispatch all-to-all does, "
       "its second while the combine does (Megatron-core's moe_shared_expert_overlap); off: "
       "after the combine",
       Switch(work(&WorkloadSection::shared_expert_overlap))},
      {"workload", "moe_layer_freq",
       "moe: layers 0, k, 2k, ... are MoE layers and the others dense (Megatron-core's "
       "moe_layer_freq; Switch Transformer, Llama 4 Maverick: 2); 0 = the preset's (1: all)",
       WholeNumber(work(&WorkloadSection::moe_layer_freq), 0, 65536)},
      {"workload", "first_dense_layers",
       "moe: the first layers are dense, the MoE layers begin after them (DeepSeek's "
       "first_k_dense_replace); 0 = the preset's (none for a custom model)",
       WholeNumber(work(&WorkloadSection::first_dense_layers), 0, 65536)},
      {"workload", "dense_ffn",
       "moe: MLP hidden size of the dense layers (moe_layer_freq > 1 or first_dense_layers; "
       "Llama 4's intermediate_size_mlp, DeepSeek's intermediate_size); 0 = the preset's (ffn)",
       WholeNumber(work(&WorkloadSection::dense_ffn), 0, kLarge)},
      {"workload", "tensor_parallel",
       "transformer, moe: tensor-parallel size t (Megatron's; divides the heads)",
       WholeNumber(work(&WorkloadSection::tensor_parallel), 1, 65536)},
      {"workload", "context_parallel",
       "transformer, moe: context-parallel size c (Megatron's context_parallel_size): each rank "
       "holds s / c tokens of every sequence, and attention passes keys and values around the c "
       "ranks' ring; gradients are reduced over data x context ranks (experts' over expert data "
       "x context)",
       WholeNumber(work(&WorkloadSection::context_parallel), 1, 65536)},
      {"workload", "context_parallel_comm",
       "transformer, moe: how context-parallel attention moves keys and values (Megatron-core's "
       "cp_comm_type): p2p (a ring of exchanges, each hidden behind a block of attention), "
       "all_gather (keys and values gathered before the attention, their gradients "
       "reduce-scattered), a2a (DeepSpeed-Ulysses: all-to-alls to a share of the heads for "
       "the whole sequence and back; the heads must divide by tensor x context) or a2a+p2p "
       "(hierarchical: Ulysses within blocks of context_a2a consecutive context ranks, the p2p "
       "ring across the blocks)",
       EnumChoice(work(&WorkloadSection::context_parallel_comm),
                  {{work::ContextParallelComm::kP2p, "p2p"},
                   {work::ContextParallelComm::kAllGather, "all_gather"},
                   {work::ContextParallelComm::kA2a, "a2a"},
                   {work::ContextParallelComm::kA2aP2p, "a2a+p2p"}})},
      {"workload", "context_a2a",
       "transformer, moe with context_parallel_comm = a2a+p2p: context ranks per all-to-all "
       "block a (Megatron-core's hierarchical_context_parallel_sizes [a, c / a]; 1 < a < c, a "
       "divides c, heads a multiple of tensor x a); 0 otherwise",
       WholeNumber(work(&WorkloadSection::context_a2a), 0, 65536)},
      {"workload", "pipeline_parallel", "transformer, moe: pipeline stages p",
       WholeNumber(work(&WorkloadSection::pipeline_parallel), 1, 65536)},
      {"workload", "data_parallel",
       "transformer, moe: data-parallel size d; 0 = job.world_size / (t x c x p), which must "
       "divide",
       WholeNumber(work(&WorkloadSection::data_parallel), 0, 65536)},
      {"workload", "expert_parallel",
       "moe: expert-parallel size e (divides data_parallel and the experts): an expert group is "
       "e data-parallel ranks at one context index",
       WholeNumber(work(&WorkloadSection::expert_parallel), 1, 65536)},
      {"workload", "order",
       "transformer, moe: how ranks map to (tp, cp, dp, pp), innermost first (Megatron's default "
       "tp-cp-dp-pp keeps a tensor group on consecutive ranks, one server); without cp, cp sits "
       "right after tp",
       ParallelOrder(work(&WorkloadSection::order))},
      {"workload", "micro_batch", "transformer, moe: sequences per micro-batch",
       WholeNumber(work(&WorkloadSection::micro_batch), 1, 65536)},
      {"workload", "global_batch",
       "transformer, moe: sequences per iteration, a multiple of micro_batch x data_parallel; "
       "0 = one micro-batch per replica",
       WholeNumber(work(&WorkloadSection::global_batch), 0, 1 << 24)},
      {"workload", "schedule",
       "transformer, moe: pipeline schedule: gpipe (every forward, then every backward) or "
       "1f1b (Megatron's one-forward-one-backward)",
       EnumChoice(work(&WorkloadSection::schedule), {{work::PipelineSchedule::kGPipe, "gpipe"},
                                                     {work::PipelineSchedule::kOneFOneB, "1f1b"}})},
      {"workload", "virtual_stages",
       "transformer, moe: model chunks per pipeline stage; > 1 runs Megatron's interleaved 1F1B "
       "(its virtual_pipeline_model_parallel_size: the layers split into pipeline_parallel x "
       "virtual_stages chunks, the micro-batches a multiple of pipeline_parallel)",
       WholeNumber(work(&WorkloadSection::virtual_stages), 1, 1024)},
      {"workload", "data_parallel_mode",
       "transformer, moe: ddp (bucketed gradient all-reduce overlapping the last backward), "
       "zero1 (reduce-scatter after the backward, all-gather after the step), zero2 (bucketed "
       "reduce-scatter overlapping the last backward), fsdp (per layer: all-gather before "
       "forward and backward, reduce-scatter after backward)",
       EnumChoice(work(&WorkloadSection::data_parallel_mode),
                  {{work::DataParallelMode::kDdp, "ddp"},
                   {work::DataParallelMode::kZero1, "zero1"},
                   {work::DataParallelMode::kZero2, "zero2"},
                   {work::DataParallelMode::kFsdp, "fsdp"}})},
      {"workload", "overlap_param_gather",
       "transformer, moe with zero1 or zero2: the updated parameters are all-gathered during the "
       "next iteration's first forward, each bucket issued when the forward reaches the one "
       "before it (Megatron's overlap_param_gather); off: after the optimizer step, waited for",
       Switch(work(&WorkloadSection::overlap_param_gather))},
      {"workload", "overlap_grad_reduce",
       "transformer, moe with ddp, zero1 or zero2: the gradients are reduced bucket by bucket "
       "as the last micro-batch's backward finishes each (Megatron's overlap_grad_reduce); off: "
       "after the whole backward (Megatron-LM's local DDP of 2021 did so). auto: on for ddp and "
       "zero2, off for zero1; fsdp reduces layer by layer",
       AutoSwitch(work(&WorkloadSection::overlap_grad_reduce))},
      {"workload", "tp_comm_overlap",
       "transformer, moe with sequence_parallel: each layer's all-gather runs beside its first "
       "GEMM and its reduce-scatter beside its last, chunk by chunk (Megatron's tp_comm_overlap, "
       "Transformer Engine's userbuffers); off: each waited for before and after the block",
       Switch(work(&WorkloadSection::tp_comm_overlap))},
      {"workload", "cross_entropy",
       "transformer, moe, compute = model or profile: the loss's kernels, as Megatron's "
       "cross_entropy_loss_fusion and cross_entropy_fusion_impl choose them: unfused (52 bytes a "
       "logit in 8 kernels), fused (Megatron's jit-fused functions: 28 in 4) or te (Transformer "
       "Engine's Triton kernels: 10 in 3)",
       EnumChoice(work(&WorkloadSection::cross_entropy),
                  {{work::CrossEntropyKernels::kUnfused, "unfused"},
                   {work::CrossEntropyKernels::kFused, "fused"},
                   {work::CrossEntropyKernels::kTe, "te"}})},
      {"workload", "sequence_parallel",
       "transformer, moe: Megatron's sequence parallelism (tensor-parallel all-reduces become "
       "all-gather + reduce-scatter; needed with tensor and expert parallelism together)",
       Switch(work(&WorkloadSection::sequence_parallel))},
      {"workload", "recompute",
       "transformer, moe: activation recomputation in each layer's backward: none, selective "
       "(the core attention's FLOPs again) or full (the layer's whole forward again, its "
       "tensor-parallel and expert communication included)",
       EnumChoice(work(&WorkloadSection::recompute), {{work::Recompute::kNone, "none"},
                                                      {work::Recompute::kSelective, "selective"},
                                                      {work::Recompute::kFull, "full"}})},
      {"workload", "flash_attention",
       "transformer, moe: the attention keeps no s x s scores (flash attention, Megatron-core's "
       "default backend); off: it keeps them, 5 a s^2 b bytes per layer (Korthikanti et al.). "
       "The memory estimate depends on it, and with compute = model the attention's time (one "
       "fused kernel, or two batched GEMMs and softmax and dropout passes)",
       Switch(work(&WorkloadSection::flash_attention))},
      {"workload", "attention_kernel",
       "transformer, moe, compute = model or profile, flash_attention = on: the fused attention "
       "kernel whose measured rates time it: flash2 (FlashAttention-2) or cudnn (cuDNN's, "
       "Transformer Engine's FusedAttention); auto: the one Transformer Engine picks on the GPU "
       "(cudnn on h100 and h200, flash2 on a100; the b200 has none measured and runs attention "
       "at its achievable BF16 matmul rate)",
       EnumChoice(work(&WorkloadSection::attention_kernel),
                  {{work::AttentionKernel::kAuto, "auto"},
                   {work::AttentionKernel::kFlash2, "flash2"},
                   {work::AttentionKernel::kCudnn, "cudnn"}})},
      {"workload", "activation_bytes",
       "transformer, moe: bytes per activation and weight element (2: bf16)",
       Bytes(work(&WorkloadSection::activation_bytes), 1, 8)},
      {"workload", "gradient_bytes",
       "bytes per gradient element as reduced; 0 = the kind's (ddp: the model's, 4; transformer "
       "and moe: 2, Megatron-core's bf16 reduction)",
       Bytes(work(&WorkloadSection::gradient_bytes), 0, 8)},
      {"workload", "routing_skew",
       "moe: 0 = balanced token routing; > 0 = Zipf exponent of expert popularity, redrawn every "
       "iteration and layer from job.seed",
       Real(work(&WorkloadSection::routing_skew), 0, 10)},
      {"workload", "expert_capacity_factor",
       "moe: 0 = dropless; > 0 = capacity factor C: each expert takes at most ceil(C x tokens x "
       "top_k / experts) of a rank's tokens and the rest are dropped (Megatron-core's "
       "moe_expert_capacity_factor)",
       Real(work(&WorkloadSection::expert_capacity_factor), 0, 1024)},
      {"workload", "pad_to_capacity",
       "moe: every expert receives exactly its capacity, padded (Megatron-core's "
       "moe_pad_expert_input_to_capacity; needs expert_capacity_factor)",
       Switch(work(&WorkloadSection::pad_to_capacity))},
      {"workload", "gpu_memory",
       "transformer, moe: memory of one GPU, e.g. 80GB; the per-GPU memory estimate is checked "
       "against it (0 = not checked)",
       Bytes(work(&WorkloadSection::gpu_memory), 0, uint64_t{1} << 50)},
      {"workload", "gpu_util_attention",
       "transformer, moe: fraction of gpu_peak attention's score and value products achieve; "
       "0 = gpu_util",
       Real(work(&WorkloadSection::gpu_util_attention), 0, 1)},
      {"workload", "compute",
       "transformer, moe: how compute is timed: util (FLOPs at gpu_peak x gpu_util, the same "
       "for every shape) or model (each GEMM by its shape, flash attention by sequence and head "
       "dimension, memory-bound kernels and the optimizer by their bytes, a cost per kernel, "
       "on the GPU preset of workload.gpu; workloads/README.md) or profile (as model, with the "
       "GEMM and flash attention times a PyTorch profiler trace measured, "
       "workload.compute_profile)",
       EnumChoice(work(&WorkloadSection::compute), {{ComputeChoice::kUtil, "util"},
                                                    {ComputeChoice::kModel, "model"},
                                                    {ComputeChoice::kProfile, "profile"}})},
      {"workload", "compute_profile",
       "transformer, moe, compute = profile: a PyTorch profiler (Kineto) trace of a training "
       "step recorded with record_shapes=True; each GEMM and flash attention call of a shape it "
       "measured takes the measured time (workloads/README.md, \"Measured kernels\"); a "
       "relative path starts at the scenario file's folder",
       Text(work(&WorkloadSection::compute_profile), "a file path")},
      {"workload", "gpu",
       "transformer, moe, compute = model or profile: the GPU preset (peak and measured matmul "
       "rates, "
       "memory bandwidth, SMs, measured attention rates; workloads/README.md names the sources)",
       Choice(work(&WorkloadSection::gpu), GpuChoices())},
      {"workload", "precision",
       "transformer, moe, compute = model or profile: the GEMMs' input type, bf16 or fp8 "
       "(Transformer "
       "Engine's FP8 recipes; attention and activations stay bf16)",
       EnumChoice(work(&WorkloadSection::precision),
                  {{work::Precision::kBf16, "bf16"}, {work::Precision::kFp8, "fp8"}})},
  };
}

}  // namespace nbox::scenario
