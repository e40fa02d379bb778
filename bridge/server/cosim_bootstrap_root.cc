#include "bridge/server/cosim_bootstrap_root.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <random>
#include <stdexcept>

#include "bridge/host/bootstrap_wire.h"
#include "bridge/host/host_error.h"
#include "bridge/host/unique_id.h"
#include "bridge/net/socket_util.h"
#include "bridge/wire/listen_handle.h"

namespace nbox::bridge::server {
namespace {

using host::FrameType;

// How long the root gives a slow rank to take the table before it gives up on it.
constexpr auto kSendTimeout = std::chrono::seconds(10);

struct Member {
  UniqueFd fd;
  int rank = -1;  // -1 until its join arrived
  bool left = false;
  std::vector<uint8_t> input;  // bytes received and not yet parsed
};

uint64_t RandomNonce() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

}  // namespace

class CosimBootstrapRoot::Impl {
 public:
  Impl(CosimBootstrapOptions options, BridgeServer* server)
      : options_(std::move(options)),
        server_(server),
        lanes_(options_.channels + 1),
        join_deadline_(Clock::now() + options_.join_timeout) {
    if (server_ == nullptr) throw BridgeServerError("bootstrap root: no server");
    if (options_.world_size < 1 ||
        options_.real.size() != static_cast<size_t>(options_.world_size)) {
      throw BridgeServerError("bootstrap root: real names " + std::to_string(options_.real.size()) +
                              " ranks, the world has " + std::to_string(options_.world_size));
    }
    if (options_.channels < 1) {
      throw BridgeServerError("bootstrap root: channels " + std::to_string(options_.channels) +
                              " (at least 1)");
    }
    real_count_ = static_cast<int>(std::count(options_.real.begin(), options_.real.end(), true));
    blob_bytes_ = static_cast<size_t>(options_.world_size) * lanes_ * wire::kListenHandleBytes;
    blobs_.assign(options_.world_size, {});
    has_joined_.assign(options_.world_size, false);
    for (int rank = 0; rank < options_.world_size; ++rank) {
      if (!options_.real[rank]) blobs_[rank] = SyntheticBlob(rank);
    }
    host::UniqueIdContents contents;
    contents.nonce = RandomNonce();
    nonce_ = contents.nonce;
    try {
      const LocalAddress local = ParseLocalAddress(options_.address, "bootstrap root address");
      listen_fd_ = Listen(local.address, &contents.root);
    } catch (const std::exception& error) {
      throw BridgeServerError(std::string("bootstrap root: ") + error.what());
    }
    unique_id_text_ = host::UniqueIdToHex(host::EncodeUniqueId(contents));
  }

  void Poll(std::chrono::milliseconds timeout) {
    if (finished_) return;
    if (!table_sent_) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(join_deadline_ - Clock::now());
      if (left.count() <= 0) {
        Abort(JoinTimeoutText());
        return;
      }
      timeout = std::min(timeout, left);
    }
    std::vector<pollfd> fds;
    if (!table_sent_) fds.push_back({listen_fd_.get(), POLLIN, 0});
    const size_t first_member = fds.size();
    for (const auto& member : members_) fds.push_back({member->fd.get(), POLLIN, 0});
    const int n = poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
    if (n < 0 && errno != EINTR) {
      Abort("poll: " + ErrnoText(errno));
      return;
    }
    if (n <= 0) return;
    const size_t polled = fds.size() - first_member;
    if (!table_sent_ && (fds[0].revents & POLLIN) != 0) AcceptAll();
    for (size_t i = 0; i < polled && !finished_; ++i) {
      if (fds[first_member + i].revents != 0) ReadFrom(*members_[i]);
    }
    members_.erase(
        std::remove_if(members_.begin(), members_.end(), [](const auto& m) { return m->left; }),
        members_.end());
  }

  const std::string& unique_id_text() const { return unique_id_text_; }
  bool all_joined() const { return table_sent_; }
  int joined() const { return joined_; }
  const std::string& failure() const { return failure_; }

