#include "bridge/tcp/tcp_connection.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

#include "bridge/tcp/tcp_engine.h"
#include "bridge/tcp/tcp_log.h"

namespace nbox::bridge::tcp {
namespace {

// Gathering more requests into one sendmsg saves system calls for small messages.
constexpr int kMaxGatherRequests = 16;

bool WouldBlock(int error_number) {
  return error_number == EAGAIN || error_number == EWOULDBLOCK || error_number == EINTR;
}

ncclResult_t CodeOf(int error_number) {
  switch (error_number) {
    case ECONNRESET:
    case EPIPE:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
      return ncclRemoteError;
    default:
      return ncclSystemError;
  }
}

}  // namespace

Connection::Connection(UniqueFd fd, Role role, std::string peer)
    : fd_(std::move(fd)), role_(role), peer_(std::move(peer)), engine_(Engine::Instance()) {
  engine_.Add(this, fd_.get(), 0);
}

Request* Connection::AllocateLocked() {
  for (Request& request : pool_) {
    if (request.state.load(std::memory_order_acquire) == kRequestFree) return &request;
  }
  return nullptr;
}

void Connection::EnqueueLocked(Request* request) {
  request->state.store(kRequestPending, std::memory_order_relaxed);
  queue_[(queue_head_ + queue_size_) % NCCL_NET_MAX_REQUESTS] = request;
  ++queue_size_;
}

ncclResult_t Connection::PostSend(void* data, uint64_t size, int tag, void** request) {
  std::lock_guard<std::mutex> lock(mutex_);
  *request = nullptr;
  if (failed_) return failure_code_;
  Request* r = AllocateLocked();
  if (r == nullptr) return ncclSuccess;  // NCCL calls again later
  r->is_send = true;
  r->n = 1;
  r->data[0] = static_cast<uint8_t*>(data);
  r->size[0] = size;
  r->tag[0] = tag;
  r->sent = 0;
  EncodeHeader(MessageHeader{kMessageMagic, tag, size}, r->header);
  EnqueueLocked(r);
  *request = r;
  ProgressLocked();
  return ncclSuccess;
}

ncclResult_t Connection::PostRecv(int n, void** data, const uint64_t* sizes, const int* tags,
                                  void** request) {
  std::lock_guard<std::mutex> lock(mutex_);
  *request = nullptr;
  if (n < 1 || n > kMaxRecvs) {
    NBOX_TCP_WARN("irecv with %d buffers; this plugin takes 1 to %d", n, kMaxRecvs);
    return ncclInvalidArgument;
  }
  if (failed_) return failure_code_;
  Request* r = AllocateLocked();
  if (r == nullptr) return ncclSuccess;
  r->is_send = false;
  r->n = n;
  r->filled_count = 0;
  for (int i = 0; i < n; ++i) {
    r->data[i] = static_cast<uint8_t*>(data[i]);
    r->size[i] = sizes[i];
    r->tag[i] = tags != nullptr ? tags[i] : 0;
    r->received[i] = 0;
    r->filled[i] = false;
  }
  EnqueueLocked(r);
  *request = r;
  ProgressLocked();
  return ncclSuccess;
}

ncclResult_t Connection::Test(void* request, int* done, int* sizes) {
  auto* r = static_cast<Request*>(request);
  const int state = r->state.load(std::memory_order_acquire);
  if (state == kRequestPending) {
    *done = 0;
    return ncclSuccess;
  }
  *done = 1;
  ncclResult_t result = ncclSuccess;
  if (state == kRequestFailed) {
    result = r->error;
  } else if (sizes != nullptr) {
    for (int i = 0; i < r->n; ++i) {
      const uint64_t bytes = r->is_send ? r->size[0] : r->received[i];
      sizes[i] = bytes > INT32_MAX ? INT32_MAX : static_cast<int>(bytes);
    }
  }
  r->state.store(kRequestFree, std::memory_order_release);
  return result;
}

void Connection::OnEvents(uint32_t events) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_ || failed_) return;
  ProgressLocked();
  if (!failed_ && (events & (EPOLLERR | EPOLLHUP)) != 0) {
    int error = 0;
    socklen_t length = sizeof(error);
    getsockopt(fd_.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    FailLocked(ncclRemoteError, "connection with " + peer_ + " lost" +
                                    (error != 0 ? ": " + ErrnoText(error) : std::string()));
  }
}

void Connection::ProgressLocked() {
  bool more = true;
  while (more && queue_size_ > 0 && !failed_) {
    more = role_ == Role::kSend ? SendSomeLocked() : ReceiveSomeLocked();
  }
  if (failed_) return;
  uint32_t wanted = 0;
  if (queue_size_ > 0) wanted = role_ == Role::kSend ? EPOLLOUT : EPOLLIN;
  SetInterestLocked(wanted);
}

