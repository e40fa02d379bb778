/* nbox_fidelity_root: hosts the bootstrap root of one host-runtime communicator for ranks that
 * run in separate network namespaces (netns_job.sh). It calls nboxGetUniqueId (which listens
 * on NBOX_BOOTSTRAP_ADDR), writes the id's text form to the file named by its argument (via a
 * temporary file and rename, so a reader never sees half of it) and stays alive until SIGTERM:
 * the runtime needs the root's process to outlive every rank, which a rank 0 that hosts the
 * root and finishes first does not. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bridge/include/nbox_host.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s ID_FILE\n", argv[0]);
    return 2;
  }
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_BLOCK, &stop, NULL); /* before the root's thread starts: it inherits the mask */
  nboxUniqueId id;
  char text[NBOX_UNIQUE_ID_STRING_BYTES];
  if (nboxGetUniqueId(&id) != nboxSuccess || nboxUniqueIdToString(&id, text) != nboxSuccess) {
    fprintf(stderr, "nbox_fidelity_root: %s\n", nboxGetLastError(NULL));
    return 1;
  }
  char temporary[4096];
  snprintf(temporary, sizeof(temporary), "%s.tmp", argv[1]);
  FILE* file = fopen(temporary, "w");
  if (file == NULL || fprintf(file, "%s\n", text) < 0 || fclose(file) != 0 ||
      rename(temporary, argv[1]) != 0) {
    perror("nbox_fidelity_root: writing the id file");
    return 1;
  }
  int signal_number = 0;
  sigwait(&stop, &signal_number);
  return 0;
}
