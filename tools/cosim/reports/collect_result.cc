#include "tools/cosim/reports/collect_result.h"

#include <boost/range/iterator_range.hpp>

#include "tools/cosim/reports/summary.h"

namespace nbox::cosim {

RunResult CollectResult(const scenario::Scenario& s, const JobAssembly& a,
                        const SimLoopResult& loop) {
  RunResult r;
  r.scenario = s;
  r.topology_description = a.net.topology.description;
  for (auto v : boost::make_iterator_range(boost::vertices(a.net.topology.graph))) {
    (a.net.topology.graph[v].kind == topo::NodeKind::kHost ? r.hosts : r.switches)++;
  }
  r.links = static_cast<int>(a.net.topology.links.size());
  r.model = a.workload.model;
  r.workload_description = a.workload.description;
  r.workload_details = a.workload.details;
  for (const auto& program : a.workload.programs.programs) {
    if (!program) continue;
    for (const auto& op : program->ops) {
      const bool communication =
          op.kind == work::OpKind::kCollective || op.kind == work::OpKind::kTransfers;
      if (communication && op.iteration == 0) ++r.collectives_per_iteration;
    }
    break;  // the first rank's program
  }
  r.summary = Summarize(*a.job->GetRecords());
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
