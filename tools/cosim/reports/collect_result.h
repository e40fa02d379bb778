// What a run found, read from its assembled job once the loop has ended: the records, the
// counters of the network and the transport, the loop's figures.
#pragma once

#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/reports/run_result.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::cosim {

// Reads the records and counters of a finished (or stopped) run.
RunResult CollectResult(const scenario::Scenario& scenario, const JobAssembly& assembly,
                        const SimLoopResult& loop);

}  // namespace nbox::cosim
