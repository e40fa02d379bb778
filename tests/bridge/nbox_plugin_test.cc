// libnccl-net-nbox.so loaded with dlopen and driven through its ncclNet tables only, against
// the real bridge server library running the LoopbackNetwork test double on a thread. One
// process is rank 0 of a one-rank job that connects to its own listens: every message still
// goes plugin -> server -> plugin. Expected payloads come from PatternByte, sizes and tags from
// what the test posted, times from the delay the test double was given.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bridge/include/nbox_net_ext.h"
#include "bridge/nccl/net.h"
#include "tests/bridge/byte_pattern.h"
#include "tests/bridge/exported_symbols.h"
#include "tests/bridge/plugin_loader.h"
#include "tests/bridge/server_thread.h"
#include "tests/bridge/warning_capture.h"

namespace nbox::bridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

std::string PluginPath() {
  return NBOX_PLUGIN_PATH;
}

class NboxPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(library_.loaded()) << library_.error();
    net_ = library_.Symbol<ncclNet_v11_t>("ncclNetPlugin_v11");
    ext_ = library_.Symbol<nboxNetExt_v1_t>(NBOX_NET_EXT_SYMBOL);
    ASSERT_NE(net_, nullptr);
    ASSERT_NE(ext_, nullptr);
    setenv("NBOX_SECRET", kTestSecret, 1);
    setenv("NBOX_RANK", "0", 1);
    setenv("NBOX_WORLD_SIZE", "1", 1);
    unsetenv("NBOX_CLOCK");
    unsetenv("NBOX_JOB_ID");
  }
  void TearDown() override {
    for (CommPair& pair : pairs_) ClosePair(net_, &pair);
    if (ctx_ != nullptr) {
      EXPECT_EQ(net_->finalize(ctx_), ncclSuccess);
    }
  }

  // Starts a server and joins it.
  void Join(uint64_t delay_ns = 0, const char* clock = "virtual",
            server::ServerOptions options = server::ServerOptions()) {
    server_ = std::make_unique<ServerThread>(1, delay_ns, std::move(options));
    setenv("NBOX_BRIDGE", server_->endpoint().c_str(), 1);
    setenv("NBOX_CLOCK", clock, 1);
    ASSERT_EQ(net_->init(&ctx_, 1, nullptr, CaptureLog, nullptr), ncclSuccess) << LastWarning();
  }

  CommPair& Pair() {
    pairs_.emplace_back();
    EXPECT_TRUE(ConnectPair(net_, ctx_, 0, &pairs_.back())) << LastWarning();
    return pairs_.back();
  }

  // Posts a receive into `recv`, then a send of `message`, on `pair`, both with tag 0; the
  // requests go to *recv_request and *send_request. Call with ASSERT_NO_FATAL_FAILURE.
  void PostReceiveThenSend(const CommPair& pair, std::vector<uint8_t>& message,
                           std::vector<uint8_t>& recv, void** recv_request, void** send_request) {
    void* data = recv.data();
    size_t capacity = recv.size();
    int tag = 0;
    ASSERT_EQ(
        net_->irecv(pair.recv_comm, 1, &data, &capacity, &tag, nullptr, nullptr, recv_request),
        ncclSuccess);
    ASSERT_EQ(net_->isend(pair.send_comm, message.data(), message.size(), 0, nullptr, nullptr,
                          send_request),
              ncclSuccess);
  }

  // PostReceiveThenSend, then both waited for. Call with ASSERT_NO_FATAL_FAILURE.
  void SendAndReceive(const CommPair& pair, std::vector<uint8_t>& message,
                      std::vector<uint8_t>& recv) {
    void* recv_request = nullptr;
    void* send_request = nullptr;
    ASSERT_NO_FATAL_FAILURE(PostReceiveThenSend(pair, message, recv, &recv_request, &send_request));
    ASSERT_EQ(Wait(recv_request, nullptr), ncclSuccess);
    ASSERT_EQ(Wait(send_request, nullptr), ncclSuccess);
  }

  // Waits once more with nothing new (the rank blocks, so the plugin sends a blocked promise
  // unless its last one already was), then returns the last blocked promise the server saw.
  std::optional<ObservedPromise> BlockAgainAndTakeTheLastBlockedPromise() {
    ext_->waitEvents(ext_->eventCount(), 20000);
    std::this_thread::sleep_for(milliseconds(50));
    std::optional<ObservedPromise> last;
    for (const ObservedPromise& promise : server_->network().promises()) {
      if (promise.blocked) last = promise;
    }
    return last;
  }

  // Test until done, sleeping in the extension's wait between tries (as the host runtime).
  ncclResult_t Wait(void* request, int* sizes, milliseconds timeout = milliseconds(10000)) {
    const auto deadline = steady_clock::now() + timeout;
    while (true) {
      const uint64_t seen = ext_->eventCount();
      int done = 0;
      const ncclResult_t result = net_->test(request, &done, sizes);
      if (result != ncclSuccess || done) return result;
      if (steady_clock::now() > deadline) return ncclInternalError;
      ext_->waitEvents(seen, 100000);
    }
  }

  PluginLibrary library_{PluginPath()};
  ncclNet_v11_t* net_ = nullptr;
  nboxNetExt_v1_t* ext_ = nullptr;
  std::unique_ptr<ServerThread> server_;
  void* ctx_ = nullptr;
  std::deque<CommPair> pairs_;  // stable addresses: tests keep pointers to pairs
};

TEST_F(NboxPlugin, EveryTableIsExportedWithItsName) {
  for (const char* symbol :
       {"ncclNetPlugin_v11", "ncclNetPlugin_v10", "ncclNetPlugin_v9", "ncclNetPlugin_v8"}) {
    ASSERT_NE(library_.Symbol<void>(symbol), nullptr) << symbol;
  }
  EXPECT_STREQ(net_->name, "nbox");
  EXPECT_STREQ(library_.Symbol<ncclNet_v8_t>("ncclNetPlugin_v8")->name, "nbox");
  EXPECT_NE(net_->finalize, nullptr);
}

