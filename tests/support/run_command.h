// Runs a program the way a user does, from a test: a shell command line in, its exit status
// and output back. For the tests that drive the project's executables (nbox-cosim, the example
// jobs) end to end.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace nbox::test_support {

struct CommandResult {
  int status = -1;     // exit status; -1 when it could not start or a signal ended it
  std::string output;  // its stdout (add " 2>&1" to the command for stderr as well)
};

// Runs `command` with sh -c and waits for it.
inline CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int raw = pclose(pipe);
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return result;
}

}  // namespace nbox::test_support
