// Test helper for the end-to-end tests: rank_launcher starts every rank with the same
// environment and passes the rank as an argument (host_worker <scenario> <rank> <nranks> ...),
// but the nbox plugin learns its rank from NBOX_RANK and NBOX_WORLD_SIZE. This wrapper sets
// them from the arguments and execs the real worker.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s <scenario> <rank> <nranks> ...\n", argv[0]);
    return 2;
  }
  setenv("NBOX_RANK", argv[2], 1);
  setenv("NBOX_WORLD_SIZE", argv[3], 1);
  argv[0] = const_cast<char*>(NBOX_REAL_WORKER_PATH);
  execv(NBOX_REAL_WORKER_PATH, argv);
  std::perror("execv " NBOX_REAL_WORKER_PATH);
  return 127;
}
