// One established connection of the TCP plugin: a send comm or a recv comm.
//
// isend/irecv queue a request and immediately try to move bytes with non-blocking calls;
// whatever the kernel does not take now is finished by the engine thread when epoll says the
// socket is ready. Requests of a connection complete in the order they were posted, which is
// NCCL's contract (and the FIFO the collectives' matching rule needs).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "bridge/nccl/net.h"
#include "bridge/net/socket_util.h"
#include "bridge/tcp/tcp_request.h"

namespace nbox::bridge::tcp {

class Engine;

class Connection {
 public:
  enum class Role { kSend, kRecv };

  // Takes an established non-blocking socket and registers it with the engine.
  Connection(UniqueFd fd, Role role, std::string peer);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // isend / irecv: queue the operation and return its request, or *request = nullptr when all
  // NCCL_NET_MAX_REQUESTS slots are busy. Returns the connection's failure, if it failed.
  ncclResult_t PostSend(void* data, uint64_t size, int tag, void** request);
  ncclResult_t PostRecv(int n, void** data, const uint64_t* sizes, const int* tags, void** request);

  // test() of a request of any connection; lock-free.
  static ncclResult_t Test(void* request, int* done, int* sizes);

  // Called by the engine thread with the epoll events of this connection's socket.
  void OnEvents(uint32_t events);

  // Closes the socket and hands the object to the engine for deletion; `this` must not be
  // used afterwards. Requests still queued are abandoned.
  void Close();

  Role role() const { return role_; }

 private:
  ~Connection() = default;  // deleted by the engine (Retire)
  friend class Engine;

  Request* AllocateLocked();
  void EnqueueLocked(Request* request);
  // Moves as many bytes as the socket takes now, completes requests, updates the epoll
  // interest. Never blocks.
  void ProgressLocked();
  // Return false when the socket would block or the connection failed.
  bool SendSomeLocked();
  bool ReceiveSomeLocked();
  void CompleteHeadLocked(RequestState state);
  void FailLocked(ncclResult_t code, const std::string& why);
  void SetInterestLocked(uint32_t events);

  std::mutex mutex_;
  UniqueFd fd_;
  const Role role_;
  const std::string peer_;  // for messages: "127.0.0.1:40000"
  Engine& engine_;

  Request pool_[NCCL_NET_MAX_REQUESTS];
  Request* queue_[NCCL_NET_MAX_REQUESTS] = {};  // FIFO ring of pending requests
  int queue_head_ = 0;
  int queue_size_ = 0;

  // Receive side: the message being read (its header, then its payload into one buffer).
  uint8_t in_header_[kHeaderBytes] = {};
  size_t in_header_read_ = 0;
  int in_buffer_ = -1;  // buffer of the head request the payload goes to; -1 = reading header
  uint64_t in_payload_read_ = 0;

  uint32_t interest_ = 0;
  bool failed_ = false;
  ncclResult_t failure_code_ = ncclSuccess;
  bool closed_ = false;
};

}  // namespace nbox::bridge::tcp