bool Connection::SendSomeLocked() {
  iovec iov[2 * kMaxGatherRequests];
  int iov_count = 0;
  for (int k = 0; k < queue_size_ && k < kMaxGatherRequests; ++k) {
    Request* r = queue_[(queue_head_ + k) % NCCL_NET_MAX_REQUESTS];
    if (r->sent < kHeaderBytes) {
      iov[iov_count++] = {r->header + r->sent, kHeaderBytes - r->sent};
    }
    const uint64_t payload_sent = r->sent > kHeaderBytes ? r->sent - kHeaderBytes : 0;
    if (payload_sent < r->size[0]) {
      iov[iov_count++] = {r->data[0] + payload_sent, r->size[0] - payload_sent};
    }
  }
  msghdr message{};
  message.msg_iov = iov;
  message.msg_iovlen = iov_count;
  const ssize_t n = sendmsg(fd_.get(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) {
    if (WouldBlock(errno)) return false;
    const int e = errno;
    FailLocked(CodeOf(e), "send to " + peer_ + ": " + ErrnoText(e));
    return false;
  }
  uint64_t left = static_cast<uint64_t>(n);
  while (queue_size_ > 0) {
    Request* r = queue_[queue_head_];
    const uint64_t total = kHeaderBytes + r->size[0];
    const uint64_t take = std::min(left, total - r->sent);
    r->sent += take;
    left -= take;
    if (r->sent < total) break;
    CompleteHeadLocked(kRequestDone);
  }
  return true;
}

bool Connection::ReceiveSomeLocked() {
  Request* r = queue_[queue_head_];
  if (in_buffer_ < 0) {
    const ssize_t n =
        recv(fd_.get(), in_header_ + in_header_read_, kHeaderBytes - in_header_read_, MSG_DONTWAIT);
    if (n == 0) {
      FailLocked(ncclRemoteError, "connection closed by " + peer_ + " while a receive was posted");
      return false;
    }
    if (n < 0) {
      if (WouldBlock(errno)) return false;
      const int e = errno;
      FailLocked(CodeOf(e), "receive from " + peer_ + ": " + ErrnoText(e));
      return false;
    }
    in_header_read_ += static_cast<size_t>(n);
    if (in_header_read_ < kHeaderBytes) return true;
    const MessageHeader header = DecodeHeader(in_header_);
    if (header.magic != kMessageMagic) {
      FailLocked(ncclRemoteError, "stream from " + peer_ + " is corrupt (bad message magic)");
      return false;
    }
    int buffer = -1;
    for (int i = 0; i < r->n && buffer < 0; ++i) {
      if (!r->filled[i] && r->tag[i] == header.tag) buffer = i;
    }
    if (buffer < 0) {
      FailLocked(ncclInvalidUsage, "message from " + peer_ + " has tag " +
                                       std::to_string(header.tag) +
                                       ", which matches none of the posted receive buffers");
      return false;
    }
    if (header.size > r->size[buffer]) {
      FailLocked(ncclInvalidUsage, "message of " + std::to_string(header.size) + " bytes from " +
                                       peer_ + " does not fit the posted buffer of " +
                                       std::to_string(r->size[buffer]) + " bytes");
      return false;
    }
    r->received[buffer] = header.size;
    in_buffer_ = buffer;
    in_payload_read_ = 0;
  }
  const uint64_t remaining = r->received[in_buffer_] - in_payload_read_;
  if (remaining > 0) {
    const ssize_t n =
        recv(fd_.get(), r->data[in_buffer_] + in_payload_read_, remaining, MSG_DONTWAIT);
    if (n == 0) {
      FailLocked(ncclRemoteError, "connection closed by " + peer_ + " in the middle of a message");
      return false;
    }
    if (n < 0) {
      if (WouldBlock(errno)) return false;
      const int e = errno;
      FailLocked(CodeOf(e), "receive from " + peer_ + ": " + ErrnoText(e));
      return false;
    }
    in_payload_read_ += static_cast<uint64_t>(n);
    if (in_payload_read_ < r->received[in_buffer_]) return true;
  }
  r->filled[in_buffer_] = true;
  ++r->filled_count;
  in_buffer_ = -1;
  in_header_read_ = 0;
  if (r->filled_count == r->n) CompleteHeadLocked(kRequestDone);
  return true;
}

void Connection::CompleteHeadLocked(RequestState state) {
  Request* r = queue_[queue_head_];
  queue_head_ = (queue_head_ + 1) % NCCL_NET_MAX_REQUESTS;
  --queue_size_;
  r->state.store(state, std::memory_order_release);
  engine_.NotifyCompletion();
}

void Connection::FailLocked(ncclResult_t code, const std::string& why) {
  failed_ = true;
  failure_code_ = code;
  NBOX_TCP_WARN("%s", why.c_str());
  engine_.Remove(fd_.get());
  interest_ = 0;
  while (queue_size_ > 0) {
    queue_[queue_head_]->error = code;
    CompleteHeadLocked(kRequestFailed);
  }
  engine_.NotifyCompletion();  // also wakes waiters when nothing was queued
}

void Connection::SetInterestLocked(uint32_t events) {
  if (events == interest_) return;
  interest_ = events;
  engine_.Modify(this, fd_.get(), events);
}

void Connection::Close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    if (!failed_) engine_.Remove(fd_.get());
    fd_.reset();
  }
  engine_.Retire(this);
}

}  // namespace nbox::bridge::tcp
