#include "tools/cosim/reports/terminal_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "common/units.h"
#include "tools/cosim/network_models.h"
#include "tools/cosim/real_ranks/rank_roles.h"
#include "tools/cosim/reports/cluster_results.h"
#include "tools/cosim/reports/model_flops_utilization.h"
#include "tools/cosim/reports/nccl_tests_table.h"
#include "tools/cosim/scenario/key_schema.h"
#include "workloads/nccl_tests.h"

namespace nbox::cosim {
namespace {

// The last iteration's compute by kind of kernel (per-rank mean), where the workload times
// its compute per operation: what a GPU profile would show.
void PrintComputeByKind(const JobSummary& summary, std::ostream& out) {
  if (summary.iterations.empty()) return;
  const IterationSummary& last = summary.iterations.back();
  const work::ComputeCost& k = last.breakdown.compute_by_kind;
  const double total = k.total();
  if (!(total > 0)) return;
  auto share = [&](double part) { return 100 * part / total; };
  out << fmt::format(
      "  compute of iteration {} by kind (per-rank mean {}): GEMM {:.1f}%, attention {:.1f}%, "
      "memory-bound {:.1f}%, optimizer {:.1f}%, kernel overhead {:.1f}%\n",
      last.index, FormatSeconds(total), share(k.gemm_s), share(k.attention_s), share(k.memory_s),
      share(k.optimizer_s), share(k.launch_s));
}

std::string Setting(const RunResult& r, const std::string& key) {
  auto it = r.scenario.settings.find(key);
  return it == r.scenario.settings.end() ? std::string("?") : it->second;
}

// The scenario's workload, without the rank count.
std::string WorkloadText(const RunResult& r) {
  return fmt::format("{}, {} collectives per iteration", r.workload_description,
                     r.collectives_per_iteration);
}

// "real rank 0", "emulated ranks 1-7".
std::string RanksPhrase(const char* kind, const std::vector<int>& ranks) {
  return fmt::format("{} rank{} {}", kind, ranks.size() == 1 ? "" : "s", RankRanges(ranks));
}

// The memory estimate of a transformer job (workloads/transformer_memory.h): its fullest stage.
void PrintMemoryEstimate(const RunResult& r, std::ostream& out) {
  if (!r.workload_details.is_object() || !r.workload_details.contains("memory_per_gpu_estimate")) {
    return;
  }
  const auto& estimate = r.workload_details["memory_per_gpu_estimate"];
  const auto& stages = estimate["stages"];
  auto total = [](const nlohmann::ordered_json& m) {
    return m["weights_bytes"].get<double>() + m["gradients_bytes"].get<double>() +
           m["optimizer_bytes"].get<double>() + m["activations_bytes"].get<double>();
  };
  const auto fullest =
      std::max_element(stages.begin(), stages.end(),
                       [&](const auto& a, const auto& b) { return total(a) < total(b); });
  if (fullest == stages.end()) return;
  const auto& m = *fullest;
  auto bytes = [&](const char* key) { return FormatBytes(m[key].get<double>()); };
  // Against workload.gpu_memory, when given.
  std::string check;
  if (!estimate["gpu_memory_bytes"].is_null()) {
    const std::string capacity = FormatBytes(estimate["gpu_memory_bytes"].get<double>());
    check = estimate["fits"].get<bool>() ? "; fits workload.gpu_memory " + capacity
                                         : "; DOES NOT FIT workload.gpu_memory " + capacity;
  }
  out << fmt::format(
      "  memory     estimate: {} per GPU on stage {} (weights {}, gradients {}, optimizer {}, "
      "activations {}), from closed forms, not simulated{}\n",
      FormatBytes(total(m)), m["stage"].get<int>(), bytes("weights_bytes"),
      bytes("gradients_bytes"), bytes("optimizer_bytes"), bytes("activations_bytes"), check);
}

// GPUs that are not all alike and changes during the run ([events]), when the scenario has them.
void PrintEvents(const RunResult& r, std::ostream& out) {
  const scenario::EventsSection& events = r.scenario.events;
  std::vector<std::string> parts;
  if (!events.slow_gpus.empty()) {
    parts.push_back(fmt::format("ranks {} compute {}x as long (stragglers)",
                                Setting(r, "events.slow_gpus"), events.slowdown));
  }
  if (events.gpu_variation > 0) {
    parts.push_back(
        fmt::format("GPU speeds spread {:.1f}% (seeded by job.seed)", 100 * events.gpu_variation));
  }
  if (!parts.empty()) out << fmt::format("  gpus       {}\n", fmt::join(parts, "; "));
  if (!events.changes.empty()) {
    out << fmt::format("  changes    {} (simulated time from the start)\n",
                       Setting(r, "events.at"));
  }
}

// What ran: the workload on every rank, or with real ranks who ran what. In mirror mode no
// workload runs; the emulated ranks repeat the real rank's collectives (the collectives
// table's instances) and the iterations are the ones the real ranks marked.
void PrintWorkload(const RunResult& r, const RankRoles& roles, std::ostream& out) {
  PrintEvents(r, out);
  if (roles.simulated_job()) {
    out << fmt::format("  workload   {}, {} ranks\n", WorkloadText(r),
                       Setting(r, "job.world_size"));
    PrintMemoryEstimate(r, out);
    return;
  }
  const std::string real = fmt::format("{}: {} own program", RanksPhrase("real", roles.real),
                                       roles.real.size() == 1 ? "its" : "their");
  const std::string emulated = RanksPhrase("emulated", roles.emulated);
  switch (roles.emulated_program) {
    case EmulatedProgram::kWorkload:
      out << fmt::format("  workload   {}: {}; {}\n", emulated, WorkloadText(r), real);
      return;
    case EmulatedProgram::kMirror:
      out << fmt::format(
          "  workload   {}: mirror of real rank {}, {} collectives in {} marked iterations; {}\n",
          emulated, roles.mirrored_rank, r.summary.collectives.size(), r.summary.iterations.size(),
          real);
      return;
    case EmulatedProgram::kNone:
      out << fmt::format("  workload   {}, {} marked iterations; no rank emulated\n", real,
                         r.summary.iterations.size());
      return;
  }
}

// Real-rank runs say what compute covers: no rank's compute is recorded but an emulated one's.
void PrintComputeNote(const RankRoles& roles, std::ostream& out) {
  if (roles.simulated_job()) return;
  switch (roles.emulated_program) {
    case EmulatedProgram::kWorkload:
      out << "  compute: the emulated ranks' (simulated); the real ranks' is not measured, so "
             "exposed comm includes any extra time they took\n";
      return;
    case EmulatedProgram::kMirror:
      out << "  - = not measured: the real ranks' compute is not recorded, and emulated ranks "
             "that mirror compute nothing\n";
      return;
    case EmulatedProgram::kNone:
      out << "  - = not measured: the real ranks' compute is not recorded, and no rank is "
             "emulated\n";
      return;
  }
}

// The parallelisms the job's communication ops belong to, and whether it is pipelined.
struct JobShape {
  std::vector<work::Parallelism> parallelisms;
  bool pipelined = false;
  // A job with one kind of communication and no pipeline reads fine from compute and exposed
  // communication alone; any other needs the breakdown.
  bool NeedsBreakdown() const { return parallelisms.size() > 1 || pipelined; }
};

JobShape ShapeOf(const JobSummary& summary) {
  JobShape shape;
  std::set<work::Parallelism> seen;
  for (const auto& c : summary.collectives) seen.insert(c.parallelism);
  shape.parallelisms.assign(seen.begin(), seen.end());
  shape.pipelined = seen.count(work::Parallelism::kPipeline) > 0;
  return shape;
}

void PrintIterations(const RunResult& r, const RankRoles& roles, std::ostream& out) {
  const JobShape shape = ShapeOf(r.summary);
  const bool breakdown = shape.NeedsBreakdown() && roles.compute_simulated();
  std::string header =
      fmt::format("  {:>4}  {:>11}  {:>11}  {:>13}", "iter", "time", "compute", "exposed comm");
  if (breakdown) {
    header += fmt::format("  | per-rank mean: {:>10}", "compute");
    for (work::Parallelism p : shape.parallelisms) {
      header += fmt::format(" {:>10}", std::string(work::ToString(p)));
    }
    header += fmt::format(" {:>10} {:>10}", "bubble", "idle");
  }
  out << header << "\n";
  const bool measured = roles.compute_simulated();
  for (const auto& it : r.summary.iterations) {
    std::string row =
        fmt::format("  {:>4}  {:>11}  {:>11}  {:>13}", it.index, FormatSeconds(it.time_s),
                    measured ? FormatSeconds(it.compute_s) : "-",
                    measured ? FormatSeconds(it.exposed_comm_s) : "-");
    if (breakdown) {
      const IterationBreakdown& b = it.breakdown;
      row += fmt::format("  | {:>25}", FormatSeconds(b.compute_s));
      for (work::Parallelism p : shape.parallelisms) {
        row += fmt::format(" {:>10}", FormatSeconds(b.exposed_s[static_cast<size_t>(p)]));
      }
      row += fmt::format(" {:>10} {:>10}", FormatSeconds(b.bubble_s), FormatSeconds(b.idle_s));
    }
    out << row << "\n";
  }
  if (breakdown) {
    out << "  compute and exposed comm: the busiest rank's; per-rank mean: compute, waits on each "
           "kind of communication, pipeline bubble and idle, averaged over ranks (they add up to "
           "the time)\n";
  }
  const size_t n = r.summary.iterations.size();
  if (n > 1) {
    out << fmt::format("  steady iteration time (mean of iterations 1..{}): {}\n", n - 1,
                       FormatSeconds(SteadyIterationTime(r.summary)));
  }
  if (const auto mfu = SteadyModelFlopsUtilization(r)) {
    out << fmt::format(
        "  model FLOPs utilization (MFU): {:.1f}% of the GPUs' peak, {:.1f} TFLOP/s per GPU "
        "(the model's FLOPs, without recomputation)\n",
        100 * mfu->fraction, mfu->flops_per_gpu_s / 1e12);
  }
  PrintComputeByKind(r.summary, out);
  PrintComputeNote(roles, out);
}

constexpr const char* kLateAndTimeLegend =
    "  late: how long the first member waited for the last to start; time: from then to the "
    "end, as nccl-tests times it (algbw = size / time)\n";

// More instances than this in one iteration are shown grouped by kind, op and size.
constexpr size_t kMaxListedCollectives = 24;

void PrintCollectiveGroups(const RunResult& r, int iteration, std::ostream& out) {
  out << fmt::format(
      "\n  communication of iteration {} by kind (nccl-tests algbw/busbw; means "
      "over instances)\n",
      iteration);
  out << fmt::format("  {:<6} {:<14} {:>11} {:>6} {:>7} {:>11} {:>11} {:>11} {:>11}\n", "kind",
                     "op", "size", "ranks", "count", "late", "time", "algbw GB/s", "busbw GB/s");
  for (const auto& g : GroupCollectives(r.summary, iteration)) {
    out << fmt::format("  {:<6} {:<14} {:>11} {:>6} {:>7} {:>11} {:>11} {:>11.2f} {:>11.2f}\n",
                       std::string(work::ToString(g.parallelism)), OpName(g.is_transfers, g.op),
                       FormatBytes(static_cast<double>(g.bytes)), g.ranks, g.count,
                       FormatSeconds(g.mean_late_s), FormatSeconds(g.mean_run_s),
                       g.mean_algbw_bytes_per_s / 1e9, g.mean_busbw_bytes_per_s / 1e9);
  }
  out << kLateAndTimeLegend;
}

// "Ring", or "Ring/Simple" where a protocol charged the collective (NCCL's names).
std::string AlgorithmAndProtocol(const CollectiveSummary& c) {
  std::string text(coll::ToString(c.algorithm));
  if (c.protocol != coll::Protocol::kIdeal) text += "/" + std::string(coll::ToString(c.protocol));
  return text;
}

void PrintCollectives(const RunResult& r, const RankRoles& roles, std::ostream& out) {
  if (r.summary.collectives.empty()) return;
  const int last = r.summary.collectives.back().iteration;
  const size_t in_last = static_cast<size_t>(
      std::count_if(r.summary.collectives.begin(), r.summary.collectives.end(),
                    [last](const CollectiveSummary& c) { return c.iteration == last; }));
  if (in_last > kMaxListedCollectives) {
    PrintCollectiveGroups(r, last, out);
    return;
  }
  // Only emulated ranks record collectives: with real ranks, say so.
  out << fmt::format("\n  collectives of iteration {}{} (nccl-tests algbw/busbw)\n", last,
                     roles.simulated_job() ? "" : " on the emulated ranks");
  out << fmt::format("  {:<22} {:<14} {:<16} {:>11} {:>11} {:>11} {:>11} {:>11}\n", "label", "op",
                     "algorithm", "size", "late", "time", "algbw GB/s", "busbw GB/s");
  for (const auto& c : r.summary.collectives) {
    if (c.iteration != last) continue;
    out << fmt::format("  {:<22} {:<14} {:<16} {:>11} {:>11} {:>11} {:>11.2f} {:>11.2f}\n", c.label,
                       OpName(c.is_transfers, c.op), c.is_transfers ? "-" : AlgorithmAndProtocol(c),
                       FormatBytes(static_cast<double>(c.bytes)),
                       FormatSeconds(c.all_started_s - c.start_s), FormatSeconds(c.run_s),
                       c.algbw_bytes_per_s / 1e9, c.busbw_bytes_per_s / 1e9);
  }
  out << kLateAndTimeLegend;
}

void PrintNetwork(const RunResult& r, std::ostream& out) {
  const auto& n = r.network;
  const auto& t = r.transport;
  const bool messages = n.absent.count("messages") == 0;
  out << fmt::format("\n  network    payload {} delivered of {} sent{}; {} on the wire\n",
                     FormatBytes(static_cast<double>(t.bytesDelivered)),
                     FormatBytes(static_cast<double>(t.bytesSent)),
                     messages ? fmt::format(" in {} messages", t.messagesSent) : "",
                     FormatBytes(static_cast<double>(n.wireBytes)));
  if (!n.absent.empty()) {
    // The model does not produce these (the flow model has no packets): say so, never 0,
    // with each distinct reason once.
    std::map<std::string, std::string> by_reason;
    for (const auto& [figure, why] : n.absent) {
      by_reason[why] += (by_reason[why].empty() ? "" : ", ") + figure;
    }
    for (const auto& [why, names] : by_reason) {
      out << fmt::format("             {}: not produced, {}\n", names, why);
    }
    if (t.ignoresContention) {
      out << fmt::format(
          "             contention ignored: {} operations shared a link with another running at "
          "the same time{}\n",
          t.contendedOperations,
          t.contendedOperations == 0
              ? ""
              : fmt::format(" (longest overlap {}): their times are optimistic",
                            FormatSeconds(t.longestContentionSeconds)));
    }
    return;
  }
  out << fmt::format("             drops {}, retransmissions {}, ECN marks {}, peak queue {}{}\n",
                     n.drops, t.retransmissions, n.ecnMarks,
                     FormatBytes(static_cast<double>(n.peakQueueBytes)),
                     n.peakQueuePort.empty() ? "" : " at " + n.peakQueuePort);
  if (n.pfcPausesSent > 0 || n.pausedSeconds > 0) {
    out << fmt::format(
        "             PFC pauses {} sent, {} received; paused {} (summed over ports)\n",
        n.pfcPausesSent, n.pfcPausesReceived, FormatSeconds(n.pausedSeconds));
  }
}

void PrintSimulation(const RunResult& r, const PerfFigures& perf,
                     const std::vector<std::string>& written_files, std::ostream& out) {
  out << fmt::format(
      "  simulation {} simulated, {} events; wall {:.2f} s ({:.0f}k events/s), peak memory {}\n",
      FormatSeconds(r.simulated_s), r.events, perf.wall_s, perf.events_per_s / 1e3,
      FormatBytes(static_cast<double>(perf.peak_rss_kib) * 1024.0));
  for (const auto& file : written_files) out << "  wrote      " << file << "\n";
}

}  // namespace

void PrintSummary(const RunResult& r, const PerfFigures& perf,
                  const std::vector<std::string>& written_files, std::ostream& out) {
  const RankRoles roles = RolesOf(r.scenario);
  out << fmt::format("nbox-cosim  {}  (seed {})\n", r.scenario.path, Setting(r, "job.seed"));
  const std::string placement = Setting(r, "job.placement");
  out << fmt::format("  topology   {} [{} hosts, {} switches, {} links]{}\n",
                     r.topology_description, r.hosts, r.switches, r.links,
                     placement == "packed" ? "" : ", ranks placed " + placement);
  PrintWorkload(r, roles, out);
  out << "  network    " << NetworkModelOf(r.scenario).describe([&r](const std::string& key) {
    return Setting(r, key);
  }) << "\n";
  // The all-reduce's algorithm, and every other operation's (and the protocol) where it is not
  // the default.
  std::string algorithms = "allreduce " + Setting(r, "collectives.allreduce");
  static const scenario::Scenario defaults;
  for (const char* key :
       {"collectives.allgather", "collectives.reducescatter", "collectives.broadcast",
        "collectives.reduce", "collectives.alltoall", "collectives.protocol"}) {
    const std::string value = Setting(r, key);
    if (value != scenario::KeyByFullName(key).value.format(defaults)) {
      algorithms += fmt::format(", {} {}", scenario::KeyByFullName(key).name, value);
    }
  }
  out << fmt::format("  collectives {}; {} channels, chunk {}\n", algorithms,
                     Setting(r, "collectives.channels"), Setting(r, "collectives.chunk"));
  out << fmt::format("\n  connections established at {} (before iteration 0, not counted)\n\n",
                     FormatSeconds(r.summary.job_start_s));
  if (r.scenario.workload.kind == work::kNcclTestsKind) {
    // A sweep's iterations are its sizes, warm-up runs included: its table says it better.
    PrintNcclTestsTable(NcclTestsTable(r.summary), out);
  } else {
    PrintIterations(r, roles, out);
    PrintCollectives(r, roles, out);
  }
  // A cluster's job leaves the fabric's figures, shared by every job, to the cluster's lines.
  if (!r.cluster_job.empty()) return;
  PrintNetwork(r, out);
  PrintRealRanks(r.real_ranks, out);
  PrintSimulation(r, perf, written_files, out);
}

void PrintClusterSummary(const RunResult& cluster, const std::vector<RunResult>& jobs,
                         const std::vector<ClusterJobFacts>& facts, const PerfFigures& perf,
                         const std::vector<std::string>& written_files, std::ostream& out) {
  for (const RunResult& job : jobs) {
    out << fmt::format("job {} of the cluster {}\n", job.cluster_job, cluster.scenario.path);
    PrintSummary(job, perf, {}, out);
    out << "\n";
  }
  out << fmt::format("nbox-cosim  {}  (seed {}): a cluster of {} jobs\n", cluster.scenario.path,
                     Setting(cluster, "job.seed"), jobs.size());
  out << fmt::format("  topology   {} [{} hosts, {} switches, {} links]\n",
                     cluster.topology_description, cluster.hosts, cluster.switches, cluster.links);
  const bool alone = cluster.scenario.cluster.alone;
  out << fmt::format("  {:<16} {:>6} {:<22} {:>10} {:>12} {:>16} {:>14}{}\n", "job", "ranks",
                     "hosts", "start", "iterations", "steady iteration", "exposed comm",
                     alone ? fmt::format(" {:>12} {:>9}", "alone", "slowdown") : "");
  for (size_t j = 0; j < jobs.size(); ++j) {
    const RunResult& job = jobs[j];
    const double together = SteadyIterationTime(job.summary);
    std::string against_alone;
    if (alone) {
      const std::optional<double> slowdown = Slowdown(together, facts[j].alone_steady_s);
      against_alone = fmt::format(
          " {:>12} {:>9}", facts[j].alone_steady_s ? FormatSeconds(*facts[j].alone_steady_s) : "-",
          slowdown ? fmt::format("{:.2f}x", *slowdown) : "-");
    }
    out << fmt::format("  {:<16} {:>6} {:<22} {:>10} {:>12} {:>16} {:>14}{}\n", job.cluster_job,
                       job.scenario.job.world_size, facts[j].hosts,
                       FormatSeconds(job.scenario.job.start_s), job.summary.iterations.size(),
                       FormatSeconds(together), FormatSeconds(SteadyExposedComm(job.summary)),
                       against_alone);
  }
  PrintNetwork(cluster, out);
  PrintSimulation(cluster, perf, written_files, out);
}

}  // namespace nbox::cosim
