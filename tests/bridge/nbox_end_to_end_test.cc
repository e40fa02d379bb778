// The whole client path end to end: W processes of the host runtime (host_worker) load the real
// libnccl-net-nbox.so with dlopen (NBOX_NET_PLUGIN) and run every collective through a separate
// server process built on the bridge server library (bridge_loopback_server, whose network is
// the LoopbackNetwork test double). Each worker checks its numbers against the serial
// reference of reference_values.h; this test checks that every rank passed, what the server
// saw, and the two failure paths: the server dies (every rank must fail within 1 s) and a
// rank dies (the server must name it).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/bridge/rank_launcher.h"

namespace nbox::host::testing {
namespace {

constexpr char kSecret[] = "end-to-end-secret-0123456789";

int64_t MonotonicNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

// bridge_loopback_server as a child process whose output lines this test reads.
class ServerProcess {
 public:
  explicit ServerProcess(int world) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(pipe_fds[1], 1);
      close(pipe_fds[0]);
      setenv("NBOX_SECRET", kSecret, 1);
      const std::string world_text = std::to_string(world);
      execl(NBOX_LOOPBACK_SERVER_PATH, NBOX_LOOPBACK_SERVER_PATH, world_text.c_str(), "60",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(pipe_fds[1]);
    out_ = fdopen(pipe_fds[0], "r");
    reader_ = std::thread([this] {
      char line[4096];
      while (out_ != nullptr && std::fgets(line, sizeof(line), out_) != nullptr) {
        std::lock_guard<std::mutex> lock(mutex_);
        lines_.emplace_back(line);
        if (!lines_.back().empty() && lines_.back().back() == '\n') lines_.back().pop_back();
      }
    });
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
    if (out_ != nullptr) fclose(out_);
  }

