#include "tools/cosim/real_ranks/real_rank_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace nbox::cosim {

double SteadyIterationTime(const RealRankReport& rank) {
  const auto& its = rank.iterations;
  if (its.empty()) return 0;
  if (its.size() == 1) return its.front().time_s;
  double sum = 0;
  for (size_t i = 1; i < its.size(); ++i) sum += its[i].time_s;
  return sum / static_cast<double>(its.size() - 1);
}

double WorstLag(const RealRanksReport& report) {
  double worst = report.lag.max_s;
  for (const RealRankReport& r : report.ranks) {
    if (r.arrival_lag_known) worst = std::max(worst, r.arrival_max_lag_s);
  }
  return worst;
}

void PrintRealRanks(const RealRanksReport& report, std::ostream& out) {
  if (!report.present) return;
  out << fmt::format(
      "  real ranks {} clock, emulated peers follow {}, payload {}{}\n", report.clock,
      report.peers == "mirror" ? "the real rank (mirror)" : "the workload", report.payload,
      report.slowdown_s > 0
          ? fmt::format(", debug slowdown {:.3g} us/event", report.slowdown_s * 1e6)
          : "");
  for (const RealRankReport& r : report.ranks) {
    out << fmt::format(
        "    rank {:>3}  pid {:<7} {:<8} {} sends, {} receives, {} collectives, {} iterations "
        "marked{}\n",
        r.rank, r.pid, r.clock, r.sends, r.receives, r.collectives_reported, r.iterations.size(),
        r.iterations.empty() ? std::string()
                             : fmt::format(", steady iteration {:.3f} ms (own clock)",
                                           SteadyIterationTime(r) * 1e3));
    if (r.arrival_lag_known) {
      out << fmt::format(
          "           completions reached it late by max {:.1f} us, p99 {:.1f} us over {} "
          "(its own clock, sockets included)\n",
          r.arrival_max_lag_s * 1e6, r.arrival_p99_lag_s * 1e6, r.arrival_completions);
    }
  }
  if (report.realtime) {
    out << fmt::format(
        "    realtime lag: max {:.1f} us, p99 {:.1f} us over {} deliveries (when computed); {}\n",
        report.lag.max_s * 1e6, report.lag.p99_s * 1e6, report.lag.samples,
        report.lag.valid
            ? "valid"
            : fmt::format("NOT VALID (realranks.max_lag = {:.1f} us; worst lag {:.1f} us, "
                          "computed or at a rank)",
                          report.lag.allowed_s * 1e6, WorstLag(report) * 1e6));
  }
  if (report.failed) out << "    FAILED: " << report.failure << " (partial results)\n";
  out << "\n";
}

}  // namespace nbox::cosim
