/* The clock the example jobs (nbox_allreduce_bench, nbox_mlp_train, nbox_bridge_pingpong) time
 * their iterations by, and their iteration marks: thin wrappers of the host runtime's
 * nboxCommVirtualTimeNs and nboxMarkIteration that keep the programs' loops short; and the
 * median iteration the jobs report. */
#ifndef NBOX_BRIDGE_EXAMPLES_ITERATION_CLOCK_H_
#define NBOX_BRIDGE_EXAMPLES_ITERATION_CLOCK_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bridge/include/nbox_host.h"

/* Nanoseconds on the rank's clock: virtual time under nbox-cosim (libnccl-net-nbox.so), the
 * wall clock under any other plugin. Exits with a message if the runtime refuses. */
static inline uint64_t IterationClockNs(nboxComm_t comm) {
  uint64_t ns = 0;
  const nboxResult_t result = nboxCommVirtualTimeNs(comm, &ns);
  if (result != nboxSuccess) {
    fprintf(stderr, "nboxCommVirtualTimeNs failed: %s: %s\n", nboxGetErrorString(result),
            nboxGetLastError(comm));
    exit(1);
  }
  return ns;
}

/* Tells nbox-cosim where iteration `iteration` begins (begin = 1) and ends (begin = 0). */
static inline nboxResult_t MarkIteration(nboxComm_t comm, uint64_t iteration, int begin) {
  return nboxMarkIteration(comm, iteration, begin);
}

static inline int IterationCompareDoubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The median of values[0..n) (n >= 1; sorts them), the mean of the middle two for even n: the
 * iteration time a stall on a busy machine does not move. */
static inline double IterationMedian(double* values, int n) {
  qsort(values, (size_t)n, sizeof(double), IterationCompareDoubles);
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

#endif /* NBOX_BRIDGE_EXAMPLES_ITERATION_CLOCK_H_ */
