#include "tools/cosim/workload_registry.h"

#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "workloads/trace_replay.h"

namespace nbox::cosim {
namespace {

work::DdpConfig MakeDdpConfig(const scenario::WorkloadSection& w) {
  work::DdpConfig c;
  if (w.model == "custom") {
    c.model.name = "custom";
    c.model.source = "scenario file";
  } else {
    const work::ModelSpec* preset = work::FindModelPreset(w.model);
    if (preset == nullptr) throw std::invalid_argument("unknown model '" + w.model + "'");
    c.model = *preset;
  }
  if (w.parameters > 0) c.model.parameters = w.parameters;
  if (w.layers > 0) c.model.layers = w.layers;
  if (w.flops_per_sample > 0) c.model.forward_flops_per_sample = w.flops_per_sample;
  c.batch_per_rank = w.batch_per_rank;
  c.gpu_peak_flops = w.gpu_peak_flops;
  c.gpu_utilization = w.gpu_util;
  c.backward_to_forward = w.backward_ratio;
  c.bucket_bytes = w.bucket_bytes;
  c.optimizer_s = w.optimizer_s;
  c.iterations = w.iterations;
  return c;
}

// workload.model = trace: the recorded job, one program per rank (workloads/trace_replay.h);
// its collectives are those of one world communicator, of unknown purpose.
Workload BuildTraceReplay(const scenario::Scenario& s) {
  Workload w;
  w.model.name = "trace";
  w.model.source = s.workload.trace;
  w.programs = work::SameProgramEverywhere(s.job.world_size, nullptr, work::Parallelism::kOther,
                                           "collectives");
  w.programs.programs.clear();
  for (work::RankProgram& program :
       work::LoadTraceReplayPrograms(s.workload.trace, s.job.world_size, s.workload.iterations)) {
    w.programs.programs.push_back(std::make_shared<const work::RankProgram>(std::move(program)));
  }
  // NCCL's sizes are whole elements of any type, so the replay splits on bytes.
  w.element_bytes = 1;
  w.description =
      fmt::format("replay of the trace {}, {} iterations", s.workload.trace, s.workload.iterations);
  return w;
}

Workload BuildDdp(const scenario::Scenario& s) {
  if (s.workload.model == "trace") return BuildTraceReplay(s);
  Workload w;
  const work::DdpConfig ddp = MakeDdpConfig(s.workload);
  w.model = ddp.model;
  w.programs = work::SameProgramEverywhere(
      s.job.world_size, std::make_shared<const work::RankProgram>(MakeDdpProgram(ddp)),
      work::Parallelism::kData, "dp");
  w.description = fmt::format("ddp {} ({:.1f}M parameters), batch {}/rank, {} iterations",
                              ddp.model.name, static_cast<double>(ddp.model.parameters) / 1e6,
                              ddp.batch_per_rank, ddp.iterations);
  return w;
}

}  // namespace

const std::vector<WorkloadKind>& WorkloadKinds() {
  static const std::vector<WorkloadKind> kinds = {
      {"ddp", "data-parallel training as PyTorch DDP runs it (workloads/ddp.h)", BuildDdp},
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

}  // namespace nbox::cosim
