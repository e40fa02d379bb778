#include "tools/cosim/assembly/assembly.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include "common/units.h"
#include "ns3/core-module.h"
#include "ns3/data-rate.h"
#include "ns3/enum.h"
#include "ns3/nbox-communicator.h"
#include "ns3/nbox-job-helper.h"
#include "tools/cosim/assembly/compute_time_factors.h"
#include "tools/cosim/assembly/event_scheduler.h"
#include "tools/cosim/assembly/machine_memory.h"
#include "tools/cosim/network_models.h"
#include "tools/cosim/scenario/collectives_config.h"
#include "tools/cosim/scenario/cross_key_rules.h"
#include "topologies/servers.h"

namespace nbox::cosim {

topo::Topology BuildTopology(const scenario::Scenario& s) {
  const auto& t = s.topology;
  switch (t.kind) {
    case scenario::TopologyKind::kStar:
      return topo::MakeStar(t.hosts > 0 ? t.hosts : s.job.world_size, t.host_link_bps,
                            t.link_latency_s);
    case scenario::TopologyKind::kLeafSpine:
      return topo::MakeLeafSpine(t.leaves, t.spines, t.hosts_per_leaf, t.host_link_bps,
                                 t.fabric_link_bps, t.link_latency_s);
    case scenario::TopologyKind::kFatTree:
      return topo::MakeFatTree(t.k, t.host_link_bps, t.link_latency_s);
    case scenario::TopologyKind::kRail: {
      topo::ServerSpec server;
      server.gpus = s.servers.gpus;
      server.nvlink_rate_bps = s.servers.nvlink_bps;
      server.nvlink_latency_s = s.servers.nvlink_latency_s;
      server.nic_rate_bps = s.servers.nic_bps;
      return topo::MakeRail(s.servers.count, server, t.spines, t.fabric_link_bps, t.link_latency_s);
    }
    case scenario::TopologyKind::kFile:
      return topo::LoadTopologyFile(t.file);
  }
  throw std::invalid_argument("BuildTopology: unknown topology.kind");
}

namespace {

// The fastest link of host `host` (a multi-homed host's best).
double HostLinkRateBps(const topo::Topology& topology, int host) {
  double rate = 0;
  for (auto [edge, end] = boost::out_edges(topology.hosts.at(host), topology.graph); edge != end;
       ++edge) {
    rate = std::max(rate, topology.graph[*edge].rate_bps);
  }
  return rate;
}

// The ranks' hosts by job.placement, on the hosts not yet `taken` (empty: none).
std::vector<int> PlaceJob(const scenario::Scenario& s, const topo::Topology& topology,
                          const std::vector<bool>& taken = {}) {
  switch (s.job.placement) {
    case scenario::Placement::kSpread:
      return topo::SpreadRanks(topology, s.job.world_size, taken);
    case scenario::Placement::kRandom:
      return topo::ShuffledRanks(topology, s.job.world_size, s.job.seed, taken);
    case scenario::Placement::kFile:
      return topo::PlaceRanksFromFile(topology, s.job.world_size, s.job.placement_file, taken);
    case scenario::Placement::kPacked:
      break;
  }
  return taken.empty() ? topo::PlaceRanks(topology, s.job.world_size)
                       : topo::PackedRanks(topology, s.job.world_size, taken);
}

}  // namespace

std::vector<int> PlaceClusterJobs(const scenario::Scenario& s, const topo::Topology& topology,
                                  const std::vector<scenario::Scenario>& jobs) {
  std::vector<bool> taken(topology.hosts.size(), false);
  std::vector<int> rank_to_host;
  for (const scenario::Scenario& job : jobs) {
    std::vector<int> hosts;
    try {
      hosts = PlaceJob(job, topology, taken);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: job '{}' ({}, job.placement = {}): {}", s.path,
                                              scenario::ClusterJobName(job.path), job.path,
                                              job.settings.at("job.placement"), e.what()));
    }
    for (const int host : hosts) {
      taken[static_cast<size_t>(host)] = true;
      rank_to_host.push_back(host);
    }
  }
  return rank_to_host;
}

