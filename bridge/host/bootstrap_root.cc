#include "bridge/host/bootstrap_root.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "bridge/host/bootstrap_wire.h"
#include "bridge/host/host_error.h"
#include "bridge/net/socket_util.h"

namespace nbox::host {
namespace {

using bridge::Clock;
using bridge::NetError;
using bridge::UniqueFd;

// How long the root gives a slow rank to take a frame before it gives up on it.
constexpr auto kSendTimeout = std::chrono::seconds(10);

struct Member {
  UniqueFd fd;
  int rank = -1;  // -1 until its join arrived
  bool left = false;
  std::vector<uint8_t> input;  // bytes received and not yet parsed
};

class Root {
 public:
  Root(UniqueFd listen_fd, uint64_t nonce, std::chrono::seconds join_timeout)
      : listen_fd_(std::move(listen_fd)),
        nonce_(nonce),
        join_deadline_(Clock::now() + join_timeout),
        join_timeout_(join_timeout) {}

  void Run() {
    while (!finished_) {
      std::vector<pollfd> fds;
      if (table_sent_) {
        listen_fd_.reset();  // no one else may join
      } else {
        fds.push_back({listen_fd_.get(), POLLIN, 0});
      }
      const size_t first_member = fds.size();
      for (const auto& member : members_) fds.push_back({member->fd.get(), POLLIN, 0});
      int timeout_ms = -1;
      if (!table_sent_) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(join_deadline_ - Clock::now());
        if (left.count() <= 0) {
          Abort("only " + std::to_string(joined_) + " of " + std::to_string(nranks_) +
                " ranks joined within " + std::to_string(join_timeout_.count()) +
                " s (NBOX_BOOTSTRAP_TIMEOUT_S)");
          return;
        }
        timeout_ms = static_cast<int>(std::min<long>(left.count(), 1000));
      }
      const int n = poll(fds.data(), fds.size(), timeout_ms);
      if (n < 0 && errno != EINTR) {
        Abort("bootstrap root: poll: " + bridge::ErrnoText(errno));
        return;
      }
      if (n <= 0) continue;
      if (!table_sent_ && (fds[0].revents & POLLIN) != 0) AcceptAll();
      // members_ may have grown; only the ones polled are looked at.
      for (size_t i = first_member; i < fds.size() && !finished_; ++i) {
        if (fds[i].revents != 0) ReadFrom(*members_[i - first_member]);
      }
      members_.erase(
          std::remove_if(members_.begin(), members_.end(), [](const auto& m) { return m->left; }),
          members_.end());
      if (table_sent_ && members_.empty()) finished_ = true;
    }
  }

 private:
  void AcceptAll() {
    try {
      for (UniqueFd fd = bridge::AcceptNonBlocking(listen_fd_.get()); fd.get() >= 0;
           fd = bridge::AcceptNonBlocking(listen_fd_.get())) {
        auto member = std::make_unique<Member>();
        member->fd = std::move(fd);
        members_.push_back(std::move(member));
      }
    } catch (const NetError& error) {
      Abort(std::string("bootstrap root: ") + error.what());
    }
  }

  std::string Name(const Member& member) const {
    return member.rank >= 0 ? "rank " + std::to_string(member.rank) : "a joining process";
  }

  void ReadFrom(Member& member) {
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
    // Frames first: a goodbye often arrives together with the close that follows it.
    ParseFrames(member);
    if (!closed || finished_ || member.left) return;
    // Harmless for a stranger that never joined before the table went out.
    if (member.rank < 0 && !table_sent_) {
      member.left = true;
      return;
    }
    Abort(Name(member) +
          " left without destroying its communicator (its process ended or "
          "aborted)");
  }

  void ParseFrames(Member& member) {
    while (!finished_ && !member.left) {
      if (member.input.size() < kFrameHeaderBytes) return;
      FrameType type;
      uint64_t length;
      if (!DecodeFrameHeader(member.input.data(), &type, &length)) {
        RejectStranger(member, "sent a frame that is not nbox bootstrap");
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
        RejectStranger(member, "sent an unexpected frame");
      }
    }
  }

  // A connection that does not speak the protocol: dropped, unless it claimed a rank.
  void RejectStranger(Member& member, const std::string& what) {
    if (member.rank >= 0) {
      Abort(Name(member) + " " + what);
    } else {
      member.left = true;
    }
  }

