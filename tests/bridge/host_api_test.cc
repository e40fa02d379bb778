// The host runtime's C API inside this process: argument checks and their messages, unique id
// handling, bad settings, one-rank communicators (where every collective is a local copy) and
// two communicators of two ranks in two threads of this process.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bridge/include/nbox_host.h"

namespace {

class HostApi : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("NBOX_NET_PLUGIN", NBOX_TCP_PLUGIN_PATH, 1);
    setenv("NBOX_TCP_IFADDR", "127.0.0.1", 1);
    unsetenv("NBOX_CHANNELS");
    unsetenv("NBOX_CHUNK_BYTES");
  }

  nboxComm_t SingleRank() {
    nboxUniqueId id;
    EXPECT_EQ(nboxGetUniqueId(&id), nboxSuccess) << nboxGetLastError(nullptr);
    nboxComm_t comm = nullptr;
    EXPECT_EQ(nboxCommInitRank(&comm, 1, id, 0), nboxSuccess) << nboxGetLastError(nullptr);
    return comm;
  }
};

std::string LastError() {
  return nboxGetLastError(nullptr);
}

TEST_F(HostApi, UniqueIdRoundTripsThroughText) {
  nboxUniqueId id, back;
  ASSERT_EQ(nboxGetUniqueId(&id), nboxSuccess);
  char text[NBOX_UNIQUE_ID_STRING_BYTES];
  ASSERT_EQ(nboxUniqueIdToString(&id, text), nboxSuccess);
  EXPECT_EQ(std::strlen(text), 2u * NBOX_UNIQUE_ID_BYTES);
  ASSERT_EQ(nboxUniqueIdFromString(text, &back), nboxSuccess);
  EXPECT_EQ(std::memcmp(&id, &back, sizeof(id)), 0);

  EXPECT_EQ(nboxUniqueIdFromString("abc", &back), nboxInvalidArgument);
  EXPECT_EQ(LastError(), "a unique id in text form has 256 hex digits, got 3 characters");
  std::string bad(text);
  bad[10] = 'g';
  EXPECT_EQ(nboxUniqueIdFromString(bad.c_str(), &back), nboxInvalidArgument);
  EXPECT_EQ(LastError(), "a unique id in text form is hex digits; character 10 is 'g'");
  const std::string zeros(2 * NBOX_UNIQUE_ID_BYTES, '0');
  EXPECT_EQ(nboxUniqueIdFromString(zeros.c_str(), &back), nboxInvalidArgument);
  EXPECT_NE(LastError().find("not made by nboxGetUniqueId"), std::string::npos);
}

TEST_F(HostApi, InitRejectsBadArguments) {
  nboxUniqueId id;
  ASSERT_EQ(nboxGetUniqueId(&id), nboxSuccess);
  nboxComm_t comm = nullptr;
  EXPECT_EQ(nboxCommInitRank(&comm, 0, id, 0), nboxInvalidArgument);
  EXPECT_EQ(LastError(), "nboxCommInitRank: nranks 0 is less than 1");
  EXPECT_EQ(nboxCommInitRank(&comm, 2, id, 2), nboxInvalidArgument);
  EXPECT_EQ(LastError(), "nboxCommInitRank: rank 2 is not in 0..1");
  nboxUniqueId garbage;
  std::memset(&garbage, 7, sizeof(garbage));
  EXPECT_EQ(nboxCommInitRank(&comm, 1, garbage, 0), nboxInvalidArgument);
  EXPECT_EQ(comm, nullptr);
}

TEST_F(HostApi, InitNamesEveryFileItTriedForAMissingPlugin) {
  setenv("NBOX_NET_PLUGIN", "nosuchplugin", 1);
  nboxUniqueId id;
  ASSERT_EQ(nboxGetUniqueId(&id), nboxSuccess);
  nboxComm_t comm = nullptr;
  EXPECT_EQ(nboxCommInitRank(&comm, 1, id, 0), nboxSystemError);
  const std::string error = LastError();
  EXPECT_NE(error.find("cannot load the net plugin 'nosuchplugin'"), std::string::npos) << error;
  EXPECT_NE(error.find("\n  nosuchplugin: "), std::string::npos) << error;
  EXPECT_NE(error.find("\n  libnccl-net-nosuchplugin.so: "), std::string::npos) << error;
}