NetworkAssembly AssembleNetwork(const scenario::Scenario& s, uint64_t available_bytes,
                                const std::vector<scenario::Scenario>& jobs,
                                const std::vector<int>& hosts) {
  InstallEventScheduler();
  ns3::RngSeedManager::SetSeed(static_cast<uint32_t>(s.job.seed % 4294967295u) + 1);
  ns3::RngSeedManager::SetRun(1);
  NetworkAssembly a;
  a.topology = BuildTopology(s);
  CheckBuiltTopology(s, a.topology);
  // Built-in topologies are sized by the scenario's rules; a file's hosts are known only now.
  if (static_cast<size_t>(s.job.world_size) > a.topology.hosts.size()) {
    std::string needed = fmt::format("job.world_size = {}", s.job.world_size);
    if (!jobs.empty()) {
      needed = fmt::format("the cluster's {} jobs' {} ranks", jobs.size(), s.job.world_size);
    }
    throw std::invalid_argument(fmt::format(
        "{}: {} do{} not fit the topology{}: it has {} hosts, one rank each", s.path, needed,
        jobs.empty() ? "es" : "",
        s.topology.kind == scenario::TopologyKind::kFile ? " of topology.file " + s.topology.file
                                                         : "",
        a.topology.hosts.size()));
  }
  if (!hosts.empty()) {
    a.rank_to_host = hosts;
  } else {
    a.rank_to_host = jobs.empty() ? PlaceJob(s, a.topology) : PlaceClusterJobs(s, a.topology, jobs);
  }
  a.changes = ResolveTimedChanges(s, a.topology, a.rank_to_host);
  a.memory = EstimateNetworkMemory(s, a.topology);
  RefuseUnlessItFits(a.memory, available_bytes, s);
  BuiltNetwork built = BuildNetworkModel(s, a.topology, a.rank_to_host);
  a.model = built.model;
  a.network = built.packet;
  a.transport = built.transport;
  return a;
}

namespace {

// What real ranks can run: each communicator of the job is one runtime (bridge/host) that
// runs its operations in call order, so a communicator's ops must all be on one stream; and a
// workload with groups or point-to-point transfers needs emulated peers that run their own
// programs (mirror mode repeats the lowest real rank's collectives on the world).
void RefuseWhatRealRanksCannotRun(const scenario::Scenario& s, const work::JobPrograms& programs) {
  const std::string where = s.path + ": [realranks] with workload.kind = " + s.workload.kind + ": ";
  std::map<int, int> stream_of;  // job communicator -> the one stream its ops are on
  bool transfers = false;
  for (size_t rank = 0; rank < programs.programs.size(); ++rank) {
    const auto& slots = programs.rank_comms[rank];
    for (const auto& op : programs.programs[rank]->ops) {
      transfers |= op.kind == work::OpKind::kTransfers;
      if (op.kind != work::OpKind::kCollective && op.kind != work::OpKind::kTransfers) continue;
      const int comm = slots[static_cast<size_t>(op.comm)];
      const auto [it, added] = stream_of.emplace(comm, op.stream);
      if (!added && it->second != op.stream) {
        const auto& names = programs.stream_names;
        throw std::invalid_argument(
            where + "communicator '" + programs.communicators[static_cast<size_t>(comm)].name +
            "' has ops on streams '" + names[static_cast<size_t>(it->second)] + "' and '" +
            names[static_cast<size_t>(op.stream)] +
            "'; a real rank runs each communicator's ops in call order, one stream each");
      }
    }
  }
  if ((programs.communicators.size() > 1 || transfers) &&
      s.realranks.peers == scenario::RealRankPeers::kMirror) {
    const std::string what =
        programs.communicators.size() > 1
            ? "use " + std::to_string(programs.communicators.size()) + " communicators"
            : "send point to point";
    throw std::invalid_argument(
        where + "its programs " + what +
        "; realranks.peers = mirror repeats the lowest real rank's collectives on the world "
        "only: set realranks.peers = workload, so that every emulated rank runs its own "
        "program, groups and transfers included");
  }
}

}  // namespace