// What NCCL's dlsym needs and nothing else, as data: the four net tables, the wait extension
// and the profiler.
TEST(NboxPluginExports, NmListsExactlyTheDataTables) {
  EXPECT_TRUE(ExportsExactlyTheseData(
      PluginPath(), {"ncclNetPlugin_v11", "ncclNetPlugin_v10", "ncclNetPlugin_v9",
                     "ncclNetPlugin_v8", "nboxNetExt_v1", "nboxNetExt_v2", "ncclProfiler_v5"}));
}

TEST_F(NboxPlugin, InitWithoutBridgeSettingFailsNamingIt) {
  unsetenv("NBOX_BRIDGE");
  void* ctx = nullptr;
  EXPECT_EQ(net_->init(&ctx, 1, nullptr, CaptureLog, nullptr), ncclSystemError);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(LastWarning().find("NBOX_BRIDGE is not set"), std::string::npos) << LastWarning();
}

TEST_F(NboxPlugin, InitWithAnotherSecretFailsBecauseTheServerCannotProveIt) {
  server_ = std::make_unique<ServerThread>(1);
  setenv("NBOX_BRIDGE", server_->endpoint().c_str(), 1);
  setenv("NBOX_SECRET", "a-different-secret-of-enough-length", 1);
  void* ctx = nullptr;
  EXPECT_EQ(net_->init(&ctx, 1, nullptr, CaptureLog, nullptr), ncclSystemError);
  EXPECT_NE(LastWarning().find("could not prove it knows NBOX_SECRET"), std::string::npos)
      << LastWarning();
}

TEST_F(NboxPlugin, InitWithARankOutsideTheJobIsRefusedByTheServer) {
  server_ = std::make_unique<ServerThread>(1);
  setenv("NBOX_BRIDGE", server_->endpoint().c_str(), 1);
  setenv("NBOX_WORLD_SIZE", "2", 1);  // the server's job has one rank
  void* ctx = nullptr;
  EXPECT_EQ(net_->init(&ctx, 1, nullptr, CaptureLog, nullptr), ncclSystemError);
  EXPECT_NE(LastWarning().find("world size 2 is not this job's 1"), std::string::npos)
      << LastWarning();
}

TEST_F(NboxPlugin, PropertiesDescribeOneHostMemoryDevice) {
  Join();
  int ndev = 0;
  ASSERT_EQ(net_->devices(&ndev), ncclSuccess);
  EXPECT_EQ(ndev, 1);
  ncclNetProperties_v11_t props;
  ASSERT_EQ(net_->getProperties(0, &props), ncclSuccess);
  EXPECT_EQ(props.ptrSupport, NCCL_PTR_HOST);
  EXPECT_EQ(props.speed, 100000);  // ServerOptions' default NIC speed, sent in Welcome
  EXPECT_EQ(props.maxRecvs, 8);
  EXPECT_EQ(net_->getProperties(1, &props), ncclInvalidArgument);
}

TEST_F(NboxPlugin, MessagesOfManySizesArriveByteForByte) {
  Join();
  CommPair& pair = Pair();
  // 0 B, 1 B, one Data frame exactly, one byte more, several frames plus a remainder.
  const std::vector<size_t> sizes = {0, 1, 1 << 20, (1 << 20) + 1, 3 * (1 << 20) + 12345};
  for (size_t m = 0; m < sizes.size(); ++m) {
    std::vector<uint8_t> send = Pattern(m, sizes[m]);
    std::vector<uint8_t> recv(sizes[m] + 16, 0xEE);  // larger than the message
    void* data = recv.data();
    size_t capacity = recv.size();
    int tag = static_cast<int>(m);
    void* recv_request = nullptr;
    void* send_request = nullptr;
    // Receive posted first for even m, after the send for odd m.
    if (m % 2 == 0) {
      ASSERT_EQ(
          net_->irecv(pair.recv_comm, 1, &data, &capacity, &tag, nullptr, nullptr, &recv_request),
          ncclSuccess);
    }
    ASSERT_EQ(
        net_->isend(pair.send_comm, send.data(), send.size(), tag, nullptr, nullptr, &send_request),
        ncclSuccess);
    if (m % 2 == 1) {
      ASSERT_EQ(
          net_->irecv(pair.recv_comm, 1, &data, &capacity, &tag, nullptr, nullptr, &recv_request),
          ncclSuccess);
    }
    ASSERT_NE(recv_request, nullptr);
    ASSERT_NE(send_request, nullptr);
    int send_size = -1;
    int recv_size = -1;
    ASSERT_EQ(Wait(send_request, &send_size), ncclSuccess) << LastWarning();
    ASSERT_EQ(Wait(recv_request, &recv_size), ncclSuccess) << LastWarning();
    EXPECT_EQ(send_size, static_cast<int>(sizes[m]));
    EXPECT_EQ(recv_size, static_cast<int>(sizes[m]));
    EXPECT_EQ(std::memcmp(recv.data(), send.data(), sizes[m]), 0) << "message " << m;
    for (size_t i = sizes[m]; i < recv.size(); ++i) {
      ASSERT_EQ(recv[i], 0xEE) << "byte " << i << " past message " << m << " was written";
    }
  }
}

