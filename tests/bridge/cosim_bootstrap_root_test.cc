// CosimBootstrapRoot driven by hand-written bootstrap clients (bridge/host/bootstrap_wire.h over
// real sockets): the table it sends (the real ranks' own blobs, synthetic handles for emulated
// ranks), the listens it registers with the server, and each way a job's bootstrap fails.
#include "bridge/server/cosim_bootstrap_root.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bridge/host/bootstrap_wire.h"
#include "bridge/host/unique_id.h"
#include "bridge/net/socket_util.h"
#include "bridge/wire/listen_handle.h"
#include "collectives/settings.h"
#include "tests/bridge/raw_client.h"

namespace nbox::bridge::server {
namespace {

using namespace testing;  // NOLINT: the helpers of raw_client.h

constexpr int kWorld = 4;
constexpr int kChannels = 1;
constexpr int kLanes = kChannels + 1;
constexpr uint64_t kChunk = 1 << 20;

// A server (ranks 0 and 2 real) and a root, polled on a background thread.
class Job {
 public:
  explicit Job(std::chrono::milliseconds join_timeout = std::chrono::seconds(10),
               std::string settings = "", std::vector<CosimGroup> groups = {}) {
    ServerOptions options = Options(kWorld);
    options.real = {true, false, true, false};
    server_ = std::make_unique<BridgeServer>(options, &sink_);
    CosimBootstrapOptions root;
    root.world_size = kWorld;
    root.real = options.real;
    root.channels = kChannels;
    root.chunk_bytes = kChunk;
    root.settings = std::move(settings);
    root.join_timeout = join_timeout;
    root.groups = std::move(groups);
    root_ = std::make_unique<CosimBootstrapRoot>(root, server_.get());
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        std::lock_guard<std::mutex> lock(mutex_);
        server_->Poll(milliseconds(0));
        root_->Poll(milliseconds(1));
      }
    });
  }
  ~Job() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  // Runs `f` on the server and root with the polling thread held off.
  template <typename F>
  auto With(F f) {
    std::lock_guard<std::mutex> lock(mutex_);
    return f(*server_, *root_);
  }
  bridge::InetAddress root_address() const {
    return host::DecodeUniqueId(host::UniqueIdFromHex(root_->unique_id_text())).root;
  }
  uint64_t nonce() const {
    return host::DecodeUniqueId(host::UniqueIdFromHex(root_->unique_id_text())).nonce;
  }

 private:
  RecordingSink sink_;
  std::unique_ptr<BridgeServer> server_;
  std::unique_ptr<CosimBootstrapRoot> root_;
  std::mutex mutex_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Rank `rank`'s blob: its listen for (sender, lane) has id 100 + sender * kLanes + lane.
std::vector<uint8_t> RealBlob(int rank) {
  std::vector<uint8_t> blob(kWorld * kLanes * wire::kListenHandleBytes, 0);
  for (int sender = 0; sender < kWorld; ++sender) {
    if (sender == rank) continue;
    for (int lane = 0; lane < kLanes; ++lane) {
      const uint64_t id = 100 + sender * kLanes + lane;
      wire::EncodeListenHandle(wire::ListenHandle{static_cast<uint32_t>(rank), id, 7, 0},
                               blob.data() + (sender * kLanes + lane) * wire::kListenHandleBytes);
    }
  }
  return blob;
}

// The blob of the member of `members` (world ranks) at `rank`: its listen for (sender, lane)
// has id `base` + sender * kLanes + lane, in its world rank's name.
std::vector<uint8_t> GroupBlob(const std::vector<int>& members, int rank, uint64_t base) {
  const int size = static_cast<int>(members.size());
  std::vector<uint8_t> blob(size * kLanes * wire::kListenHandleBytes, 0);
  for (int sender = 0; sender < size; ++sender) {
    if (sender == rank) continue;
    for (int lane = 0; lane < kLanes; ++lane) {
      wire::EncodeListenHandle(wire::ListenHandle{static_cast<uint32_t>(members[rank]),
                                                  base + sender * kLanes + lane, 7, 0},
                               blob.data() + (sender * kLanes + lane) * wire::kListenHandleBytes);
    }
  }
  return blob;
}