TEST_F(HostApi, InitRejectsBadSettingsNamingTheVariable) {
  nboxUniqueId id;
  ASSERT_EQ(nboxGetUniqueId(&id), nboxSuccess);
  nboxComm_t comm = nullptr;
  setenv("NBOX_CHANNELS", "0", 1);
  EXPECT_EQ(nboxCommInitRank(&comm, 1, id, 0), nboxInvalidArgument);
  EXPECT_EQ(LastError(), "NBOX_CHANNELS: expected a whole number in 1..64, got '0'");
  unsetenv("NBOX_CHANNELS");
  setenv("NBOX_CHUNK_BYTES", "lots", 1);
  EXPECT_EQ(nboxCommInitRank(&comm, 1, id, 0), nboxInvalidArgument);
  EXPECT_NE(LastError().find("NBOX_CHUNK_BYTES: "), std::string::npos) << LastError();
  setenv("NBOX_CHUNK_BYTES", "2GiB", 1);
  EXPECT_EQ(nboxCommInitRank(&comm, 1, id, 0), nboxInvalidArgument);
  EXPECT_EQ(LastError(), "NBOX_CHUNK_BYTES: expected 8B..1GiB, got '2GiB'");
}

TEST_F(HostApi, OneRankCollectivesAreCopies) {
  nboxComm_t comm = SingleRank();
  ASSERT_NE(comm, nullptr);
  int count = 0, rank = -1;
  ASSERT_EQ(nboxCommCount(comm, &count), nboxSuccess);
  ASSERT_EQ(nboxCommUserRank(comm, &rank), nboxSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(rank, 0);
  const std::vector<float> in = {1.5f, -2.0f, 3.25f};
  std::vector<float> out(3, 0.0f), gathered(3, 0.0f), scattered(3, 0.0f), broadcast(3, 0.0f);
  nboxRequest_t request = nullptr;
  ASSERT_EQ(nboxAllReduce(in.data(), out.data(), 3, nboxFloat32, nboxMax, comm, &request),
            nboxSuccess);
  ASSERT_EQ(nboxWait(request), nboxSuccess);
  ASSERT_EQ(nboxAllGather(in.data(), gathered.data(), 3, nboxFloat32, comm, nullptr), nboxSuccess);
  ASSERT_EQ(nboxReduceScatter(in.data(), scattered.data(), 3, nboxFloat32, nboxSum, comm, nullptr),
            nboxSuccess);
  ASSERT_EQ(nboxBroadcast(in.data(), broadcast.data(), 3, nboxFloat32, 0, comm, nullptr),
            nboxSuccess);
  ASSERT_EQ(nboxCommSynchronize(comm), nboxSuccess);
  EXPECT_EQ(out, in);
  EXPECT_EQ(gathered, in);
  EXPECT_EQ(scattered, in);
  EXPECT_EQ(broadcast, in);
  EXPECT_EQ(nboxCommDestroy(comm), nboxSuccess);
}

// `part` is a communicator of one rank, rank 0; destroys it.
void ExpectAGroupOfOneAndDestroy(nboxComm_t part) {
  ASSERT_NE(part, nullptr);
  int count = 0, rank = -1;
  ASSERT_EQ(nboxCommCount(part, &count), nboxSuccess);
  ASSERT_EQ(nboxCommUserRank(part, &rank), nboxSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(nboxCommDestroy(part), nboxSuccess);
}

// nboxCommSplit refuses what NCCL's refuses (a negative color other than NBOX_SPLIT_NOCOLOR, a
// call inside a group, no place for the result) and leaves *newcomm NULL; a rank without color
// gets NULL; one rank alone gets a communicator of one.
TEST_F(HostApi, SplitRefusesBadArgumentsAndGivesNoColorNothing) {
  nboxComm_t comm = SingleRank();
  ASSERT_NE(comm, nullptr);
  nboxComm_t part = reinterpret_cast<nboxComm_t>(&part);  // not NULL: the call must clear it
  EXPECT_EQ(nboxCommSplit(comm, -2, 0, &part), nboxInvalidArgument);
  EXPECT_EQ(part, nullptr);
  EXPECT_NE(LastError().find("color -2 is neither >= 0 nor NBOX_SPLIT_NOCOLOR"), std::string::npos)
      << LastError();
  EXPECT_EQ(nboxCommSplit(comm, 0, 0, nullptr), nboxInvalidArgument);
  EXPECT_EQ(nboxCommSplit(nullptr, 0, 0, &part), nboxInvalidArgument);
  ASSERT_EQ(nboxGroupStart(), nboxSuccess);
  EXPECT_EQ(nboxCommSplit(comm, 0, 0, &part), nboxInvalidUsage);
  ASSERT_EQ(nboxGroupEnd(), nboxSuccess);
  EXPECT_EQ(nboxCommSplit(comm, NBOX_SPLIT_NOCOLOR, 0, &part), nboxSuccess);
  EXPECT_EQ(part, nullptr);
  ASSERT_EQ(nboxCommSplit(comm, 7, 3, &part), nboxSuccess);
  ExpectAGroupOfOneAndDestroy(part);
  EXPECT_EQ(nboxCommDestroy(comm), nboxSuccess);
}

// nboxCommInitGroup refuses a member list that is not distinct ranks of the communicator with
// the caller among them, a call inside a group and no place for the result, leaving *newcomm
// NULL; one rank alone gets a communicator of one.
TEST_F(HostApi, InitGroupRefusesBadMembersAndMakesAGroupOfOne) {
  nboxComm_t comm = SingleRank();
  ASSERT_NE(comm, nullptr);
  nboxComm_t part = reinterpret_cast<nboxComm_t>(&part);  // not NULL: the call must clear it
  const int outside[1] = {1};
  EXPECT_EQ(nboxCommInitGroup(comm, 1, outside, &part), nboxInvalidArgument);
  EXPECT_EQ(part, nullptr);
  EXPECT_NE(LastError().find("member 1 is not a rank of the communicator (0..0)"),
            std::string::npos)
      << LastError();
  const int twice[2] = {0, 0};
  EXPECT_EQ(nboxCommInitGroup(comm, 2, twice, &part), nboxInvalidArgument);
  const int self[1] = {0};
  EXPECT_EQ(nboxCommInitGroup(comm, 0, self, &part), nboxInvalidArgument);
  EXPECT_EQ(nboxCommInitGroup(comm, 1, nullptr, &part), nboxInvalidArgument);
  EXPECT_EQ(nboxCommInitGroup(comm, 1, self, nullptr), nboxInvalidArgument);
  ASSERT_EQ(nboxGroupStart(), nboxSuccess);
  EXPECT_EQ(nboxCommInitGroup(comm, 1, self, &part), nboxInvalidUsage);
  ASSERT_EQ(nboxGroupEnd(), nboxSuccess);
  ASSERT_EQ(nboxCommInitGroup(comm, 1, self, &part), nboxSuccess);
  ExpectAGroupOfOneAndDestroy(part);
  EXPECT_EQ(nboxCommDestroy(comm), nboxSuccess);
}

// Under a plugin without nboxNetExt_v2 (the TCP plugin) the rank's clock is the steady wall
// clock and iteration marks go nowhere.
TEST_F(HostApi, TheClockIsTheWallClockOutsideNboxCosim) {
  nboxComm_t comm = SingleRank();
  ASSERT_NE(comm, nullptr);
  uint64_t before = 0, after = 0;
  ASSERT_EQ(nboxCommVirtualTimeNs(comm, &before), nboxSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(nboxCommVirtualTimeNs(comm, &after), nboxSuccess);
  EXPECT_GE(after - before, 20'000'000u);
  EXPECT_LT(after - before, 20'000'000'000u);
  nboxResult_t state = nboxInternalError;
  EXPECT_EQ(nboxCommGetAsyncError(comm, &state), nboxSuccess);
  EXPECT_EQ(state, nboxSuccess);
  EXPECT_EQ(nboxCommGetAsyncError(comm, nullptr), nboxInvalidArgument);
  EXPECT_EQ(nboxMarkIteration(comm, 0, 1), nboxSuccess);
  EXPECT_EQ(nboxMarkIteration(comm, 0, 0), nboxSuccess);
  EXPECT_EQ(nboxCommVirtualTimeNs(comm, nullptr), nboxInvalidArgument);
  EXPECT_EQ(LastError(), "nboxCommVirtualTimeNs: ns is NULL");
  EXPECT_EQ(nboxMarkIteration(nullptr, 0, 1), nboxInvalidArgument);
  EXPECT_EQ(LastError(), "nboxMarkIteration: comm is NULL");
  EXPECT_EQ(nboxCommDestroy(comm), nboxSuccess);
}

TEST_F(HostApi, CallsRejectBadArgumentsWithMessages) {
  nboxComm_t comm = SingleRank();
  ASSERT_NE(comm, nullptr);
  float data[4] = {};
  nboxRequest_t request = nullptr;
  EXPECT_EQ(nboxAllReduce(data, data, 4, static_cast<nboxDataType_t>(42), nboxSum, comm, &request),
            nboxInvalidArgument);
  EXPECT_EQ(LastError(), "nboxAllReduce: unknown datatype 42");
  EXPECT_EQ(nboxAllReduce(data, data, 4, nboxFloat32, static_cast<nboxRedOp_t>(9), comm, &request),
            nboxInvalidArgument);
  EXPECT_EQ(LastError(), "nboxAllReduce: unknown reduction op 9");
  EXPECT_EQ(nboxAllReduce(nullptr, data, 4, nboxFloat32, nboxSum, comm, &request),
            nboxInvalidArgument);
  EXPECT_EQ(LastError(), "nboxAllReduce: sendbuff is NULL");
  EXPECT_EQ(nboxAllReduce(data, data, 4, nboxFloat32, nboxSum, nullptr, &request),
            nboxInvalidArgument);
  EXPECT_EQ(LastError(), "nboxAllReduce: comm is NULL");
  EXPECT_EQ(nboxAllReduce(data, data, SIZE_MAX / 2, nboxFloat32, nboxSum, comm, &request),
            nboxInvalidArgument);
  EXPECT_EQ(nboxBroadcast(data, data, 4, nboxFloat32, 1, comm, &request), nboxInvalidArgument);
  EXPECT_EQ(LastError(), "nboxBroadcast: root 1 is not in 0..0");
  EXPECT_EQ(nboxSend(data, 4, nboxFloat32, 3, comm, &request), nboxInvalidArgument);
  EXPECT_EQ(LastError(), "nboxSend: peer 3 is not in 0..0");
  EXPECT_EQ(nboxRecv(data, 4, nboxFloat32, 0, comm, &request), nboxInvalidUsage);
  EXPECT_EQ(LastError(), "nboxRecv: peer 0 is this rank; copy the buffer instead");
  EXPECT_EQ(nboxGroupEnd(), nboxInvalidUsage);
  EXPECT_EQ(LastError(), "nboxGroupEnd without nboxGroupStart");
  EXPECT_EQ(nboxWait(nullptr), nboxInvalidArgument);
  // A zero-count call needs no buffers.
  EXPECT_EQ(nboxAllReduce(nullptr, nullptr, 0, nboxFloat32, nboxSum, comm, &request), nboxSuccess);
  EXPECT_EQ(nboxWait(request), nboxSuccess);
  EXPECT_STREQ(nboxGetErrorString(nboxRemoteError), "remote error (a peer failed or went away)");
  EXPECT_EQ(nboxCommDestroy(comm), nboxSuccess);
}

// Two ranks as two threads of this process: two communicators over the same loaded plugin.
TEST_F(HostApi, TwoCommunicatorsInOneProcess) {
  nboxUniqueId id;
  ASSERT_EQ(nboxGetUniqueId(&id), nboxSuccess);
  std::vector<std::vector<int64_t>> results(2);
  std::vector<nboxResult_t> status(2, nboxInternalError);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      nboxComm_t comm = nullptr;
      status[r] = nboxCommInitRank(&comm, 2, id, r);
      if (status[r] != nboxSuccess) return;
      std::vector<int64_t> data = {r + 1, 10 * (r + 1), -r};
      nboxRequest_t request = nullptr;
      status[r] = nboxAllReduce(data.data(), data.data(), 3, nboxInt64, nboxSum, comm, &request);
      if (status[r] == nboxSuccess) status[r] = nboxWait(request);
      results[r] = data;
      nboxCommDestroy(comm);
    });
  }
  for (auto& rank : ranks) rank.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(status[r], nboxSuccess) << r;
    EXPECT_EQ(results[r], (std::vector<int64_t>{3, 30, -1}));
  }
}

}  // namespace
