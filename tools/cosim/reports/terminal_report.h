// The human summary nbox-cosim prints at the end of a run.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "tools/cosim/reports/run_result.h"

namespace nbox::cosim {

void PrintSummary(const RunResult& result, const PerfFigures& perf,
                  const std::vector<std::string>& written_files, std::ostream& out);

// A cluster run: each job's report (PrintSummary, the fabric's figures left out), then the
// jobs side by side and the fabric's figures once.
void PrintClusterSummary(const RunResult& cluster, const std::vector<RunResult>& jobs,
                         const std::vector<ClusterJobFacts>& facts, const PerfFigures& perf,
                         const std::vector<std::string>& written_files, std::ostream& out);

}  // namespace nbox::cosim