  // The line starting with `prefix` once it was printed (waits up to `timeout`), or "".
  std::string WaitFor(const std::string& prefix,
                      std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const std::string& line : lines_) {
          if (line.rfind(prefix, 0) == 0) return line;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return "";
  }
  int64_t KillNow() {
    const int64_t now = MonotonicNs();
    kill(pid_, SIGKILL);
    return now;
  }
  std::string Output() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string text;
    for (const std::string& line : lines_) text += line + "\n";
    return text;
  }
  std::string endpoint() {
    const std::string line = WaitFor("ENDPOINT ");
    return line.empty() ? "" : line.substr(9);
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  std::thread reader_;
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

LaunchOptions NboxOptions(ServerProcess& server) {
  LaunchOptions options;
  options.env = {"NBOX_BRIDGE=" + server.endpoint(), std::string("NBOX_SECRET=") + kSecret};
  options.deadline = std::chrono::seconds(40);
  return options;
}

void ExpectAllPassed(const std::vector<RankOutcome>& outcomes, ServerProcess& server) {
  for (const RankOutcome& outcome : outcomes) {
    if (outcome.exit_code != 0) {
      ADD_FAILURE() << Describe(outcomes) << "server:\n" << server.Output();
      return;
    }
  }
}

// Every rank joined and left with Goodbye (the runtime finalizes the plugin), nobody vanished.
void ExpectCleanSessions(ServerProcess& server, int world) {
  EXPECT_NE(server.WaitFor("DONE"), "") << server.Output();
  for (int r = 0; r < world; ++r) {
    EXPECT_NE(server.WaitFor("JOIN " + std::to_string(r), std::chrono::milliseconds(1)), "");
    EXPECT_NE(server.WaitFor("GOODBYE " + std::to_string(r), std::chrono::milliseconds(1)), "")
        << server.Output();
  }
  EXPECT_EQ(server.WaitFor("DISCONNECT", std::chrono::milliseconds(1)), "") << server.Output();
}

class NboxEndToEnd : public ::testing::TestWithParam<int> {};

TEST_P(NboxEndToEnd, EveryCollectiveMatchesTheSerialReference) {
  const int world = GetParam();
  ServerProcess server(world);
  ASSERT_NE(server.endpoint(), "") << server.Output();
  LaunchOptions options = NboxOptions(server);
  options.args = {"150000"};  // the large count (several 1 MiB chunks for 8-byte types)
  ExpectAllPassed(LaunchRanks("collectives", world, options), server);
  ExpectCleanSessions(server, world);
}

INSTANTIATE_TEST_SUITE_P(World, NboxEndToEnd, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return "W" + std::to_string(info.param); });

TEST(NboxEndToEndP2p, PointToPointInGroupsAndChainsOverChunks) {
  ServerProcess server(3);
  ASSERT_NE(server.endpoint(), "") << server.Output();
  LaunchOptions options = NboxOptions(server);
  options.env.push_back("NBOX_CHUNK_BYTES=64KiB");
  options.args = {"100001"};  // several chunks plus a remainder
  ExpectAllPassed(LaunchRanks("p2p", 3, options), server);
  ExpectCleanSessions(server, 3);
}

int64_t ValueAfter(const std::string& output, const std::string& key) {
  const size_t at = output.find(key + " ");
  if (at == std::string::npos) return -1;
  return std::atoll(output.c_str() + at + key.size() + 1);
}

// nbox-cosim dies in the middle of a loop of all-reduces: every rank's pending call must fail
// with an error (not hang) within 1 s, and later calls fail at once (host_worker checks). A
// rank learns it from its own broken connection (its error names nbox-cosim) or, when a peer
// that learnt it first has already exited, from the bootstrap root (its error names that
// peer): the two race. At least one rank always sees nbox-cosim go.
TEST(NboxEndToEndFailures, KilledServerFailsEveryRankWithinOneSecond) {
  constexpr int kWorld = 3;
  ServerProcess server(kWorld);
  ASSERT_NE(server.endpoint(), "") << server.Output();
  LaunchOptions options = NboxOptions(server);
  options.args = {"-1", "none"};  // "die" with no victim: loop until an error
  std::atomic<int64_t> killed_ns{0};
  std::thread killer([&] {
    for (int r = 0; r < kWorld; ++r) {
      if (server.WaitFor("JOIN " + std::to_string(r)).empty()) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // all-reduces under way
    killed_ns = server.KillNow();
  });
  const std::vector<RankOutcome> outcomes = LaunchRanks("die", kWorld, options);
  killer.join();
  ASSERT_GT(killed_ns.load(), 0) << server.Output() << Describe(outcomes);
  int naming_cosim = 0;
  for (int r = 0; r < kWorld; ++r) {
    ASSERT_EQ(outcomes[r].exit_code, 3) << Describe(outcomes);
    const int64_t detected_ns = ValueAfter(outcomes[r].output, "DETECTED_NS");
    ASSERT_GT(detected_ns, 0) << Describe(outcomes);
    const double seconds = (detected_ns - killed_ns.load()) / 1e9;
    EXPECT_LT(seconds, 1.0) << "rank " << r << "\n" << Describe(outcomes);
    const bool names_cosim = outcomes[r].output.find("nbox-cosim") != std::string::npos;
    const bool names_peer =
        outcomes[r].output.find("left without destroying its communicator") != std::string::npos;
    EXPECT_TRUE(names_cosim || names_peer) << Describe(outcomes);
    naming_cosim += names_cosim ? 1 : 0;
    std::printf("rank %d failed %.1f ms after the server was killed\n", r, seconds * 1e3);
  }
  EXPECT_GE(naming_cosim, 1) << Describe(outcomes);
}

// A rank is killed: the server names it (its session ended without Goodbye), while the others
// say Goodbye after the runtime reported the death to them.
TEST(NboxEndToEndFailures, KilledRankIsNamedByTheServer) {
  constexpr int kWorld = 3;
  ServerProcess server(kWorld);
  ASSERT_NE(server.endpoint(), "") << server.Output();
  LaunchOptions options = NboxOptions(server);
  options.args = {"1", "kill"};
  const std::vector<RankOutcome> outcomes = LaunchRanks("die", kWorld, options);
  for (int r : {0, 2}) EXPECT_EQ(outcomes[r].exit_code, 3) << Describe(outcomes);
  // "closed without Goodbye" as a rule; "broke: Connection reset by peer" when the kernel
  // resets a socket that still held unread bytes, "closed in the middle of a frame" when it
  // died while writing one.
  const std::string disconnect = server.WaitFor("DISCONNECT ");
  EXPECT_EQ(disconnect.rfind("DISCONNECT 1 the connection ", 0), 0u) << server.Output();
  EXPECT_NE(server.WaitFor("DONE"), "") << server.Output();
}

}  // namespace
}  // namespace nbox::host::testing
