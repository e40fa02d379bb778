// Starts the ranks of a host-runtime test as separate processes (fork + execve of
// host_worker), each with its output in a file, and collects their exit codes with a deadline
// so that a hang fails the test instead of hanging it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace nbox::host::testing {

struct RankOutcome {
  int exit_code = -1;  // -1: killed at the deadline; 128 + n: died of signal n
  std::string output;  // stdout and stderr
};

struct LaunchOptions {
  std::vector<std::string> env;   // extra "NAME=value" for every rank
  std::vector<std::string> args;  // extra arguments after the unique id
  std::vector<int> absent_ranks;  // ranks not started at all
  std::chrono::seconds deadline{60};
};

// Runs `scenario` on `nranks` ranks of a fresh communicator (this process calls
// nboxGetUniqueId, so it hosts the bootstrap root). Ranks talk over 127.0.0.1 through the
// TCP plugin under test.
std::vector<RankOutcome> LaunchRanks(const std::string& scenario, int nranks,
                                     const LaunchOptions& options = {});

// "rank 1 (exit 1):\n<output>" for every rank, for failure messages.
std::string Describe(const std::vector<RankOutcome>& outcomes);

}  // namespace nbox::host::testing
