// Small POSIX socket helpers shared by the TCP plugin and the host runtime's bootstrap.
// Sockets are created non-blocking and close-on-exec; the blocking helpers wait with poll()
// against a deadline so that nothing here can hang forever.
#pragma once

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "bridge/net/inet_address.h"

namespace nbox::bridge {

// A socket call failed; `remote` says the peer is to blame (refused, reset, closed) rather
// than this host (no descriptors, bad address).
class NetError : public std::runtime_error {
 public:
  NetError(const std::string& what, bool remote) : std::runtime_error(what), remote_(remote) {}
  bool remote() const { return remote_; }

 private:
  bool remote_;
};

using Clock = std::chrono::steady_clock;

// "Connection refused (errno 111)".
std::string ErrnoText(int error_number);

// Owns a descriptor; closes it on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  int release();
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// A non-blocking listening socket bound to `address` (port 0 lets the OS choose); returns the
// socket and stores the bound address (with its port) in *bound. Throws NetError.
UniqueFd Listen(const InetAddress& address, InetAddress* bound);

// Starts a non-blocking connect from `local` (port 0; bind skipped when it is unspecified)
// to `remote`. Throws NetError.
UniqueFd StartConnect(const InetAddress& local, const InetAddress& remote);

// For a socket from StartConnect: false while the connect is in progress, true once it is
// established. Throws NetError(remote) when it failed. Never blocks.
bool ConnectFinished(int fd, const InetAddress& remote);

// accept() without blocking: a new non-blocking socket, or an empty one when none is waiting.
// Throws NetError on failures other than "nothing to accept".
UniqueFd AcceptNonBlocking(int listen_fd);

void SetNoDelay(int fd);

// "10.0.0.2:40000" for a connected socket, "unknown peer" when the kernel cannot say.
std::string PeerName(int fd);

// Blocking-with-deadline transfers for control traffic (bootstrap). Throw NetError when the
// peer closes, on errors, and when `deadline` passes (naming `what`).
void SendAll(int fd, const void* data, size_t size, Clock::time_point deadline,
             const std::string& what);
void RecvAll(int fd, void* data, size_t size, Clock::time_point deadline, const std::string& what);

// Connects to `remote` and waits for the connection until `deadline`. Returns a non-blocking
// connected socket. Throws NetError naming `what`.
UniqueFd ConnectBlocking(const InetAddress& remote, Clock::time_point deadline,
                         const std::string& what);

}  // namespace nbox::bridge
