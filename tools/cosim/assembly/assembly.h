// Turns a Scenario into a ready-to-run ns-3 simulation: topology, network model (packet or
// flow, with its transport), the ranks' programs and the job. The benchmark reuses the first
// half (the network alone).
#pragma once

#include <memory>
#include <vector>

#include "ns3/nbox-job.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-transport.h"
#include "tools/cosim/assembly/cluster_workload.h"
#include "tools/cosim/assembly/memory_estimate.h"
#include "tools/cosim/assembly/run_records.h"
#include "tools/cosim/assembly/timed_changes.h"
#include "tools/cosim/assembly/workload_registry.h"
#include "tools/cosim/scenario/scenario.h"
#include "topologies/topology.h"

namespace nbox::cosim {

topo::Topology BuildTopology(const scenario::Scenario& scenario);

struct NetworkAssembly {
  topo::Topology topology;
  std::vector<int> rank_to_host;
  MemoryEstimate memory;                  // the network's build (EstimateNetworkMemory)
  ns3::Ptr<ns3::NboxNetworkModel> model;  // the network.model's counters, whatever the model
  // The packet model's ns-3 network (nodes, devices, queues); null for the flow model.
  ns3::Ptr<ns3::NboxNetwork> network;
  // The model's messages: NboxTcpTransport, NboxRoceTransport, NboxFlowTransport.
  ns3::Ptr<ns3::NboxTransport> transport;
  // [events] at, with the ports of each link change (AssembleJob schedules them).
  std::vector<ResolvedChange> changes;
};

struct JobAssembly {
  NetworkAssembly net;
  Workload workload;                       // every rank's program; with real ranks, theirs are null
  ns3::Ptr<ns3::NboxTransport> transport;  // net.transport
  ns3::Ptr<ns3::NboxJob> job;
  // How every communicator runs its collectives, built once from the scenario; real ranks
  // get it encoded.
  coll::CollectiveSettings collectives;
  MemoryEstimate memory;    // the network's build, the schedules, what the run keeps
  RunRecordCounts records;  // what the run keeps (run_records.h), reserved in job's records
  std::vector<ClusterJob> cluster_jobs;  // a cluster scenario's jobs; empty for one job
};

// Seeds ns-3's RNG from job.seed and builds the network model and its transport. Call on a
// fresh simulator. With `available_bytes` (AvailableMemoryBytes(); 0: unchecked), a network
// whose build cannot fit is refused before it is built (ResourceRefusal).
// A cluster scenario's network carries its `jobs` (LoadClusterJobs), each placed by its
// job.placement on the hosts the jobs before it left; `scenario`'s job.world_size must be
// their total.
// `hosts` (rank -> host), where given, places the ranks instead (a cluster's job run alone
// on the hosts it had in the cluster).
NetworkAssembly AssembleNetwork(const scenario::Scenario& scenario, uint64_t available_bytes = 0,
                                const std::vector<scenario::Scenario>& jobs = {},
                                const std::vector<int>& hosts = {});
// The network plus the job on it, ready for RunSimulation; with `available_bytes`, refuses
// (ResourceRefusal) a network or a job whose programs, schedules or records cannot fit,
// before either is run. With `jobs` (a cluster scenario's, its job.world_size their total),
// every job on the one network, their programs run as one job's (MergeClusterPrograms).
JobAssembly AssembleJob(const scenario::Scenario& scenario, uint64_t available_bytes = 0,
                        const std::vector<scenario::Scenario>& jobs = {},
                        const std::vector<int>& hosts = {});

// A cluster's `jobs` one after another on `topology`, each by its job.placement on the hosts
// the earlier ones left: their ranks' hosts, in the cluster's rank order. Throws
// std::invalid_argument naming the job that does not fit.
std::vector<int> PlaceClusterJobs(const scenario::Scenario& cluster, const topo::Topology& topology,
                                  const std::vector<scenario::Scenario>& jobs);

// BuildWorkload under a MemoryCap of `room_bytes` (0: none): programs that grow past it are
// refused (ResourceRefusal) rather than left to the kernel's OOM killer.
Workload BuildWorkloadWithin(const scenario::Scenario& scenario, uint64_t room_bytes);

}  // namespace nbox::cosim
