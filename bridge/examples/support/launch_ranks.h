/* --launch W of the example jobs (nbox_allreduce_bench, nbox_mlp_train, nbox_bridge_pingpong):
 * the program starts W copies of itself as ranks 0..W-1 on this machine and waits for them.
 * It creates the communicator's unique id first, so this process hosts the bootstrap root
 * (nboxGetUniqueId) and outlives the ranks, and hands the ranks what nboxCommInitFromEnv reads:
 * NBOX_UNIQUE_ID, NBOX_WORLD_SIZE and NBOX_RANK. */
#ifndef NBOX_BRIDGE_EXAMPLES_LAUNCH_RANKS_H_
#define NBOX_BRIDGE_EXAMPLES_LAUNCH_RANKS_H_

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bridge/include/nbox_host.h"

/* Runs `argv` (this program's own, argv[0] first) as ranks 0..world-1. Returns 0 when every
 * rank exited with status 0, else 1 (with a message on stderr if the unique id failed). */
static inline int LaunchLocalRanks(int world, char** argv) {
  nboxUniqueId id;
  char text[NBOX_UNIQUE_ID_STRING_BYTES];
  const char* call = "nboxGetUniqueId";
  nboxResult_t result = nboxGetUniqueId(&id);
  if (result == nboxSuccess) {
    call = "nboxUniqueIdToString";
    result = nboxUniqueIdToString(&id, text);
  }
  if (result != nboxSuccess) {
    fprintf(stderr, "%s failed: %s: %s\n", call, nboxGetErrorString(result),
            nboxGetLastError(NULL));
    return 1;
  }
  setenv("NBOX_UNIQUE_ID", text, 1);
  char number[16];
  snprintf(number, sizeof(number), "%d", world);
  setenv("NBOX_WORLD_SIZE", number, 1);
  for (int r = 0; r < world; ++r) {
    if (fork() == 0) {
      snprintf(number, sizeof(number), "%d", r);
      setenv("NBOX_RANK", number, 1);
      execv("/proc/self/exe", argv);
      _exit(127);
    }
  }
  int failed = 0;
  for (int r = 0; r < world; ++r) {
    int status = 0;
    if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  return failed;
}

#endif /* NBOX_BRIDGE_EXAMPLES_LAUNCH_RANKS_H_ */
