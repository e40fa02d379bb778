#include "tools/cosim/real_ranks/real_rank_json.h"

namespace nbox::cosim {

nlohmann::ordered_json RealRanksJson(const RealRanksReport& report, const RankRoles& roles) {
  using nlohmann::ordered_json;
  ordered_json ranks = ordered_json::array();
  for (const RealRankReport& r : report.ranks) {
    ordered_json iterations = ordered_json::array();
    for (const RealRankIteration& it : r.iterations) {
      iterations.push_back({{"iteration", it.index},
                            {"begin_s", it.begin_s},
                            {"end_s", it.end_s},
                            {"time_s", it.time_s}});
    }
    ordered_json rank = {{"rank", r.rank},
                         {"clock", r.clock},
                         {"pid", r.pid},
                         {"joined", r.joined},
                         {"said_goodbye", r.said_goodbye},
                         {"sends", r.sends},
                         {"receives", r.receives},
                         {"bytes_sent", r.bytes_sent},
                         {"collectives_reported", r.collectives_reported},
                         {"iterations_marked", r.iterations.size()},
                         {"steady_iteration_time_s", SteadyIterationTime(r)}};
    if (r.clock == "realtime") {
      // The rank's own measure, sockets included (bridge/README.md, ArrivalLag).
      if (r.arrival_lag_known) {
        rank["arrival_lag"] = {{"completions", r.arrival_completions},
                               {"p99_s", r.arrival_p99_lag_s},
                               {"max_s", r.arrival_max_lag_s}};
      } else {
        rank["arrival_lag"] = nullptr;
        rank["arrival_lag_absent"] = "the rank ended without Goodbye, before which it sends it";
      }
    }
    rank["iterations"] = std::move(iterations);
    ranks.push_back(std::move(rank));
  }
  ordered_json out = {
      {"status", report.failed ? "failed" : "ok"},
      {"failure", report.failure},
      {"clock", report.clock},
      {"peers", report.peers},
      {"payload", report.payload},
      {"emulated_ranks", roles.emulated},
      {"iteration_compute_from",
       roles.compute_simulated() ? ordered_json("emulated ranks") : ordered_json(nullptr)},
      {"debug_slowdown_s", report.slowdown_s},
      {"late_op_reports", report.late_op_reports},
      {"ranks", std::move(ranks)}};
  if (report.realtime) {
    out["realtime"] = {{"deliveries", report.lag.samples},
                       {"max_lag_s", report.lag.max_s},
                       {"p99_lag_s", report.lag.p99_s},
                       {"max_lag_allowed_s", report.lag.allowed_s},
                       // What `valid` judges: max_lag_s or a rank's arrival_lag, the larger.
                       {"worst_lag_s", WorstLag(report)},
                       {"valid", report.lag.valid}};
  }
  return out;
}

}  // namespace nbox::cosim
