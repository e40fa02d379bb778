#include "tools/cosim/real_ranks/rank_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace nbox::cosim {

std::string SubstituteRank(const std::string& command, int rank) {
  static const std::string kPlaceholder = "{rank}";
  std::string out = command;
  for (size_t at = out.find(kPlaceholder); at != std::string::npos;
       at = out.find(kPlaceholder, at)) {
    const std::string text = std::to_string(rank);
    out.replace(at, kPlaceholder.size(), text);
    at += text.size();
  }
  return out;
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "ended with wait status " + std::to_string(status);
}

RankLauncher::~RankLauncher() {
  KillAll(std::chrono::milliseconds(200));
}

pid_t RankLauncher::Launch(int rank, const std::string& command, const Environment& environment,
                           const std::string& log_path) {
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    throw std::runtime_error("cannot open " + log_path + " for real rank " + std::to_string(rank) +
                             "'s output: " + std::strerror(errno));
  }
  const std::string shell_command = SubstituteRank(command, rank);
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(log);
    throw std::runtime_error("cannot start real rank " + std::to_string(rank) +
                             ": fork: " + std::strerror(error));
  }
  if (pid == 0) {
    // The child: its own process group, the log as stdout and stderr, the rank's environment.
    setpgid(0, 0);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    for (const auto& [name, value] : environment) setenv(name.c_str(), value.c_str(), 1);
    execl("/bin/sh", "sh", "-c", shell_command.c_str(), static_cast<char*>(nullptr));
    const char* why = "nbox-cosim: cannot run /bin/sh\n";
    (void)!write(STDERR_FILENO, why, std::strlen(why));
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so a kill right after fork reaches the group
  close(log);
  running_[rank] = pid;
  launched_[rank] = pid;
  return pid;
}

std::vector<ChildExit> RankLauncher::Reap() {
  std::vector<ChildExit> ended;
  for (auto it = running_.begin(); it != running_.end();) {
    int status = 0;
    const pid_t got = waitpid(it->second, &status, WNOHANG);
    if (got == it->second || (got < 0 && errno == ECHILD)) {
      ChildExit exit;
      exit.rank = it->first;
      exit.pid = it->second;
      exit.success = got == it->second && WIFEXITED(status) && WEXITSTATUS(status) == 0;
      exit.how = got == it->second ? DescribeWaitStatus(status) : "vanished";
      ended.push_back(exit);
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
  return ended;
}

std::vector<ChildExit> RankLauncher::WaitAll(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<ChildExit> ended;
  while (true) {
    for (ChildExit& exit : Reap()) ended.push_back(std::move(exit));
    if (running_.empty() || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ended;
}

void RankLauncher::KillAll(std::chrono::milliseconds grace) {
  if (running_.empty()) return;
  for (const auto& [rank, pid] : running_) kill(-pid, SIGTERM);
  WaitAll(grace);
  for (const auto& [rank, pid] : running_) kill(-pid, SIGKILL);
  WaitAll(std::chrono::milliseconds(2000));
}

bool RankLauncher::running(int rank) const {
  return running_.count(rank) > 0;
}

pid_t RankLauncher::pid(int rank) const {
  const auto it = launched_.find(rank);
  return it == launched_.end() ? 0 : it->second;
}

bool RankLauncher::any_running() const {
  return !running_.empty();
}

}  // namespace nbox::cosim
