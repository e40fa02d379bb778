/* Logging and profiler callbacks that NCCL hands to a net plugin (NCCL 2.28.9 ABI). */
#ifndef NBOX_BRIDGE_NCCL_COMMON_H_
#define NBOX_BRIDGE_NCCL_COMMON_H_

#include <stdint.h>

#include "bridge/nccl/err.h"

typedef enum {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

/* Bit flags naming the subsystem a log line belongs to. */
typedef enum {
  NCCL_INIT = 1,
  NCCL_COLL = 2,
  NCCL_P2P = 4,
  NCCL_SHM = 8,
  NCCL_NET = 16,
  NCCL_GRAPH = 32,
  NCCL_TUNING = 64,
  NCCL_ENV = 128,
  NCCL_ALLOC = 256,
  NCCL_CALL = 512,
  NCCL_PROXY = 1024,
  NCCL_NVLS = 2048,
  NCCL_BOOTSTRAP = 4096,
  NCCL_REG = 8192,
  NCCL_ALL = ~0
} ncclDebugLogSubSys;

/* printf-style logger; `flags` is a mask of ncclDebugLogSubSys. */
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char* file,
                                  int line, const char* fmt, ...);

/* Event types a plugin reports through the profiler callback (v10 and later). */
enum {
  ncclProfilerNetEventStart = 0,
  ncclProfilerNetEventStop,
  ncclProfilerNetEventUpdate,
  ncclProfilerNetEventUpdateAndStop
};

typedef ncclResult_t (*ncclProfilerCallback_t)(void** eHandle, int type, void* phandle,
                                               int64_t pluginId, void* extData);

#endif /* NBOX_BRIDGE_NCCL_COMMON_H_ */
