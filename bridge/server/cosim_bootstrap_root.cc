#include "bridge/server/cosim_bootstrap_root.h"

#include <algorithm>
#include <stdexcept>

#include "bridge/host/bootstrap_root_core.h"
#include "bridge/host/bootstrap_wire.h"
#include "bridge/host/host_error.h"
#include "bridge/host/unique_id.h"
#include "bridge/net/socket_util.h"
#include "bridge/wire/listen_handle.h"

namespace nbox::bridge::server {
using host::BootstrapRootCore;

// nbox-cosim's root: only the real ranks join, and what they must agree with comes from the
// scenario (options_).
class CosimBootstrapRoot::Impl : public BootstrapRootCore {
 public:
  Impl(CosimBootstrapOptions options, BridgeServer* server, UniqueFd listen_fd, uint64_t nonce,
       std::string unique_id_text)
      : BootstrapRootCore(std::move(listen_fd), nonce, ""),
        options_(std::move(options)),
        server_(server),
        lanes_(options_.channels + 1),
        join_deadline_(Clock::now() + options_.join_timeout),
        unique_id_text_(std::move(unique_id_text)) {
    real_count_ = static_cast<int>(std::count(options_.real.begin(), options_.real.end(), true));
    blob_bytes_ = static_cast<size_t>(options_.world_size) * lanes_ * wire::kListenHandleBytes;
    blobs_.assign(options_.world_size, {});
    has_joined_.assign(options_.world_size, false);
    for (int rank = 0; rank < options_.world_size; ++rank) {
      if (!options_.real[rank]) blobs_[rank] = SyntheticBlob(rank);
    }
  }

  void Poll(std::chrono::milliseconds timeout) {
    if (finished()) return;
    if (!table_sent()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(join_deadline_ - Clock::now());
      if (left.count() <= 0) {
        Abort(JoinTimeoutText());
        return;
      }
      timeout = std::min(timeout, left);
    }
    PollOnce(static_cast<int>(timeout.count()));
  }

  const std::string& unique_id_text() const { return unique_id_text_; }
  bool all_joined() const { return table_sent(); }
  int joined() const { return joined_; }

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

  std::string RankName(int rank) const override { return "real rank " + std::to_string(rank); }

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
    if (!options_.settings.empty() && join.settings != options_.settings) {
      return who + " has other collective settings than the emulated ranks: " +
             host::SettingsDifference(join.settings, options_.settings) +
             " (NBOX_COLLECTIVES; emulated ranks must build the same schedules)";
    }
    if (join.blob.size() != blob_bytes_) {
      return who + " sent a table of " + std::to_string(join.blob.size()) + " bytes, expected " +
             std::to_string(blob_bytes_) + " (not the nbox plugin's handles?)";
    }
    return "";
  }

  void OnJoin(Member& member, const std::vector<uint8_t>& payload) override {
    host::JoinRequest join;
    if (!host::DecodeJoin(payload, &join) || join.nonce != nonce()) {
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
    if (++joined_ == real_count_) SendTable(&blobs_);
  }

  const CosimBootstrapOptions options_;
  BridgeServer* const server_;
  const int lanes_;
  const Clock::time_point join_deadline_;
  int real_count_ = 0;
  size_t blob_bytes_ = 0;
  const std::string unique_id_text_;
  std::vector<std::vector<uint8_t>> blobs_;
  std::vector<bool> has_joined_;
  int joined_ = 0;
};

namespace {

// Checks the options and opens the listening socket; the unique id carries its address.
std::unique_ptr<CosimBootstrapRoot::Impl> MakeImpl(CosimBootstrapOptions options,
                                                   BridgeServer* server) {
  if (server == nullptr) throw BridgeServerError("bootstrap root: no server");
  if (options.world_size < 1 || options.real.size() != static_cast<size_t>(options.world_size)) {
    throw BridgeServerError("bootstrap root: real names " + std::to_string(options.real.size()) +
                            " ranks, the world has " + std::to_string(options.world_size));
  }
  if (options.channels < 1) {
    throw BridgeServerError("bootstrap root: channels " + std::to_string(options.channels) +
                            " (at least 1)");
  }
  host::UniqueIdContents contents;
  contents.nonce = host::RandomBootstrapNonce();
  UniqueFd listen_fd;
  try {
    const LocalAddress local = ParseLocalAddress(options.address, "bootstrap root address");
    listen_fd = Listen(local.address, &contents.root);
  } catch (const std::exception& error) {
    throw BridgeServerError(std::string("bootstrap root: ") + error.what());
  }
  return std::make_unique<CosimBootstrapRoot::Impl>(
      std::move(options), server, std::move(listen_fd), contents.nonce,
      host::UniqueIdToHex(host::EncodeUniqueId(contents)));
}

}  // namespace

CosimBootstrapRoot::CosimBootstrapRoot(CosimBootstrapOptions options, BridgeServer* server)
    : impl_(MakeImpl(std::move(options), server)) {}
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
