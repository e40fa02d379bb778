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
// scenario (options_): the world, then any of its groups.
class CosimBootstrapRoot::Impl : public BootstrapRootCore {
 public:
  Impl(CosimBootstrapOptions options, BridgeServer* server, UniqueFd listen_fd, uint64_t nonce,
       std::string unique_id_text)
      : BootstrapRootCore(std::move(listen_fd), nonce, ""),
        options_(std::move(options)),
        server_(server),
        join_deadline_(Clock::now() + options_.join_timeout),
        unique_id_text_(std::move(unique_id_text)) {
    CosimGroup world;
    for (int rank = 0; rank < options_.world_size; ++rank) world.members.push_back(rank);
    world.channels = options_.channels;
    Serve(std::move(world));
    for (const CosimGroup& group : options_.groups) Serve(group);
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
  int joined() const { return comms_.front().joined; }
  int groups_joined() const {
    return static_cast<int>(std::count_if(comms_.begin() + 1, comms_.end(), [](const Comm& c) {
      return c.real_count > 0 && c.table_sent;
    }));
  }

 private:
  // A communicator real ranks join: the world (comms_[0]) or a group.
  struct Comm {
    CosimGroup group;
    int lanes = 0;  // channels + 1
    int real_count = 0;
    size_t blob_bytes = 0;
    std::vector<std::vector<uint8_t>> blobs;  // by rank in it
    std::vector<bool> has_joined;
    int joined = 0;
    bool table_sent = false;
  };

  void Serve(CosimGroup group) {
    Comm comm;
    comm.group = std::move(group);
    comm.lanes = comm.group.channels + 1;
    const int size = static_cast<int>(comm.group.members.size());
    comm.blob_bytes = static_cast<size_t>(size) * comm.lanes * wire::kListenHandleBytes;
    comm.blobs.assign(size, {});
    comm.has_joined.assign(size, false);
    for (int rank = 0; rank < size; ++rank) {
      if (options_.real[comm.group.members[rank]]) {
        ++comm.real_count;
      } else {
        comm.blobs[rank] = SyntheticBlob(comm, rank);
      }
    }
    comms_.push_back(std::move(comm));
  }

  // An emulated member's blob: its synthetic listen for every (sender, lane), sender-major,
  // in world ranks and the job's lanes.
  static std::vector<uint8_t> SyntheticBlob(const Comm& comm, int rank) {
    const auto& members = comm.group.members;
    std::vector<uint8_t> blob(comm.blob_bytes, 0);
    for (int sender = 0; sender < static_cast<int>(members.size()); ++sender) {
      if (sender == rank) continue;
      for (int lane = 0; lane < comm.lanes; ++lane) {
        wire::ListenHandle handle;
        handle.rank = static_cast<uint32_t>(members[rank]);
        handle.listen = wire::SyntheticListenId(static_cast<uint32_t>(members[sender]),
                                                static_cast<uint32_t>(comm.group.lane_base + lane));
        handle.nonce = 0;
        wire::EncodeListenHandle(handle, blob.data() + Offset(comm, sender, lane));
      }
    }
    return blob;
  }

  static size_t Offset(const Comm& comm, int sender, int lane) {
    return (static_cast<size_t>(sender) * comm.lanes + lane) * wire::kListenHandleBytes;
  }

  std::string JoinTimeoutText() const {
    const Comm& world = comms_.front();
    std::string missing;
    for (int rank = 0; rank < options_.world_size; ++rank) {
      if (options_.real[rank] && !world.has_joined[rank]) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
      }
    }
    return "only " + std::to_string(world.joined) + " of " + std::to_string(world.real_count) +
           " real ranks joined within " + std::to_string(options_.join_timeout.count()) +
           " ms (missing: " + missing + ")";
  }

  std::string RankName(int rank) const override { return "real rank " + std::to_string(rank); }

  static std::string MemberList(const std::vector<int32_t>& members) {
    std::string text;
    for (int32_t member : members) text += (text.empty() ? "" : ",") + std::to_string(member);
    return "[" + text + "]";
  }

  // The communicator a join names: the world without members, else the first group of
  // exactly those members that this rank has not joined yet (a program may make several
  // groups of the same members, as the workload may; the world's members name a group too);
  // -1 when the scenario has none.
  int Find(const host::JoinRequest& join) const {
    if (join.members.empty()) return 0;
    int any = -1;
    for (size_t i = 0; i < comms_.size(); ++i) {
      const Comm& comm = comms_[i];
      if (!std::equal(comm.group.members.begin(), comm.group.members.end(), join.members.begin(),
                      join.members.end())) {
        continue;
      }
      const bool free = join.rank >= 0 && join.rank < static_cast<int>(comm.has_joined.size()) &&
                        !comm.has_joined[static_cast<size_t>(join.rank)];
      if (free) return static_cast<int>(i);
      if (any < 0) any = static_cast<int>(i);  // CheckJoin names the second join
    }
    return any;
  }

