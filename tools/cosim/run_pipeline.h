// One run of nbox-cosim as a pipeline of phases, each a function: load (the scenario and the
// checks that need no network), assemble (the network, the workload and the job, with the
// checks and refusals that need them built), then either report the check or open the output,
// run (simulated ranks only, or with real ranks: the same inputs and result), collect (the
// records, and why a run failed part-way) and write (every file, then the terminal report).
// Each phase throws what ends the run; RunPipeline turns that into the exit status.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nbox::cosim {

// nbox-cosim's exit statuses.
inline constexpr int kExitSuccess = 0;
inline constexpr int kExitRunFailed = 1;  // the run failed part-way; its files are written
inline constexpr int kExitBadInput = 2;   // nothing written
inline constexpr int kExitResources = 3;  // does not fit in memory or on disk; nothing written

struct RunRequest {
  std::string scenario_path;
  std::vector<std::string> overrides;  // section.key=value, --seed and --out included
  bool check_only = false;             // --check: assemble, report, stop
  bool force = false;                  // --force: write beside files nbox did not write
  uint64_t memory_limit = 0;           // --memory; 0 = what the machine has
};

// Runs the request's scenario and returns nbox-cosim's exit status.
int RunPipeline(const RunRequest& request);

}  // namespace nbox::cosim
