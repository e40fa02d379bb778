#include <sys/resource.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "tools/cosim/network_models.h"
#include "tools/cosim/real_ranks/rank_roles.h"
#include "tools/cosim/real_ranks/real_rank_json.h"
#include "tools/cosim/reports/model_flops_utilization.h"
#include "tools/cosim/reports/nccl_tests_table.h"
#include "tools/cosim/reports/run_result.h"
#include "workloads/nccl_tests.h"

namespace nbox::cosim {

long PeakRssKib() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // Linux reports KiB
}

namespace {

// `key` belongs to a section that another network model than the scenario's keeps for itself.
bool IsOtherModelsSection(const scenario::Scenario& s, const std::string& key) {
  for (const NetworkModel& model : NetworkModels()) {
    if (model.own_section.empty() || model.name == s.network.model) continue;
    if (key.rfind(model.own_section + ".", 0) == 0) return true;
  }
  return false;
}

using nlohmann::ordered_json;

// `value`, or null when the run did not measure it.
ordered_json MeasuredOrNull(bool measured, double value) {
  return measured ? ordered_json(value) : ordered_json(nullptr);
}

// Per-rank means of an iteration (summary.h); null when no rank's time was simulated.
ordered_json BreakdownJson(const IterationBreakdown& b, bool measured) {
  if (!measured) return nullptr;
  ordered_json exposed = ordered_json::object();
  for (int p = 0; p < work::kParallelismCount; ++p) {
    exposed[std::string(work::ToString(static_cast<work::Parallelism>(p)))] =
        b.exposed_s[static_cast<size_t>(p)];
  }
  ordered_json out = {{"ranks", b.ranks},
                      {"compute_s", b.compute_s},
                      {"exposed_s", std::move(exposed)},
                      {"bubble_s", b.bubble_s},
                      {"idle_s", b.idle_s}};
  // Only where the workload timed its compute by kind of kernel (absent, never 0, otherwise).
  const work::ComputeCost& k = b.compute_by_kind;
  if (k.total() > 0) {
    out["compute_by_kind_s"] = {{"gemm", k.gemm_s},
                                {"attention", k.attention_s},
                                {"memory_bound", k.memory_s},
                                {"optimizer", k.optimizer_s},
                                {"kernel_overhead", k.launch_s}};
  }
  return out;
}

// `compute_measured`: false when no rank's compute is recorded (real ranks with mirroring or
// no emulated peers): compute and exposed communication are null, never a false 0.
ordered_json IterationsJson(const JobSummary& summary, bool compute_measured) {
  ordered_json out = ordered_json::array();
  for (const auto& it : summary.iterations) {
    out.push_back({{"iteration", it.index},
                   {"start_s", it.start_s},
                   {"end_s", it.end_s},
                   {"time_s", it.time_s},
                   {"compute_s", MeasuredOrNull(compute_measured, it.compute_s)},
                   {"exposed_comm_s", MeasuredOrNull(compute_measured, it.exposed_comm_s)},
                   {"breakdown", BreakdownJson(it.breakdown, compute_measured)}});
  }
  return out;
}

// The scenario's model: null when no rank ran the workload (mirroring or every rank real).
ordered_json ModelJson(const work::ModelSpec& model, bool workload_ran) {
  if (!workload_ran) return nullptr;
  return {{"name", model.name},
          {"parameters", model.parameters},
          {"layers", model.layers},
          {"forward_flops_per_sample", model.forward_flops_per_sample},
          {"source", model.source}};
}

// One collective instance of results.json's `collectives`.
ordered_json CollectiveJson(const CollectiveSummary& c) {
  return {{"iteration", c.iteration},
          {"label", c.label},
          {"group", c.group},
          {"parallelism", std::string(work::ToString(c.parallelism))},
          {"op", OpName(c.is_transfers, c.op)},
          {"algorithm", c.is_transfers ? ordered_json(nullptr)
                                       : ordered_json(std::string(coll::ToString(c.algorithm)))},
          {"protocol", c.is_transfers ? ordered_json(nullptr)
                                      : ordered_json(std::string(coll::ToString(c.protocol)))},
          {"bytes", c.bytes},
          {"ranks", c.ranks},
          {"start_s", c.start_s},
          {"all_started_s", c.all_started_s},
          {"end_s", c.end_s},
          {"time_s", c.time_s},
          {"run_s", c.run_s},
          {"algbw_GBps", c.algbw_bytes_per_s / 1e9},
          {"busbw_GBps", c.busbw_bytes_per_s / 1e9}};
}

// `value` as dump(2) writes it `depth` levels down a document: every line after the first
// indented by 2 x depth more (a dumped string holds no raw newline: JSON escapes it).
void WriteIndented(const ordered_json& value, int depth, std::ostream& out) {
  const std::string text = value.dump(2);
  const std::string indent(static_cast<size_t>(2 * depth), ' ');
  size_t from = 0;
  for (size_t newline = text.find('\n'); newline != std::string::npos;
       newline = text.find('\n', from)) {
    out.write(text.data() + from, static_cast<std::streamsize>(newline + 1 - from));
    out << indent;
    from = newline + 1;
  }
  out.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
}

// The `collectives` array as dump(2) writes it one level down, built one instance at a time:
// a large job has millions of instances, whose whole document would take gigabytes.
void WriteCollectives(const JobSummary& summary, std::ostream& out) {
  if (summary.collectives.empty()) {
    out << "[]";
    return;
  }
  out << "[";
  const char* separator = "\n    ";
  for (const auto& c : summary.collectives) {
    out << separator;
    WriteIndented(CollectiveJson(c), 2, out);
    separator = ",\n    ";
  }
  out << "\n  ]";
}

// A figure the network model does not produce is null, never 0; `absent` says why.
ordered_json Figure(const ns3::NboxNetworkStats& net, const char* name, ordered_json value) {
  return net.absent.count(name) ? ordered_json(nullptr) : value;
}

// `pfc`: the RoCE path, whose ports also report PFC pauses and paused time.
ordered_json NetworkJson(const ns3::NboxNetworkStats& net, const ns3::NboxTransportStats& tr,
                         bool pfc) {
  pfc = pfc && !net.absent.count("pfc_pauses");
  ordered_json ports = ordered_json::array();
  for (const auto& p : net.ports) {
    ports.push_back({{"from", p.fromNode},
                     {"to", p.toNode},
                     {"from_switch", p.fromSwitch},
                     {"link", p.linkId},
                     {"tx_bytes", p.txBytes},
                     {"tx_packets", p.txPackets},
                     {"drops", Figure(net, "drops", p.drops)},
                     {"ecn_marks", Figure(net, "ecn_marks", p.ecnMarks)},
                     {"peak_queue_bytes", Figure(net, "peak_queue_bytes", p.peakQueueBytes)}});
    if (pfc) {
      ports.back()["pfc_pauses_sent"] = p.pfcPausesSent;
      ports.back()["pfc_pauses_received"] = p.pfcPausesReceived;
      ports.back()["paused_s"] = p.pausedSeconds;
    }
  }
  const bool queues = !net.absent.count("peak_queue_bytes");
  ordered_json out = {
      {"payload_bytes_sent", tr.bytesSent},
      {"payload_bytes_delivered", tr.bytesDelivered},
      {"messages_sent", Figure(net, "messages", tr.messagesSent)},
      {"messages_delivered", Figure(net, "messages", tr.messagesDelivered)},
      {"connections", tr.connections},
      {"host_wire_bytes", net.hostTxBytes},
      {"wire_bytes", net.wireBytes},
      {"drops", Figure(net, "drops", net.drops)},
      {"retransmissions", Figure(net, "retransmissions", tr.retransmissions)},
      {"retransmitted_bytes", Figure(net, "retransmissions", tr.retransmittedBytes)},
      {"ecn_marks", Figure(net, "ecn_marks", net.ecnMarks)},
      {"peak_queue_bytes", Figure(net, "peak_queue_bytes", net.peakQueueBytes)},
      {"peak_queue_port", queues ? ordered_json(net.peakQueuePort) : nullptr},
      {"ports", std::move(ports)}};
  if (pfc) {
    out["pfc_pauses_sent"] = net.pfcPausesSent;
    out["pfc_pauses_received"] = net.pfcPausesReceived;
    out["paused_s"] = net.pausedSeconds;  // summed over ports
  }
  if (tr.ignoresContention) {  // the model counts where it did (analytical)
    out["contended_operations"] = tr.contendedOperations;
    out["longest_contention_s"] = tr.longestContentionSeconds;
  }
  if (!net.absent.empty()) {
    ordered_json absent = ordered_json::object();
    for (const auto& [figure, why] : net.absent) absent[figure] = why;
    out["absent"] = std::move(absent);
  }
  return out;
}

}  // namespace

