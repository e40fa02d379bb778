// Starts the real ranks of a scenario as child processes (realranks.launch) and watches them.
//
// Each rank runs `/bin/sh -c <command>` with {rank} replaced, in a process group of its own
// (so killing it kills whatever the command started), with the rank's environment added and
// its stdout and stderr in one log file. Nothing here blocks except WaitAll.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nbox::cosim {

using Environment = std::vector<std::pair<std::string, std::string>>;

// A child that ended, and how ("exited with status 3", "killed by signal 9 (Killed)").
struct ChildExit {
  int rank = 0;
  pid_t pid = 0;
  bool success = false;  // exited with status 0
  std::string how;
};

// `command` with every "{rank}" replaced by the rank.
std::string SubstituteRank(const std::string& command, int rank);
// How a wait status reads in a message.
std::string DescribeWaitStatus(int status);

class RankLauncher {
 public:
  RankLauncher() = default;
  // Kills every child still running (SIGTERM, then SIGKILL after a short grace).
  ~RankLauncher();
  RankLauncher(const RankLauncher&) = delete;
  RankLauncher& operator=(const RankLauncher&) = delete;

  // Starts one rank. Throws std::runtime_error when the log cannot be opened or fork fails.
  pid_t Launch(int rank, const std::string& command, const Environment& environment,
               const std::string& log_path);

  // Children that ended since the last call (never blocks).
  std::vector<ChildExit> Reap();
  // Waits up to `timeout` for every child to end; returns those that ended meanwhile.
  std::vector<ChildExit> WaitAll(std::chrono::milliseconds timeout);
  // SIGTERM to the process group of every child still running, SIGKILL to those left after
  // `grace`, and reaps them.
  void KillAll(std::chrono::milliseconds grace = std::chrono::milliseconds(500));

  bool running(int rank) const;
  // The pid of a launched rank, 0 when it was not launched here.
  pid_t pid(int rank) const;
  bool any_running() const;

 private:
  std::map<int, pid_t> running_;  // rank -> pid (also the process group id)
  std::map<int, pid_t> launched_;
};

}  // namespace nbox::cosim
