#include "bridge/host/bootstrap_root_core.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <random>

#include "bridge/host/bootstrap_wire.h"

namespace nbox::host {
namespace {

using bridge::Clock;
using bridge::NetError;
using bridge::UniqueFd;

// How long the root gives a slow rank to take the table before it gives up on it.
constexpr auto kSendTimeout = std::chrono::seconds(10);

}  // namespace

uint64_t RandomBootstrapNonce() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

BootstrapRootCore::BootstrapRootCore(UniqueFd listen_fd, uint64_t nonce, std::string error_prefix)
    : nonce_(nonce), error_prefix_(std::move(error_prefix)), listen_fd_(std::move(listen_fd)) {}

void BootstrapRootCore::PollOnce(int timeout_ms) {
  std::vector<pollfd> fds;
  const bool accepting = listen_fd_.get() >= 0;
  if (accepting) fds.push_back({listen_fd_.get(), POLLIN, 0});
  const size_t first_member = fds.size();
  for (const auto& member : members_) fds.push_back({member->fd.get(), POLLIN, 0});
  const int n = poll(fds.data(), fds.size(), timeout_ms);
  if (n < 0 && errno != EINTR) {
    Abort(error_prefix_ + "poll: " + bridge::ErrnoText(errno));
    return;
  }
  if (n <= 0) return;
  if (accepting && (fds[0].revents & POLLIN) != 0) AcceptAll();
  // members_ may have grown; only the ones polled are looked at.
  for (size_t i = first_member; i < fds.size() && !finished_; ++i) {
    if (fds[i].revents != 0) ReadFrom(*members_[i - first_member]);
  }
  members_.erase(
      std::remove_if(members_.begin(), members_.end(), [](const auto& m) { return m->left; }),
      members_.end());
}

void BootstrapRootCore::AcceptAll() {
  try {
    for (UniqueFd fd = bridge::AcceptNonBlocking(listen_fd_.get()); fd.get() >= 0;
         fd = bridge::AcceptNonBlocking(listen_fd_.get())) {
      auto member = std::make_unique<Member>();
      member->fd = std::move(fd);
      members_.push_back(std::move(member));
    }
  } catch (const NetError& error) {
    Abort(error_prefix_ + "accept: " + error.what());
  }
}

void BootstrapRootCore::ReadFrom(Member& member) {
  uint8_t buffer[65536];
  bool closed = false;
  while (true) {
    const ssize_t n = recv(member.fd.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      member.input.insert(member.input.end(), buffer, buffer + n);
      continue;
    }
    closed = !(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR));
    break;
  }
  ParseFrames(member);  // a Bye often arrives together with the close that follows it
  if (!closed || finished_ || member.left) return;
  if (member.rank < 0) {
    member.left = true;  // a stranger, or a process that gave up before joining
    return;
  }
  Abort(RankName(member.rank) +
        " left without destroying its communicator (its process ended or aborted)");
}

void BootstrapRootCore::ParseFrames(Member& member) {
  while (!finished_ && !member.left) {
    if (member.input.size() < kFrameHeaderBytes) return;
    FrameType type;
    uint64_t length;
    if (!DecodeFrameHeader(member.input.data(), &type, &length)) {
      Reject(member, "sent a frame that is not nbox bootstrap");
      return;
    }
    if (member.input.size() < kFrameHeaderBytes + length) return;
    std::vector<uint8_t> payload(member.input.begin() + kFrameHeaderBytes,
                                 member.input.begin() + kFrameHeaderBytes + length);
    member.input.erase(member.input.begin(), member.input.begin() + kFrameHeaderBytes + length);
    if (type == FrameType::kJoin && member.rank < 0) {
      OnJoin(member, payload);
    } else if (type == FrameType::kBye && member.rank >= 0) {
      member.left = true;
    } else {
      Reject(member, "sent an unexpected frame");
    }
  }
}

void BootstrapRootCore::Reject(Member& member, const std::string& what) {
  if (member.rank >= 0) {
    Abort(RankName(member.rank) + " " + what);
  } else {
    member.left = true;
  }
}

void BootstrapRootCore::SendTable(std::vector<std::vector<uint8_t>>* blobs, int group) {
  std::vector<uint8_t> payload;
  for (const auto& blob : *blobs) payload.insert(payload.end(), blob.begin(), blob.end());
  const std::vector<uint8_t> frame = EncodeFrame(FrameType::kTable, payload);
  blobs->clear();
  for (const auto& member : members_) {
    if (member->rank < 0 || member->group != group) continue;
    try {
      bridge::SendAll(member->fd.get(), frame.data(), frame.size(), Clock::now() + kSendTimeout,
                      "bootstrap root to rank " + std::to_string(member->rank));
    } catch (const NetError& error) {
      Abort(error.what());
      return;
    }
  }
  if (group == 0) table_sent_ = true;
}

void BootstrapRootCore::StopAccepting() {
  for (auto& member : members_) {
    if (member->rank < 0) member->left = true;  // strangers
  }
  listen_fd_.reset();
}

void BootstrapRootCore::Abort(const std::string& why) {
  failure_ = why;
  const std::vector<uint8_t> text(why.begin(), why.end());
  const std::vector<uint8_t> frame = EncodeFrame(FrameType::kAbort, text);
  for (const auto& member : members_) {
    if (member->left || member->rank < 0) continue;
    // Best effort and never blocking: the frame is small and the socket buffer empty.
    const ssize_t ignored =
        send(member->fd.get(), frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
  }
  members_.clear();
  listen_fd_.reset();
  finished_ = true;
}

}  // namespace nbox::host