class Member {
 public:
  Member(const Job& job, int rank, int channels = kChannels, uint64_t nonce = 0,
         std::string settings = "") {
    host::JoinRequest join;
    join.nonce = nonce != 0 ? nonce : job.nonce();
    join.nranks = kWorld;
    join.rank = rank;
    join.channels = channels;
    join.chunk_bytes = kChunk;
    join.settings = std::move(settings);
    join.blob = RealBlob(rank);
    Send(job, join);
  }
  // A member of a group: rank `rank` of `members` (world ranks), listen ids from `base`.
  Member(const Job& job, const std::vector<int>& members, int rank, uint64_t base) {
    host::JoinRequest join;
    join.nonce = job.nonce();
    join.nranks = static_cast<int32_t>(members.size());
    join.rank = rank;
    join.channels = kChannels;
    join.chunk_bytes = kChunk;
    join.members.assign(members.begin(), members.end());
    join.blob = GroupBlob(members, rank, base);
    Send(job, join);
  }
  // The root's answer: (type, payload).
  std::pair<host::FrameType, std::vector<uint8_t>> Answer() {
    uint8_t header[host::kFrameHeaderBytes];
    RecvAll(fd_.get(), header, sizeof(header), Deadline(), "root");
    host::FrameType type;
    uint64_t length = 0;
    EXPECT_TRUE(host::DecodeFrameHeader(header, &type, &length));
    std::vector<uint8_t> payload(length);
    RecvAll(fd_.get(), payload.data(), payload.size(), Deadline(), "root");
    return {type, payload};
  }
  void Bye() {
    const auto frame = host::EncodeFrame(host::FrameType::kBye, {});
    SendAll(fd_.get(), frame.data(), frame.size(), Deadline(), "root");
  }
  void Close() { fd_.reset(); }

 private:
  void Send(const Job& job, const host::JoinRequest& join) {
    fd_ = ConnectBlocking(job.root_address(), Deadline(), "root");
    const auto frame = host::EncodeFrame(host::FrameType::kJoin, host::EncodeJoin(join));
    SendAll(fd_.get(), frame.data(), frame.size(), Deadline(), "root");
  }
  static Clock::time_point Deadline() { return Clock::now() + std::chrono::seconds(5); }
  UniqueFd fd_;
};

std::string Text(const std::vector<uint8_t>& payload) {
  return std::string(payload.begin(), payload.end());
}