Workload BuildWorkloadWithin(const scenario::Scenario& s, uint64_t room_bytes) {
  try {
    const MemoryCap cap(room_bytes);
    return BuildWorkload(s);
  } catch (const std::bad_alloc&) {
    throw ResourceRefusal(
        fmt::format("building the workload's programs took more than the {} available; nothing was "
                    "simulated. {}",
                    FormatBytes(static_cast<double>(room_bytes)), KeepLessOfTheRun(s)));
  }
}

namespace {

// Each job's communicators run its own [collectives] in its own data type; the cluster's
// world, which no op uses, the first job's.
std::vector<ns3::NboxCommunicatorConfig> ClusterCommunicatorConfigs(
    const std::vector<ClusterJob>& jobs, const NetworkAssembly& net) {
  std::vector<ns3::NboxCommunicatorConfig> configs;
  for (const ClusterJob& job : jobs) {
    const scenario::Scenario& s = job.scenario;
    ns3::NboxCommunicatorConfig config;
    // Without servers, the auto algorithms take the link of the job's first host as its NIC.
    const int host = net.rank_to_host.at(static_cast<size_t>(job.first_rank));
    config.collectives = scenario::CollectiveSettingsOf(
        s, static_cast<uint64_t>(HostLinkRateBps(net.topology, host)));
    config.elementBytes = job.workload.element_bytes;
    config.lifo = s.collectives.order == scenario::CollectiveOrder::kLifo;
    config.maxConcurrent = static_cast<uint32_t>(s.collectives.concurrent);
    if (configs.empty()) configs.push_back(config);  // the cluster's world
    configs.insert(configs.end(), static_cast<size_t>(job.communicators), config);
  }
  return configs;
}

}  // namespace

