// Connection establishment of the TCP plugin: listen, connect and accept, all non-blocking
// state machines as NCCL requires (connect and accept return a null comm until ready and are
// called again).
//
// listen() writes a ListenHandle: the address of a fresh listening socket and a random nonce.
// connect() keeps its progress inside the caller's copy of the handle (NCCL passes the same
// handle memory on every call, as its own socket transport relies on), then sends a Hello with
// the nonce. accept() only hands out a connection whose Hello carries its nonce: anything else
// that connects to the port is closed and ignored.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "bridge/nccl/net.h"
#include "bridge/net/socket_util.h"

namespace nbox::bridge::tcp {

class Connection;
struct PendingConnect;

inline constexpr uint32_t kHandleMagic = 0x4e425854;  // "NBXT"

struct ListenHandle {
  uint32_t magic;
  uint32_t version;
  uint64_t nonce;
  InetAddress address;
  PendingConnect* pending;  // connecting side only; listen() writes nullptr
};
static_assert(sizeof(ListenHandle) <= NCCL_NET_HANDLE_MAXSIZE, "handle too large");

// Per-connection socket options from the comm config (v10 connect, v11 init).
struct ConnectOptions {
  int traffic_class = -1;  // NCCL_NET_TRAFFIC_CLASS_UNDEF: leave the TOS byte alone
};

class ListenComm {
 public:
  ListenComm(UniqueFd fd, uint64_t nonce) : fd_(std::move(fd)), nonce_(nonce) {}
  // One step of accepting; *connection stays nullptr until the expected peer is in.
  ncclResult_t Accept(Connection** connection);

 private:
  struct Pending {
    UniqueFd fd;
    uint8_t hello[16] = {};
    size_t read = 0;
    Clock::time_point since;
  };

  std::mutex mutex_;
  UniqueFd fd_;
  const uint64_t nonce_;
  std::vector<Pending> pending_;
};

ncclResult_t Listen(int dev, void* handle, ListenComm** listen_comm);
ncclResult_t Connect(int dev, const ConnectOptions& options, void* handle, Connection** connection);

}  // namespace nbox::bridge::tcp
