/* The clock the example jobs (nbox_allreduce_bench, nbox_mlp_train) time their iterations by,
 * and their iteration marks.
 *
 * TODO(issue 3, part C): switch to nboxCommVirtualTimeNs / nboxMarkIteration once nbox_host.h
 * has them; until then the clock is the wall clock (what nboxCommVirtualTimeNs returns under
 * the TCP plugin anyway) and the marks are not reported. */
#ifndef NBOX_BRIDGE_EXAMPLES_ITERATION_CLOCK_H_
#define NBOX_BRIDGE_EXAMPLES_ITERATION_CLOCK_H_

#include <stdint.h>
#include <time.h>

#include "bridge/include/nbox_host.h"

/* Nanoseconds on the rank's clock: virtual time under nbox-cosim, the wall clock otherwise. */
static inline uint64_t IterationClockNs(nboxComm_t comm) {
  (void)comm;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Tells nbox-cosim where iteration `iteration` begins (begin = 1) and ends (begin = 0). */
static inline nboxResult_t MarkIteration(nboxComm_t comm, uint64_t iteration, int begin) {
  (void)comm;
  (void)iteration;
  (void)begin;
  return nboxSuccess;
}

#endif /* NBOX_BRIDGE_EXAMPLES_ITERATION_CLOCK_H_ */
