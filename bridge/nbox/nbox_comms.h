// The objects the nbox plugin hands to NCCL: listen, send and recv comms and their requests,
// and the listen handle that travels between ranks (through NCCL's bootstrap, never through
// nbox-cosim).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "bridge/nccl/net.h"
#include "bridge/wire/listen_handle.h"
#include "bridge/wire/messages.h"

namespace nbox::bridge::nboxnet {

class BridgeClient;

// Most buffers one irecv may carry (the plugin's maxRecvs).
inline constexpr int kMaxRecvs = static_cast<int>(wire::kMaxRecvSlots);

// The listen handle (layout in bridge/wire/listen_handle.h, shared with the server side).
using wire::ListenHandle;
static_assert(wire::kListenHandleBytes == NCCL_NET_HANDLE_MAXSIZE, "handle size");

enum RequestState : int {
  kRequestFree = 0,
  kRequestPending,  // posted; the server has not released it (or its bytes are on the way)
  kRequestDone,     // test() reports it done and frees it
  kRequestFailed,   // test() returns `error` and frees it
};

// Fields other than `state` are written under the client's mutex before `state` is released
// as Done/Failed, and read by test() after acquiring it.
struct Request {
  std::atomic<int> state{kRequestFree};
  ncclResult_t error = ncclSuccess;
  uint64_t id = 0;
  bool is_send = false;
  int n = 0;
  uint8_t* data[kMaxRecvs] = {};
  uint64_t capacity[kMaxRecvs] = {};  // send: the message size
  uint64_t sizes[kMaxRecvs] = {};     // recv: the message in each buffer
  // Receive in progress (after its Complete arrived):
  bool completion_known = false;
  uint64_t delivery_vtime = 0;
  bool direct = false;     // bytes go straight to the user's buffers (already due)
  bool synthetic = false;  // Complete said synthetic: no bytes come, the buffers stay untouched
  uint64_t received[kMaxRecvs] = {};        // bytes in so far, per buffer
  std::vector<uint8_t> staging[kMaxRecvs];  // held bytes (not due yet)
  bool BytesIn() const {                    // a send has no bytes to wait for
    if (is_send) return true;
    for (int i = 0; i < n; ++i) {
      if (received[i] != sizes[i]) return false;
    }
    return true;
  }
};

struct Comm {
  enum class Kind { kListen, kSend, kRecv };
  Comm(Kind k, uint64_t i, std::shared_ptr<BridgeClient> c)
      : kind(k), id(i), client(std::move(c)) {}
  virtual ~Comm() = default;
  const Kind kind;
  const uint64_t id;
  const std::shared_ptr<BridgeClient> client;
};

struct IncomingConnection {
  uint64_t connection;
  uint32_t peer;
  uint64_t vtime;  // made at this virtual time: accept returns it once the clock is there
};

struct ListenComm : Comm {
  ListenComm(uint64_t i, std::shared_ptr<BridgeClient> c) : Comm(Kind::kListen, i, std::move(c)) {}
  std::deque<IncomingConnection> incoming;  // under the client's mutex
};

// A send or recv comm with its fixed pool of requests (the data path never allocates one).
struct DataComm : Comm {
  DataComm(Kind k, uint64_t i, std::shared_ptr<BridgeClient> c) : Comm(k, i, std::move(c)) {}
  uint32_t peer = 0;
  uint64_t connection = 0;
  // Send comm while connecting: 0 waiting, 1 connected, -1 refused.
  int connect_state = 0;
  uint64_t connected_vtime = 0;  // connected at: connect returns it once the clock is there
  bool payload_wanted = true;
  Request pool[NCCL_NET_MAX_REQUESTS];
};

}  // namespace nbox::bridge::nboxnet
