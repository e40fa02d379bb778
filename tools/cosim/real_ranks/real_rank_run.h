// A run with real ranks from start to end: the bridge server and the bootstrap root, the
// environment the ranks need (printed, or given to the ranks nbox-cosim launches), the
// conservative clock (real_rank_pacer.h), and the failure handling (a rank that dies, a signal, a
// join timeout: children killed, the partial report marked failed). main.cc writes the reports.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>

#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/real_ranks/real_rank_report.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::cosim {

struct RealRankRun {
  SimLoopResult loop;
  RealRanksReport report;  // report.failed: the run stopped early, figures are partial
};

// The loop (loop/sim_loop.h) runs with `settings` and the real ranks as its partner. Launched ranks
// write their logs (rank<N>.log) into `log_dir`, the run's staging folder (output_folder.h);
// messages name them where they end up, in output.dir. Prints the environment (or where the ranks'
// logs go) on `out`, problems on `err`. Throws std::runtime_error when the bridge cannot be set up
// (nothing ran).
RealRankRun RunWithRealRanks(const scenario::Scenario& scenario, JobAssembly& assembly,
                             const LoopSettings& settings, const std::filesystem::path& log_dir,
                             std::ostream& out, std::ostream& err);

}  // namespace nbox::cosim
