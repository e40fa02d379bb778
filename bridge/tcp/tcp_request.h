// One isend or irecv of the TCP plugin. A connection owns a fixed pool of them
// (NCCL_NET_MAX_REQUESTS), so the data path never allocates.
#pragma once

#include <atomic>
#include <cstdint>

#include "bridge/nccl/net.h"
#include "bridge/tcp/tcp_wire.h"

namespace nbox::bridge::tcp {

// Most buffers one irecv may carry (the plugin's maxRecvs).
inline constexpr int kMaxRecvs = 8;

enum RequestState : int {
  kRequestFree = 0,  // in the pool
  kRequestPending,   // queued on its connection
  kRequestDone,      // waiting for test() to collect it
  kRequestFailed,    // likewise, with `error`
};

// Fields other than `state` are written by whoever progresses the connection (under its
// mutex) before `state` is released as Done/Failed, and read by test() after acquiring it.
struct Request {
  std::atomic<int> state{kRequestFree};
  ncclResult_t error = ncclSuccess;
  bool is_send = false;
  int n = 0;  // buffers (1 for a send)
  uint8_t* data[kMaxRecvs] = {};
  uint64_t size[kMaxRecvs] = {};  // send: message size; recv: capacity of each buffer
  int tag[kMaxRecvs] = {};
  uint64_t received[kMaxRecvs] = {};  // recv: size of the message that landed in each buffer
  bool filled[kMaxRecvs] = {};
  int filled_count = 0;
  uint8_t header[kHeaderBytes] = {};  // send: the encoded header
  uint64_t sent = 0;                  // send: bytes of header + payload written so far
};

}  // namespace nbox::bridge::tcp