TEST_F(NboxPlugin, AGroupedReceivePlacesEachMessageByItsTag) {
  Join();
  CommPair& pair = Pair();
  std::vector<uint8_t> a(100, 0), b(300, 0);
  void* data[2] = {a.data(), b.data()};
  size_t capacity[2] = {a.size(), b.size()};
  int tags[2] = {5, 7};
  void* recv_request = nullptr;
  ASSERT_EQ(net_->irecv(pair.recv_comm, 2, data, capacity, tags, nullptr, nullptr, &recv_request),
            ncclSuccess);
  // Tag 7 first: it must land in the second buffer although it arrives first.
  const std::vector<uint8_t> seven = Pattern(7, 250), five = Pattern(5, 60);
  void* s1 = nullptr;
  void* s2 = nullptr;
  ASSERT_EQ(net_->isend(pair.send_comm, const_cast<uint8_t*>(seven.data()), seven.size(), 7,
                        nullptr, nullptr, &s1),
            ncclSuccess);
  ASSERT_EQ(net_->isend(pair.send_comm, const_cast<uint8_t*>(five.data()), five.size(), 5, nullptr,
                        nullptr, &s2),
            ncclSuccess);
  int sizes[2] = {-1, -1};
  ASSERT_EQ(Wait(recv_request, sizes), ncclSuccess) << LastWarning();
  EXPECT_EQ(sizes[0], 60);
  EXPECT_EQ(sizes[1], 250);
  EXPECT_EQ(std::memcmp(a.data(), five.data(), five.size()), 0);
  EXPECT_EQ(std::memcmp(b.data(), seven.data(), seven.size()), 0);
  ASSERT_EQ(Wait(s1, nullptr), ncclSuccess);
  ASSERT_EQ(Wait(s2, nullptr), ncclSuccess);
}

TEST_F(NboxPlugin, AMessageLargerThanTheReceiveFailsBothRequests) {
  Join();
  CommPair& pair = Pair();
  std::vector<uint8_t> small(10), big = Pattern(1, 20);
  void* recv_request = nullptr;
  void* send_request = nullptr;
  ASSERT_NO_FATAL_FAILURE(PostReceiveThenSend(pair, big, small, &recv_request, &send_request));
  EXPECT_EQ(Wait(recv_request, nullptr), ncclInvalidUsage);
  EXPECT_EQ(Wait(send_request, nullptr), ncclInvalidUsage);
  EXPECT_NE(LastWarning().find("larger than the 10-byte receive buffer"), std::string::npos)
      << LastWarning();
}

TEST_F(NboxPlugin, AHandleWithAWrongNonceIsRefused) {
  Join();
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* listen_comm = nullptr;
  ASSERT_EQ(net_->listen(ctx_, 0, handle, &listen_comm), ncclSuccess);
  handle[24] ^= 0x5A;  // the nonce (nbox_comms.h)
  void* send_comm = nullptr;
  ncclNetDeviceHandle_v11_t* device = nullptr;
  ncclResult_t result = ncclSuccess;
  const auto deadline = steady_clock::now() + milliseconds(5000);
  while (result == ncclSuccess && send_comm == nullptr && steady_clock::now() < deadline) {
    result = net_->connect(ctx_, 0, handle, &send_comm, &device);
  }
  EXPECT_EQ(result, ncclRemoteError);
  EXPECT_EQ(send_comm, nullptr);
  EXPECT_NE(LastWarning().find("wrong nonce"), std::string::npos) << LastWarning();
  net_->closeListen(listen_comm);
}

