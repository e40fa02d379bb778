// What a run with real ranks adds to the report: per real rank its clock, the iterations it
// marked (nboxMarkIteration) with their times on its own virtual clock, what it posted, and
// for realtime ranks how far the simulator lagged behind the wall clock.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace nbox::cosim {

struct RealRankIteration {
  int index = 0;
  double begin_s = 0;  // on the rank's clock, seconds since the job start
  double end_s = 0;
  double time_s = 0;
};

struct RealRankReport {
  int rank = 0;
  std::string clock;  // virtual | realtime
  uint32_t pid = 0;   // as the rank said in its Hello; 0 if it never joined
  bool joined = false;
  bool said_goodbye = false;
  uint64_t sends = 0;
  uint64_t receives = 0;
  uint64_t bytes_sent = 0;
  uint64_t collectives_reported = 0;
  std::vector<RealRankIteration> iterations;
  // A realtime rank's own measure of how late its Completes reached it (bridge/README.md,
  // ArrivalLag), known once it said Goodbye.
  bool arrival_lag_known = false;
  uint64_t arrival_completions = 0;
  double arrival_p99_lag_s = 0;
  double arrival_max_lag_s = 0;
};

// The simulator's lag: the wall clock minus each delivery's time when nbox-cosim computed it.
struct RealtimeLag {
  uint64_t samples = 0;  // deliveries to real ranks
  double max_s = 0;
  double p99_s = 0;
  double allowed_s = 0;  // realranks.max_lag
  bool valid = true;     // max_s, and every rank's arrival_max_lag_s, <= allowed_s
};

struct RealRanksReport {
  bool present = false;  // the run had real ranks (otherwise nothing of this is reported)
  bool failed = false;   // the run stopped early: the figures are partial
  std::string failure;   // why
  std::string clock;
  std::string peers;
  std::string payload;
  double slowdown_s = 0;
  std::vector<RealRankReport> ranks;
  bool realtime = false;
  RealtimeLag lag;
  uint64_t late_op_reports = 0;  // op reports older than the simulator's clock (clamped)
};

// Mean iteration time over the iterations after the first (the first is a warm-up), or the
// only one's; 0 without iterations. The same rule as SteadyIterationTime.
double SteadyIterationTime(const RealRankReport& rank);

// The larger of the simulator's maximum lag and every rank's own (arrival) maximum: what
// realranks.max_lag judges, since a rank may get a completion late however early it was
// computed.
double WorstLag(const RealRanksReport& report);

// The terminal lines of the real ranks (nothing when the run had none).
void PrintRealRanks(const RealRanksReport& report, std::ostream& out);

}  // namespace nbox::cosim
