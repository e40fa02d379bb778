#include "tools/cosim/assembly.h"

#include <stdexcept>

#include "ns3/core-module.h"
#include "ns3/enum.h"
#include "ns3/nbox-communicator.h"
#include "ns3/nbox-job-helper.h"
#include "ns3/nbox-roce-transport.h"
#include "tools/cosim/roce_assembly.h"
#include "topologies/servers.h"
#include "workloads/trace_replay.h"

namespace nbox::cosim {

topo::Topology BuildTopology(const scenario::Scenario& s) {
  const auto& t = s.topology;
  if (t.kind == "star") {
    return topo::MakeStar(t.hosts > 0 ? t.hosts : s.job.world_size, t.host_link_bps,
                          t.link_latency_s);
  }
  if (t.kind == "leaf-spine") {
    return topo::MakeLeafSpine(t.leaves, t.spines, t.hosts_per_leaf, t.host_link_bps,
                               t.fabric_link_bps, t.link_latency_s);
  }
  if (t.kind == "fat-tree") {
    return topo::MakeFatTree(t.k, t.host_link_bps, t.link_latency_s);
  }
  if (t.kind == "rail") {
    topo::ServerSpec server;
    server.gpus = s.servers.gpus;
    server.nvlink_rate_bps = s.servers.nvlink_bps;
    server.nvlink_latency_s = s.servers.nvlink_latency_s;
    server.nic_rate_bps = s.servers.nic_bps;
    return topo::MakeRail(s.servers.count, server, t.spines, t.fabric_link_bps, t.link_latency_s);
  }
  if (t.kind == "file") {
    return topo::LoadTopologyFile(t.file);
  }
  throw std::invalid_argument("unknown topology.kind '" + t.kind + "'");
}

ns3::NboxNetworkConfig MakeNetworkConfig(const scenario::Scenario& s) {
  ns3::NboxNetworkConfig c;
  c.mtu = s.network.mtu;
  c.switchQueueBytes = s.network.switch_queue_bytes;
  c.ecn = s.network.ecn;
  c.ecnThresholdBytes = s.network.ecn_threshold_bytes;
  c.tcpCongestionControl = s.network.tcp_cc;
  c.tcpBufferBytes = s.network.tcp_buffer_bytes;
  c.tcpMinRtoSeconds = s.network.tcp_min_rto_s;
  c.tcpLimitOutputBytes = static_cast<uint32_t>(s.network.tcp_limit_output_bytes);
  c.ecmpSeed = s.job.seed;
  return c;
}

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

NetworkAssembly AssembleNetwork(const scenario::Scenario& s) {
  ns3::RngSeedManager::SetSeed(static_cast<uint32_t>(s.job.seed % 4294967295u) + 1);
  ns3::RngSeedManager::SetRun(1);
  NetworkAssembly a;
  a.topology = BuildTopology(s);
  a.rank_to_host = topo::PlaceRanks(a.topology, s.job.world_size);
  a.network = s.network.transport == "roce"
                  ? InstallRoceNetwork(s, a.topology)
                  : ns3::NboxNetworkHelper(MakeNetworkConfig(s)).Install(a.topology);
  return a;
}

JobAssembly AssembleJob(const scenario::Scenario& s) {
  JobAssembly a;
  a.net = AssembleNetwork(s);
  // workload.model = trace: the recorded job, one program per rank (workloads/trace_replay.h);
  // a.program is rank 0's, whose collectives every rank shares.
  std::vector<std::shared_ptr<const work::RankProgram>> trace_programs;
  if (s.workload.model == "trace") {
    a.ddp.model.name = "trace";
    a.ddp.model.source = s.workload.trace;
    for (work::RankProgram& program :
         work::LoadTraceReplayPrograms(s.workload.trace, s.job.world_size, s.workload.iterations)) {
      trace_programs.push_back(std::make_shared<const work::RankProgram>(std::move(program)));
    }
    a.program = trace_programs.front();
  } else {
    a.ddp = MakeDdpConfig(s.workload);
    a.program = std::make_shared<const work::RankProgram>(work::MakeDdpProgram(a.ddp));
  }

  if (s.network.transport == "roce") {
    a.transport = ns3::CreateObject<ns3::NboxRoceTransport>(a.net.network, a.net.rank_to_host);
  } else {
    a.transport = ns3::CreateObject<ns3::NboxTcpTransport>(a.net.network, a.net.rank_to_host);
  }

  ns3::NboxJobHelper helper;
  helper.SetCommunicatorAttribute("Channels", ns3::UintegerValue(s.collectives.channels));
  helper.SetCommunicatorAttribute("ChunkSize", ns3::UintegerValue(s.collectives.chunk_bytes));
  // Ranks fill servers in order (PlaceRanks on a rail topology's server-major GPUs).
  const bool servers = s.topology.kind == "rail";
  helper.SetCommunicatorAttribute("RanksPerServer",
                                  ns3::UintegerValue(servers ? s.servers.gpus : 0));
  helper.SetCommunicatorAttribute(
      "AllReduceAlgorithm",
      ns3::EnumValue(s.collectives.allreduce == "hierarchical" ? ns3::NboxCommunicator::HIERARCHICAL
                                                               : ns3::NboxCommunicator::RING));
  std::vector<std::shared_ptr<const work::RankProgram>> programs(s.job.world_size, a.program);
  if (!trace_programs.empty()) {
    programs = trace_programs;
    // NCCL's sizes are whole elements of any type, so the replay splits on bytes.
    helper.SetCommunicatorAttribute("ElementSize", ns3::UintegerValue(1));
  }
  if (!s.realranks.ranks.empty()) {
    // Real ranks get no app; in mirror mode the emulated ranks run no program of their own
    // (the gateway issues the real rank's collectives on their streams).
    std::vector<bool> is_real(s.job.world_size, false);
    for (int rank : s.realranks.ranks) is_real[rank] = true;
    helper.SetRealRanks(is_real);
    if (s.realranks.peers == "mirror") {
      auto empty = std::make_shared<const work::RankProgram>();
      for (auto& program : programs) program = empty;
    }
  }
  a.job = helper.Install(a.net.network, a.transport, programs, a.net.rank_to_host);
  return a;
}

RunResult CollectResult(const scenario::Scenario& s, const JobAssembly& a,
                        const SimLoopResult& loop) {
  RunResult r;
  r.scenario = s;
  r.topology_description = a.net.topology.description;
  for (auto v : boost::make_iterator_range(boost::vertices(a.net.topology.graph))) {
    (a.net.topology.graph[v].kind == topo::NodeKind::kHost ? r.hosts : r.switches)++;
  }
  r.links = static_cast<int>(a.net.topology.links.size());
  r.model = a.ddp.model;
  for (const auto& op : a.program->ops) {
    if (op.kind == work::OpKind::kCollective && op.iteration == 0) ++r.collectives_per_iteration;
  }
  r.summary = Summarize(*a.job->GetRecords());
  r.network = a.net.network->GetStats();
  r.transport = a.transport->GetStats();
  r.events = loop.events;
  r.simulated_s = loop.simulated_s;
  return r;
}

}  // namespace nbox::cosim
