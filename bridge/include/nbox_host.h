/* nbox host runtime: NCCL-shaped collectives for CPU processes.
 *
 * Each process is one rank. Collectives run the schedules of nbox's collectives/ layer (the
 * very messages a simulated rank exchanges) on host buffers, over an ncclNet plugin loaded
 * exactly as NCCL loads it: NBOX_NET_PLUGIN=<name or path> (default "nboxtcp") is dlopen()ed
 * as given, then as libnccl-net-<name>.so, and its ncclNetPlugin_v11 table is used.
 *
 * Execution model (a CUDA stream, without a GPU): every communicator has one internal stream.
 * A call validates its arguments, enqueues the operation and returns at once; operations of a
 * communicator run one after another in call order on the communicator's own thread. Buffers
 * must stay valid and must not be touched until the operation completes. Completion is
 * observed through the request the call returns (pass NULL when not needed): nboxWait blocks
 * until that operation finished (so every earlier one on the communicator has too),
 * nboxTest polls it; either releases the request once it reports completion.
 * nboxCommSynchronize waits for everything enqueued so far.
 *
 * Groups: calls between nboxGroupStart and nboxGroupEnd are not started until the outermost
 * nboxGroupEnd; those of one communicator then run as one operation whose messages all
 * progress together (needed for Send/Recv patterns in which every rank sends before it
 * receives). Collectives of a group pair up across ranks in call order, as do the sends and
 * receives between any two ranks; keep that order the same on every rank, as with NCCL.
 * Requests of a grouped call complete when the whole group's operation on that communicator
 * does; waiting on one before nboxGroupEnd is nboxInvalidUsage.
 *
 * Errors: a call returns an error code at once for bad arguments; failures while running
 * (a peer process died, a connection broke) are returned by nboxWait / nboxTest /
 * nboxCommSynchronize and by every later call on that communicator. nboxGetLastError tells
 * what happened. A rank whose peer died gets an error within about a second, never a hang.
 *
 * Environment (identical on every rank where marked *):
 *   NBOX_NET_PLUGIN    plugin name or path (default nboxtcp)
 *   NBOX_NET_DEV       plugin device index to use (default 0)
 *   NBOX_COLLECTIVES * the whole collective settings (collectives/settings.h; nbox-cosim
 *                      sets it), else:
 *   NBOX_CHANNELS *    parallel rings per collective, 1..64 (default 1)
 *   NBOX_CHUNK_BYTES * pipelining chunk, e.g. 1MiB (default 1MiB)
 *   NBOX_BOOTSTRAP_ADDR   address nboxGetUniqueId listens on (default: first entry of
 *                         NBOX_TCP_IFADDR, else 127.0.0.1)
 *   NBOX_BOOTSTRAP_TIMEOUT_S  how long init waits for all ranks (default 120)
 *   NBOX_DEBUG         WARN or INFO: print plugin and runtime messages to stderr
 */
#ifndef NBOX_BRIDGE_NBOX_HOST_H_
#define NBOX_BRIDGE_NBOX_HOST_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same values as ncclResult_t. */
typedef enum {
  nboxSuccess = 0,
  nboxSystemError = 2,
  nboxInternalError = 3,
  nboxInvalidArgument = 4,
  nboxInvalidUsage = 5,
  nboxRemoteError = 6,
  nboxInProgress = 7
} nboxResult_t;

/* Same values as ncclDataType_t. */
typedef enum {
  nboxInt8 = 0,
  nboxUint8 = 1,
  nboxInt32 = 2,
  nboxUint32 = 3,
  nboxInt64 = 4,
  nboxUint64 = 5,
  nboxFloat16 = 6, /* IEEE binary16; reduced in float, rounded to nearest even */
  nboxFloat32 = 7,
  nboxFloat64 = 8,
  nboxBfloat16 = 9
} nboxDataType_t;

/* Same values as ncclRedOp_t. Integer sums and products wrap around. */
typedef enum { nboxSum = 0, nboxProd = 1, nboxMax = 2, nboxMin = 3 } nboxRedOp_t;

#define NBOX_UNIQUE_ID_BYTES 128
/* Names the bootstrap of one communicator: the address of its root and a random nonce. */
typedef struct {
  char internal[NBOX_UNIQUE_ID_BYTES];
} nboxUniqueId;
/* Text form: 2 * NBOX_UNIQUE_ID_BYTES hex digits, plus a terminating NUL. */
#define NBOX_UNIQUE_ID_STRING_BYTES (2 * NBOX_UNIQUE_ID_BYTES + 1)

