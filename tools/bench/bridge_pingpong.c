/* nbox_bridge_pingpong: the bridge's cost per message, seen by a real rank. Rank 0 sends
 * --bytes to rank 1 and waits for them to come back, --iters times, with nboxSend/nboxRecv of
 * the host runtime. Rank 0 prints the wall time and the rank-clock time (virtual under
 * nbox-cosim, iteration_clock.h) per round trip, and round trips per wall second, in a RESULT
 * line. Ranks other than 0 and 1 only join the communicator.
 *
 *   NBOX_NET_PLUGIN=/path/to/libnccl-net-nboxtcp.so nbox_bridge_pingpong --launch 2
 *
 * Under nbox-cosim (libnccl-net-nbox.so) every send and receive is a post to the simulator and
 * every completion comes back from it: tools/bench/nbox-bench-bridge runs it that way. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bridge/examples/support/check_call.h"
#include "bridge/examples/support/iteration_clock.h"
#include "bridge/examples/support/launch_ranks.h"
#include "bridge/include/nbox_host.h"

static uint64_t WallNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char** argv) {
  long bytes = 8, iterations = 1000, warmup = 50, launch = 0;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) {
      fprintf(stderr, "usage: %s [--bytes B] [--iters N] [--warmup N] [--launch W]\n", argv[0]);
      return 2;
    }
    long* target = strcmp(argv[i], "--bytes") == 0    ? &bytes
                   : strcmp(argv[i], "--iters") == 0  ? &iterations
                   : strcmp(argv[i], "--warmup") == 0 ? &warmup
                   : strcmp(argv[i], "--launch") == 0 ? &launch
                                                      : NULL;
    char* end = NULL;
    if (target == NULL || (*target = strtol(argv[i + 1], &end, 10), *end != '\0')) {
      fprintf(stderr, "%s: bad argument '%s %s'\n", argv[0], argv[i], argv[i + 1]);
      return 2;
    }
  }
  if (bytes < 1 || iterations < 1 || warmup < 0 || launch < 0) {
    fprintf(stderr, "%s: --bytes and --iters must be at least 1\n", argv[0]);
    return 2;
  }
  if (launch > 0 && getenv("NBOX_RANK") == NULL) return LaunchLocalRanks((int)launch, argv);

  nboxComm_t comm = NULL;
  CHECK(nboxCommInitFromEnv(&comm));
  int rank = 0, world = 0;
  CHECK(nboxCommUserRank(comm, &rank));
  CHECK(nboxCommCount(comm, &world));
  if (world < 2) {
    fprintf(stderr, "nbox_bridge_pingpong needs at least 2 ranks\n");
    return 2;
  }
  unsigned char* buffer = calloc((size_t)bytes, 1);
  uint64_t wall_start = 0, clock_start = 0;
  for (long it = 0; rank < 2 && it < warmup + iterations; ++it) {
    if (it == warmup) {
      wall_start = WallNs();
      clock_start = IterationClockNs(comm);
    }
    if (rank == 0) {
      buffer[0] = (unsigned char)it;
      CHECK(nboxSend(buffer, (size_t)bytes, nboxUint8, 1, comm, NULL));
      CHECK(nboxRecv(buffer, (size_t)bytes, nboxUint8, 1, comm, NULL));
      CHECK(nboxCommSynchronize(comm));
      if (buffer[0] != (unsigned char)(it + 1)) {
        fprintf(stderr, "round trip %ld came back with %u, not %u\n", it, buffer[0],
                (unsigned)(unsigned char)(it + 1));
        return 1;
      }
    } else {
      CHECK(nboxRecv(buffer, (size_t)bytes, nboxUint8, 0, comm, NULL));
      CHECK(nboxCommSynchronize(comm));
      buffer[0] = (unsigned char)(buffer[0] + 1);
      CHECK(nboxSend(buffer, (size_t)bytes, nboxUint8, 0, comm, NULL));
      CHECK(nboxCommSynchronize(comm));
    }
  }
  if (rank == 0) {
    const double wall_us = 1e-3 * (double)(WallNs() - wall_start) / (double)iterations;
    const double clock_us =
        1e-3 * (double)(IterationClockNs(comm) - clock_start) / (double)iterations;
    printf("nbox ping-pong: %ld bytes, %ld round trips (+%ld warm-up)\n", bytes, iterations,
           warmup);
    printf(
        "  wall %.2f us per round trip (%.0f round trips/s, %.0f messages/s), rank clock "
        "%.2f us per round trip\n",
        wall_us, 1e6 / wall_us, 2e6 / wall_us, clock_us);
    printf("RESULT bytes=%ld iters=%ld wall_rtt_us=%.3f clock_rtt_us=%.3f messages_per_s=%.0f\n",
           bytes, iterations, wall_us, clock_us, 2e6 / wall_us);
  }
  CHECK(nboxCommDestroy(comm));
  free(buffer);
  return 0;
}
