#include "tests/bridge/rank_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "bridge/include/nbox_host.h"

extern char** environ;

namespace nbox::host::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

std::vector<RankOutcome> LaunchRanks(const std::string& scenario, int nranks,
                                     const LaunchOptions& options) {
  std::vector<RankOutcome> outcomes(nranks);
  nboxUniqueId id;
  if (nboxGetUniqueId(&id) != nboxSuccess) {
    outcomes[0].output = std::string("nboxGetUniqueId: ") + nboxGetLastError(nullptr);
    return outcomes;
  }
  char id_text[NBOX_UNIQUE_ID_STRING_BYTES];
  nboxUniqueIdToString(&id, id_text);

  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.push_back(std::string("NBOX_NET_PLUGIN=") + NBOX_TCP_PLUGIN_PATH);
  env.push_back("NBOX_TCP_IFADDR=127.0.0.1");
  env.insert(env.end(), options.env.begin(), options.env.end());
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  std::vector<pid_t> pids(nranks, -1);
  std::vector<std::string> logs(nranks);
  for (int r = 0; r < nranks; ++r) {
    if (std::count(options.absent_ranks.begin(), options.absent_ranks.end(), r) > 0) {
      outcomes[r].exit_code = 0;
      continue;
    }
    char log_path[] = "/tmp/nbox_host_rankXXXXXX";
    const int log_fd = mkstemp(log_path);
    logs[r] = log_path;
    std::vector<std::string> args = {NBOX_HOST_WORKER_PATH, scenario, std::to_string(r),
                                     std::to_string(nranks), id_text};
    args.insert(args.end(), options.args.begin(), options.args.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
      dup2(log_fd, 1);
      dup2(log_fd, 2);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    close(log_fd);
    pids[r] = pid;
  }

  const auto deadline = std::chrono::steady_clock::now() + options.deadline;
  int running = 0;
  for (pid_t pid : pids) running += pid > 0 ? 1 : 0;
  while (running > 0) {
    for (int r = 0; r < nranks; ++r) {
      if (pids[r] <= 0) continue;
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        outcomes[r].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pids[r] = -1;
        --running;
      }
    }
    if (running > 0 && std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < nranks; ++r) {
        if (pids[r] <= 0) continue;
        kill(pids[r], SIGKILL);
        waitpid(pids[r], nullptr, 0);
        outcomes[r].exit_code = -1;
        pids[r] = -1;
      }
      running = 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int r = 0; r < nranks; ++r) {
    if (logs[r].empty()) continue;
    outcomes[r].output = ReadFile(logs[r]);
    unlink(logs[r].c_str());
  }
  return outcomes;
}

std::string Describe(const std::vector<RankOutcome>& outcomes) {
  std::string text;
  for (size_t r = 0; r < outcomes.size(); ++r) {
    text += "rank " + std::to_string(r) + " (exit " + std::to_string(outcomes[r].exit_code) +
            "):\n" + outcomes[r].output + "\n";
  }
  return text;
}

}  // namespace nbox::host::testing
