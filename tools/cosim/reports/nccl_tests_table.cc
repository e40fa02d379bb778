#include "tools/cosim/reports/nccl_tests_table.h"

#include <fmt/format.h>

#include <map>

#include "collectives/schedule.h"
#include "workloads/nccl_tests.h"

namespace nbox::cosim {

std::vector<NcclTestsRow> NcclTestsTable(const JobSummary& summary) {
  struct Sum {
    uint64_t bytes = 0;
    coll::CollectiveOp op = coll::CollectiveOp::kAllReduce;
    int ranks = 0;
    int runs = 0;
    double run_s = 0;
  };
  std::map<int, Sum> by_iteration;
  for (const CollectiveSummary& c : summary.collectives) {
    if (c.is_transfers || c.label != work::kNcclTestsTimedLabel) continue;
    Sum& sum = by_iteration[c.iteration];
    sum.bytes = c.bytes;
    sum.op = c.op;
    sum.ranks = c.ranks;
    ++sum.runs;
    sum.run_s += c.run_s;
  }
  std::vector<NcclTestsRow> rows;
  for (const auto& [iteration, sum] : by_iteration) {
    NcclTestsRow row;
    row.bytes = sum.bytes;
    row.runs = sum.runs;
    row.time_s = sum.run_s / sum.runs;
    if (row.time_s > 0) {
      row.algbw_bytes_per_s = static_cast<double>(sum.bytes) / row.time_s;
      row.busbw_bytes_per_s = row.algbw_bytes_per_s * coll::BusBandwidthFactor(sum.op, sum.ranks);
    }
    rows.push_back(row);
  }
  return rows;
}

void PrintNcclTestsTable(const std::vector<NcclTestsRow>& rows, std::ostream& out) {
  if (rows.empty()) return;
  out << "  nccl-tests table (mean of the timed runs of each size)\n";
  out << fmt::format("  {:>14} {:>14} {:>10} {:>10} {:>10}\n", "size (B)", "count (float)",
                     "time (us)", "algbw GB/s", "busbw GB/s");
  for (const NcclTestsRow& row : rows) {
    out << fmt::format("  {:>14} {:>14} {:>10.2f} {:>10.2f} {:>10.2f}\n", row.bytes,
                       row.bytes / work::kNcclTestsElementBytes, row.time_s * 1e6,
                       row.algbw_bytes_per_s / 1e9, row.busbw_bytes_per_s / 1e9);
  }
}

nlohmann::ordered_json NcclTestsJson(const std::vector<NcclTestsRow>& rows) {
  nlohmann::ordered_json table = nlohmann::ordered_json::array();
  for (const NcclTestsRow& row : rows) {
    table.push_back({{"bytes", row.bytes},
                     {"runs", row.runs},
                     {"time_us", row.time_s * 1e6},
                     {"algbw_GBps", row.algbw_bytes_per_s / 1e9},
                     {"busbw_GBps", row.busbw_bytes_per_s / 1e9}});
  }
  return table;
}

}  // namespace nbox::cosim
