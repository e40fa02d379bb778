// The human summary nbox-cosim prints at the end of a run.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "tools/cosim/reports/run_result.h"

namespace nbox::cosim {

void PrintSummary(const RunResult& result, const PerfFigures& perf,
                  const std::vector<std::string>& written_files, std::ostream& out);

}  // namespace nbox::cosim