  // What is wrong with a join of `comm`, or "".
  std::string CheckJoin(const Comm& comm, const host::JoinRequest& join) const {
    const bool world = &comm == &comms_.front();
    const int size = static_cast<int>(comm.group.members.size());
    const std::string of = world ? std::string() : " of group " + MemberList(join.members);
    const std::string who = "rank " + std::to_string(join.rank) + of;
    if (join.nranks != size) {
      return who + " joined with nranks " + std::to_string(join.nranks) + ", the " +
             (world ? "job" : "group") + " has " + std::to_string(size) + " ranks";
    }
    if (join.rank < 0 || join.rank >= size) {
      return "a rank joined as rank " + std::to_string(join.rank) + " of " + std::to_string(size) +
             of;
    }
    const int world_rank = comm.group.members[join.rank];
    if (!options_.real[world_rank]) {
      return who + " joined, but " +
             (world ? "it is" : "world rank " + std::to_string(world_rank) + " is") +
             " emulated in this job (NBOX_RANK of a real rank?)";
    }
    if (comm.has_joined[join.rank]) return "two processes joined as " + who;
    if (join.channels != comm.group.channels || join.chunk_bytes != options_.chunk_bytes) {
      return who + " has NBOX_CHANNELS=" + std::to_string(join.channels) +
             " NBOX_CHUNK_BYTES=" + std::to_string(join.chunk_bytes) + ", the scenario has " +
             std::to_string(comm.group.channels) + " and " + std::to_string(options_.chunk_bytes) +
             " (emulated ranks must build the same schedules)";
    }
    if (!options_.settings.empty() && join.settings != options_.settings) {
      return who + " has other collective settings than the emulated ranks: " +
             host::SettingsDifference(join.settings, options_.settings) +
             " (NBOX_COLLECTIVES; emulated ranks must build the same schedules)";
    }
    if (join.blob.size() != comm.blob_bytes) {
      return who + " sent a table of " + std::to_string(join.blob.size()) + " bytes, expected " +
             std::to_string(comm.blob_bytes) + " (not the nbox plugin's handles?)";
    }
    return "";
  }

  void OnJoin(Member& member, const std::vector<uint8_t>& payload) override {
    host::JoinRequest join;
    if (!host::DecodeJoin(payload, &join) || join.nonce != nonce()) {
      Reject(member, "did not present this job's unique id");
      return;
    }
    const int index = Find(join);
    if (index < 0) {
      // Told too (it claims the world rank it names), as the job's other real ranks are.
      const bool named = join.rank >= 0 && join.rank < static_cast<int>(join.members.size()) &&
                         join.members[join.rank] >= 0 &&
                         join.members[join.rank] < options_.world_size;
      member.rank = named ? join.members[join.rank] : -1;
      Abort("rank " + std::to_string(join.rank) + " joined a group of world ranks " +
            MemberList(join.members) +
            ", but no communicator of the scenario's workload has exactly those members in "
            "that order");
      return;
    }
    Comm& comm = comms_[static_cast<size_t>(index)];
    std::string problem = CheckJoin(comm, join);
    const auto& members = comm.group.members;
    const int size = static_cast<int>(members.size());
    // Every handle must be the nbox plugin's own listen of this rank; each is registered with
    // the server as the listen for its (sender, lane), in world ranks and the job's lanes.
    for (int sender = 0; sender < size && problem.empty(); ++sender) {
      if (sender == join.rank) continue;
      for (int lane = 0; lane < comm.lanes && problem.empty(); ++lane) {
        const int world_rank = members[join.rank];
        wire::ListenHandle handle;
        if (!wire::DecodeListenHandle(join.blob.data() + Offset(comm, sender, lane), &handle) ||
            handle.rank != static_cast<uint32_t>(world_rank) ||
            wire::IsSyntheticListenId(handle.listen)) {
          problem = "rank " + std::to_string(join.rank) + "'s handle for sender " +
                    std::to_string(sender) + " lane " + std::to_string(lane) +
                    " is not an nbox plugin listen handle of that rank (NBOX_NET_PLUGIN must "
                    "be libnccl-net-nbox.so)";
          break;
        }
        try {
          server_->RegisterListen(world_rank, handle.listen, members[sender],
                                  comm.group.lane_base + lane);
        } catch (const std::invalid_argument& error) {
          problem = error.what();
        }
      }
    }
    if (!problem.empty()) {
      member.rank = join.rank >= 0 && join.rank < size ? members[join.rank] : -1;
      Abort(problem);
      return;
    }
    member.rank = members[join.rank];
    member.group = index;
    comm.blobs[join.rank] = std::move(join.blob);
    comm.has_joined[join.rank] = true;
    if (++comm.joined < comm.real_count) return;
    SendTable(&comm.blobs, index);
    comm.table_sent = true;
    // The root keeps accepting for the whole run: a real rank may join a group at any time, and
    // one that names a group the scenario lacks is told so (above), not refused a connection.
  }

  const CosimBootstrapOptions options_;
  BridgeServer* const server_;
  const Clock::time_point join_deadline_;
  const std::string unique_id_text_;
  std::vector<Comm> comms_;
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
  for (const CosimGroup& group : options.groups) {
    std::vector<bool> seen(static_cast<size_t>(options.world_size), false);
    for (int member : group.members) {
      if (member < 0 || member >= options.world_size || seen[static_cast<size_t>(member)]) {
        throw BridgeServerError("bootstrap root: a group names world rank " +
                                std::to_string(member) + " twice or outside the world");
      }
      seen[static_cast<size_t>(member)] = true;
    }
    if (group.members.empty() || group.channels < 1 || group.lane_base < 0) {
      throw BridgeServerError(
          "bootstrap root: a group needs members, channels >= 1 and a "
          "lane base >= 0");
    }
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
int CosimBootstrapRoot::groups_joined() const {
  return impl_->groups_joined();
}
std::string CosimBootstrapRoot::failure() const {
  return impl_->failure();
}

}  // namespace nbox::bridge::server
