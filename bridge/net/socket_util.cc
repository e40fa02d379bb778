#include "bridge/net/socket_util.h"

#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nbox::bridge {
namespace {

bool IsUnspecified(const InetAddress& address) {
  if (address.family() == AF_INET) return address.v4.sin_addr.s_addr == htonl(INADDR_ANY);
  if (address.family() == AF_INET6) return IN6_IS_ADDR_UNSPECIFIED(&address.v6.sin6_addr);
  return true;
}

int RemainingMs(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 1000 ? 1000 : static_cast<int>(left);
}

// Waits for `events` on fd until the deadline; false on timeout.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, RemainingMs(deadline));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) throw NetError("poll: " + ErrnoText(errno), false);
    if (Clock::now() >= deadline) return false;
  }
}

bool IsRemoteErrno(int e) {
  return e == ECONNREFUSED || e == ECONNRESET || e == EPIPE || e == ETIMEDOUT ||
         e == EHOSTUNREACH || e == ENETUNREACH || e == ECONNABORTED;
}

}  // namespace

std::string ErrnoText(int error_number) {
  char buffer[128];
  // GNU strerror_r returns the message (possibly not in buffer).
  const char* text = strerror_r(error_number, buffer, sizeof(buffer));
  return std::string(text) + " (errno " + std::to_string(error_number) + ")";
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

int UniqueFd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

UniqueFd Listen(const InetAddress& address, InetAddress* bound) {
  UniqueFd fd(socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw NetError("socket: " + ErrnoText(errno), false);
  if (bind(fd.get(), &address.sa, address.length()) != 0) {
    throw NetError("bind to " + address.ToString() + ": " + ErrnoText(errno), false);
  }
  if (listen(fd.get(), SOMAXCONN) != 0) {
    throw NetError("listen on " + address.ToString() + ": " + ErrnoText(errno), false);
  }
  InetAddress actual;
  socklen_t length = sizeof(actual.v6);
  if (getsockname(fd.get(), &actual.sa, &length) != 0) {
    throw NetError("getsockname: " + ErrnoText(errno), false);
  }
  *bound = actual;
  return fd;
}

UniqueFd StartConnect(const InetAddress& local, const InetAddress& remote) {
  UniqueFd fd(socket(remote.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw NetError("socket: " + ErrnoText(errno), false);
  if (!IsUnspecified(local) && local.family() == remote.family()) {
    InetAddress source = local;
    source.set_port(0);
    if (bind(fd.get(), &source.sa, source.length()) != 0) {
      throw NetError("bind to " + source.ToString() + ": " + ErrnoText(errno), false);
    }
  }
  SetNoDelay(fd.get());
  if (connect(fd.get(), &remote.sa, remote.length()) != 0 && errno != EINPROGRESS) {
    const int e = errno;
    throw NetError("connect to " + remote.ToString() + ": " + ErrnoText(e), IsRemoteErrno(e));
  }
  return fd;
}

bool ConnectFinished(int fd, const InetAddress& remote) {
  pollfd p{fd, POLLOUT, 0};
  const int n = poll(&p, 1, 0);
  if (n == 0) return false;
  if (n < 0) {
    if (errno == EINTR) return false;
    throw NetError("poll: " + ErrnoText(errno), false);
  }
  int error = 0;
  socklen_t length = sizeof(error);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
    throw NetError("getsockopt(SO_ERROR): " + ErrnoText(errno), false);
  }
  if (error != 0) {
    throw NetError("connect to " + remote.ToString() + ": " + ErrnoText(error),
                   IsRemoteErrno(error));
  }
  return true;
}

UniqueFd AcceptNonBlocking(int listen_fd) {
  while (true) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      SetNoDelay(fd);
      return UniqueFd(fd);
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return UniqueFd();
    throw NetError("accept: " + ErrnoText(errno), false);
  }
}

void SetNoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // best effort
}

std::string PeerName(int fd) {
  InetAddress peer;
  socklen_t length = sizeof(peer.v6);
  if (getpeername(fd, &peer.sa, &length) != 0) return "unknown peer";
  return peer.ToString();
}

void SendAll(int fd, const void* data, size_t size, Clock::time_point deadline,
             const std::string& what) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = send(fd, bytes, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!WaitFor(fd, POLLOUT, deadline)) throw NetError(what + ": timed out sending", true);
      continue;
    }
    throw NetError(what + ": send: " + ErrnoText(errno), IsRemoteErrno(errno));
  }
}

void RecvAll(int fd, void* data, size_t size, Clock::time_point deadline, const std::string& what) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = recv(fd, bytes, size, MSG_DONTWAIT);
    if (n > 0) {
      bytes += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) throw NetError(what + ": connection closed by peer", true);
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (!WaitFor(fd, POLLIN, deadline)) throw NetError(what + ": timed out receiving", true);
      continue;
    }
    throw NetError(what + ": recv: " + ErrnoText(errno), IsRemoteErrno(errno));
  }
}

UniqueFd ConnectBlocking(const InetAddress& remote, Clock::time_point deadline,
                         const std::string& what) {
  try {
    UniqueFd fd = StartConnect(InetAddress(), remote);
    while (!ConnectFinished(fd.get(), remote)) {
      if (!WaitFor(fd.get(), POLLOUT, deadline)) {
        throw NetError("timed out connecting to " + remote.ToString(), true);
      }
    }
    return fd;
  } catch (const NetError& error) {
    throw NetError(what + ": " + error.what(), error.remote());
  }
}

}  // namespace nbox::bridge
