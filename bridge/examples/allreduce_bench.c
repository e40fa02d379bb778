/* allreduce_bench: an all-reduce (or, with --op reduce, a reduce to --root; with --op alltoall,
 * an all-to-all of --bytes per rank) loop over the nbox host runtime, nccl-tests style.
 *
 * Each iteration optionally waits --compute-us microseconds (a timed wait: a stand-in for
 * compute that does not depend on how many processes share the CPU) and then all-reduces (or
 * reduces) --bytes of float32. Iterations are timed on the rank's clock (iteration_clock.h: virtual
 * time under nbox-cosim) and marked for nbox-cosim's report. Rank 0 prints the mean time per
 * iteration and the algorithm and bus bandwidth of the all-reduce, plus one machine-readable RESULT
 * line (also with the wall-clock mean and the median iteration, which a stall on a busy machine
 * does not move).
 *
 * Ranks find each other through the environment (nboxCommInitFromEnv): NBOX_RANK,
 * NBOX_WORLD_SIZE and NBOX_UNIQUE_ID or NBOX_UNIQUE_ID_FILE. For a quick run on one machine,
 * --launch W starts W ranks itself:
 *
 *   NBOX_NET_PLUGIN=/path/to/libnccl-net-nboxtcp.so ./nbox_allreduce_bench --launch 4 \
 *       --bytes 32MiB --iters 20
 */
#define _GNU_SOURCE
#include <errno.h>
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

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void SleepUntil(double deadline) {
  while (Now() < deadline) {
    const double left = deadline - Now();
    struct timespec t = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
    nanosleep(&t, NULL);
  }
}

/* "32MiB", "4KiB", "1GB", "1000" -> bytes; 0 on a malformed value. */
static size_t ParseBytes(const char* text) {
  char* end = NULL;
  const double value = strtod(text, &end);
  double scale = 1;
  if (strcmp(end, "") == 0 || strcmp(end, "B") == 0)
    scale = 1;
  else if (strcmp(end, "KiB") == 0)
    scale = 1024.0;
  else if (strcmp(end, "MiB") == 0)
    scale = 1024.0 * 1024;
  else if (strcmp(end, "GiB") == 0)
    scale = 1024.0 * 1024 * 1024;
  else if (strcmp(end, "KB") == 0)
    scale = 1e3;
  else if (strcmp(end, "MB") == 0)
    scale = 1e6;
  else if (strcmp(end, "GB") == 0)
    scale = 1e9;
  else
    return 0;
  return value > 0 ? (size_t)(value * scale) : 0;
}

static void Usage(const char* program) {
  fprintf(stderr,
          "usage: %s [--bytes SIZE] [--iters N] [--warmup N] [--compute-us US] [--launch W]\n"
          "          [--check sum|self] [--op allreduce|reduce|alltoall] [--root R]\n"
          "  SIZE like 32MiB (default 32MiB, float32 elements); ranks from NBOX_RANK,\n"
          "  NBOX_WORLD_SIZE, NBOX_UNIQUE_ID[_FILE], or --launch W to start W local ranks.\n"
          "  --check sum (default): every element must be 1 + 2 + ... + W (rank r adds r + 1);\n"
          "  --check self: W * (r + 1), what nbox-cosim's emulated peers give with\n"
          "  [realranks] payload = self (each holds the receiving rank's own data).\n"
          "  --op reduce: the sum lands on rank R (default 0) only, which checks it;\n"
          "  --op alltoall: rank r sends r + 1 to every rank; block s must hold s + 1\n"
          "  (self: r + 1, what every emulated peer would send if it held this rank's data)\n"
          "  --print-starts: every rank prints STARTS_US RANK T..., the CLOCK_MONOTONIC time\n"
          "  (us) at which it called each timed collective, to compare ranks' phases\n",
          program);
}

