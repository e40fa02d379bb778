// The [realranks] and [debug] sections: values, defaults, and errors that name the file and
// line (or the --set) and what was expected.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "scenario_test_support.h"
#include "tools/cosim/scenario/realranks_values.h"

namespace nbox::scenario {
namespace {

using testing::LoadError;

const std::string kEmpty = "tests/scenario/fixtures/empty.ini";

// A scenario file with `text`, in a fresh temporary folder.
std::string WriteScenario(const std::string& name, const std::string& text) {
  const auto folder = std::filesystem::temp_directory_path() / "nbox-realranks-keys-test";
  std::filesystem::create_directories(folder);
  const std::string path = (folder / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(RealRanksKeys, DefaultsMeanASimulatedJob) {
  const Scenario s = LoadScenario(kEmpty);
  EXPECT_TRUE(s.realranks.ranks.empty());
  EXPECT_EQ(s.realranks.clock, RealRankClock::kVirtual);
  EXPECT_EQ(s.realranks.peers, RealRankPeers::kWorkload);
  EXPECT_EQ(s.realranks.payload, RealRankPayload::kZeros);
  EXPECT_EQ(s.realranks.launch, "");
  EXPECT_EQ(s.realranks.bridge, "unix");
  EXPECT_DOUBLE_EQ(s.realranks.max_lag_s, 100e-6);
  EXPECT_DOUBLE_EQ(s.realranks.realtime_heartbeat_s, 200e-6);
  EXPECT_DOUBLE_EQ(s.realranks.join_timeout_s, 60);
  EXPECT_DOUBLE_EQ(s.debug.slowdown_s, 0);
  EXPECT_EQ(s.settings.at("realranks.ranks"), "");
  EXPECT_EQ(s.settings.at("debug.slowdown"), "0s");
}

TEST(RealRanksKeys, EveryKeyReadsFromAFile) {
  const std::string path = WriteScenario("all.ini",
                                         "[job]\nworld_size = 8\n"
                                         "[realranks]\n"
                                         "ranks = 3, 0\n"
                                         "clock = realtime\n"
                                         "peers = mirror\n"
                                         "payload = self\n"
                                         "launch = bench --rank {rank} --iters 3\n"
                                         "bridge = tcp:127.0.0.1:0\n"
                                         "max_lag = 2ms\n"
                                         "realtime_heartbeat = 50us\n"
                                         "join_timeout = 30s\n"
                                         "[debug]\nslowdown = 20us\n");
  const Scenario s = LoadScenario(path);
  EXPECT_EQ(s.realranks.ranks, (std::vector<int>{0, 3}));  // sorted
  EXPECT_EQ(s.realranks.clock, RealRankClock::kRealtime);
  EXPECT_EQ(s.realranks.peers, RealRankPeers::kMirror);
  EXPECT_EQ(s.realranks.payload, RealRankPayload::kSelf);
  EXPECT_EQ(s.realranks.launch, "bench --rank {rank} --iters 3");
  EXPECT_EQ(s.realranks.bridge, "tcp:127.0.0.1:0");
  EXPECT_DOUBLE_EQ(s.realranks.max_lag_s, 2e-3);
  EXPECT_DOUBLE_EQ(s.realranks.realtime_heartbeat_s, 50e-6);
  EXPECT_DOUBLE_EQ(s.realranks.join_timeout_s, 30);
  EXPECT_DOUBLE_EQ(s.debug.slowdown_s, 20e-6);
  EXPECT_EQ(s.settings.at("realranks.ranks"), "0,3");
  // The settings text reads back to the same value (what --set accepts).
  EXPECT_EQ(
      LoadScenario(kEmpty, {"realranks.ranks=" + s.settings.at("realranks.ranks")}).realranks.ranks,
      s.realranks.ranks);
}

TEST(RealRanksKeys, RankListReader) {
  EXPECT_EQ(ReadRankList("", 7), std::vector<int>{});
  EXPECT_EQ(ReadRankList(" 5 ", 7), std::vector<int>{5});
  EXPECT_EQ(ReadRankList("7,0,2", 7), (std::vector<int>{0, 2, 7}));
  EXPECT_FALSE(ReadRankList("8", 7));    // above max
  EXPECT_FALSE(ReadRankList("1,1", 7));  // twice
  EXPECT_FALSE(ReadRankList("1,", 7));   // empty item
  EXPECT_FALSE(ReadRankList("-1", 7));   // not a whole number
  EXPECT_FALSE(ReadRankList("0;3", 7));  // wrong separator
  EXPECT_EQ(RankListText({0, 3, 12}), "0,3,12");
}

TEST(RealRanksKeys, BridgeEndpoints) {
  EXPECT_TRUE(IsBridgeEndpoint("unix"));
  EXPECT_TRUE(IsBridgeEndpoint("tcp:127.0.0.1:4100"));
  EXPECT_TRUE(IsBridgeEndpoint("tcp:node7:0"));
  EXPECT_TRUE(IsBridgeEndpoint("tcp:[::1]:65535"));
  EXPECT_FALSE(IsBridgeEndpoint("tcp:127.0.0.1"));  // no port
  EXPECT_FALSE(IsBridgeEndpoint("tcp::4100"));      // no host
  EXPECT_FALSE(IsBridgeEndpoint("tcp:host:65536"));
  EXPECT_FALSE(IsBridgeEndpoint("tcp:::1:4100"));  // IPv6 without brackets
  EXPECT_FALSE(IsBridgeEndpoint("unix:/tmp/x.sock"));
  EXPECT_FALSE(IsBridgeEndpoint("udp:host:1"));
}

TEST(RealRanksKeys, BadValuesNameFileLineKeyAndExpectation) {
  const std::string path = WriteScenario("bad.ini",
                                         "[realranks]\n"
                                         "ranks = 0,0\n"
                                         "clock = virtal\n"
                                         "bridge = tcp:localhost\n"
                                         "[debug]\n"
                                         "slowdown = fast\n");
  EXPECT_EQ(LoadError(path),
            path +
                ":2: [realranks] ranks = '0,0': expected a comma-separated list of distinct "
                "ranks from 0 to 65535, such as 0 or 0,3; empty = none\n" +
                path +
                ":3: [realranks] clock = 'virtal': expected one of virtual, realtime; did you "
                "mean 'virtual'?\n" +
                path +
                ":4: [realranks] bridge = 'tcp:localhost': expected unix (a private Unix "
                "socket) or tcp:HOST:PORT (port 0 = any free port)\n" +
                path +
                ":6: [debug] slowdown = 'fast': expected a duration from 0s to 1s, such as 1us "
                "or 2.5ms");
}

TEST(RealRanksKeys, UnknownKeyNamesTheLineAndTheNearestKey) {
  const std::string path = WriteScenario("typo.ini", "[realranks]\nrank = 0\n");
  EXPECT_EQ(LoadError(path), path + ":2: unknown key 'rank' in [realranks]; did you mean 'ranks'?");
}

TEST(RealRanksKeys, RanksMustExistInTheJob) {
  const std::string path = WriteScenario("outside.ini",
                                         "[job]\nworld_size = 4\n"
                                         "[realranks]\nranks = 1,4\n");
  EXPECT_EQ(LoadError(path), path +
                                 ": realranks.ranks = 1,4 (line 4) names rank 4, but "
                                 "job.world_size = 4 (line 2) has ranks 0 to 3");
  EXPECT_EQ(LoadError(path, {"job.world_size=5"}), "");
}

TEST(RealRanksKeys, LaunchAndSlowdownNeedRealRanks) {
  EXPECT_EQ(LoadError(kEmpty, {"realranks.launch=bench"}),
            kEmpty +
                ": realranks.launch = bench (--set) needs real ranks, but realranks.ranks =  "
                "(default)");
  EXPECT_EQ(LoadError(kEmpty, {"debug.slowdown=1us"}),
            kEmpty +
                ": debug.slowdown = 1us (--set) needs real ranks, but realranks.ranks =  "
                "(default)");
  EXPECT_EQ(LoadError(kEmpty, {"debug.slowdown=1us", "realranks.ranks=0"}), "");
}

}  // namespace
}  // namespace nbox::scenario
