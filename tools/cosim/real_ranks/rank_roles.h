// Who ran what in a run: which ranks were real processes, which were emulated, and what the
// emulated ranks ran. The reports read it to say what their workload and compute figures
// describe: with real ranks, the scenario's workload is at most what the emulated ranks ran,
// and the real ranks' compute is not measured (README.md, "Running with real ranks").
#pragma once

#include <string>
#include <vector>

#include "tools/cosim/scenario/scenario.h"

namespace nbox::cosim {

enum class EmulatedProgram {
  kWorkload,  // the scenario's workload (every rank of a simulated job)
  kMirror,    // the lowest real rank's collectives (realranks.peers = mirror)
  kNone,      // no rank is emulated: every rank is real
};

struct RankRoles {
  std::vector<int> real;      // ascending; empty in a simulated job
  std::vector<int> emulated;  // ascending
  EmulatedProgram emulated_program = EmulatedProgram::kWorkload;
  int mirrored_rank = -1;  // kMirror: the real rank whose collectives the emulated ranks repeat

  bool simulated_job() const { return real.empty(); }
  // Iteration compute (and so exposed communication) comes from the simulation only when
  // emulated ranks run the workload's compute ops; real ranks' compute is never recorded.
  bool compute_simulated() const { return emulated_program == EmulatedProgram::kWorkload; }
};

RankRoles RolesOf(const scenario::Scenario& scenario);

// Ranks as ascending runs: {1,2,3,4} -> "1-4", {0,3} -> "0, 3", {0,1,3,5,6,7} -> "0-1, 3, 5-7".
std::string RankRanges(const std::vector<int>& ranks);

}  // namespace nbox::cosim
