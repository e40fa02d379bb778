#include "bridge/tcp/tcp_setup.h"

#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "bridge/net/inet_address.h"
#include "bridge/tcp/tcp_connection.h"
#include "bridge/tcp/tcp_devices.h"
#include "bridge/tcp/tcp_log.h"
#include "bridge/tcp/tcp_wire.h"

namespace nbox::bridge::tcp {

struct PendingConnect {
  UniqueFd fd;
  InetAddress remote;
  bool connected = false;
  uint8_t hello[kHelloBytes] = {};
  size_t sent = 0;
};

namespace {

// A connection that sent nothing recognisable for this long is dropped.
constexpr auto kHelloTimeout = std::chrono::seconds(30);

uint64_t NewNonce() {
  // Unpredictable base so that nothing can guess a listener's nonce, plus a counter so two
  // listeners of one process never share one.
  static const uint64_t base = [] {
    std::random_device device;
    return (uint64_t{device()} << 32) ^ device();
  }();
  static std::atomic<uint64_t> counter{0};
  return base + 0x9e3779b97f4a7c15ull * (counter.fetch_add(1) + 1);
}

ncclResult_t ResultOf(const NetError& error) {
  return error.remote() ? ncclRemoteError : ncclSystemError;
}

// NBOX_TCP_CONGESTION names the congestion control of the sending sockets (Linux's
// TCP_CONGESTION, e.g. cubic or bbr); unset, they keep the namespace's default. The fidelity
// ground truth sets it so that the kernel runs the algorithm the simulated twin models
// (tools/fidelity/README.md).
// Read at every connect (connects are few), so that a process can change it between comms.
void ApplyCongestionControl(int fd) {
  const std::string name = EnvOr("NBOX_TCP_CONGESTION", "");
  if (name.empty()) return;
  if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(),
                 static_cast<socklen_t>(name.size())) != 0) {
    throw NetError("NBOX_TCP_CONGESTION=" + name +
                       ": setsockopt(TCP_CONGESTION): " + ErrnoText(errno) +
                       " (expected an algorithm in net.ipv4.tcp_available_congestion_control, "
                       "and CAP_NET_ADMIN for one not in tcp_allowed_congestion_control)",
                   false);
  }
}

void ApplyOptions(int fd, int family, const ConnectOptions& options) {
  ApplyCongestionControl(fd);
  if (options.traffic_class < 0) return;
  const int value = options.traffic_class;
  if (family == AF_INET6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &value, sizeof(value));
  } else {
    setsockopt(fd, IPPROTO_IP, IP_TOS, &value, sizeof(value));
  }
}

}  // namespace

ncclResult_t Listen(int dev, void* handle, ListenComm** listen_comm) {
  *listen_comm = nullptr;
  try {
    const std::vector<Device>& devices = Devices();
    if (dev < 0 || dev >= static_cast<int>(devices.size())) {
      NBOX_TCP_WARN("listen on device %d; there are %zu", dev, devices.size());
      return ncclInvalidArgument;
    }
    InetAddress bound;
    UniqueFd fd = bridge::Listen(devices[dev].local.address, &bound);
    ListenHandle h{};
    h.magic = kHandleMagic;
    h.version = kWireVersion;
    h.nonce = NewNonce();
    h.address = bound;
    h.pending = nullptr;
    std::memset(handle, 0, NCCL_NET_HANDLE_MAXSIZE);
    std::memcpy(handle, &h, sizeof(h));
    *listen_comm = new ListenComm(std::move(fd), h.nonce);
    return ncclSuccess;
  } catch (const AddressError& error) {
    NBOX_TCP_WARN("%s", error.what());
    return ncclInvalidArgument;
  } catch (const NetError& error) {
    NBOX_TCP_WARN("listen: %s", error.what());
    return ResultOf(error);
  }
}

ncclResult_t Connect(int dev, const ConnectOptions& options, void* handle,
                     Connection** connection) {
  *connection = nullptr;
  auto* h = static_cast<ListenHandle*>(handle);
  if (h->magic != kHandleMagic || h->version != kWireVersion) {
    NBOX_TCP_WARN("connect: the handle was not written by this plugin's listen");
    return ncclInvalidArgument;
  }
  try {
    const std::vector<Device>& devices = Devices();
    if (dev < 0 || dev >= static_cast<int>(devices.size())) {
      NBOX_TCP_WARN("connect from device %d; there are %zu", dev, devices.size());
      return ncclInvalidArgument;
    }
    if (h->pending == nullptr) {
      auto pending = std::make_unique<PendingConnect>();
      pending->remote = h->address;
      pending->fd = StartConnect(devices[dev].local.address, h->address);
      ApplyOptions(pending->fd.get(), h->address.family(), options);
      EncodeHello(Hello{kHelloMagic, kWireVersion, h->nonce}, pending->hello);
      h->pending = pending.release();
    }
    PendingConnect* p = h->pending;
    if (!p->connected) {
      if (!ConnectFinished(p->fd.get(), p->remote)) return ncclSuccess;
      p->connected = true;
    }
    while (p->sent < kHelloBytes) {
      const ssize_t n =
          send(p->fd.get(), p->hello + p->sent, kHelloBytes - p->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return ncclSuccess;
        throw NetError("sending hello to " + p->remote.ToString() + ": " + ErrnoText(errno), true);
      }
      p->sent += static_cast<size_t>(n);
    }
    *connection = new Connection(std::move(p->fd), Connection::Role::kSend, p->remote.ToString());
    delete p;
    h->pending = nullptr;
    return ncclSuccess;
  } catch (const AddressError& error) {
    NBOX_TCP_WARN("%s", error.what());
    return ncclInvalidArgument;
  } catch (const NetError& error) {
    NBOX_TCP_WARN("connect: %s", error.what());
    delete h->pending;
    h->pending = nullptr;
    return ResultOf(error);
  }
}

ncclResult_t ListenComm::Accept(Connection** connection) {
  *connection = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    for (UniqueFd fd = AcceptNonBlocking(fd_.get()); fd.get() >= 0;
         fd = AcceptNonBlocking(fd_.get())) {
      pending_.push_back(Pending{std::move(fd), {}, 0, Clock::now()});
    }
  } catch (const NetError& error) {
    NBOX_TCP_WARN("accept: %s", error.what());
    return ResultOf(error);
  }
  for (size_t i = 0; i < pending_.size();) {
    Pending& p = pending_[i];
    bool drop = false;
    while (p.read < kHelloBytes) {
      const ssize_t n = recv(p.fd.get(), p.hello + p.read, kHelloBytes - p.read, MSG_DONTWAIT);
      if (n > 0) {
        p.read += static_cast<size_t>(n);
        continue;
      }
      drop = n == 0 || !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
      break;
    }
    if (!drop && p.read == kHelloBytes) {
      const Hello hello = DecodeHello(p.hello);
      if (hello.magic == kHelloMagic && hello.version == kWireVersion && hello.nonce == nonce_) {
        const std::string peer = PeerName(p.fd.get());
        *connection = new Connection(std::move(p.fd), Connection::Role::kRecv, peer);
        pending_.erase(pending_.begin() + static_cast<long>(i));
        return ncclSuccess;
      }
      NBOX_TCP_WARN("refused a connection that did not present this listener's handle");
      drop = true;
    }
    if (!drop && Clock::now() - p.since > kHelloTimeout) drop = true;
    if (drop) {
      pending_.erase(pending_.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  return ncclSuccess;
}

}  // namespace nbox::bridge::tcp