int main(int argc, char** argv) {
  size_t bytes = 32u << 20;
  int iterations = 20, warmup = 3, launch = 0, check_self = 0, reduce = 0, alltoall = 0, root = 0;
  int print_starts = 0;
  double compute_us = 0;
  for (int i = 1; i < argc; ++i) {
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--bytes") == 0 && value) {
      bytes = ParseBytes(value);
    } else if (strcmp(argv[i], "--iters") == 0 && value) {
      iterations = atoi(value);
    } else if (strcmp(argv[i], "--warmup") == 0 && value) {
      warmup = atoi(value);
    } else if (strcmp(argv[i], "--check") == 0 && value &&
               (strcmp(value, "sum") == 0 || strcmp(value, "self") == 0)) {
      check_self = strcmp(value, "self") == 0;
    } else if (strcmp(argv[i], "--op") == 0 && value &&
               (strcmp(value, "allreduce") == 0 || strcmp(value, "reduce") == 0 ||
                strcmp(value, "alltoall") == 0)) {
      reduce = strcmp(value, "reduce") == 0;
      alltoall = strcmp(value, "alltoall") == 0;
    } else if (strcmp(argv[i], "--root") == 0 && value) {
      root = atoi(value);
    } else if (strcmp(argv[i], "--compute-us") == 0 && value) {
      compute_us = atof(value);
    } else if (strcmp(argv[i], "--print-starts") == 0) {
      print_starts = 1;
    } else if (strcmp(argv[i], "--launch") == 0 && value) {
      launch = atoi(value);
    } else {
      Usage(argv[0]);
      return 2;
    }
    ++i;
  }
  if (bytes < 4 || iterations < 1 || warmup < 0 || compute_us < 0 || root < 0) {
    Usage(argv[0]);
    return 2;
  }
  if (launch > 0 && getenv("NBOX_RANK") == NULL) return LaunchLocalRanks(launch, argv);

  nboxComm_t comm = NULL;
  CHECK(nboxCommInitFromEnv(&comm));
  int rank = 0, world = 0;
  CHECK(nboxCommUserRank(comm, &rank));
  CHECK(nboxCommCount(comm, &world));
  if (root >= world) {
    fprintf(stderr, "--root %d is not a rank of %d\n", root, world);
    return 2;
  }
  const size_t count = bytes / sizeof(float);
  float* send = malloc(count * sizeof(float));
  float* recv = malloc(count * sizeof(float));
  if (send == NULL || recv == NULL) {
    fprintf(stderr, "out of memory for %zu bytes\n", bytes);
    return 1;
  }
  for (size_t i = 0; i < count; ++i) send[i] = (float)(rank + 1);

  double total = 0, total_wall = 0;
  double* timed = malloc((size_t)iterations * sizeof(double));  /* each timed iteration, s */
  double* starts = malloc((size_t)iterations * sizeof(double)); /* monotonic call times, s */
  if (timed == NULL || starts == NULL) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  for (int it = 0; it < warmup + iterations; ++it) {
    const uint64_t start = IterationClockNs(comm);
    const double wall_start = Now();
    CHECK(MarkIteration(comm, (uint64_t)it, 1));
    if (compute_us > 0) SleepUntil(Now() + compute_us * 1e-6);
    if (it >= warmup) starts[it - warmup] = Now();
    nboxRequest_t request = NULL;
    if (reduce) {
      CHECK(nboxReduce(send, recv, count, nboxFloat32, nboxSum, root, comm, &request));
    } else if (alltoall) {
      CHECK(nboxAllToAll(send, recv, count / (size_t)world, nboxFloat32, comm, &request));
    } else {
      CHECK(nboxAllReduce(send, recv, count, nboxFloat32, nboxSum, comm, &request));
    }
    CHECK(nboxWait(request));
    CHECK(MarkIteration(comm, (uint64_t)it, 0));
    if (it >= warmup) {
      timed[it - warmup] = 1e-9 * (double)(IterationClockNs(comm) - start);
      total += timed[it - warmup];
      total_wall += Now() - wall_start;
    }
  }
  /* Every element is 1 + 2 + ... + world (or world * (rank + 1) when every peer sent this rank's
   * own data), exact in float for any sane world size; a reduce's only at the root. */
  const float want =
      check_self ? (float)world * (float)(rank + 1) : (float)world * (float)(world + 1) / 2;
  size_t wrong = 0;
  if (alltoall) {
    const size_t block = count / (size_t)world;
    for (size_t i = 0; i < block * (size_t)world; ++i) {
      wrong += recv[i] != (check_self ? (float)(rank + 1) : (float)(i / block + 1));
    }
  } else if (!reduce || rank == root) {
    for (size_t i = 0; i < count; ++i) wrong += recv[i] != want;
  }

  const double per_iteration = total / iterations;
  const double comm_seconds = per_iteration - compute_us * 1e-6;
  const double algbw = comm_seconds > 0 ? (double)(count * sizeof(float)) / comm_seconds / 1e9 : 0;
  /* nccl-tests' bus bandwidth factors: 2 (W - 1) / W for all-reduce, 1 for reduce, (W - 1) / W
   * for all-to-all. */
  const double busbw = reduce     ? algbw
                       : alltoall ? algbw * (world - 1) / world
                                  : algbw * 2.0 * (world - 1) / world;
  const char* op_name = reduce ? "reduce" : alltoall ? "all-to-all" : "all-reduce";
  if (rank == 0) {
    printf(
        "nbox %s: %d ranks, %zu bytes float32 sum, %d iterations (+%d warm-up), "
        "compute %.0f us\n",
        op_name, world, count * sizeof(float), iterations, warmup, compute_us);
    printf("  time per iteration %.3f ms, %s %.3f ms, algbw %.3f GB/s, busbw %.3f GB/s\n",
           per_iteration * 1e3, op_name, comm_seconds * 1e3, algbw, busbw);
    /* Every timed iteration in order, for a spread (tools/fidelity/nbox-fidelity); before
     * IterationMedian sorts them. */
    printf("ITERATIONS_US");
    for (int i = 0; i < iterations; ++i) printf(" %.1f", timed[i] * 1e6);
    printf("\n");
    printf(
        "RESULT ranks=%d bytes=%zu iters=%d iter_us=%.1f allreduce_us=%.1f algbw_GBps=%.4f "
        "busbw_GBps=%.4f wall_iter_us=%.1f median_iter_us=%.1f\n",
        world, count * sizeof(float), iterations, per_iteration * 1e6, comm_seconds * 1e6, algbw,
        busbw, total_wall / iterations * 1e6, IterationMedian(timed, iterations) * 1e6);
  }
  if (print_starts) {
    printf("STARTS_US %d", rank);
    for (int i = 0; i < iterations; ++i) printf(" %.1f", starts[i] * 1e6);
    printf("\n");
  }
  if (wrong > 0) fprintf(stderr, "rank %d: %zu elements differ from %g\n", rank, wrong, want);
  CHECK(nboxCommDestroy(comm));
  free(send);
  free(recv);
  free(timed);
  free(starts);
  return wrong > 0 ? 1 : 0;
}
