#include "tools/cosim/assembly/workload_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <stdexcept>

#include "tools/cosim/assembly/run_records_forecast.h"
#include "tools/cosim/reports/gpu_memory_json.h"
#include "tools/cosim/reports/routing_json.h"
#include "tools/cosim/scenario/key_schema.h"
#include "tools/cosim/scenario/workload_config.h"
#include "workloads/chakra/chakra_import.h"
#include "workloads/dlrm.h"
#include "workloads/nccl_tests.h"
#include "workloads/trace_replay.h"
#include "workloads/transformer.h"

namespace nbox::cosim {
namespace {

// workload.model = trace: the recorded job, one program per rank (workloads/trace_replay.h);
// its collectives are those of one world communicator, of unknown purpose.
Workload BuildTraceReplay(const scenario::Scenario& s) {
  Workload w;
  w.model.name = "trace";
  w.model.source = s.workload.trace;
  w.programs = work::LoadTraceReplayJob(s.workload.trace, s.job.world_size, s.workload.iterations,
                                        s.workload.trace_scaling, s.workload.trace_replica);
  // Each collective cuts its buffer on its recorded datatype's elements (Op::element_bytes).
  w.element_bytes = 1;
  w.description =
      fmt::format("replay of the trace {}, {} iterations", s.workload.trace, s.workload.iterations);
  if (s.workload.trace_scaling != work::TraceScaling::kNone) {
    w.description +=
        fmt::format(", scaled to {} ranks ({}, replicas of {} ranks)", s.job.world_size,
                    work::ToString(s.workload.trace_scaling), s.workload.trace_replica);
  }
  return w;
}

// A workload key's value as the scenario spells it ("1f1b"), for the report.
std::string Text(const scenario::Scenario& s, const std::string& key) {
  return scenario::SettingText(s, "workload." + key);
}

// "8.03B" or, below a billion, "2.2M": a transformer's parameters as the report names them.
std::string ParameterCount(uint64_t parameters) {
  const auto n = static_cast<double>(parameters);
  return n >= 1e9 ? fmt::format("{:.2f}B", n / 1e9) : fmt::format("{:.1f}M", n / 1e6);
}

Workload BuildDdp(const scenario::Scenario& s) {
  if (s.workload.model == "trace") return BuildTraceReplay(s);
  Workload w;
  const work::DdpConfig ddp = scenario::DdpConfigOf(s);
  w.model = ddp.model;
  w.programs = work::SameProgramEverywhere(
      s.job.world_size, std::make_shared<const work::RankProgram>(MakeDdpProgram(ddp)),
      work::Parallelism::kData, "dp");
  w.description = fmt::format("ddp {} ({:.1f}M parameters), batch {}/rank, {} iterations",
                              ddp.model.name, static_cast<double>(ddp.model.parameters) / 1e6,
                              ddp.batch_per_rank, ddp.iterations);
  return w;
}

std::optional<RunRecordCounts> ForecastTransformer(const scenario::Scenario& s,
                                                   bool record_compute_ops) {
  return ForecastRunRecords(scenario::TransformerConfigOf(s), record_compute_ops);
}

// Megatron-style hybrid parallelism, dense (transformer) or with experts (moe).
Workload BuildTransformer(const scenario::Scenario& s) {
  const work::TransformerConfig c = scenario::TransformerConfigOf(s);
  Workload w;
  w.programs = work::MakeTransformerJob(c);
  w.model.name = c.shape.name;
  w.model.parameters = c.shape.Parameters();
  w.model.layers = c.shape.layers;
  w.model.source = c.shape.source;
  const int m = c.Microbatches();
  w.description = fmt::format(
      "{} {} ({} parameters), t={}{} p={} d={}{}, micro-batch {} x {} tokens, {} "
      "micro-batches, {} {}{}{}, {} iterations",
      s.workload.kind, c.shape.name, ParameterCount(c.shape.Parameters()), c.parallel.tensor,
      c.parallel.context > 1
          ? fmt::format(" c={} ({}{})", c.parallel.context, Text(s, "context_parallel_comm"),
                        c.context_a2a > 0 ? fmt::format(", blocks of {}", c.context_a2a) : "")
          : "",
      c.parallel.pipeline, c.parallel.data,
      c.shape.IsMoe() ? fmt::format(" e={}", c.parallel.expert) : "", c.micro_batch,
      c.shape.seq_len, m,
      c.virtual_stages > 1 ? fmt::format("interleaved 1f1b (v={})", c.virtual_stages)
                           : Text(s, "schedule"),
      Text(s, "data_parallel_mode") + (c.overlap_param_gather ? " (overlapped gathers)" : ""),
      c.sequence_parallel ? ", sequence parallel" : "",
      c.recompute == work::Recompute::kNone ? "" : ", " + Text(s, "recompute") + " recompute",
      c.iterations);
  w.details = {{"kind", s.workload.kind},
               {"shape",
                {{"layers", c.shape.layers},
                 {"hidden", c.shape.hidden},
                 {"heads", c.shape.heads},
                 {"kv_heads", c.shape.KvHeads()},
                 {"ffn", c.shape.ffn},
                 {"vocab", c.shape.vocab},
                 {"seq_len", c.shape.seq_len},
                 {"experts", c.shape.experts},
                 {"top_k", c.shape.top_k},
                 {"shared_expert_ffn", c.shape.shared_expert_ffn},
                 {"moe_layer_freq", c.shape.moe_layer_freq},
                 {"first_dense_layers", c.shape.first_dense_layers},
                 {"dense_ffn", c.shape.DenseFfn()}}},
               {"parallelism",
                {{"tensor", c.parallel.tensor},
                 {"context", c.parallel.context},
                 {"pipeline", c.parallel.pipeline},
                 {"data", c.parallel.data},
                 {"expert", c.parallel.expert},
                 {"order", c.parallel.order}}},
               {"micro_batch", c.micro_batch},
               {"microbatches", m},
               {"schedule", Text(s, "schedule")},
               {"virtual_stages", c.virtual_stages},
               {"data_parallel_mode", Text(s, "data_parallel_mode")},
               {"overlap_param_gather", c.overlap_param_gather},
               {"shared_expert_overlap", c.shared_expert_overlap},
               {"sequence_parallel", c.sequence_parallel},
               {"recompute", Text(s, "recompute")},
               {"flash_attention", c.flash_attention},
               {"context_parallel_comm", Text(s, "context_parallel_comm")},
               {"context_a2a", c.context_a2a}};
  w.details["memory_per_gpu_estimate"] = GpuMemoryJson(c, s.workload.gpu_memory);
  w.details["model_flops_per_iteration"] = c.ModelFlopsPerIteration();
  // MFU's denominator: per operation, the preset's dense BF16 peak (as Megatron and NeMo
  // report MFU, FP8 runs included); by utilisation, workload.gpu_peak.
  const bool per_operation = c.compute.mode == work::ComputeModel::Mode::kModel;
  w.details["gpu_peak_flops"] =
      per_operation ? c.compute.gpu->peak_bf16_flops : c.compute.peak_flops;
  w.details["compute"] = per_operation ? fmt::format("model on {} ({})", c.compute.gpu->name,
                                                     work::ToString(c.compute.precision))
                                       : std::string("util");
  if (c.compute.profile) {
    const work::KernelProfile& p = *c.compute.profile;
    w.details["compute"] = fmt::format(
        "profile {} ({} GEMM and {} attention shapes, {} times), else model on {} ({})", p.path,
        p.gemm_s.size(), p.attention_forward_s.size() + p.attention_backward_s.size(),
        p.gpu_times ? "GPU kernel" : "CPU operator", c.compute.gpu->name,
        work::ToString(c.compute.precision));
  }
  if (c.shape.IsMoe()) {
    const auto routing = RoutingJson(c);
    w.details["routing"] = routing;
    if (c.expert_capacity_factor > 0) {
      w.description += fmt::format(
          "; expert capacity {}: {:.1f}% of assignments dropped (worst layer {:.1f}%){}",
          routing["expert_capacity"].get<uint64_t>(),
          100 * routing["dropped_fraction"].get<double>(),
          100 * routing["worst_layer_dropped_fraction"].get<double>(),
          c.pad_to_capacity
              ? fmt::format(", {:.1f}% padding", 100 * routing["padding_fraction"].get<double>())
              : "");
    }
  }
  return w;
}

// A recommendation model: embeddings sharded, MLPs data-parallel.
Workload BuildDlrm(const scenario::Scenario& s) {
  const work::DlrmConfig c = scenario::DlrmConfigOf(s);
  Workload w;
  w.programs = work::MakeDlrmJob(c);
  w.model.name = c.shape.name;
  w.model.parameters = c.shape.MlpParameters();
  w.model.layers = static_cast<int>(c.shape.bottom_mlp.size() + c.shape.top_mlp.size());
  w.model.source = c.shape.source;
  w.description = fmt::format(
      "dlrm {} ({} tables of {} x {} pooled, {:.1f}M MLP parameters), batch {}/rank, {} "
      "iterations",
      c.shape.name, c.shape.tables, c.shape.pooling, c.shape.embedding_dim,
      static_cast<double>(c.shape.MlpParameters()) / 1e6, c.batch_per_rank, c.iterations);
  w.details = {{"kind", "dlrm"},
               {"tables", c.shape.tables},
               {"embedding_dim", c.shape.embedding_dim},
               {"pooling", c.shape.pooling},
               {"dense_features", c.shape.dense_features},
               {"bottom_mlp", c.shape.bottom_mlp},
               {"top_mlp", c.shape.top_mlp},
               {"mlp_parameters", c.shape.MlpParameters()},
               {"batch_per_rank", c.batch_per_rank}};
  return w;
}

// Chakra execution traces (workloads/chakra/chakra_import.h): the traces' own programs,
// communicators and iterations.
Workload BuildChakra(const scenario::Scenario& s) {
  chakra::ChakraReadOptions options;
  options.prefix = s.workload.trace_prefix;
  options.replays = s.workload.iterations;
  options.compute.peak_flops = s.workload.gpu_peak_flops;
  options.compute.utilization = s.workload.gpu_util;
  options.compute.memory_bytes_per_s = s.workload.gpu_memory_bw;
  chakra::ImportedJob imported =
      chakra::ReadChakraTraces(s.workload.trace_dir, s.job.world_size, options);
  Workload w;
  w.programs = std::move(imported.programs);
  w.model.name = "chakra";
  w.model.source = s.workload.trace_dir;
  // Whole float32 elements where every size allows it (nbox's own traces), else bytes.
  bool words = true;
  for (const auto& program : w.programs.programs) {
    for (const work::Op& op : program->ops) {
      if (op.kind == work::OpKind::kCollective) words = words && op.bytes % 4 == 0;
      if (op.counts) {
        for (uint64_t count : *op.counts) words = words && count % 4 == 0;
      }
    }
  }
  w.element_bytes = words ? 4 : 1;
  w.description = fmt::format(
      "Chakra traces {}/{}.<rank>.et{}, {} iterations{}", s.workload.trace_dir, imported.prefix,
      imported.groups_file ? "" : " (no comm_groups.json: the world's)", imported.iterations,
      s.workload.iterations > 1 ? fmt::format(" ({} runs of the traces)", s.workload.iterations)
                                : "");
  if (imported.modelled_compute_nodes > 0) {
    w.description +=
        fmt::format(" ({} compute nodes timed from num_ops at workload.gpu_peak x gpu_util{})",
                    imported.modelled_compute_nodes,
                    s.workload.gpu_memory_bw > 0 ? ", tensor_size at gpu_memory_bw" : "");
  }
  if (!imported.skipped_nodes.empty()) {
    std::vector<std::string> skipped;
    for (const auto& [type, count] : imported.skipped_nodes) {
      skipped.push_back(fmt::format("{} {}", count, type));
    }
    w.description += fmt::format(" (skipped nodes: {})", fmt::join(skipped, ", "));
  }
  if (!imported.ignored_attributes.empty()) {
    w.description +=
        fmt::format(" (ignored node attributes: {})", fmt::join(imported.ignored_attributes, ", "));
  }
  w.details = {{"kind", "chakra"},
               {"trace_dir", s.workload.trace_dir},
               {"trace_prefix", imported.prefix},
               {"comm_groups_file", imported.groups_file},
               {"runs", s.workload.iterations},
               {"iterations", imported.iterations},
               {"ignored_attributes", imported.ignored_attributes},
               {"skipped_nodes", imported.skipped_nodes},
               {"modelled_compute_nodes", imported.modelled_compute_nodes}};
  return w;
}

// nccl-tests' sweep of one collective over sizes on the world (workloads/nccl_tests.h).
Workload BuildNcclTests(const scenario::Scenario& s) {
  const work::NcclTestsConfig c = scenario::NcclTestsConfigOf(s);
  const int ranks = s.job.world_size;
  const std::vector<uint64_t> sizes = work::NcclTestsSizes(c, ranks);
  Workload w;
  w.programs = work::SameProgramEverywhere(
      ranks, std::make_shared<const work::RankProgram>(work::MakeNcclTestsProgram(c, ranks)),
      work::Parallelism::kOther, "nccl");
  w.element_bytes = c.element_bytes;
  w.model.name = std::string(work::kNcclTestsKind);
  w.model.source = "NVIDIA/nccl-tests";
  w.description = fmt::format(
      "nccl-tests {} of floats on {} ranks, {} sizes from {} B to {} B (x{}), {} warm-up and {} "
      "timed runs each",
      Text(s, "collective"), ranks, sizes.size(), sizes.front(), sizes.back(), c.step_factor,
      c.warmup, c.iterations);
  w.details = {{"kind", work::kNcclTestsKind},
               {"collective", Text(s, "collective")},
               {"sizes", sizes},
               {"warmup", c.warmup},
               {"timed_runs", c.iterations}};
  return w;
}

}  // namespace

const std::vector<WorkloadKind>& WorkloadKinds() {
  static const std::vector<WorkloadKind> kinds = {
      {"ddp", "data-parallel training as PyTorch DDP runs it (workloads/ddp.h)", BuildDdp},
      {"transformer",
       "a dense transformer with tensor, pipeline and data parallelism, as Megatron-LM runs it "
       "(workloads/transformer.h)",
       BuildTransformer, ForecastTransformer},
      {"moe", "a mixture-of-experts transformer, also with expert parallelism (the same)",
       BuildTransformer, ForecastTransformer},
      {"dlrm",
       "a recommendation model: embedding tables sharded over the ranks, MLPs data-parallel "
       "(workloads/dlrm.h)",
       BuildDlrm},
      {"chakra",
       "MLCommons Chakra execution traces, one per rank (workloads/chakra/README.md): compute "
       "takes its recorded time, collectives run nbox's algorithms, sends and receives are "
       "point to point",
       BuildChakra},
      {std::string(work::kNcclTestsKind),
       "nccl-tests' sweep: one collective on every rank at each size from min_bytes to "
       "max_bytes, timed as nccl-tests times it (workloads/nccl_tests.h)",
       BuildNcclTests},
  };
  return kinds;
}

Workload BuildWorkload(const scenario::Scenario& scenario) {
  for (const WorkloadKind& kind : WorkloadKinds()) {
    if (kind.name == scenario.workload.kind) return kind.build(scenario);
  }
  throw std::invalid_argument("workload.kind = '" + scenario.workload.kind +
                              "' is not a workload nbox-cosim knows");
}

std::optional<RunRecordCounts> ForecastWorkloadRecords(const scenario::Scenario& scenario,
                                                       bool record_compute_ops) {
  for (const WorkloadKind& kind : WorkloadKinds()) {
    if (kind.name == scenario.workload.kind && kind.forecast != nullptr) {
      return kind.forecast(scenario, record_compute_ops);
    }
  }
  return std::nullopt;
}

}  // namespace nbox::cosim