TEST(CosimBootstrapRoot, TheTableHoldsRealBlobsAndSyntheticHandlesForEmulatedRanks) {
  Job job;
  Member zero(job, 0);
  Member two(job, 2);
  const auto [type, table] = zero.Answer();
  ASSERT_EQ(type, host::FrameType::kTable);
  const size_t blob_bytes = kWorld * kLanes * wire::kListenHandleBytes;
  ASSERT_EQ(table.size(), kWorld * blob_bytes);
  EXPECT_EQ(std::vector<uint8_t>(table.begin(), table.begin() + blob_bytes), RealBlob(0));
  EXPECT_EQ(std::vector<uint8_t>(table.begin() + 2 * blob_bytes, table.begin() + 3 * blob_bytes),
            RealBlob(2));
  for (int emulated : {1, 3}) {
    for (int sender = 0; sender < kWorld; ++sender) {
      for (int lane = 0; lane < kLanes; ++lane) {
        const uint8_t* handle = table.data() + emulated * blob_bytes +
                                (sender * kLanes + lane) * wire::kListenHandleBytes;
        wire::ListenHandle decoded;
        if (sender == emulated) {
          EXPECT_FALSE(wire::DecodeListenHandle(handle, &decoded)) << "its own entry is zeros";
          continue;
        }
        ASSERT_TRUE(wire::DecodeListenHandle(handle, &decoded));
        EXPECT_EQ(decoded.rank, static_cast<uint32_t>(emulated));
        EXPECT_EQ(decoded.listen, wire::SyntheticListenId(sender, lane));
        EXPECT_EQ(decoded.nonce, 0u);
      }
    }
  }
  EXPECT_EQ(two.Answer().first, host::FrameType::kTable);
  // Every listen of both real ranks was registered: registering one again is refused.
  job.With([](BridgeServer& server, CosimBootstrapRoot& root) {
    EXPECT_TRUE(root.all_joined());
    EXPECT_EQ(root.joined(), 2);
    for (int rank : {0, 2}) {
      for (int sender = 0; sender < kWorld; ++sender) {
        if (sender == rank) continue;
        for (int lane = 0; lane < kLanes; ++lane) {
          EXPECT_THROW(server.RegisterListen(rank, 100 + sender * kLanes + lane, sender, lane),
                       std::invalid_argument);
        }
      }
    }
    return 0;
  });
  zero.Bye();
  two.Bye();
  zero.Close();
  two.Close();
  std::this_thread::sleep_for(milliseconds(50));
  job.Stop();
  EXPECT_EQ(job.With([](BridgeServer&, CosimBootstrapRoot& root) { return root.failure(); }), "");
}

TEST(CosimBootstrapRoot, ARealRankThatLeavesWithoutByeIsReportedToTheOthers) {
  Job job;
  Member zero(job, 0);
  Member two(job, 2);
  ASSERT_EQ(zero.Answer().first, host::FrameType::kTable);
  ASSERT_EQ(two.Answer().first, host::FrameType::kTable);
  two.Close();
  const auto [type, text] = zero.Answer();
  EXPECT_EQ(type, host::FrameType::kAbort);
  const std::string expected =
      "real rank 2 left without destroying its communicator (its process ended or aborted)";
  EXPECT_EQ(Text(text), expected);
  job.Stop();
  EXPECT_EQ(job.With([](BridgeServer&, CosimBootstrapRoot& root) { return root.failure(); }),
            expected);
}

TEST(CosimBootstrapRoot, JoinsThatDoNotFitTheJobAbortItNamingWhy) {
  {
    Job job;
    Member zero(job, 0, /*channels=*/2);
    const auto [type, text] = zero.Answer();
    EXPECT_EQ(type, host::FrameType::kAbort);
    EXPECT_EQ(Text(text),
              "rank 0 has NBOX_CHANNELS=2 NBOX_CHUNK_BYTES=1048576, the scenario has 1 "
              "and 1048576 (emulated ranks must build the same schedules)");
  }
  {
    Job job;
    Member one(job, 1);
    const auto [type, text] = one.Answer();
    EXPECT_EQ(type, host::FrameType::kAbort);
    EXPECT_EQ(Text(text),
              "rank 1 joined, but it is emulated in this job (NBOX_RANK of a real "
              "rank?)");
  }
}

// The emulated ranks' collective settings travel whole to the real ranks (NBOX_COLLECTIVES);
// a rank that joins with others is refused, field by field.
TEST(CosimBootstrapRoot, ARankWithOtherCollectiveSettingsIsRefusedNamingTheFields) {
  coll::CollectiveSettings emulated;
  emulated.channels = kChannels;
  emulated.chunk_bytes = kChunk;
  emulated.all_reduce = coll::AlgorithmChoice::kTree;
  coll::CollectiveSettings real = emulated;
  real.all_reduce = coll::AlgorithmChoice::kRing;
  real.broadcast = coll::AlgorithmChoice::kTree;
  Job job(std::chrono::seconds(10), coll::EncodeSettings(emulated));
  Member zero(job, 0, kChannels, 0, coll::EncodeSettings(real));
  const auto [type, text] = zero.Answer();
  EXPECT_EQ(type, host::FrameType::kAbort);
  EXPECT_EQ(Text(text),
            "rank 0 has other collective settings than the emulated ranks: allreduce: ring here, "
            "tree there; broadcast: tree here, ring there (NBOX_COLLECTIVES; emulated ranks must "
            "build the same schedules)");
}

