/* nbox's extension to the ncclNet ABI: a blocking wait for completions (v1), and (v2) op
 * reports, the rank's virtual clock and synthetic completions.
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

/* Version 2 (exported as NBOX_NET_EXT_V2_SYMBOL by libnccl-net-nbox.so, next to v1): v1's wait
 * plus what nbox-cosim learns from the rank's program and what the program learns from the
 * rank's clock. */
#define NBOX_NET_EXT_V2_SYMBOL "nboxNetExt_v2"

/* nboxOpReport.kind */
#define NBOX_OP_REPORT_COLLECTIVE 1
#define NBOX_OP_REPORT_ITERATION_BEGIN 2
#define NBOX_OP_REPORT_ITERATION_END 3
/* nboxOpReport.op */
#define NBOX_REPORTED_OP_NONE 0
#define NBOX_REPORTED_OP_ALLREDUCE 1
#define NBOX_REPORTED_OP_ALLGATHER 2
#define NBOX_REPORTED_OP_REDUCESCATTER 3
#define NBOX_REPORTED_OP_BROADCAST 4
#define NBOX_REPORTED_OP_SEND 5
#define NBOX_REPORTED_OP_RECV 6
#define NBOX_REPORTED_OP_REDUCE 7
#define NBOX_REPORTED_OP_ALLTOALL 8

/* A call of the rank's program (bridge/wire/messages.h, OpReport, says what each field holds
 * for each kind); the plugin stamps it with the rank's clock when reportOp is called. */
typedef struct {
  int kind;  /* NBOX_OP_REPORT_* */
  int op;    /* NBOX_REPORTED_OP_* */
  int dtype; /* ncclDataType_t numbering */
  int redop; /* ncclRedOp_t numbering; 0 when the op does not reduce */
  int root;  /* broadcast root or Send/Recv peer; -1 otherwise */
  uint64_t count;
  uint64_t bytes;
  uint64_t seq;
} nboxOpReport;

/* nboxNetExt_v2.testFlags: the receive's messages came from an emulated rank and carry no bytes;
 * the buffers were left untouched for the caller to fill (payload = self). */
#define NBOX_NET_COMPLETION_SYNTHETIC 1u

typedef struct {
  int version; /* 2 */
  uint64_t (*eventCount)(void);
  void (*waitEvents)(uint64_t seen, int timeoutUs);
  /* Sends the report to nbox-cosim, stamped with the rank's virtual time now. ctx is the value
   * init returned (any communicator's). ncclInvalidArgument for a malformed report. */
  int (*reportOp)(void* ctx, const nboxOpReport* report);
  /* The rank's virtual time now, in ns (the clock nbox-cosim keeps for this rank). */
  int (*virtualTimeNs)(void* ctx, uint64_t* ns);
  /* test() of the ncclNet tables plus, once *done, NBOX_NET_COMPLETION_* bits in *flags. */
  int (*testFlags)(void* request, int* done, int* sizes, uint32_t* flags);
  /* A thread of the program starts (waiting = 1) or stops (0) waiting for the communication
   * library (nboxWait, nboxCommSynchronize). Under the virtual clock the rank's clock stands
   * still only while the program waits and a thread waits in waitEvents: a runtime thread
   * waiting for the network while the program computes does not stop it. Until the first call
   * every waitEvents stops the clock (v1's rule); a runtime declares that it reports waits by
   * calling programWaiting(0) once at init. */
  void (*programWaiting)(int waiting);
} nboxNetExt_v2_t;

#endif /* NBOX_BRIDGE_NBOX_NET_EXT_H_ */
