// nccl-tests' table of a workload.kind = nccl-tests run (workloads/nccl_tests.h): per size,
// the mean of its timed runs, their algbw and busbw, as nccl-tests prints them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "tools/cosim/reports/summary.h"

namespace nbox::cosim {

struct NcclTestsRow {
  uint64_t bytes = 0;
  int runs = 0;                  // timed runs averaged
  double time_s = 0;             // their mean run time (CollectiveSummary::run_s)
  double algbw_bytes_per_s = 0;  // bytes / time_s
  double busbw_bytes_per_s = 0;  // algbw x nccl-tests' factor for the op and ranks
};

// One row per size (iteration) that had timed runs, in the order they ran.
std::vector<NcclTestsRow> NcclTestsTable(const JobSummary& summary);

void PrintNcclTestsTable(const std::vector<NcclTestsRow>& rows, std::ostream& out);

// [{"bytes", "runs", "time_us", "algbw_GBps", "busbw_GBps"}, ...] for results.json.
nlohmann::ordered_json NcclTestsJson(const std::vector<NcclTestsRow>& rows);

}  // namespace nbox::cosim