typedef struct nboxComm* nboxComm_t;
typedef struct nboxRequest* nboxRequest_t;

/* Starts the bootstrap root of a new communicator in this process (a thread that lives until
 * every rank has destroyed the communicator, or one has died) and describes it in *id. Call
 * it once per communicator, in any process that stays alive while the ranks run (usually
 * rank 0's), and hand the id to every rank. */
nboxResult_t nboxGetUniqueId(nboxUniqueId* id);
nboxResult_t nboxUniqueIdToString(const nboxUniqueId* id, char out[NBOX_UNIQUE_ID_STRING_BYTES]);
nboxResult_t nboxUniqueIdFromString(const char* text, nboxUniqueId* id);

/* Collective: every rank of the communicator calls it with the same nranks and id. Returns
 * once all nranks ranks have joined (or NBOX_BOOTSTRAP_TIMEOUT_S passed). */
nboxResult_t nboxCommInitRank(nboxComm_t* comm, int nranks, nboxUniqueId id, int rank);
/* torchrun-style: reads NBOX_RANK, NBOX_WORLD_SIZE and NBOX_UNIQUE_ID (text form). Without
 * NBOX_UNIQUE_ID, NBOX_UNIQUE_ID_FILE names a file that rank 0 creates (with a fresh id) and
 * the other ranks wait for. */
nboxResult_t nboxCommInitFromEnv(nboxComm_t* comm);
/* Waits for the communicator's operations, then releases it (tells the bootstrap root this
 * rank left normally). */
nboxResult_t nboxCommDestroy(nboxComm_t comm);
/* Releases the communicator without waiting: pending operations fail, and the other ranks
 * get an error as for a rank that died. */
nboxResult_t nboxCommAbort(nboxComm_t comm);
nboxResult_t nboxCommCount(const nboxComm_t comm, int* count);
nboxResult_t nboxCommUserRank(const nboxComm_t comm, int* rank);

/* As ncclCommSplit: collective over `comm` (every rank calls it, outside a group). The ranks
 * that pass the same color >= 0 form a new communicator, ranked by key, ties by their rank in
 * `comm`; with NBOX_SPLIT_NOCOLOR a rank takes part but gets *newcomm = NULL. The new
 * communicator has the collective settings of the environment, as nboxCommInitRank's. Under
 * libnccl-net-nbox.so (a real rank of nbox-cosim) it is refused with nboxInvalidUsage: the
 * emulated ranks do not exchange colors; nboxCommInitGroup names a group by its members. */
#define NBOX_SPLIT_NOCOLOR (-1)
nboxResult_t nboxCommSplit(nboxComm_t comm, int color, int key, nboxComm_t* newcomm);

/* A communicator of the ranks `members` of `comm` (nmembers distinct ranks of `comm`, in the new
 * communicator's rank order). Collective over the members only: each calls it with the same
 * list, the other ranks of `comm` do not call it (torch.distributed.new_group's shape, where
 * nboxCommSplit needs every rank). Outside nbox-cosim the first member makes the group's id and
 * sends it to the others on `comm`. A real rank of nbox-cosim joins, through its job's bootstrap
 * root, the scenario's communicator whose members are exactly these (as job ranks, in this
 * order), whose other members may be emulated; a list the scenario has no communicator for is
 * refused, naming it. The settings are the environment's, as nboxCommInitRank's. */
nboxResult_t nboxCommInitGroup(nboxComm_t comm, int nmembers, const int* members,
                               nboxComm_t* newcomm);

/* sendbuff == recvbuff is in place. count elements per rank. */
nboxResult_t nboxAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           nboxDataType_t datatype, nboxRedOp_t op, nboxComm_t comm,
                           nboxRequest_t* request);
/* recvbuff holds nranks * sendcount elements, rank r's at offset r * sendcount; in place when
 * sendbuff == recvbuff + rank * sendcount. */
nboxResult_t nboxAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           nboxDataType_t datatype, nboxComm_t comm, nboxRequest_t* request);
/* sendbuff holds nranks * recvcount elements; rank r receives the reduction of block r. */
nboxResult_t nboxReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               nboxDataType_t datatype, nboxRedOp_t op, nboxComm_t comm,
                               nboxRequest_t* request);