TEST(CosimBootstrapRoot, MissingRanksAreNamedAfterTheJoinTimeout) {
  Job job(milliseconds(200));
  Member zero(job, 0);
  const auto [type, text] = zero.Answer();
  EXPECT_EQ(type, host::FrameType::kAbort);
  EXPECT_EQ(Text(text), "only 1 of 2 real ranks joined within 200 ms (missing: 2)");
}

TEST(CosimBootstrapRoot, AStrangerWithAnotherNonceIsDroppedAndTheJobGoesOn) {
  Job job;
  { Member stranger(job, 0, kChannels, /*nonce=*/12345); }
  Member zero(job, 0);
  Member two(job, 2);
  EXPECT_EQ(zero.Answer().first, host::FrameType::kTable);
  EXPECT_EQ(two.Answer().first, host::FrameType::kTable);
}

// A group of the job (world ranks 2, 3 and 0, in that order, on the job's lanes 2 and 3), joined
// after the world by its real members 2 and 0: its table holds their blobs and, for emulated
// world rank 3, synthetic handles naming world rank 3 and the job's lanes, and their listens are
// registered with the server in world ranks on the job's lanes. A group without real members
// is served too and waits for no one.
TEST(CosimBootstrapRoot, AGroupJoinsAfterTheWorldInWorldRanksOnItsOwnLanes) {
  const std::vector<int> group = {2, 3, 0};
  Job job(std::chrono::seconds(10), "", {{group, 2, kChannels}, {{1, 3}, 4, kChannels}});
  Member zero(job, 0);
  Member two(job, 2);
  ASSERT_EQ(zero.Answer().first, host::FrameType::kTable);
  ASSERT_EQ(two.Answer().first, host::FrameType::kTable);
  Member first(job, group, 0, 500);  // world rank 2
  Member third(job, group, 2, 600);  // world rank 0
  const auto [type, table] = first.Answer();
  ASSERT_EQ(type, host::FrameType::kTable) << Text(table);
  const size_t blob_bytes = group.size() * kLanes * wire::kListenHandleBytes;
  ASSERT_EQ(table.size(), group.size() * blob_bytes);
  EXPECT_EQ(std::vector<uint8_t>(table.begin(), table.begin() + blob_bytes),
            GroupBlob(group, 0, 500));
  EXPECT_EQ(std::vector<uint8_t>(table.begin() + 2 * blob_bytes, table.end()),
            GroupBlob(group, 2, 600));
  for (int sender = 0; sender < 3; ++sender) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const uint8_t* handle =
          table.data() + blob_bytes + (sender * kLanes + lane) * wire::kListenHandleBytes;
      wire::ListenHandle decoded;
      if (sender == 1) {
        EXPECT_FALSE(wire::DecodeListenHandle(handle, &decoded)) << "its own entry is zeros";
        continue;
      }
      ASSERT_TRUE(wire::DecodeListenHandle(handle, &decoded));
      EXPECT_EQ(decoded.rank, 3u);
      EXPECT_EQ(decoded.listen, wire::SyntheticListenId(group[sender], 2 + lane));
    }
  }
  EXPECT_EQ(third.Answer().first, host::FrameType::kTable);
  job.With([&](BridgeServer& server, CosimBootstrapRoot& root) {
    EXPECT_EQ(root.groups_joined(), 1);
    // World rank 2's listen for world rank 0 on the group's first lane (job lane 2) is taken.
    EXPECT_THROW(server.RegisterListen(2, 500 + 2 * kLanes, 0, 2), std::invalid_argument);
    EXPECT_THROW(server.RegisterListen(0, 600 + 0 * kLanes + 1, 2, 3), std::invalid_argument);
    return 0;
  });
}