// Realtime clock: a message the network delivers 300 ms after it was posted must not show up
// in test() — nor in the receive buffer (LL/LL128 read it directly) — before 300 ms of wall
// time have passed.
TEST_F(NboxPlugin, RealtimeCompletionsAndBytesWaitForTheDeliveryTime) {
  constexpr uint64_t kDelayNs = 300'000'000;
  Join(kDelayNs, "realtime");
  CommPair& pair = Pair();
  const std::vector<uint8_t> message = Pattern(9, 5000);
  std::vector<uint8_t> recv(message.size(), 0xEE);
  void* data = recv.data();
  size_t capacity = recv.size();
  int tag = 1;
  void* recv_request = nullptr;
  void* send_request = nullptr;
  ASSERT_EQ(net_->irecv(pair.recv_comm, 1, &data, &capacity, &tag, nullptr, nullptr, &recv_request),
            ncclSuccess);
  const auto posted = steady_clock::now();
  ASSERT_EQ(net_->isend(pair.send_comm, const_cast<uint8_t*>(message.data()), message.size(), 1,
                        nullptr, nullptr, &send_request),
            ncclSuccess);
  bool recv_done = false, send_done = false;
  double recv_ms = 0, send_ms = 0;
  while (!(recv_done && send_done)) {
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(steady_clock::now() - posted).count();
    ASSERT_LT(elapsed_ms, 3000) << "no completion within 3 s";
    int done = 0;
    if (!recv_done) {
      ASSERT_EQ(net_->test(recv_request, &done, nullptr), ncclSuccess);
      if (done) {
        recv_done = true;
        recv_ms = elapsed_ms;
      } else if (recv != std::vector<uint8_t>(recv.size(), 0xEE)) {
        // The bytes may land before test() reports them, as a NIC's do, but not before the
        // delivery time: the clock read after the buffer was, so the bytes were there by then.
        const double seen_ms =
            std::chrono::duration<double, std::milli>(steady_clock::now() - posted).count();
        ASSERT_GE(seen_ms, 290.0) << "receive buffer written early";
      }
    }
    if (!send_done) {
      ASSERT_EQ(net_->test(send_request, &done, nullptr), ncclSuccess);
      if (done) {
        send_done = true;
        send_ms = elapsed_ms;
      }
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  EXPECT_GE(recv_ms, 290.0);
  EXPECT_GE(send_ms, 290.0);
  EXPECT_LT(recv_ms, 1500.0);
  EXPECT_EQ(recv, message);
}

// Virtual clock: the same kind of delayed delivery (5 s of virtual time) completes at once in
// wall time when the rank blocks in the extension's wait, and the rank's clock has jumped to
// the delivery time: its next post carries at least that time.
TEST_F(NboxPlugin, VirtualClockJumpsToTheDeliveryWhileTheRankWaits) {
  constexpr uint64_t kDelayNs = 5'000'000'000;
  Join(kDelayNs, "virtual");
  CommPair& pair = Pair();
  std::vector<uint8_t> message = Pattern(3, 100), recv(100, 0);
  void* recv_request = nullptr;
  void* send_request = nullptr;
  ASSERT_NO_FATAL_FAILURE(PostReceiveThenSend(pair, message, recv, &recv_request, &send_request));
  const auto start = steady_clock::now();
  ASSERT_EQ(Wait(recv_request, nullptr), ncclSuccess);
  ASSERT_EQ(Wait(send_request, nullptr), ncclSuccess);
  EXPECT_LT(steady_clock::now() - start, milliseconds(2000));
  EXPECT_EQ(recv, message);

  void* next = nullptr;
  ASSERT_EQ(net_->isend(pair.send_comm, message.data(), 1, 0, nullptr, nullptr, &next),
            ncclSuccess);
  const auto deadline = steady_clock::now() + milliseconds(2000);
  std::vector<server::Post> posts;
  while ((posts = server_->network().posts()).size() < 3 && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_EQ(posts.size(), 3u);
  EXPECT_LT(posts[0].vtime, kDelayNs);
  EXPECT_LT(posts[1].vtime, kDelayNs);
  EXPECT_GE(posts[2].vtime, posts[1].vtime + kDelayNs);
  // It told the server it was blocked before the server produced the delivery.
  bool blocked_promise = false;
  for (const ObservedPromise& promise : server_->network().promises()) {
    blocked_promise = blocked_promise || (promise.blocked && promise.vtime < kDelayNs);
  }
  EXPECT_TRUE(blocked_promise);
}

// Every Promise counts the Completes the plugin received: a blocked promise made after a send
// and a receive completed counts both, so the server finds it saw every completion (with no
// count, or a wrong one, it would not).
TEST_F(NboxPlugin, ABlockedPromiseCountsTheCompletionsReceived) {
  Join(0, "virtual");
  CommPair& pair = Pair();
  std::vector<uint8_t> message = Pattern(5, 64), recv(64, 0);
  ASSERT_NO_FATAL_FAILURE(SendAndReceive(pair, message, recv));
  // Block once more: both Completes are in, and receiving them was news, so the plugin sends
  // a blocked promise now (unless its last one already came after them).
  const std::optional<ObservedPromise> last_blocked = BlockAgainAndTakeTheLastBlockedPromise();
  ASSERT_TRUE(last_blocked.has_value());
  EXPECT_TRUE(last_blocked->saw_every_wakeup);
}

// A connection is news for the thread waiting on it: Connected and Incoming wake waitEvents at
// once (the host runtime's connecting waits would otherwise run out their slices, and a blocked
// promise made meanwhile would claim a wait on the simulator), and the next blocked promise
// counts them (the server knows the rank saw them).
TEST_F(NboxPlugin, AConnectionWakesTheWaiterAndCountsInTheNextPromise) {
  Join(0, "virtual");
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  CommPair& pair = pairs_.emplace_back();
  ASSERT_EQ(net_->listen(ctx_, 0, handle, &pair.listen_comm), ncclSuccess);
  const uint64_t seen = ext_->eventCount();
  ASSERT_EQ(net_->connect(ctx_, 0, handle, &pair.send_comm, nullptr), ncclSuccess);
  ASSERT_EQ(pair.send_comm, nullptr);  // Connected has not come yet
  const auto start = steady_clock::now();
  while (ext_->eventCount() < seen + 2 && steady_clock::now() - start < milliseconds(5000)) {
    ext_->waitEvents(ext_->eventCount(), 5000000);  // 5 s: only an event ends it early
  }
  EXPECT_LT(steady_clock::now() - start, milliseconds(2000));
  EXPECT_EQ(ext_->eventCount(), seen + 2);  // Connected and Incoming
  ASSERT_EQ(net_->connect(ctx_, 0, handle, &pair.send_comm, nullptr), ncclSuccess);
  ASSERT_EQ(net_->accept(pair.listen_comm, &pair.recv_comm, nullptr), ncclSuccess);
  EXPECT_NE(pair.send_comm, nullptr);
  EXPECT_NE(pair.recv_comm, nullptr);
  // Having seen both, the rank waits again: that blocked promise counts them.
  const std::optional<ObservedPromise> last_blocked = BlockAgainAndTakeTheLastBlockedPromise();
  ASSERT_TRUE(last_blocked.has_value());
  EXPECT_TRUE(last_blocked->saw_every_wakeup);
}

// A connection made at a virtual time ahead of the rank's clock (a peer connected later in
// virtual time, while the simulator ran on) is not the rank's to use before then: a virtual
// clock that stands still waiting for it moves on to that time, a realtime one waits for the
// wall clock to get there; either way the first post on it is stamped no earlier.
TEST_F(NboxPlugin, AConnectionIsUsableFromTheSimulatorsClockWhenItWasMade) {
  for (const char* clock : {"virtual", "realtime"}) {
    SCOPED_TRACE(clock);
    // Far ahead for the virtual clock (which stands still), 300 ms of wall for the realtime one.
    const uint64_t made_at = std::string(clock) == "virtual" ? 5'000'000'000 : 300'000'000;
    server::ServerOptions options;
    options.simulator_vtime = [made_at] { return made_at; };
    Join(0, clock, options);
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    CommPair& pair = pairs_.emplace_back();
    ASSERT_EQ(net_->listen(ctx_, 0, handle, &pair.listen_comm), ncclSuccess);
    const auto deadline = steady_clock::now() + milliseconds(3000);
    while ((pair.send_comm == nullptr || pair.recv_comm == nullptr) &&
           steady_clock::now() < deadline) {
      const uint64_t seen = ext_->eventCount();
      if (pair.send_comm == nullptr) {
        ASSERT_EQ(net_->connect(ctx_, 0, handle, &pair.send_comm, nullptr), ncclSuccess);
      }
      if (pair.recv_comm == nullptr) {
        ASSERT_EQ(net_->accept(pair.listen_comm, &pair.recv_comm, nullptr), ncclSuccess);
      }
      if (pair.send_comm == nullptr || pair.recv_comm == nullptr) ext_->waitEvents(seen, 20000);
    }
    ASSERT_NE(pair.send_comm, nullptr);
    ASSERT_NE(pair.recv_comm, nullptr);
    std::vector<uint8_t> message = Pattern(4, 8), recv(8, 0);
    ASSERT_NO_FATAL_FAILURE(SendAndReceive(pair, message, recv));
    const std::vector<server::Post> posts = server_->network().posts();
    ASSERT_EQ(posts.size(), 2u);
    for (const server::Post& post : posts) EXPECT_GE(post.vtime, made_at);
    ClosePair(net_, &pair);
    pairs_.clear();
    ASSERT_EQ(net_->finalize(ctx_), ncclSuccess);
    ctx_ = nullptr;
  }
}

// A connection made ahead of the rank's clock is held until the clock gets there. A running
// virtual clock passes that time some microseconds before the I/O thread wakes to release it
// (timer slack), and a thread that begins to wait in that moment must not promise blocked: the
// held connection is news its waiter acts on (it posts) as soon as it is released, and a
// blocked promise would let the simulator run past that post (seen as "broke the clock
// protocol" with two real PyTorch ranks on the analytical model, about once in 200 runs).
TEST_F(NboxPlugin, NoBlockedPromiseWhileAConnectionThatIsDueIsHeld) {
  const auto* ext2 = library_.Symbol<nboxNetExt_v2_t>(NBOX_NET_EXT_V2_SYMBOL);
  ASSERT_NE(ext2, nullptr);
  std::atomic<uint64_t> made_at{0};
  server::ServerOptions options;
  options.simulator_vtime = [&made_at] { return made_at.load(); };
  Join(0, "virtual", options);
  uint64_t now = 0;
  ASSERT_EQ(ext2->virtualTimeNs(ctx_, &now), ncclSuccess);
  made_at = now + 20'000'000;  // 20 ms of the running clock ahead
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  CommPair& pair = pairs_.emplace_back();
  ASSERT_EQ(net_->listen(ctx_, 0, handle, &pair.listen_comm), ncclSuccess);
  const uint64_t seen = ext_->eventCount();
  ASSERT_EQ(net_->connect(ctx_, 0, handle, &pair.send_comm, nullptr), ncclSuccess);
  // Connected and Incoming arrive and are held. No waitEvents meanwhile: a wait would stop
  // the clock and move it straight to the connection.
  const auto deadline = steady_clock::now() + milliseconds(3000);
  while (ext_->eventCount() < seen + 2 && steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(ext_->eventCount(), seen + 2);
  // The clock runs on to the connection's time; the thread begins to wait the moment it is
  // there, which is almost always before the I/O thread has released the connection.
  do {
    ASSERT_EQ(ext2->virtualTimeNs(ctx_, &now), ncclSuccess);
  } while (now < made_at && steady_clock::now() < deadline);
  ASSERT_GE(now, made_at.load());
  // Waits only while the connection is still held: its release is a third event, and a thread
  // that has seen that has news to act on and must not wait.
  ext_->waitEvents(seen + 2, 100000);
  while ((pair.send_comm == nullptr || pair.recv_comm == nullptr) &&
         steady_clock::now() < deadline) {
    const uint64_t before = ext_->eventCount();
    if (pair.send_comm == nullptr) {
      ASSERT_EQ(net_->connect(ctx_, 0, handle, &pair.send_comm, nullptr), ncclSuccess);
    }
    if (pair.recv_comm == nullptr) {
      ASSERT_EQ(net_->accept(pair.listen_comm, &pair.recv_comm, nullptr), ncclSuccess);
    }
    if (pair.send_comm == nullptr || pair.recv_comm == nullptr) ext_->waitEvents(before, 20000);
  }
  ASSERT_NE(pair.send_comm, nullptr);
  ASSERT_NE(pair.recv_comm, nullptr);
  std::this_thread::sleep_for(milliseconds(50));  // frames sent before now reach the server
  for (const ObservedPromise& promise : server_->network().promises()) {
    EXPECT_FALSE(promise.blocked && promise.vtime >= made_at.load())
        << "a blocked promise at " << promise.vtime << " ns, with the connection made at "
        << made_at.load() << " ns held but due";
  }
}

// A simulator that hangs (sends nothing, not even heartbeats) is given up on after
// max(NBOX_BRIDGE_TIMEOUT_MS, 4 heartbeats of 250 ms) = 1 s: pending requests fail, and so do
// later calls.
TEST_F(NboxPlugin, AHungServerFailsPendingAndLaterCalls) {
  setenv("NBOX_BRIDGE_TIMEOUT_MS", "300", 1);
  Join();
  unsetenv("NBOX_BRIDGE_TIMEOUT_MS");
  CommPair& pair = Pair();
  std::vector<uint8_t> recv(10);
  void* data = recv.data();
  size_t capacity = recv.size();
  int tag = 0;
  void* request = nullptr;
  ASSERT_EQ(net_->irecv(pair.recv_comm, 1, &data, &capacity, &tag, nullptr, nullptr, &request),
            ncclSuccess);
  server_->Pause();
  const auto paused = steady_clock::now();
  EXPECT_EQ(Wait(request, nullptr, milliseconds(5000)), ncclRemoteError);
  const auto waited = steady_clock::now() - paused;
  EXPECT_GE(waited, milliseconds(700));
  EXPECT_LT(waited, milliseconds(2500));
  EXPECT_NE(LastWarning().find("no frame from nbox-cosim"), std::string::npos) << LastWarning();
  void* later = nullptr;
  EXPECT_EQ(net_->isend(pair.send_comm, recv.data(), 1, 0, nullptr, nullptr, &later),
            ncclRemoteError);
  EXPECT_EQ(later, nullptr);
}

TEST_F(NboxPlugin, FourThreadsExchangeConcurrently) {
  Join();
  constexpr int kThreads = 4;
  constexpr int kMessages = 60;
  std::vector<CommPair*> pairs;
  for (int t = 0; t < kThreads; ++t) pairs.push_back(&Pair());
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int m = 0; m < kMessages && failures[t].empty(); ++m) {
        const uint64_t seed = static_cast<uint64_t>(t) * 1000 + m;
        const size_t size = 1 + (seed * 7919) % 70000;
        std::vector<uint8_t> send = Pattern(seed, size), recv(size, 0);
        void* data = recv.data();
        size_t capacity = size;
        int tag = m;
        void* r = nullptr;
        void* s = nullptr;
        if (net_->irecv(pairs[t]->recv_comm, 1, &data, &capacity, &tag, nullptr, nullptr, &r) !=
                ncclSuccess ||
            net_->isend(pairs[t]->send_comm, send.data(), size, m, nullptr, nullptr, &s) !=
                ncclSuccess ||
            r == nullptr || s == nullptr) {
          failures[t] = "post failed";
          break;
        }
        // The other thread's requests are tested from here too: test() must not care.
        if (WaitRequest(net_, s, nullptr) != ncclSuccess ||
            WaitRequest(net_, r, nullptr) != ncclSuccess) {
          failures[t] = "request failed";
        } else if (recv != send) {
          failures[t] = "message " + std::to_string(m) + " differs";
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST_F(NboxPlugin, FinalizeSaysGoodbyeAndANewInitRejoins) {
  Join();
  ASSERT_EQ(net_->finalize(ctx_), ncclSuccess);
  ctx_ = nullptr;
  const auto deadline = steady_clock::now() + milliseconds(2000);
  while (server_->network().left() < 1 && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_EQ(net_->init(&ctx_, 2, nullptr, CaptureLog, nullptr), ncclSuccess) << LastWarning();
  CommPair& pair = Pair();
  std::vector<uint8_t> message = Pattern(4, 10), recv(10, 0);
  void* r = nullptr;
  void* s = nullptr;
  ASSERT_NO_FATAL_FAILURE(PostReceiveThenSend(pair, message, recv, &r, &s));
  ASSERT_EQ(Wait(r, nullptr), ncclSuccess);
  EXPECT_EQ(recv, message);
  const std::vector<std::string> events = server_->network().events();
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[0], "JOIN 0");
  EXPECT_EQ(events[1], "GOODBYE 0");
  EXPECT_EQ(events[2], "JOIN 0");
}

// v10, v9 and v8 share the v11 implementation; each moves a message through the same server.
// (Their init keeps the session for the rest of the process: this test comes last.)
TEST_F(NboxPlugin, OlderTablesMoveMessagesToo) {
  server_ = std::make_unique<ServerThread>(1);
  setenv("NBOX_BRIDGE", server_->endpoint().c_str(), 1);
  auto* v10 = library_.Symbol<ncclNet_v10_t>("ncclNetPlugin_v10");
  auto* v9 = library_.Symbol<ncclNet_v9_t>("ncclNetPlugin_v9");
  auto* v8 = library_.Symbol<ncclNet_v8_t>("ncclNetPlugin_v8");
  ASSERT_EQ(v10->init(CaptureLog, nullptr), ncclSuccess) << LastWarning();
  ASSERT_EQ(v9->init(CaptureLog), ncclSuccess);
  ASSERT_EQ(v8->init(CaptureLog), ncclSuccess);
  for (int version : {10, 9, 8}) {
    SCOPED_TRACE("v" + std::to_string(version));
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void* listen = nullptr;
    void* send = nullptr;
    void* recv = nullptr;
    const auto listen_fn = version == 10 ? v10->listen : version == 9 ? v9->listen : v8->listen;
    ASSERT_EQ(listen_fn(0, handle, &listen), ncclSuccess);
    const auto deadline = steady_clock::now() + milliseconds(5000);
    while ((send == nullptr || recv == nullptr) && steady_clock::now() < deadline) {
      if (send == nullptr) {
        ncclResult_t result;
        if (version == 10) {
          result = v10->connect(0, nullptr, handle, &send, nullptr);
        } else if (version == 9) {
          result = v9->connect(0, handle, &send, nullptr);
        } else {
          result = v8->connect(0, handle, &send, nullptr);
        }
        ASSERT_EQ(result, ncclSuccess);
      }
      if (recv == nullptr) {
        ASSERT_EQ(v8->accept(listen, &recv, nullptr), ncclSuccess);
      }
    }
    ASSERT_NE(send, nullptr);
    ASSERT_NE(recv, nullptr);
    std::vector<uint8_t> message = Pattern(version, 777), got(800, 0);
    void* data = got.data();
    int tag = version;
    void* r = nullptr;
    void* s = nullptr;
    if (version == 8) {
      int capacity = 800;
      ASSERT_EQ(v8->irecv(recv, 1, &data, &capacity, &tag, nullptr, &r), ncclSuccess);
      ASSERT_EQ(v8->isend(send, message.data(), 777, tag, nullptr, &s), ncclSuccess);
    } else if (version == 9) {
      size_t capacity = 800;
      ASSERT_EQ(v9->irecv(recv, 1, &data, &capacity, &tag, nullptr, &r), ncclSuccess);
      ASSERT_EQ(v9->isend(send, message.data(), 777, tag, nullptr, &s), ncclSuccess);
    } else {
      size_t capacity = 800;
      ASSERT_EQ(v10->irecv(recv, 1, &data, &capacity, &tag, nullptr, nullptr, &r), ncclSuccess);
      ASSERT_EQ(v10->isend(send, message.data(), 777, tag, nullptr, nullptr, &s), ncclSuccess);
    }
    int size = -1;
    ASSERT_EQ(Wait(r, &size), ncclSuccess) << LastWarning();
    ASSERT_EQ(Wait(s, nullptr), ncclSuccess);
    EXPECT_EQ(size, 777);
    EXPECT_EQ(std::memcmp(got.data(), message.data(), 777), 0);
    v8->closeSend(send);
    v8->closeRecv(recv);
    v8->closeListen(listen);
  }
  EXPECT_EQ(server_->network().joined(), 1);  // one session for all three inits
}

// nboxNetExt_v2: v1's wait, and the rank's clock, op reports and flagged tests.
TEST_F(NboxPlugin, ExtensionV2KeepsV1sWaitAndOffersTheClock) {
  const auto* ext2 = library_.Symbol<nboxNetExt_v2_t>(NBOX_NET_EXT_V2_SYMBOL);
  ASSERT_NE(ext2, nullptr);
  EXPECT_EQ(ext2->version, 2);
  ASSERT_NE(ext2->waitEvents, nullptr);
  Join(0, "virtual");
  uint64_t first = 0, second = 0;
  ASSERT_EQ(ext2->virtualTimeNs(ctx_, &first), ncclSuccess);
  std::this_thread::sleep_for(milliseconds(20));
  ASSERT_EQ(ext2->virtualTimeNs(ctx_, &second), ncclSuccess);
  // A virtual rank's clock runs with the wall clock while it works.
  EXPECT_GE(second - first, 20'000'000u);
  EXPECT_EQ(ext2->virtualTimeNs(ctx_, nullptr), ncclInvalidArgument);

  // A plain send/receive through testFlags: done, sizes, and no synthetic flag.
  CommPair& pair = Pair();
  std::vector<uint8_t> message = Pattern(9, 64), recv(64, 0);
  void* recv_request = nullptr;
  void* send_request = nullptr;
  ASSERT_NO_FATAL_FAILURE(PostReceiveThenSend(pair, message, recv, &recv_request, &send_request));
  ASSERT_EQ(Wait(send_request, nullptr), ncclSuccess);
  int done = 0, size = 0;
  uint32_t flags = 99;
  const auto deadline = steady_clock::now() + milliseconds(5000);
  while (!done && steady_clock::now() < deadline) {
    ASSERT_EQ(ext2->testFlags(recv_request, &done, &size, &flags), ncclSuccess);
  }
  ASSERT_TRUE(done);
  EXPECT_EQ(size, 64);
  EXPECT_EQ(flags, 0u);
  EXPECT_EQ(recv, message);
  // v1 and v2 count the same events.
  EXPECT_EQ(ext2->eventCount(), ext_->eventCount());
  EXPECT_GE(ext2->eventCount(), 2u);
}

TEST_F(NboxPlugin, MalformedOpReportsAreRefusedBeforeTheyLeave) {
  const auto* ext2 = library_.Symbol<nboxNetExt_v2_t>(NBOX_NET_EXT_V2_SYMBOL);
  ASSERT_NE(ext2, nullptr);
  Join();
  nboxOpReport report{};
  report.kind = NBOX_OP_REPORT_COLLECTIVE;
  report.op = NBOX_REPORTED_OP_ALLGATHER;
  report.dtype = 7;
  report.root = -1;
  report.bytes = 64;
  EXPECT_EQ(ext2->reportOp(ctx_, &report), ncclSuccess);
  report.redop = 1;  // all-gather does not reduce
  EXPECT_EQ(ext2->reportOp(ctx_, &report), ncclInvalidArgument);
  EXPECT_NE(LastWarning().find("a reduction op on a call that does not reduce"), std::string::npos)
      << LastWarning();
  report.redop = 0;
  report.kind = 300;  // not a kind (and not a byte)
  EXPECT_EQ(ext2->reportOp(ctx_, &report), ncclInvalidArgument);
  EXPECT_EQ(ext2->reportOp(ctx_, nullptr), ncclInvalidArgument);
  // The session is still fine.
  Pair();
}

// A realtime rank promises its wall clock every realtime heartbeat (200 us by default), so the
// simulator is never held back by more than that while the rank is idle.
TEST_F(NboxPlugin, AnIdleRealtimeRankPromisesItsClockEveryHeartbeat) {
  Join(0, "realtime");
  std::this_thread::sleep_for(milliseconds(200));
  const std::vector<ObservedPromise> promises = server_->network().promises();
  // About 1000 here; a loaded machine may wake the plugin's thread late, never 20 times late.
  EXPECT_GE(promises.size(), 50u);
  for (size_t i = 1; i < promises.size(); ++i) {
    EXPECT_FALSE(promises[i].blocked);
    EXPECT_GE(promises[i].vtime, promises[i - 1].vtime);
  }
}

// A realtime rank that waits for the network promises so (a blocked promise): nbox-cosim may
// then run ahead of the wall clock to the completion that wakes it, which the rank holds until
// it is due. While it waits with nothing new, it keeps the session alive with heartbeats: a
// plain promise of its clock would take the blocked one back and hold the simulator again.
TEST_F(NboxPlugin, AWaitingRealtimeRankPromisesBlockedAndDoesNotTakeItBack) {
  constexpr uint64_t kDelayNs = 300'000'000;
  Join(kDelayNs, "realtime");
  CommPair& pair = Pair();
  std::vector<uint8_t> message = Pattern(6, 48), recv(48, 0);
  ASSERT_NO_FATAL_FAILURE(SendAndReceive(pair, message, recv));
  EXPECT_EQ(recv, message);

  const std::vector<server::Post> posts = server_->network().posts();
  ASSERT_EQ(posts.size(), 2u);
  const uint64_t delivery = std::max(posts[0].vtime, posts[1].vtime) + kDelayNs;
  const uint64_t posted = std::min(posts[0].vtime, posts[1].vtime);
  const ObservedPromise* blocked = nullptr;  // the first that had seen both completions
  size_t plain_while_waiting = 0;
  for (const ObservedPromise& promise : server_->network().promises()) {
    if (promise.vtime < posted || promise.vtime >= delivery) continue;
    if (promise.blocked && promise.saw_every_wakeup && blocked == nullptr) blocked = &promise;
    if (!promise.blocked) ++plain_while_waiting;
    if (blocked != nullptr) {
      EXPECT_TRUE(promise.blocked) << "a plain promise at " << promise.vtime
                                   << " took back the blocked one of " << blocked->vtime;
    }
  }
  ASSERT_NE(blocked, nullptr) << "no blocked promise while the rank waited";
  // An idle rank promises about 1500 times in 300 ms (previous test); renewed as soon as the
  // completions arrive, the blocked promise leaves the few made before them.
  EXPECT_LT(plain_while_waiting, 50u);
}

// The moment between two slices of a wait (the host runtime tests its requests, then waits
// again) is not the end of the wait: however long the scheduler keeps the thread there, the
// rank, with nothing new, sends heartbeats and no plain promise that would take the blocked
// one back. The gap is widened here to 50 ms so that it cannot be missed.
TEST_F(NboxPlugin, ARealtimeRankBetweenTwoSlicesOfAWaitKeepsItsBlockedPromise) {
  constexpr uint64_t kDelayNs = 5'000'000'000;  // nothing arrives during the test
  Join(kDelayNs, "realtime");
  CommPair& pair = Pair();
  std::vector<uint8_t> message = Pattern(7, 40), recv(40, 0);
  void* recv_request = nullptr;
  void* send_request = nullptr;
  ASSERT_NO_FATAL_FAILURE(PostReceiveThenSend(pair, message, recv, &recv_request, &send_request));
  const uint64_t seen = ext_->eventCount();
  ext_->waitEvents(seen, 20000);  // the first slice: the blocked promise goes out
  ASSERT_EQ(ext_->eventCount(), seen);
  const size_t before_gap = server_->network().promises().size();
  std::this_thread::sleep_for(milliseconds(50));  // between slices, nothing new
  ext_->waitEvents(seen, 20000);                  // the next slice
  const std::vector<ObservedPromise> promises = server_->network().promises();
  ASSERT_GT(before_gap, 0u);
  ASSERT_TRUE(promises[before_gap - 1].blocked);
  for (size_t i = before_gap; i < promises.size(); ++i) {
    EXPECT_TRUE(promises[i].blocked)
        << "a plain promise at " << promises[i].vtime << " between two slices of the wait";
  }
  int done = 0;
  ASSERT_EQ(net_->test(recv_request, &done, nullptr), ncclSuccess);
  EXPECT_EQ(done, 0);
}

// Once the program reports its waits (programWaiting), a thread waiting for the network while
// the program works does not stop a virtual clock: it runs with the wall clock, and the rank
// promises it as it goes (requests are in flight); when the program waits too, it stops and
// jumps to the delivery.
TEST_F(NboxPlugin, AVirtualClockRunsWhileOnlyTheRuntimeThreadWaits) {
  constexpr uint64_t kDelayNs = 5'000'000'000;
  const auto* ext2 = library_.Symbol<nboxNetExt_v2_t>(NBOX_NET_EXT_V2_SYMBOL);
  ASSERT_NE(ext2, nullptr);
  Join(kDelayNs, "virtual");
  ext2->programWaiting(1);
  ext2->programWaiting(0);
  CommPair& pair = Pair();
  std::vector<uint8_t> message = Pattern(4, 32), recv(32, 0);
  void* recv_request = nullptr;
  void* send_request = nullptr;
  ASSERT_NO_FATAL_FAILURE(PostReceiveThenSend(pair, message, recv, &recv_request, &send_request));
  uint64_t t0 = 0;
  ASSERT_EQ(ext2->virtualTimeNs(ctx_, &t0), ncclSuccess);
  // The "runtime thread": waits in waitEvents for 200 ms of wall time.
  std::atomic<bool> completed_early{false};
  std::thread runtime([&] {
    const auto until = steady_clock::now() + milliseconds(200);
    while (steady_clock::now() < until) {
      const uint64_t seen = ext_->eventCount();
      int done = 0;
      ASSERT_EQ(net_->test(recv_request, &done, nullptr), ncclSuccess);
      if (done) completed_early = true;
      ext_->waitEvents(seen, 20000);
    }
  });
  runtime.join();
  ASSERT_FALSE(completed_early.load()) << "a delivery 5 s ahead came after 200 ms";
  uint64_t t1 = 0;
  ASSERT_EQ(ext2->virtualTimeNs(ctx_, &t1), ncclSuccess);
  EXPECT_GE(t1 - t0, 200'000'000u) << "the clock stood still while only the runtime waited";
  EXPECT_LT(t1 - t0, kDelayNs);
  bool running_promise = false;
  for (const ObservedPromise& promise : server_->network().promises()) {
    running_promise = running_promise || (!promise.blocked && promise.vtime >= t0 + 100'000'000);
  }
  EXPECT_TRUE(running_promise) << "no promise of the running clock while requests were in flight";

  // The program waits now: the clock stops and jumps to the delivery.
  ext2->programWaiting(1);
  const auto start = steady_clock::now();
  ASSERT_EQ(Wait(recv_request, nullptr), ncclSuccess);
  ASSERT_EQ(Wait(send_request, nullptr), ncclSuccess);
  ext2->programWaiting(0);
  EXPECT_LT(steady_clock::now() - start, milliseconds(2000));
  uint64_t t2 = 0;
  ASSERT_EQ(ext2->virtualTimeNs(ctx_, &t2), ncclSuccess);
  EXPECT_GE(t2, t0 + kDelayNs - 200'000'000) << "the clock did not jump to the delivery";
  EXPECT_EQ(recv, message);
}

}  // namespace
}  // namespace nbox::bridge::testing
