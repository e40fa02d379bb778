/* CHECK(call) for the example jobs written in C: a host-runtime call that fails ends the rank
 * with exit status 1 and a message naming the call, the error and what the communicator says
 * happened. Expects a variable `comm` (nboxComm_t, may be NULL) in scope. */
#ifndef NBOX_BRIDGE_EXAMPLES_CHECK_CALL_H_
#define NBOX_BRIDGE_EXAMPLES_CHECK_CALL_H_

#include <stdio.h>
#include <stdlib.h>

#include "bridge/include/nbox_host.h"

#define CHECK(call)                                                              \
  do {                                                                           \
    nboxResult_t result_ = (call);                                               \
    if (result_ != nboxSuccess) {                                                \
      fprintf(stderr, "%s failed: %s: %s\n", #call, nboxGetErrorString(result_), \
              nboxGetLastError(comm));                                           \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

#endif /* NBOX_BRIDGE_EXAMPLES_CHECK_CALL_H_ */
