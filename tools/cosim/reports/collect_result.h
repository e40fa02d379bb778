// What a run found, read from its assembled job once the loop has ended: the records, the
// counters of the network and the transport, the loop's figures.
#pragma once

#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/reports/run_result.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::cosim {

// Reads the records and counters of a finished (or stopped) run. With `job` (one of a cluster's
// jobs), what that job did: its scenario, workload and ranks' records; the network's counters
// are the whole fabric's, shared by every job. Without `job`, a cluster's run has no summary
// (its jobs' iterations are not one job's).
RunResult CollectResult(const scenario::Scenario& scenario, const JobAssembly& assembly,
                        const SimLoopResult& loop, const ClusterJob* job = nullptr);

}  // namespace nbox::cosim