  void OnJoin(Member& member, const std::vector<uint8_t>& payload) {
    JoinRequest join;
    if (!DecodeJoin(payload, &join) || join.nonce != nonce_) {
      RejectStranger(member, "did not present this communicator's unique id");
      return;
    }
    if (joined_ == 0) {
      nranks_ = join.nranks;
      channels_ = join.channels;
      chunk_bytes_ = join.chunk_bytes;
      blob_bytes_ = join.blob.size();
      if (nranks_ < 1) {
        Abort("nboxCommInitRank: nranks " + std::to_string(nranks_) + " is less than 1");
        return;
      }
      blobs_.assign(nranks_, {});
      has_joined_.assign(nranks_, false);
    }
    std::string problem;
    if (join.nranks != nranks_) {
      problem = "rank " + std::to_string(join.rank) + " joined with nranks " +
                std::to_string(join.nranks) + ", others with " + std::to_string(nranks_);
    } else if (join.rank < 0 || join.rank >= nranks_) {
      problem =
          "a rank joined as rank " + std::to_string(join.rank) + " of " + std::to_string(nranks_);
    } else if (has_joined_[join.rank]) {
      problem = "two processes joined as rank " + std::to_string(join.rank);
    } else if (join.channels != channels_ || join.chunk_bytes != chunk_bytes_) {
      problem = "rank " + std::to_string(join.rank) +
                " has NBOX_CHANNELS=" + std::to_string(join.channels) +
                " NBOX_CHUNK_BYTES=" + std::to_string(join.chunk_bytes) +
                ", the first rank that joined has " + std::to_string(channels_) + " and " +
                std::to_string(chunk_bytes_) + " (they must be equal on every rank)";
    } else if (join.blob.size() != blob_bytes_) {
      problem = "rank " + std::to_string(join.rank) + " sent a table of another size";
    }
    if (!problem.empty()) {
      Abort("bootstrap: " + problem);
      return;
    }
    member.rank = join.rank;
    blobs_[join.rank] = std::move(join.blob);
    has_joined_[join.rank] = true;
    if (++joined_ == nranks_) SendTable();
  }

  void SendTable() {
    std::vector<uint8_t> payload;
    payload.reserve(blob_bytes_ * nranks_);
    for (const auto& blob : blobs_) payload.insert(payload.end(), blob.begin(), blob.end());
    const std::vector<uint8_t> frame = EncodeFrame(FrameType::kTable, payload);
    blobs_.clear();
    for (const auto& member : members_) {
      if (member->rank < 0) continue;
      try {
        bridge::SendAll(member->fd.get(), frame.data(), frame.size(), Clock::now() + kSendTimeout,
                        "bootstrap root to rank " + std::to_string(member->rank));
      } catch (const NetError& error) {
        Abort(error.what());
        return;
      }
    }
    // Processes still connected without a rank are strangers.
    for (auto& member : members_) {
      if (member->rank < 0) member->left = true;
    }
    table_sent_ = true;
  }

  // Tells every rank still connected why the communicator is over, then stops.
  void Abort(const std::string& why) {
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
    finished_ = true;
  }

  UniqueFd listen_fd_;
  const uint64_t nonce_;
  const Clock::time_point join_deadline_;
  const std::chrono::seconds join_timeout_;
  std::vector<std::unique_ptr<Member>> members_;
  int nranks_ = 0;
  int channels_ = 0;
  uint64_t chunk_bytes_ = 0;
  size_t blob_bytes_ = 0;
  int joined_ = 0;
  std::vector<bool> has_joined_;
  std::vector<std::vector<uint8_t>> blobs_;
  bool table_sent_ = false;
  bool finished_ = false;
};

uint64_t RandomNonce() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

}  // namespace

UniqueIdContents StartBootstrapRoot(const std::string& address, const std::string& variable,
                                    std::chrono::seconds join_timeout) {
  bridge::LocalAddress local;
  try {
    local = bridge::ParseLocalAddress(address, variable);
  } catch (const bridge::AddressError& error) {
    throw HostError(nboxInvalidArgument, error.what());
  }
  UniqueIdContents contents;
  contents.nonce = RandomNonce();
  UniqueFd listen_fd;
  try {
    listen_fd = bridge::Listen(local.address, &contents.root);
  } catch (const NetError& error) {
    throw HostError(nboxSystemError, std::string("bootstrap root: ") + error.what());
  }
  auto root = std::make_shared<Root>(std::move(listen_fd), contents.nonce, join_timeout);
  std::thread([root] { root->Run(); }).detach();
  return contents;
}

}  // namespace nbox::host