/* Copies root's sendbuff into every rank's recvbuff (sendbuff is read on the root only). */
nboxResult_t nboxBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           nboxDataType_t datatype, int root, nboxComm_t comm,
                           nboxRequest_t* request);
/* Reduces every rank's sendbuff into root's recvbuff (recvbuff is written on the root only;
 * in place when sendbuff == recvbuff there). */
nboxResult_t nboxReduce(const void* sendbuff, void* recvbuff, size_t count, nboxDataType_t datatype,
                        nboxRedOp_t op, int root, nboxComm_t comm, nboxRequest_t* request);
/* sendbuff holds nranks blocks of count elements, block d for rank d; recvbuff receives block s
 * from rank s (NCCL 2.28's ncclAlltoAll; not in place). Runs the all-to-all algorithm of the
 * collective settings (direct, or hierarchical through the rail-aligned peer). */
nboxResult_t nboxAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                          nboxDataType_t datatype, nboxComm_t comm, nboxRequest_t* request);
/* Point to point (peer != own rank). Sends to a peer match that peer's receives from this
 * rank in call order; counts and types must agree. */
nboxResult_t nboxSend(const void* sendbuff, size_t count, nboxDataType_t datatype, int peer,
                      nboxComm_t comm, nboxRequest_t* request);
nboxResult_t nboxRecv(void* recvbuff, size_t count, nboxDataType_t datatype, int peer,
                      nboxComm_t comm, nboxRequest_t* request);

nboxResult_t nboxGroupStart(void);
nboxResult_t nboxGroupEnd(void);

nboxResult_t nboxWait(nboxRequest_t request);
/* *done = 1 (and the request released) once complete; the operation's result is returned. */
nboxResult_t nboxTest(nboxRequest_t request, int* done);
nboxResult_t nboxCommSynchronize(nboxComm_t comm);
/* For a program that waits elsewhere than in nboxWait / nboxCommSynchronize, e.g. a framework
 * whose completion thread waits on every request and fulfils the futures its program waits
 * on. nboxWaitInBackground is nboxWait for such a thread: under nbox-cosim's virtual clock it
 * does not count as the program waiting, so the rank's clock keeps running while the program
 * computes. nboxProgramWaiting(comm, 1) and (comm, 0) bracket the program's own waits: only
 * while the program waits (in nboxWait, nboxCommSynchronize or such a bracket) and an
 * operation is in flight does a virtual rank's clock stand still. Brackets nest (each 1 needs
 * its 0); under other plugins both are plain (nboxWait, no-op). */
nboxResult_t nboxWaitInBackground(nboxRequest_t request);
nboxResult_t nboxProgramWaiting(nboxComm_t comm, int waiting);
/* *asyncError = the communicator's state without waiting (as ncclCommGetAsyncError): nboxSuccess,
 * or why it failed, also while the program is between calls (a peer or nbox-cosim gone is seen
 * within about 100 ms); nboxGetLastError(comm) says more. */
nboxResult_t nboxCommGetAsyncError(nboxComm_t comm, nboxResult_t* asyncError);

/* The rank's clock in ns: under nbox-cosim (libnccl-net-nbox.so) the virtual time nbox-cosim
 * keeps for this rank; under any other plugin the wall clock (steady, since an arbitrary
 * origin). Differences of two readings are what a training loop reports as iteration time. */
nboxResult_t nboxCommVirtualTimeNs(nboxComm_t comm, uint64_t* ns);
/* Marks the start (begin = 1) or end (begin = 0) of training iteration `iteration` at the
 * rank's clock now; nbox-cosim reports iteration times from these. A no-op under plugins
 * other than libnccl-net-nbox.so. */
nboxResult_t nboxMarkIteration(nboxComm_t comm, uint64_t iteration, int begin);

const char* nboxGetErrorString(nboxResult_t result);
/* What went wrong last on `comm` (or, with NULL, in this thread's last failed call that had no
 * communicator yet, e.g. init). Valid until the next call in this thread. */
const char* nboxGetLastError(nboxComm_t comm);

#ifdef __cplusplus
}
#endif

#endif /* NBOX_BRIDGE_NBOX_HOST_H_ */