std::string RunStatus(const RunResult& r) {
  if (!r.failure.empty()) return "failed: " + r.failure;
  if (r.real_ranks.present && r.real_ranks.failed) return "failed (partial results)";
  if (!r.interrupted.empty()) return r.interrupted + " (partial results)";
  return "complete";
}

ordered_json NetworkJson(const RunResult& r) {
  return NetworkJson(r.network, r.transport,
                     r.scenario.network.transport == scenario::Transport::kRoce);
}

namespace {

ordered_json ResultsDocument(const RunResult& r) {
  ordered_json settings = ordered_json::object();
  const bool roce = r.scenario.network.transport == scenario::Transport::kRoce;
  // Where the results go is not an input of the simulation: leaving it out keeps two runs
  // of one scenario byte-identical wherever they write.
  // The [realranks] and [debug] keys mean nothing to a simulated job; leaving them out keeps
  // its results byte-identical to those written before real ranks existed.
  const RankRoles roles = RolesOf(r.scenario);
  const bool real_ranks = !roles.simulated_job();
  // What the workload figures describe (rank_roles.h): a simulated job's are all there.
  const bool workload_ran = roles.emulated_program == EmulatedProgram::kWorkload;
  const bool compute_measured = roles.compute_simulated();
  for (const auto& [key, value] : r.scenario.settings) {
    if (key == "output.dir") continue;
    // [roce] means nothing to the TCP path: TCP results stay as they were before it.
    if (!roce && key.rfind("roce.", 0) == 0) continue;
    // Likewise a network model's own section ([analytical]) for the other models.
    if (IsOtherModelsSection(r.scenario, key)) continue;
    if (!real_ranks && (key.rfind("realranks.", 0) == 0 || key.rfind("debug.", 0) == 0)) continue;
    // Likewise [cluster] for a run of one job.
    if (r.scenario.cluster.jobs.empty() && key.rfind("cluster.", 0) == 0) continue;
    settings[key] = value;
  }
  ordered_json out = {
      {"status", RunStatus(r)},
      {"scenario", {{"path", r.scenario.path}, {"settings", std::move(settings)}}},
      {"topology",
       {{"description", r.topology_description},
        {"hosts", r.hosts},
        {"switches", r.switches},
        {"links", r.links}}},
      {"model", ModelJson(r.model, workload_ran)},
      {"workload", workload_ran ? r.workload_details : ordered_json(nullptr)},
      {"job_start_s", r.summary.job_start_s},
      {"steady_iteration_time_s", SteadyIterationTime(r.summary)},
      {"steady_exposed_comm_s", MeasuredOrNull(compute_measured, SteadyExposedComm(r.summary))},
      {"collectives_per_iteration",
       workload_ran ? ordered_json(r.collectives_per_iteration) : ordered_json(nullptr)},
      {"iterations", IterationsJson(r.summary, compute_measured)},
      {"collectives", nullptr},  // written by WriteResultsJson, instance by instance
      {"network", NetworkJson(r)},
      {"simulation", {{"events", r.events}, {"simulated_s", r.simulated_s}}},
  };
  if (const auto mfu = SteadyModelFlopsUtilization(r)) {
    out["steady_model_flops_utilization"] = mfu->fraction;
    out["steady_model_flops_per_gpu_s"] = mfu->flops_per_gpu_s;
  }
  if (r.real_ranks.present) out["real_ranks"] = RealRanksJson(r.real_ranks, roles);
  if (!r.cluster_job.empty()) out["cluster_job"] = r.cluster_job;
  if (r.scenario.workload.kind == work::kNcclTestsKind) {
    out["nccl_tests"] = NcclTestsJson(NcclTestsTable(r.summary));
  }
  return out;
}

}  // namespace

std::string ResultsJson(const RunResult& r) {
  std::ostringstream out;
  WriteResultsJson(r, out);
  return out.str();
}

void WriteResultsJson(const RunResult& r, std::ostream& out) {
  // As the whole document's dump(2), one member at a time (a member is at most a few kilobytes
  // but `collectives`, which goes out instance by instance).
  const ordered_json document = ResultsDocument(r);
  out << "{";
  const char* separator = "\n  ";
  for (const auto& [key, value] : document.items()) {
    out << separator << ordered_json(key).dump() << ": ";
    if (key == "collectives") {
      WriteCollectives(r.summary, out);
    } else {
      WriteIndented(value, 1, out);
    }
    separator = ",\n  ";
  }
  out << "\n}\n";
}

std::string PerfJson(const RunResult& r, const PerfFigures& perf) {
  ordered_json out = {
      {"scenario", r.scenario.path},       {"events", r.events},
      {"simulated_s", r.simulated_s},      {"wall_s", perf.wall_s},
      {"events_per_s", perf.events_per_s}, {"wall_per_simulated_s", perf.wall_per_simulated_s},
      {"peak_rss_kib", perf.peak_rss_kib}};
  return out.dump(2) + "\n";
}

}  // namespace nbox::cosim
