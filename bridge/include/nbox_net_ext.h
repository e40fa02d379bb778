/* nbox's extension to the ncclNet ABI: a blocking wait for completions.
 *
 * NCCL polls test() from a busy loop; a CPU rank of the host runtime should instead sleep
 * until something completes (and under nbox-cosim's virtual clock, the time a rank spends
 * blocked here is exactly the time its clock stands still). A plugin that supports this
 * exports, next to its ncclNetPlugin_vN tables, the data symbol NBOX_NET_EXT_SYMBOL. The
 * host runtime looks it up with dlsym and falls back to polling with short sleeps when a
 * plugin lacks it. NCCL ignores it. */
#ifndef NBOX_BRIDGE_NBOX_NET_EXT_H_
#define NBOX_BRIDGE_NBOX_NET_EXT_H_

#include <stdint.h>

#define NBOX_NET_EXT_SYMBOL "nboxNetExt_v1"

typedef struct {
  int version; /* 1 */
  /* A counter the plugin increments each time a request of this process completes or fails
   * (or a connection fails). */
  uint64_t (*eventCount)(void);
  /* Returns once eventCount() != seen, or after timeoutUs microseconds. Read eventCount()
   * before testing requests and pass that value: a completion in between is not missed. */
  void (*waitEvents)(uint64_t seen, int timeoutUs);
} nboxNetExt_v1_t;

#endif /* NBOX_BRIDGE_NBOX_NET_EXT_H_ */
