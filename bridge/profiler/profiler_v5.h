/* nbox's declaration of NCCL's profiler plugin ABI, version 5, laid out as NCCL 2.28.9 (tag
 * v2.28.9-1, ext-profiler/example/nccl/profiler.h and profiler_v5.h) expects it. Plain C, no
 * CUDA. NCCL's ext-profiler README asks every plugin to carry its own copy of the definitions.
 *
 * NCCL looks for the data symbol `ncclProfiler_v5` in libnccl-profiler[-<name>].so, and when
 * there is no such library, in the net plugin it loaded: so libnccl-net-nbox.so can carry one.
 *
 * Per communicator NCCL calls init (which returns a context and the mask of event types the
 * plugin wants), then startEvent/stopEvent/recordEventState from the application thread and
 * the proxy thread, and finalize at the end. A handle returned by startEvent is the plugin's
 * own; NCCL passes it back to stop and record calls, and as `parentObj` of child events.
 * tests/bridge/profiler_abi_test.cc pins every size and offset to the LP64 layout. */
#ifndef NBOX_BRIDGE_PROFILER_PROFILER_V5_H_
#define NBOX_BRIDGE_PROFILER_PROFILER_V5_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bridge/nccl/common.h"
#include "bridge/nccl/err.h"

/* Event types (ncclProfilerEventDescr_v5_t.type) and the bits of init's activation mask. */
enum {
  ncclProfileGroup = 1 << 0,        /* a group of operations launched together */
  ncclProfileColl = 1 << 1,         /* one collective, from launch until its work is done */
  ncclProfileP2p = 1 << 2,          /* one send or receive */
  ncclProfileProxyOp = 1 << 3,      /* the proxy thread's network work of one channel */
  ncclProfileProxyStep = 1 << 4,    /* one network transfer of a proxy op */
  ncclProfileProxyCtrl = 1 << 5,    /* the proxy thread's idle/active/append states */
  ncclProfileKernelCh = 1 << 6,     /* one channel of the GPU kernel, with GPU timestamps */
  ncclProfileNetPlugin = 1 << 7,    /* events a net plugin defines */
  ncclProfileGroupApi = 1 << 8,     /* ncclGroupStart/End as called */
  ncclProfileCollApi = 1 << 9,      /* a collective API call as called */
  ncclProfileP2pApi = 1 << 10,      /* a send/recv API call as called */
  ncclProfileKernelLaunch = 1 << 11 /* the CUDA launch of a kernel */
};

/* State transitions passed to recordEventState (values fixed by the ABI). */
typedef enum {
  ncclProfilerProxyOpSendPosted = 0,
  ncclProfilerProxyOpSendRemFifoWait = 1,
  ncclProfilerProxyOpSendTransmitted = 2,
  ncclProfilerProxyOpSendDone = 3,
  ncclProfilerProxyOpRecvPosted = 4,
  ncclProfilerProxyOpRecvReceived = 5,
  ncclProfilerProxyOpRecvTransmitted = 6,
  ncclProfilerProxyOpRecvDone = 7,
  ncclProfilerProxyStepSendGPUWait = 8,
  ncclProfilerProxyStepSendWait = 9,
  ncclProfilerProxyStepRecvWait = 10,
  ncclProfilerProxyStepRecvFlushWait = 11,
  ncclProfilerProxyStepRecvGPUWait = 12,
  ncclProfilerProxyCtrlIdle = 13,
  ncclProfilerProxyCtrlActive = 14,
  ncclProfilerProxyCtrlSleep = 15,
  ncclProfilerProxyCtrlWakeup = 16,
  ncclProfilerProxyCtrlAppend = 17,
  ncclProfilerProxyCtrlAppendEnd = 18,
  ncclProfilerProxyOpInProgress_v4 = 19,
  ncclProfilerProxyStepSendPeerWait_v4 = 20,
  ncclProfilerNetPluginUpdate = 21,
  ncclProfilerKernelChStop = 22, /* the state args carry the channel's GPU stop time */
  ncclProfilerEndGroupApiStart = 23,
  ncclProfilerBeginGroupApiEnd = 24
} ncclProfilerEventState_v5_t;

/* What NCCL tells startEvent about a new event. Which union member is valid depends on type. */
typedef struct {
  uint64_t type;   /* one ncclProfile* bit */
  void* parentObj; /* the handle startEvent returned for the parent event, or NULL */
  int rank;        /* the communicator rank that generated the event */
  union {
    struct {
      int graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;   /* per communicator and per func */
      const char* func;     /* "AllReduce", "AllGather", ... */
      const void* sendBuff; /* device addresses, not to be dereferenced */
      void* recvBuff;
      size_t count; /* elements of datatype; bytes (datatype ncclInt8) for AllGather and
                       Broadcast */
      int root;
      const char* datatype; /* "ncclFloat32", ... */
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;  /* "RING", "TREE", ... */
      const char* proto; /* "LL", "LL128", "SIMPLE" */
      void* parentGroup; /* the v4 group parent, for compatibility */
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid; /* process that generated the op: PXN proxies run in another process, and
                    then parentObj is not an address of this one */
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer; /* GPU global timer (ns) when the channel started */
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} ncclProfilerEventDescr_v5_t;

/* Optional attributes that come with a state transition. */
typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer; /* GPU global timer (ns) when the channel stopped */
  } kernelCh;
} ncclProfilerEventStateArgs_v5_t;

typedef struct {
  const char* name;
  /* Once per communicator. Sets *context (passed to startEvent and finalize) and
   * *eActivationMask (the ncclProfile* bits wanted; NCCL keeps one mask per process, the last
   * init's). An error makes NCCL carry on without the profiler for this communicator. */
  ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                       int nNodes, int nranks, int rank, ncclDebugLogger_t logfn);
  ncclResult_t (*startEvent)(void* context, void** eHandle, ncclProfilerEventDescr_v5_t* eDescr);
  ncclResult_t (*stopEvent)(void* eHandle);
  ncclResult_t (*recordEventState)(void* eHandle, ncclProfilerEventState_v5_t eState,
                                   ncclProfilerEventStateArgs_v5_t* eStateArgs);
  ncclResult_t (*finalize)(void* context);
} ncclProfiler_v5_t;

#endif /* NBOX_BRIDGE_PROFILER_PROFILER_V5_H_ */
