#include "bridge/host/bootstrap_client.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "bridge/host/host_error.h"

namespace nbox::host {
namespace {

using bridge::Clock;
using bridge::NetError;

std::string Text(const std::vector<uint8_t>& payload) {
  return std::string(payload.begin(), payload.end());
}

}  // namespace

std::vector<std::vector<uint8_t>> BootstrapClient::Join(const UniqueIdContents& id,
                                                        const JoinRequest& join,
                                                        std::chrono::seconds timeout) {
  // The root enforces the join timeout and tells every waiting rank who is missing; a rank
  // gives the root extra time to say so before giving up on its own, so that under load the
  // explicit answer still wins over a bare receive timeout.
  constexpr std::chrono::seconds kRootGrace{5};
  const auto deadline = Clock::now() + timeout + kRootGrace;
  const std::string root = "bootstrap root " + id.root.ToString();
  try {
    fd_ = bridge::ConnectBlocking(id.root, deadline, root);
    const std::vector<uint8_t> frame = EncodeFrame(FrameType::kJoin, EncodeJoin(join));
    bridge::SendAll(fd_.get(), frame.data(), frame.size(), deadline, root);
    uint8_t header[kFrameHeaderBytes];
    bridge::RecvAll(fd_.get(), header, sizeof(header), deadline, root);
    FrameType type;
    uint64_t length;
    if (!DecodeFrameHeader(header, &type, &length)) {
      throw HostError(nboxRemoteError, root + " answered with something that is not nbox");
    }
    std::vector<uint8_t> payload(length);
    bridge::RecvAll(fd_.get(), payload.data(), payload.size(), deadline, root);
    if (type == FrameType::kAbort) {
      throw HostError(nboxRemoteError, "communicator init failed: " + Text(payload));
    }
    const size_t blob = join.blob.size();
    if (type != FrameType::kTable || payload.size() != blob * static_cast<size_t>(join.nranks)) {
      throw HostError(nboxRemoteError, root + " sent an unexpected answer to the join");
    }
    std::vector<std::vector<uint8_t>> blobs(join.nranks);
    for (int r = 0; r < join.nranks; ++r) {
      blobs[r].assign(payload.begin() + r * blob, payload.begin() + (r + 1) * blob);
    }
    return blobs;
  } catch (const NetError& error) {
    fd_.reset();
    throw HostError(Clock::now() >= deadline ? nboxSystemError : nboxRemoteError,
                    std::string("communicator init: ") + error.what());
  }
}

std::string BootstrapClient::CheckPeers() {
  if (fd_.get() < 0) return "the communicator has no bootstrap connection";
  pollfd p{fd_.get(), POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) return "";
  uint8_t header[kFrameHeaderBytes];
  try {
    // The root only ever writes a whole abort frame and then closes.
    bridge::RecvAll(fd_.get(), header, sizeof(header), Clock::now() + std::chrono::seconds(1),
                    "bootstrap root");
    FrameType type;
    uint64_t length;
    if (DecodeFrameHeader(header, &type, &length) && type == FrameType::kAbort && length < 65536) {
      std::vector<uint8_t> payload(length);
      bridge::RecvAll(fd_.get(), payload.data(), payload.size(),
                      Clock::now() + std::chrono::seconds(1), "bootstrap root");
      return Text(payload);
    }
    return "the bootstrap root sent an unexpected frame";
  } catch (const NetError&) {
    return "the bootstrap root is gone: the process hosting it ended (nbox-cosim, or the rank "
           "that called nboxGetUniqueId)";
  }
}

void BootstrapClient::Leave() {
  if (fd_.get() < 0) return;
  const std::vector<uint8_t> frame = EncodeFrame(FrameType::kBye, {});
  try {
    bridge::SendAll(fd_.get(), frame.data(), frame.size(), Clock::now() + std::chrono::seconds(2),
                    "bootstrap root");
  } catch (const NetError&) {
    // The root may already be gone; leaving needs nothing from it.
  }
  fd_.reset();
}

void BootstrapClient::Drop() {
  fd_.reset();
}

}  // namespace nbox::host
