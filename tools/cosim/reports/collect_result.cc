#include "tools/cosim/reports/collect_result.h"

#include <boost/range/iterator_range.hpp>

#include "tools/cosim/reports/summary.h"

namespace nbox::cosim {

RunResult CollectResult(const scenario::Scenario& s, const JobAssembly& a,
                        const SimLoopResult& loop, const ClusterJob* job) {
  RunResult r;
  r.scenario = job ? job->scenario : s;
  const Workload& workload = job ? job->workload : a.workload;
  const size_t first_rank = job ? static_cast<size_t>(job->first_rank) : 0;
  r.topology_description = a.net.topology.description;
  for (auto v : boost::make_iterator_range(boost::vertices(a.net.topology.graph))) {
    (a.net.topology.graph[v].kind == topo::NodeKind::kHost ? r.hosts : r.switches)++;
  }
  r.links = static_cast<int>(a.net.topology.links.size());
  r.model = workload.model;
  r.workload_description = workload.description;
  r.workload_details = workload.details;
  const auto& programs = a.workload.programs.programs;
  for (size_t rank = first_rank; rank < programs.size(); ++rank) {
    const auto& program = programs[rank];
    if (!program) continue;
    for (const auto& op : program->ops) {
      const bool communication =
          op.kind == work::OpKind::kCollective || op.kind == work::OpKind::kTransfers;
      if (communication && op.iteration == 0) ++r.collectives_per_iteration;
    }
    break;  // the first rank's program
  }
  if (job) {
    r.summary = Summarize(*a.job->GetRecords(), {static_cast<uint32_t>(job->first_rank),
                                                 static_cast<uint32_t>(job->world_size())});
  } else if (a.cluster_jobs.empty()) {
    r.summary = Summarize(*a.job->GetRecords());
  }  // a cluster's whole run is summarised job by job, never at once
  if (job) r.cluster_job = job->name;
  r.network = a.net.model->GetStats();
  r.transport = a.transport->GetStats();
  // The transports carry the protocols' flags as bytes; the payload is what the programs sent.
  const auto& records = *a.job->GetRecords();
  r.transport.bytesSent -= records.protocolBytesSent;
  r.transport.bytesDelivered -= records.protocolBytesDelivered;
  r.events = loop.events;
  r.simulated_s = loop.simulated_s;
  return r;
}

}  // namespace nbox::cosim