// A program may make two groups of the same members (a workload may have two communicators of
// the same ranks): each join takes the first of them this rank has not joined, so the second
// pair of joins gets the second group, its listens registered on its own lanes.
TEST(CosimBootstrapRoot, TwoGroupsOfTheSameMembersAreJoinedInTurn) {
  const std::vector<int> group = {2, 0};
  Job job(std::chrono::seconds(10), "", {{group, 2, kChannels}, {group, 4, kChannels}});
  Member zero(job, 0);
  Member two(job, 2);
  ASSERT_EQ(zero.Answer().first, host::FrameType::kTable);
  ASSERT_EQ(two.Answer().first, host::FrameType::kTable);
  Member first_two(job, group, 0, 500);
  Member first_zero(job, group, 1, 600);
  ASSERT_EQ(first_two.Answer().first, host::FrameType::kTable);
  ASSERT_EQ(first_zero.Answer().first, host::FrameType::kTable);
  Member second_two(job, group, 0, 700);
  Member second_zero(job, group, 1, 800);
  const auto [type, text] = second_two.Answer();
  ASSERT_EQ(type, host::FrameType::kTable) << Text(text);
  ASSERT_EQ(second_zero.Answer().first, host::FrameType::kTable);
  job.With([&](BridgeServer& server, CosimBootstrapRoot& root) {
    EXPECT_EQ(root.groups_joined(), 2);
    // World rank 2's listens for world rank 0 on each group's first lane are taken.
    EXPECT_THROW(server.RegisterListen(2, 500 + kLanes, 0, 2), std::invalid_argument);
    EXPECT_THROW(server.RegisterListen(2, 700 + kLanes, 0, 4), std::invalid_argument);
    return 0;
  });
}

TEST(CosimBootstrapRoot, AGroupTheScenarioDoesNotHaveAbortsTheJobNamingItsMembers) {
  Job job(std::chrono::seconds(10), "", {{{2, 3, 0}, 2, kChannels}});
  Member zero(job, 0);
  Member two(job, 2);
  ASSERT_EQ(zero.Answer().first, host::FrameType::kTable);
  ASSERT_EQ(two.Answer().first, host::FrameType::kTable);
  Member wrong(job, {0, 3, 2}, 0, 500);
  const auto [type, text] = wrong.Answer();
  EXPECT_EQ(type, host::FrameType::kAbort);
  EXPECT_EQ(Text(text),
            "rank 0 joined a group of world ranks [0,3,2], but no communicator of the "
            "scenario's workload has exactly those members in that order");
}

// A join carries its group's members between its settings and its blob; a payload cut anywhere
// in them, or claiming more members than it holds, does not decode.
TEST(BootstrapJoinWire, MembersRoundTripAndTruncationIsRefused) {
  host::JoinRequest join;
  join.nonce = 42;
  join.nranks = 3;
  join.rank = 1;
  join.channels = 2;
  join.chunk_bytes = kChunk;
  join.settings = "s";
  join.members = {5, 0, 9};
  join.blob = {1, 2, 3};
  const std::vector<uint8_t> payload = host::EncodeJoin(join);
  host::JoinRequest back;
  ASSERT_TRUE(host::DecodeJoin(payload, &back));
  EXPECT_EQ(back.members, join.members);
  EXPECT_EQ(back.blob, join.blob);
  EXPECT_EQ(back.settings, "s");
  const size_t members_end = host::kJoinFixedBytes + 1 + 4 + 3 * 4;
  for (size_t cut = host::kJoinFixedBytes + 1; cut < members_end; ++cut) {
    const std::vector<uint8_t> shorter(payload.begin(), payload.begin() + cut);
    EXPECT_FALSE(host::DecodeJoin(shorter, &back)) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace nbox::bridge::server
