#include "tools/cosim/scenario/cross_key_rules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

#include "common/units.h"
#include "tools/cosim/scenario/key_schema.h"
#include "tools/cosim/scenario/rule_context.h"
#include "tools/cosim/scenario/timed_change_values.h"
#include "tools/cosim/scenario/workload_rules.h"
#include "topologies/servers.h"

namespace nbox::scenario {
namespace {

void CheckHostCount(RuleContext& context) {
  const Scenario& s = context.scenario();
  const TopologySection& topology = s.topology;
  const uint64_t needed = static_cast<uint64_t>(s.job.world_size);
  const std::string world = context.Describe("job.world_size");
  const std::string kind = context.Describe("topology.kind");
  if (topology.kind == TopologyKind::kStar) {
    if (topology.hosts != 0 && static_cast<uint64_t>(topology.hosts) < needed) {
      context.Fail(fmt::format("{} needs {} hosts but {} has {}", world, needed, kind,
                               context.Describe("topology.hosts")));
    }
  } else if (topology.kind == TopologyKind::kLeafSpine) {
    const uint64_t hosts = static_cast<uint64_t>(topology.leaves) * topology.hosts_per_leaf;
    if (hosts < needed) {
      context.Fail(fmt::format("{} needs {} hosts but {} has {}: {} x {}", world, needed, kind,
                               hosts, context.Describe("topology.leaves"),
                               context.Describe("topology.hosts_per_leaf")));
    }
  } else if (topology.kind == TopologyKind::kFatTree) {
    const uint64_t k = static_cast<uint64_t>(topology.k);
    if (k % 2 != 0) {
      context.Fail(
          fmt::format("{} needs an even topology.k, got {}", kind, context.Describe("topology.k")));
      return;
    }
    const uint64_t hosts = k * k * k / 4;
    if (hosts < needed) {
      context.Fail(fmt::format("{} needs {} hosts but {} has {}: k^3/4 with {}", world, needed,
                               kind, hosts, context.Describe("topology.k")));
    }
  }
}

// A rail fabric's communicators ring and tree over its servers with ranks filling them in order
// (collectives_config.cc): another placement would need them to follow it.
void CheckPlacement(RuleContext& context) {
  const Scenario& s = context.scenario();
  if (s.job.placement != Placement::kPacked && s.topology.kind == TopologyKind::kRail) {
    context.Fail(fmt::format(
        "{} is not there yet on {}: its GPUs fill the servers in order (job.placement = packed), "
        "which the communicators' rings and trees follow",
        context.Describe("job.placement"), context.Describe("topology.kind")));
  }
}

void CheckCongestionControl(RuleContext& context) {
  const NetworkSection& network = context.scenario().network;
  if (network.tcp_cc == "dctcp" && !network.ecn) {
    context.Fail(fmt::format("{} requires network.ecn = on, got {}",
                             context.Describe("network.tcp_cc"), context.Describe("network.ecn")));
  }
}

// Cut-through is a property of NboxCutThroughChannel, the TCP path's links; the RoCE path's
// switches (NboxRoceSwitch) store and forward.
void CheckSwitching(RuleContext& context) {
  const NetworkSection& network = context.scenario().network;
  if (network.switching == Switching::kCutThrough && network.transport == Transport::kRoce) {
    context.Fail(fmt::format("{} is not modelled on {}: its switches store and forward",
                             context.Describe("network.switching"),
                             context.Describe("network.transport")));
  }
}

void CheckQueues(RuleContext& context) {
  const NetworkSection& network = context.scenario().network;
  if (network.switch_queue_bytes < network.mtu) {
    context.Fail(fmt::format("{} must hold at least one packet of {}",
                             context.Describe("network.switch_queue"),
                             context.Describe("network.mtu")));
  }
  // The threshold means nothing while ECN is off.
  if (network.ecn && network.ecn_threshold_bytes >= network.switch_queue_bytes) {
    context.Fail(
        fmt::format("{} must be below {} when {}", context.Describe("network.ecn_threshold"),
                    context.Describe("network.switch_queue"), context.Describe("network.ecn")));
  }
}

// A chunk cuts messages on element boundaries (collectives/layout.h); 8 bytes is the widest
// element (workload.gradient_bytes), so 1..7 would be less than an element of some job.
}  // namespace

// A TCP retransmission timeout shorter than the smallest round trip the network allows (a full
// packet stored and forwarded over two links of the slowest rate, the ACK back) fires before
// any ACK can arrive: TCP then retransmits on a lossless network for as long as the run lasts
// (1 Mb/s host links with a 1 ms timeout simulated thousands of seconds for 40 KB). The rate is
// the scenario's slowest link of a built-in topology; topology files and rail fabrics are
// checked once built.
void CheckTcpMinRto(RuleContext& context) {
  const Scenario& s = context.scenario();
  const TopologyKind kind = s.topology.kind;
  double slowest_bps = 0;
  if (kind == TopologyKind::kStar) {
    slowest_bps = s.topology.host_link_bps;
  } else if (kind == TopologyKind::kLeafSpine || kind == TopologyKind::kFatTree) {
    slowest_bps = std::min(s.topology.host_link_bps, s.topology.fabric_link_bps);
  } else {
    return;  // a topology file or a rail fabric: checked once built
             // (tools/cosim/assembly/assembly.cc)
  }
  const std::string refusal =
      TcpMinRtoRefusal(s, slowest_bps, context.Describe("network.tcp_min_rto"), "this network");
  if (!refusal.empty()) context.Fail(refusal);
}

namespace {

void CheckChunk(RuleContext& context) {
  const uint64_t chunk = context.scenario().collectives.chunk_bytes;
  if (chunk > 0 && chunk < 8) {
    context.Fail(
        fmt::format("{} must be 0 (no chunking) or at least 8 bytes, one element of "
                    "the widest type",
                    context.Describe("collectives.chunk")));
  }
}

void ApplyOversubscription(RuleContext& context) {
  TopologySection& topology = context.scenario().topology;
  if (topology.oversubscription <= 0) return;
  const std::string ratio = context.Describe("topology.oversubscription");
  if (topology.kind != TopologyKind::kLeafSpine) {
    context.Fail(fmt::format("{} applies only to topology.kind = leaf-spine, got {}", ratio,
                             context.Describe("topology.kind")));
    return;
  }
  if (context.Given("topology.fabric_link")) {
    context.Fail(
        fmt::format("{} and {} are mutually exclusive: oversubscription sets fabric_link = "
                    "hosts_per_leaf x host_link / (spines x oversubscription)",
                    ratio, context.Describe("topology.fabric_link")));
    return;
  }
  topology.fabric_link_bps = topology.hosts_per_leaf * topology.host_link_bps /
                             (topology.spines * topology.oversubscription);
  // The derived rate must still be one the key itself would accept.
  const KeySpec& fabric = KeyByFullName("topology.fabric_link");
  Scenario probe;
  if (!fabric.value.parse(fabric.value.format(context.scenario()), probe)) {
    context.Fail(fmt::format(
        "{} gives topology.fabric_link = {} ({} x {} / ({} x {})), "
        "expected {}",
        ratio, fabric.value.format(context.scenario()), context.Describe("topology.hosts_per_leaf"),
        context.Describe("topology.host_link"), context.Describe("topology.spines"), ratio,
        fabric.value.expected));
  }
}

void CheckCustomModel(RuleContext& context) {
  const WorkloadSection& workload = context.scenario().workload;
  if (workload.model != "custom" || workload.kind != "ddp") return;
  std::vector<std::string> missing;
  if (workload.parameters == 0) missing.push_back("workload.parameters");
  if (workload.layers == 0) missing.push_back("workload.layers");
  if (workload.flops_per_sample == 0) missing.push_back("workload.flops_per_sample");
  if (missing.empty()) return;
  context.Fail(
      fmt::format("{} requires workload.parameters, workload.layers and "
                  "workload.flops_per_sample; missing: {}",
                  context.Describe("workload.model"), fmt::join(missing, ", ")));
}

// `file` as a path: a relative one starts at `folder`. "" where no such file (or folder) is.
std::string ExistingPath(const std::filesystem::path& folder, const std::string& file,
                         bool is_folder, std::filesystem::path& tried) {
  tried = file;
  if (tried.is_relative()) tried = (folder / tried).lexically_normal();
  std::error_code error;
  const bool found = is_folder ? std::filesystem::is_directory(tried, error)
                               : std::filesystem::is_regular_file(tried, error);
  return found ? tried.string() : "";
}

// A key naming a file, used when `selector` (e.g. "topology.kind") is set to `value`: required
// then, refused otherwise; a relative path is resolved against the scenario file's folder, and
// the file must exist.
void ResolveFileKey(RuleContext& context, const std::filesystem::path& scenario_folder,
                    const std::string& selector, const std::string& value,
                    const std::string& file_key, std::string& file, bool folder = false) {
  const std::string chosen = KeyByFullName(selector).value.format(context.scenario());
  if (chosen != value) {
    if (!file.empty()) {
      context.Fail(fmt::format("{} is used only with {} = {}, got {}", context.Describe(file_key),
                               selector, value, context.Describe(selector)));
    }
    return;
  }
  if (file.empty()) {
    context.Fail(fmt::format("{} requires {}", context.Describe(selector), file_key));
    return;
  }
  std::filesystem::path tried;
  const std::string found =
      ExistingPath(context.FolderOf(file_key, scenario_folder), file, folder, tried);
  if (found.empty()) {
    context.Fail(fmt::format("{}: no such {} '{}'", context.Describe(file_key),
                             folder ? "folder" : "file", tried.string()));
    return;
  }
  file = found;
}

void ResolveTopologyFile(RuleContext& context, const std::filesystem::path& scenario_folder) {
  ResolveFileKey(context, scenario_folder, "topology.kind", "file", "topology.file",
                 context.scenario().topology.file);
}

void ResolvePlacementFile(RuleContext& context, const std::filesystem::path& scenario_folder) {
  ResolveFileKey(context, scenario_folder, "job.placement", "file", "job.placement_file",
                 context.scenario().job.placement_file);
}

void ResolveTraceFile(RuleContext& context, const std::filesystem::path& scenario_folder) {
  ResolveFileKey(context, scenario_folder, "workload.model", "trace", "workload.trace",
                 context.scenario().workload.trace);
  ResolveFileKey(context, scenario_folder, "workload.kind", "chakra", "workload.trace_dir",
                 context.scenario().workload.trace_dir, /*folder=*/true);
  ResolveFileKey(context, scenario_folder, "workload.compute", "profile",
                 "workload.compute_profile", context.scenario().workload.compute_profile);
}

// --- clusters -----------------------------------------------------------------------

// A cluster's job files exist (relative ones found from the scenario's folder) and have
// distinct names (their reports are named by them); real ranks run in single jobs only.
void CheckCluster(RuleContext& context, const std::filesystem::path& scenario_folder) {
  std::vector<std::string>& jobs = context.scenario().cluster.jobs;
  if (jobs.empty()) return;
  if (!context.scenario().realranks.ranks.empty()) {
    context.Fail(
        fmt::format("{} with {}: real ranks run in a scenario of one job, not yet in a "
                    "cluster",
                    context.Describe("realranks.ranks"), context.Describe("cluster.job")));
  }
  std::map<std::string, std::string> file_of_name;
  for (std::string& job : jobs) {
    std::filesystem::path tried;
    const std::string found = ExistingPath(scenario_folder, job, /*is_folder=*/false, tried);
    if (found.empty()) {
      context.Fail(fmt::format("cluster.job = {}: no such file '{}'", job, tried.string()));
      continue;
    }
    job = found;
    const auto [earlier, added] = file_of_name.emplace(ClusterJobName(job), job);
    if (!added) {
      context.Fail(
          fmt::format("cluster.job: '{}' and '{}' are both named '{}'; a cluster's jobs "
                      "are named by their files, which must differ",
                      earlier->second, job, earlier->first));
    }
  }
}

// --- real ranks ---------------------------------------------------------------------

void CheckRealRanks(RuleContext& context) {
  const Scenario& s = context.scenario();
  const RealRanksSection& real = s.realranks;
  if (real.ranks.empty()) {
    // Settings that only a run with real ranks reads: setting them without ranks is a mistake.
    auto needs_ranks = [&context](const char* key) {
      context.Fail(fmt::format("{} needs real ranks, but {}", context.Describe(key),
                               context.Describe("realranks.ranks")));
    };
    if (!real.launch.empty()) needs_ranks("realranks.launch");
    if (s.debug.slowdown_s > 0) needs_ranks("debug.slowdown");
    return;
  }
  // A real rank's host runtime runs its collectives one at a time in issue order, and its
  // messages carry no tags to tell concurrent collectives apart.
  if (s.collectives.order != CollectiveOrder::kFifo || s.collectives.concurrent != 1) {
    context.Fail(fmt::format(
        "{} and {} cannot run with real ranks ({}): the host runtime runs "
        "collectives one at a time in issue order (fifo, 1)",
        context.Describe("collectives.order"), context.Describe("collectives.concurrent"),
        context.Describe("realranks.ranks")));
  }
  for (int rank : real.ranks) {
    if (rank >= s.job.world_size) {
      context.Fail(fmt::format("{} names rank {}, but {} has ranks 0 to {}",
                               context.Describe("realranks.ranks"), rank,
                               context.Describe("job.world_size"), s.job.world_size - 1));
      return;
    }
  }
}

// Stragglers are named ranks of the job, and a slowdown names whom it slows.
// `world`: the ranks the events may name (a cluster's job is checked against none: the
// events name the cluster's ranks, counted once every job is read).
void CheckEvents(RuleContext& context, int world) {
  const EventsSection& events = context.scenario().events;
  if (events.slow_gpus.empty() != (events.slowdown == 1)) {
    context.Fail(fmt::format("{} and {} go together: the ranks to slow and a factor above 1",
                             context.Describe("events.slow_gpus"),
                             context.Describe("events.slowdown")));
    return;
  }
  for (int rank : events.slow_gpus) {
    if (rank >= world) {
      context.Fail(fmt::format("{} names rank {}, but {} has ranks 0 to {}",
                               context.Describe("events.slow_gpus"), rank,
                               context.Describe("job.world_size"), world - 1));
      return;
    }
  }
  // A real rank's GPU is the one it runs on: nbox does not time its compute.
  const std::vector<int>& real = context.scenario().realranks.ranks;
  for (const TimedChange& change : events.changes) {
    for (int rank : change.ranks) {
      if (rank >= world) {
        context.Fail(fmt::format("[events] at = '{}' names rank {}, but {} has ranks 0 to {}",
                                 TimedChangeText(change), rank, context.Describe("job.world_size"),
                                 world - 1));
        return;
      }
      if (std::find(real.begin(), real.end(), rank) != real.end()) {
        context.Fail(fmt::format(
            "[events] at = '{}' slows rank {}, which {} makes real: a real rank computes on "
            "its own GPU, which nbox does not time",
            TimedChangeText(change), rank, context.Describe("realranks.ranks")));
        return;
      }
    }
  }
}

// The hierarchical all-reduce and all-to-all need servers (topology.kind = rail). With rail, a
// named preset fills the [servers] keys not given, and the ranks must fill whole servers. Other
// kinds ignore [servers], as star ignores the leaf-spine keys.
void ApplyServers(RuleContext& context, bool check_world) {
  Scenario& s = context.scenario();
  ServersSection& servers = s.servers;
  const std::string kind = context.Describe("topology.kind");
  if (s.topology.kind != TopologyKind::kRail) {
    for (const auto& [key, choice] : {std::pair{"collectives.allreduce", s.collectives.allreduce},
                                      std::pair{"collectives.alltoall", s.collectives.alltoall}}) {
      if (choice == coll::AlgorithmChoice::kHierarchical) {
        context.Fail(fmt::format("{} needs servers: topology.kind = rail, got {}",
                                 context.Describe(key), kind));
      }
    }
    return;
  }
  if (const topo::ServerPreset* preset = topo::FindServerPreset(servers.preset)) {
    if (!context.Given("servers.gpus")) servers.gpus = preset->gpus;
    if (!context.Given("servers.nvlink")) servers.nvlink_bps = preset->nvlink_rate_bps;
    if (!context.Given("servers.nic")) servers.nic_bps = preset->nic_rate_bps;
  } else {
    std::vector<std::string> missing;
    for (const char* key : {"servers.gpus", "servers.nvlink", "servers.nic"}) {
      if (!context.Given(key)) missing.push_back(key);
    }
    if (!missing.empty()) {
      context.Fail(
          fmt::format("{} requires servers.gpus, servers.nvlink and servers.nic; missing: {}",
                      context.Describe("servers.preset"), fmt::join(missing, ", ")));
      return;
    }
  }
  if (!check_world) return;
  const uint64_t gpus = static_cast<uint64_t>(servers.gpus);
  const uint64_t capacity = static_cast<uint64_t>(servers.count) * gpus;
  const uint64_t world = static_cast<uint64_t>(s.job.world_size);
  const std::string world_text = context.Describe("job.world_size");
  if (world > capacity) {
    context.Fail(fmt::format("{} needs {} GPUs but {} has {}: {} x {}", world_text, world, kind,
                             capacity, context.Describe("servers.count"),
                             context.Describe("servers.gpus")));
  } else if (world % gpus != 0) {
    context.Fail(fmt::format(
        "{} must be a multiple of {}: ranks fill whole servers, as the server-aware ring "
        "and the hierarchical all-reduce need",
        world_text, context.Describe("servers.gpus")));
  }
}

// --- RoCE -----------------------------------------------------------------------------

void CheckRoce(RuleContext& context) {
  const RoceSection& roce = context.scenario().roce;
  if (roce.ecn_kmin_bytes > roce.ecn_kmax_bytes) {
    context.Fail(fmt::format("{} must not exceed {}", context.Describe("roce.ecn_kmin"),
                             context.Describe("roce.ecn_kmax")));
  }
  if (roce.timely_t_low_s > roce.timely_t_high_s) {
    context.Fail(fmt::format("{} must not exceed {}", context.Describe("roce.timely_t_low"),
                             context.Describe("roce.timely_t_high")));
  }
  if (roce.data_priority == roce.control_priority) {
    context.Fail(fmt::format(
        "{} must differ from {}: ACKs and CNPs must not wait behind paused "
        "data",
        context.Describe("roce.control_priority"), context.Describe("roce.data_priority")));
  }
}

}  // namespace

double SmallestTcpRoundTripSeconds(uint32_t mtu, double slowest_bps) {
  return 2.0 * (mtu + 2) * 8 / slowest_bps;
}

std::string TcpMinRtoRefusal(const Scenario& s, double slowest_bps,
                             const std::string& key_described,
                             const std::string& network_described) {
  if (s.network.transport != Transport::kTcp || slowest_bps <= 0) return "";
  const double round_trip_s = SmallestTcpRoundTripSeconds(s.network.mtu, slowest_bps);
  if (s.network.tcp_min_rto_s >= round_trip_s) return "";
  return fmt::format(
      "{} is shorter than the smallest round trip on {}, {} (a {}-byte packet stored and "
      "forwarded over two links of {}): every timeout would fire before an ACK can arrive; "
      "expected at least that (Linux's 200ms is the default)",
      key_described, network_described, FormatSeconds(round_trip_s), s.network.mtu,
      FormatRate(slowest_bps));
}

// output.messages logs the messages of simulated schedules: a real rank's sends are posted
// outside the simulation (their dependencies unknown). A network model without messages refuses
// it itself (tools/cosim/network_models/).
void CheckMessageLog(RuleContext& context) {
  const Scenario& s = context.scenario();
  if (s.output.messages == MessageLog::kNone) return;
  if (!s.realranks.ranks.empty()) {
    context.Fail(
        fmt::format("{} is not written with real ranks ({}): their sends are posted "
                    "outside the simulation",
                    context.Describe("output.messages"), context.Describe("realranks.ranks")));
  }
}

std::vector<std::string> ApplyCrossKeyRules(Scenario& scenario, const KeyOrigins& origins,
                                            const std::filesystem::path& scenario_folder,
                                            RuleScope scope) {
  RuleContext context(scenario, origins);
  // A cluster file's own [job] and [workload] are only what its jobs' files are read over:
  // each job is checked as a scenario of its own, and their ranks together at assembly.
  const bool whole_cluster = scope == RuleScope::kWholeCluster;
  if (!whole_cluster) {
    CheckHostCount(context);
    CheckPlacement(context);
  }
  CheckCongestionControl(context);
  CheckQueues(context);
  CheckSwitching(context);
  CheckChunk(context);
  CheckRoce(context);
  ApplyOversubscription(context);
  if (!whole_cluster) {
    CheckCustomModel(context);
    // Before the workload's checks, which read the files the workload names.
    ResolveTraceFile(context, scenario_folder);
    CheckWorkloadKind(context);
  }
  ResolveTopologyFile(context, scenario_folder);
  if (!whole_cluster) ResolvePlacementFile(context, scenario_folder);
  if (scope != RuleScope::kClusterJob) CheckCluster(context, scenario_folder);
  CheckRealRanks(context);
  CheckEvents(context,
              scope == RuleScope::kJob ? scenario.job.world_size : std::numeric_limits<int>::max());
  CheckMessageLog(context);
  ApplyServers(context, /*check_world=*/!whole_cluster);
  return context.TakeMessages();
}

std::string EventRankBeyond(const EventsSection& events, int world) {
  for (int rank : events.slow_gpus) {
    if (rank >= world) {
      return fmt::format(
          "events.slow_gpus names rank {}, but the cluster's jobs have ranks 0 "
          "to {}",
          rank, world - 1);
    }
  }
  for (const TimedChange& change : events.changes) {
    for (int rank : change.ranks) {
      if (rank >= world) {
        return fmt::format(
            "[events] at = '{}' names rank {}, but the cluster's jobs have ranks "
            "0 to {}",
            TimedChangeText(change), rank, world - 1);
      }
    }
  }
  return "";
}

}  // namespace nbox::scenario