JobAssembly AssembleJob(const scenario::Scenario& s, uint64_t available_bytes,
                        const std::vector<scenario::Scenario>& jobs,
                        const std::vector<int>& hosts) {
  JobAssembly a;
  a.net = AssembleNetwork(s, available_bytes, jobs, hosts);
  // Only the timeline draws each compute op; reports take each rank's total per iteration.
  const bool record_compute_ops = s.output.trace == scenario::Timeline::kChrome;
  // A job too large to build first is refused on its forecast; the rest are counted exactly
  // once built (a forecast runs slightly low, so one that does not fit never would). A
  // cluster's jobs are forecast together: those that have a forecast.
  if (s.realranks.ranks.empty()) {
    std::optional<RunRecordCounts> forecast;
    auto add_forecast = [&](const scenario::Scenario& job) {
      if (const auto counts = ForecastWorkloadRecords(job, record_compute_ops)) {
        if (!forecast) forecast.emplace();
        *forecast += *counts;
      }
    };
    if (jobs.empty()) add_forecast(s);
    for (const scenario::Scenario& job : jobs) add_forecast(job);
    if (forecast) {
      MemoryEstimate estimate = a.net.memory;
      AddRunMemory(*forecast, s.job.world_size, estimate);
      estimate.run_forecast = true;
      RefuseUnlessItFits(estimate, available_bytes, s);
    }
  }
  // The programs' size is known only once they are built: they may take what the network left
  // (AssembleNetwork refused a network that does not fit; 0, unknown, sets no ceiling).
  const uint64_t network = a.net.memory.total_bytes();
  const uint64_t room = available_bytes > network ? available_bytes - network : available_bytes;
  std::vector<ns3::Time> start_delays(static_cast<size_t>(s.job.world_size),
                                      ns3::Seconds(s.job.start_s));
  if (jobs.empty()) {
    a.workload = BuildWorkloadWithin(s, room);
  } else {
    ClusterWorkload cluster = BuildClusterWorkload(jobs, BuildWorkloadWithin, room);
    a.workload = std::move(cluster.workload);
    a.cluster_jobs = std::move(cluster.jobs);
    for (const ClusterJob& job : a.cluster_jobs) {
      std::fill_n(start_delays.begin() + job.first_rank, job.world_size(),
                  ns3::Seconds(job.scenario.job.start_s));
    }
  }

  a.transport = a.net.transport;

  ns3::NboxJobHelper helper;
  helper.SetCommunicatorAttribute("ElementSize", ns3::UintegerValue(a.workload.element_bytes));
  // Without servers, the auto algorithms take the link of rank 0's host as a rank's NIC.
  a.collectives = scenario::CollectiveSettingsOf(
      s, static_cast<uint64_t>(HostLinkRateBps(a.net.topology, a.net.rank_to_host.at(0))));
  helper.SetCollectiveSettings(a.collectives);
  helper.SetRankAppAttribute("RecordComputeOps", ns3::BooleanValue(record_compute_ops));
  helper.SetCommunicatorAttribute(
      "CollectiveOrder",
      ns3::StringValue(s.collectives.order == scenario::CollectiveOrder::kLifo ? "LIFO" : "FIFO"));
  helper.SetCommunicatorAttribute("MaxConcurrentCollectives",
                                  ns3::UintegerValue(s.collectives.concurrent));
  const std::vector<double> fleet_factors =
      ComputeTimeFactors(s.events, s.job.world_size, s.job.seed);
  helper.SetComputeTimeFactors(fleet_factors);
  if (!a.cluster_jobs.empty()) {
    helper.SetCommunicatorConfigs(ClusterCommunicatorConfigs(a.cluster_jobs, a.net));
  }
  helper.SetStartDelays(std::move(start_delays));
  work::JobPrograms programs = a.workload.programs;
  if (!s.realranks.ranks.empty()) {
    RefuseWhatRealRanksCannotRun(s, programs);
    // Real ranks get no app; in mirror mode the emulated ranks run no program of their own
    // (the gateway issues the real rank's collectives on their streams).
    std::vector<bool> is_real(s.job.world_size, false);
    for (int rank : s.realranks.ranks) is_real[rank] = true;
    helper.SetRealRanks(is_real);
    auto empty = std::make_shared<const work::RankProgram>();
    for (int rank = 0; rank < s.job.world_size; ++rank) {
      auto& program = programs.programs[static_cast<size_t>(rank)];
      if (is_real[static_cast<size_t>(rank)]) {
        program = nullptr;
      } else if (s.realranks.peers == scenario::RealRankPeers::kMirror) {
        program = empty;
      }
    }
  }
  // What the job will hold: its records first, its schedules and connections once its
  // communicators exist.
  a.memory = a.net.memory;
  a.records = CountRunRecords(programs, record_compute_ops);
  AddRunMemory(a.records, s.job.world_size, a.memory);
  // Refused here already when the programs' records alone do not fit: validating and
  // installing a program per rank takes far longer than counting them.
  RefuseUnlessItFits(a.memory, available_bytes, s);
  // The communicators exist before any connection is opened: what their schedules and
  // connections will hold is counted and refused here when it cannot fit (a direct all-reduce
  // of thousands of ranks connects every pair).
  ns3::NboxJobCommunicators communicators = helper.CreateCommunicators(a.transport, programs);
  AddScheduleMemory(programs, communicators.communicators, a.memory);
  AddConnectionMemory(s, programs, communicators.communicators, a.memory);
  RefuseUnlessItFits(a.memory, available_bytes, s);
  a.job = helper.Install(programs, std::move(communicators));
  ReserveRunRecords(a.records, *a.job->GetRecords());
  ScheduleTimedChanges(a.net.changes, fleet_factors, a.net.topology, a.net.model, a.job);
  return a;
}

}  // namespace nbox::cosim