 private:
  // An emulated rank's blob: its synthetic listen for every (sender, lane), sender-major.
  std::vector<uint8_t> SyntheticBlob(int rank) const {
    std::vector<uint8_t> blob(blob_bytes_, 0);
    for (int sender = 0; sender < options_.world_size; ++sender) {
      if (sender == rank) continue;
      for (int lane = 0; lane < lanes_; ++lane) {
        wire::ListenHandle handle;
        handle.rank = static_cast<uint32_t>(rank);
        handle.listen =
            wire::SyntheticListenId(static_cast<uint32_t>(sender), static_cast<uint32_t>(lane));
        handle.nonce = 0;
        wire::EncodeListenHandle(handle, blob.data() + Offset(sender, lane));
      }
    }
    return blob;
  }

  size_t Offset(int sender, int lane) const {
    return (static_cast<size_t>(sender) * lanes_ + lane) * wire::kListenHandleBytes;
  }

  std::string JoinTimeoutText() const {
    std::string missing;
    for (int rank = 0; rank < options_.world_size; ++rank) {
      if (options_.real[rank] && !has_joined_[rank]) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
      }
    }
    return "only " + std::to_string(joined_) + " of " + std::to_string(real_count_) +
           " real ranks joined within " + std::to_string(options_.join_timeout.count()) +
           " ms (missing: " + missing + ")";
  }

  void AcceptAll() {
    try {
      for (UniqueFd fd = AcceptNonBlocking(listen_fd_.get()); fd.get() >= 0;
           fd = AcceptNonBlocking(listen_fd_.get())) {
        auto member = std::make_unique<Member>();
        member->fd = std::move(fd);
        members_.push_back(std::move(member));
      }
    } catch (const NetError& error) {
      Abort(std::string("accept: ") + error.what());
    }
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
    ParseFrames(member);  // a Bye often arrives together with the close that follows it
    if (!closed || finished_ || member.left) return;
    if (member.rank < 0) {
      member.left = true;  // a stranger, or a process that gave up before joining
      return;
    }
    Abort("real rank " + std::to_string(member.rank) +
          " left without destroying its communicator (its process ended or aborted)");
  }

  void ParseFrames(Member& member) {
    while (!finished_ && !member.left) {
      if (member.input.size() < host::kFrameHeaderBytes) return;
      FrameType type;
      uint64_t length;
      if (!host::DecodeFrameHeader(member.input.data(), &type, &length)) {
        Reject(member, "sent a frame that is not nbox bootstrap");
        return;
      }
      if (member.input.size() < host::kFrameHeaderBytes + length) return;
      std::vector<uint8_t> payload(member.input.begin() + host::kFrameHeaderBytes,
                                   member.input.begin() + host::kFrameHeaderBytes + length);
      member.input.erase(member.input.begin(),
                         member.input.begin() + host::kFrameHeaderBytes + length);
      if (type == FrameType::kJoin && member.rank < 0) {
        OnJoin(member, payload);
      } else if (type == FrameType::kBye && member.rank >= 0) {
        member.left = true;
      } else {
        Reject(member, "sent an unexpected frame");
      }
    }
  }

  // A connection that does not speak the protocol: dropped, unless it claimed a rank.
  void Reject(Member& member, const std::string& what) {
    if (member.rank >= 0) {
      Abort("real rank " + std::to_string(member.rank) + " " + what);
    } else {
      member.left = true;
    }
  }

  // What is wrong with a join, or "".
  std::string CheckJoin(const host::JoinRequest& join) const {
    const std::string who = "rank " + std::to_string(join.rank);
    if (join.nranks != options_.world_size) {
      return who + " joined with nranks " + std::to_string(join.nranks) + ", the job has " +
             std::to_string(options_.world_size) + " ranks";
    }
    if (join.rank < 0 || join.rank >= options_.world_size) {
      return "a rank joined as rank " + std::to_string(join.rank) + " of " +
             std::to_string(options_.world_size);
    }
    if (!options_.real[join.rank]) {
      return who + " joined, but it is emulated in this job (NBOX_RANK of a real rank?)";
    }
    if (has_joined_[join.rank]) return "two processes joined as " + who;
    if (join.channels != options_.channels || join.chunk_bytes != options_.chunk_bytes) {
      return who + " has NBOX_CHANNELS=" + std::to_string(join.channels) +
             " NBOX_CHUNK_BYTES=" + std::to_string(join.chunk_bytes) + ", the scenario has " +
             std::to_string(options_.channels) + " and " + std::to_string(options_.chunk_bytes) +
             " (emulated ranks must build the same schedules)";
    }
    if (join.blob.size() != blob_bytes_) {
      return who + " sent a table of " + std::to_string(join.blob.size()) + " bytes, expected " +
             std::to_string(blob_bytes_) + " (not the nbox plugin's handles?)";
    }
    return "";
  }

  void OnJoin(Member& member, const std::vector<uint8_t>& payload) {
    host::JoinRequest join;
    if (!host::DecodeJoin(payload, &join) || join.nonce != nonce_) {
      Reject(member, "did not present this job's unique id");
      return;
    }
    std::string problem = CheckJoin(join);
    // Every handle must be the nbox plugin's own listen of this rank; each is registered with
    // the server as the listen for its (sender, lane).
    for (int sender = 0; sender < options_.world_size && problem.empty(); ++sender) {
      if (sender == join.rank) continue;
      for (int lane = 0; lane < lanes_ && problem.empty(); ++lane) {
        wire::ListenHandle handle;
        if (!wire::DecodeListenHandle(join.blob.data() + Offset(sender, lane), &handle) ||
            handle.rank != static_cast<uint32_t>(join.rank) ||
            wire::IsSyntheticListenId(handle.listen)) {
          problem = "rank " + std::to_string(join.rank) + "'s handle for sender " +
                    std::to_string(sender) + " lane " + std::to_string(lane) +
                    " is not an nbox plugin listen handle of that rank (NBOX_NET_PLUGIN must "
                    "be libnccl-net-nbox.so)";
          break;
        }
        try {
          server_->RegisterListen(join.rank, handle.listen, sender, lane);
        } catch (const std::invalid_argument& error) {
          problem = error.what();
        }
      }
    }
    if (!problem.empty()) {
      member.rank = join.rank >= 0 && join.rank < options_.world_size ? join.rank : -1;
      Abort(problem);
      return;
    }
    member.rank = join.rank;
    blobs_[join.rank] = std::move(join.blob);
    has_joined_[join.rank] = true;
    if (++joined_ == real_count_) SendTable();
  }

  void SendTable() {
    std::vector<uint8_t> payload;
    payload.reserve(blob_bytes_ * options_.world_size);
    for (const auto& blob : blobs_) payload.insert(payload.end(), blob.begin(), blob.end());
    const std::vector<uint8_t> frame = host::EncodeFrame(FrameType::kTable, payload);
    blobs_.clear();
    for (const auto& member : members_) {
      if (member->rank < 0) continue;
      try {
        SendAll(member->fd.get(), frame.data(), frame.size(), Clock::now() + kSendTimeout,
                "bootstrap root to rank " + std::to_string(member->rank));
      } catch (const NetError& error) {
        Abort(error.what());
        return;
      }
    }
    for (auto& member : members_) {
      if (member->rank < 0) member->left = true;  // strangers
    }
    listen_fd_.reset();  // no one else may join
    table_sent_ = true;
  }

  // Tells every real rank still connected why the job cannot go on, then stops.
  void Abort(const std::string& why) {
    failure_ = why;
    const std::vector<uint8_t> text(why.begin(), why.end());
    const std::vector<uint8_t> frame = host::EncodeFrame(FrameType::kAbort, text);
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

  const CosimBootstrapOptions options_;
  BridgeServer* const server_;
  const int lanes_;
  const Clock::time_point join_deadline_;
  int real_count_ = 0;
  size_t blob_bytes_ = 0;
  uint64_t nonce_ = 0;
  std::string unique_id_text_;
  UniqueFd listen_fd_;
  std::vector<std::unique_ptr<Member>> members_;
  std::vector<std::vector<uint8_t>> blobs_;
  std::vector<bool> has_joined_;
  int joined_ = 0;
  bool table_sent_ = false;
  bool finished_ = false;
  std::string failure_;
};

CosimBootstrapRoot::CosimBootstrapRoot(CosimBootstrapOptions options, BridgeServer* server)
    : impl_(std::make_unique<Impl>(std::move(options), server)) {}
CosimBootstrapRoot::~CosimBootstrapRoot() = default;

std::string CosimBootstrapRoot::unique_id_text() const {
  return impl_->unique_id_text();
}
void CosimBootstrapRoot::Poll(std::chrono::milliseconds timeout) {
  impl_->Poll(timeout);
}
bool CosimBootstrapRoot::all_joined() const {
  return impl_->all_joined();
}
int CosimBootstrapRoot::joined() const {
  return impl_->joined();
}
std::string CosimBootstrapRoot::failure() const {
  return impl_->failure();
}

}  // namespace nbox::bridge::server
