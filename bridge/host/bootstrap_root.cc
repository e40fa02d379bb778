#include "bridge/host/bootstrap_root.h"

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "bridge/host/bootstrap_root_core.h"
#include "bridge/host/bootstrap_wire.h"
#include "bridge/host/host_error.h"
#include "bridge/net/socket_util.h"

namespace nbox::host {
namespace {

using bridge::Clock;
using bridge::NetError;
using bridge::UniqueFd;

// The runtime's own root: every rank joins, and the first join sets what the others must agree
// with (nranks, channels, chunk bytes, the size of the blob).
class Root : public BootstrapRootCore {
 public:
  Root(UniqueFd listen_fd, uint64_t nonce, std::chrono::seconds join_timeout)
      : BootstrapRootCore(std::move(listen_fd), nonce, "bootstrap root: "),
        join_deadline_(Clock::now() + join_timeout),
        join_timeout_(join_timeout) {}

  void Run() {
    while (!finished()) {
      int timeout_ms = -1;
      if (!table_sent()) {
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
      PollOnce(timeout_ms);
      if (table_sent() && !has_members()) return;  // every rank left
    }
  }

 private:
  std::string RankName(int rank) const override { return "rank " + std::to_string(rank); }

  void OnJoin(Member& member, const std::vector<uint8_t>& payload) override {
    JoinRequest join;
    if (!DecodeJoin(payload, &join) || join.nonce != nonce()) {
      Reject(member, "did not present this communicator's unique id");
      return;
    }
    if (joined_ == 0) {
      nranks_ = join.nranks;
      channels_ = join.channels;
      chunk_bytes_ = join.chunk_bytes;
      settings_ = join.settings;
      blob_bytes_ = join.blob.size();
      if (nranks_ < 1) {
        Abort("nboxCommInitRank: nranks " + std::to_string(nranks_) + " is less than 1");
        return;
      }
      blobs_.assign(nranks_, {});
      has_joined_.assign(nranks_, false);
    }
    std::string problem;
    if (!join.members.empty()) {
      problem = "rank " + std::to_string(join.rank) +
                " joined as a member of a group of nbox-cosim's job, but this root serves a "
                "communicator of its own";
    } else if (join.nranks != nranks_) {
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
    } else if (join.settings != settings_) {
      problem = "rank " + std::to_string(join.rank) +
                " has other collective settings (NBOX_COLLECTIVES) than the first rank that "
                "joined: " +
                SettingsDifference(join.settings, settings_) +
                " (they must be equal on every rank)";
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
    if (++joined_ == nranks_) {
      SendTable(&blobs_);
      StopAccepting();
    }
  }

  const Clock::time_point join_deadline_;
  const std::chrono::seconds join_timeout_;
  int nranks_ = 0;
  int channels_ = 0;
  uint64_t chunk_bytes_ = 0;
  std::string settings_;
  size_t blob_bytes_ = 0;
  int joined_ = 0;
  std::vector<bool> has_joined_;
  std::vector<std::vector<uint8_t>> blobs_;
};

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
  contents.nonce = RandomBootstrapNonce();
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
