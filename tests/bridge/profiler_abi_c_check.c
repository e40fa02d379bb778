/* bridge/profiler/profiler_v5.h must compile as C (NCCL's side of the ABI is C); returns the
 * descriptor's size as C lays it out, for profiler_abi_test.cc to compare. */
#include "bridge/profiler/profiler_v5.h"

int NboxProfilerAbiDescriptorSizeInC(void) {
  return (int)sizeof(ncclProfilerEventDescr_v5_t);
}
