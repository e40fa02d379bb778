// Moving data through libnccl-net-nboxtcp.so over real TCP sockets on the loopback, loaded
// with dlopen and driven through its ncclNet tables only. Expected payloads are generated
// independently from the message index; expected sizes and tags are the ones posted.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "bridge/include/nbox_net_ext.h"
#include "bridge/nccl/net.h"
#include "tests/bridge/byte_pattern.h"
#include "tests/bridge/plugin_loader.h"

namespace nbox::bridge::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

class TcpPluginTransfer : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(library_.loaded()) << library_.error();
    net_ = library_.Symbol<ncclNet_v11_t>("ncclNetPlugin_v11");
    ext_ = library_.Symbol<nboxNetExt_v1_t>(NBOX_NET_EXT_SYMBOL);
    ASSERT_NE(net_, nullptr);
    ASSERT_NE(ext_, nullptr);
    ASSERT_EQ(net_->init(&ctx_, 7, nullptr, nullptr, nullptr), ncclSuccess);
  }
  void TearDown() override {
    if (net_ != nullptr && ctx_ != nullptr) {
      EXPECT_EQ(net_->finalize(ctx_), ncclSuccess);
    }
  }

  void* Send(void* comm, void* data, size_t size, int tag) {
    void* request = nullptr;
    EXPECT_EQ(net_->isend(comm, data, size, tag, nullptr, nullptr, &request), ncclSuccess);
    return request;
  }
  void* Recv(void* comm, void* data, size_t size, int tag) {
    void* request = nullptr;
    size_t sizes[1] = {size};
    int tags[1] = {tag};
    void* datas[1] = {data};
    EXPECT_EQ(net_->irecv(comm, 1, datas, sizes, tags, nullptr, nullptr, &request), ncclSuccess);
    return request;
  }

  PluginLibrary library_{TcpPluginPath()};
  ncclNet_v11_t* net_ = nullptr;
  nboxNetExt_v1_t* ext_ = nullptr;
  void* ctx_ = nullptr;
};

TEST_F(TcpPluginTransfer, ConnectAndAcceptNeverBlock) {
  CommPair pair;
  // ConnectPair drives both ends from one thread: it only returns if neither call blocks.
  ASSERT_TRUE(ConnectPair(net_, ctx_, 0, &pair));
  ClosePair(net_, &pair);
}

TEST_F(TcpPluginTransfer, SizesFromZeroTo64MiBArriveIntact) {
  CommPair pair;
  ASSERT_TRUE(ConnectPair(net_, ctx_, 0, &pair));
  const size_t sizes[] = {0, 1, 7, 4096, (1u << 20) + 3, 64u << 20};
  uint64_t seed = 0;
  for (size_t size : sizes) {
    for (bool recv_first : {true, false}) {
      ++seed;
      std::vector<uint8_t> out = Pattern(seed, size);
      // Posted larger than the message: the bytes past it must stay untouched.
      std::vector<uint8_t> in(size + 16, 0xEE);
      void* recv_request = nullptr;
      void* send_request = nullptr;
      const auto start = steady_clock::now();
      if (recv_first) recv_request = Recv(pair.recv_comm, in.data(), in.size(), 0);
      send_request = Send(pair.send_comm, out.data(), size, 0);
      if (!recv_first) recv_request = Recv(pair.recv_comm, in.data(), in.size(), 0);
      ASSERT_NE(send_request, nullptr);
      ASSERT_NE(recv_request, nullptr);
      int received = -1;
      ASSERT_EQ(WaitRequest(net_, recv_request, &received), ncclSuccess) << size;
      int sent = -1;
      ASSERT_EQ(WaitRequest(net_, send_request, &sent), ncclSuccess) << size;
      const double seconds = std::chrono::duration<double>(steady_clock::now() - start).count();
      EXPECT_EQ(received, static_cast<int>(size));
      EXPECT_EQ(sent, static_cast<int>(size));
      EXPECT_EQ(FirstMismatch(in.data(), seed, size), -1) << "size " << size;
      for (size_t i = size; i < in.size(); ++i) ASSERT_EQ(in[i], 0xEE) << "byte " << i;
      if (size == (64u << 20) && !recv_first) {
        std::printf("64 MiB over loopback: %.1f ms, %.2f GB/s\n", seconds * 1e3,
                    size / seconds / 1e9);
      }
    }
  }
  ClosePair(net_, &pair);
}

TEST_F(TcpPluginTransfer, RequestPresetToOptionalCompletionIsReplaced) {
  CommPair pair;
  ASSERT_TRUE(ConnectPair(net_, ctx_, 0, &pair));
  char in[8] = {}, out[8] = "abcdefg";
  void* request = reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION);
  size_t sizes[1] = {sizeof(in)};
  int tags[1] = {3};
  void* datas[1] = {in};
  ASSERT_EQ(net_->irecv(pair.recv_comm, 1, datas, sizes, tags, nullptr, nullptr, &request),
            ncclSuccess);
  ASSERT_NE(request, nullptr);
  ASSERT_NE(request, reinterpret_cast<void*>(NCCL_NET_OPTIONAL_RECV_COMPLETION));
  void* send_request = Send(pair.send_comm, out, sizeof(out), 3);
  ASSERT_EQ(WaitRequest(net_, request, nullptr), ncclSuccess);
  ASSERT_EQ(WaitRequest(net_, send_request, nullptr), ncclSuccess);
  EXPECT_STREQ(in, "abcdefg");
  ClosePair(net_, &pair);
}

TEST_F(TcpPluginTransfer, ThirtyTwoRequestsInFlightThenBackPressure) {
  CommPair pair;
  ASSERT_TRUE(ConnectPair(net_, ctx_, 0, &pair));
  constexpr int kCount = NCCL_NET_MAX_REQUESTS;
  constexpr size_t kSize = 300000;  // together larger than the socket buffers
  std::vector<std::vector<uint8_t>> out, in;
  std::vector<void*> sends, recvs;
  for (int i = 0; i < kCount; ++i) {
    out.push_back(Pattern(100 + i, kSize));
    in.emplace_back(kSize, 0);
    sends.push_back(Send(pair.send_comm, out.back().data(), kSize, 0));
    ASSERT_NE(sends.back(), nullptr) << i;
  }
  // Every slot of the send comm is busy: the plugin must say "later", not fail or block.
  uint8_t extra[4] = {1, 2, 3, 4};
  void* refused = reinterpret_cast<void*>(0x5);
  ASSERT_EQ(net_->isend(pair.send_comm, extra, 4, 0, nullptr, nullptr, &refused), ncclSuccess);
  EXPECT_EQ(refused, nullptr);
  for (int i = 0; i < kCount; ++i) {
    recvs.push_back(Recv(pair.recv_comm, in[i].data(), kSize, 0));
    ASSERT_NE(recvs.back(), nullptr) << i;
  }
  // Completed in the posted order, each with its own message.
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(WaitRequest(net_, recvs[i], nullptr), ncclSuccess) << i;
    EXPECT_EQ(FirstMismatch(in[i].data(), 100 + i, kSize), -1) << "message " << i;
  }
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(WaitRequest(net_, sends[i], nullptr), ncclSuccess);
  void* later = Send(pair.send_comm, extra, 4, 0);
  EXPECT_NE(later, nullptr);
  uint8_t extra_in[4] = {};
  void* later_recv = Recv(pair.recv_comm, extra_in, 4, 0);
  ASSERT_EQ(WaitRequest(net_, later_recv, nullptr), ncclSuccess);
  ASSERT_EQ(WaitRequest(net_, later, nullptr), ncclSuccess);
  EXPECT_EQ(std::memcmp(extra, extra_in, 4), 0);
  ClosePair(net_, &pair);
}

TEST_F(TcpPluginTransfer, GroupedReceiveMatchesMessagesToBuffersByTag) {
  CommPair pair;
  ASSERT_TRUE(ConnectPair(net_, ctx_, 0, &pair));
  std::vector<uint8_t> b0(100, 0), b1(200, 0), b2(300, 0);
  void* datas[3] = {b0.data(), b1.data(), b2.data()};
  size_t sizes[3] = {100, 200, 300};
  int tags[3] = {7, 3, 5};
  void* recv_request = nullptr;
  ASSERT_EQ(net_->irecv(pair.recv_comm, 3, datas, sizes, tags, nullptr, nullptr, &recv_request),
            ncclSuccess);
  // Sent in another order than the buffers, and shorter than two of them.
  std::vector<uint8_t> m3 = Pattern(3, 150), m5 = Pattern(5, 300), m7 = Pattern(7, 1);
  void* s3 = Send(pair.send_comm, m3.data(), m3.size(), 3);
  void* s5 = Send(pair.send_comm, m5.data(), m5.size(), 5);
  void* s7 = Send(pair.send_comm, m7.data(), m7.size(), 7);
  int received[3] = {-1, -1, -1};
  ASSERT_EQ(WaitRequest(net_, recv_request, received), ncclSuccess);
  EXPECT_EQ(received[0], 1);
  EXPECT_EQ(received[1], 150);
  EXPECT_EQ(received[2], 300);
  EXPECT_EQ(FirstMismatch(b0.data(), 7, 1), -1);
  EXPECT_EQ(FirstMismatch(b1.data(), 3, 150), -1);
  EXPECT_EQ(FirstMismatch(b2.data(), 5, 300), -1);
  for (void* s : {s3, s5, s7}) ASSERT_EQ(WaitRequest(net_, s, nullptr), ncclSuccess);
  ClosePair(net_, &pair);
}

TEST_F(TcpPluginTransfer, MessageWithUnpostedTagFailsTheReceive) {
  CommPair pair;
  ASSERT_TRUE(ConnectPair(net_, ctx_, 0, &pair));
  uint8_t in[16], out[16] = {};
  void* recv_request = Recv(pair.recv_comm, in, sizeof(in), 1);
  void* send_request = Send(pair.send_comm, out, sizeof(out), 2);
  EXPECT_EQ(WaitRequest(net_, recv_request, nullptr), ncclInvalidUsage);
  (void)WaitRequest(net_, send_request, nullptr);
  ClosePair(net_, &pair);
}

TEST_F(TcpPluginTransfer, MessageLargerThanTheBufferFailsTheReceive) {
  CommPair pair;
  ASSERT_TRUE(ConnectPair(net_, ctx_, 0, &pair));
  std::vector<uint8_t> in(100), out(200);
  void* recv_request = Recv(pair.recv_comm, in.data(), in.size(), 0);
  void* send_request = Send(pair.send_comm, out.data(), out.size(), 0);
  EXPECT_EQ(WaitRequest(net_, recv_request, nullptr), ncclInvalidUsage);
  (void)WaitRequest(net_, send_request, nullptr);
  ClosePair(net_, &pair);
}

TEST_F(TcpPluginTransfer, PeerClosingFailsAPendingReceiveQuickly) {
  CommPair pair;
  ASSERT_TRUE(ConnectPair(net_, ctx_, 0, &pair));
  std::vector<uint8_t> in(1 << 20);
  void* recv_request = Recv(pair.recv_comm, in.data(), in.size(), 0);
  const auto start = steady_clock::now();
  net_->closeSend(pair.send_comm);
  pair.send_comm = nullptr;
  EXPECT_EQ(WaitRequest(net_, recv_request, nullptr, milliseconds(3000)), ncclRemoteError);
  EXPECT_LT(steady_clock::now() - start, milliseconds(2000));
  ClosePair(net_, &pair);
}

TEST_F(TcpPluginTransfer, ConnectToAClosedListenerFails) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* listen_comm = nullptr;
  ASSERT_EQ(net_->listen(ctx_, 0, handle, &listen_comm), ncclSuccess);
  ASSERT_EQ(net_->closeListen(listen_comm), ncclSuccess);
  void* send_comm = nullptr;
  ncclResult_t result = ncclSuccess;
  const auto deadline = steady_clock::now() + milliseconds(5000);
  while (result == ncclSuccess && send_comm == nullptr && steady_clock::now() < deadline) {
    result = net_->connect(ctx_, 0, handle, &send_comm, nullptr);
  }
  EXPECT_EQ(send_comm, nullptr);
  EXPECT_EQ(result, ncclRemoteError);
}

// NBOX_TCP_CONGESTION: an algorithm the kernel has (reno is always built in) is used and data
// flows; one it does not have fails the connect instead of running the default silently.
TEST_F(TcpPluginTransfer, CongestionControlFromTheEnvironment) {
  ASSERT_EQ(setenv("NBOX_TCP_CONGESTION", "reno", 1), 0);
  CommPair pair;
  ASSERT_TRUE(ConnectPair(net_, ctx_, 0, &pair));
  std::vector<uint8_t> out = Pattern(5, 4096);
  std::vector<uint8_t> in(out.size(), 0);
  void* recv_request = Recv(pair.recv_comm, in.data(), in.size(), 0);
  void* send_request = Send(pair.send_comm, out.data(), out.size(), 0);
  int received = -1;
  int sent = -1;
  ASSERT_EQ(WaitRequest(net_, recv_request, &received), ncclSuccess);
  ASSERT_EQ(WaitRequest(net_, send_request, &sent), ncclSuccess);
  EXPECT_EQ(FirstMismatch(in.data(), 5, out.size()), -1);
  ClosePair(net_, &pair);

  ASSERT_EQ(setenv("NBOX_TCP_CONGESTION", "no-such-algorithm", 1), 0);
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* listen_comm = nullptr;
  ASSERT_EQ(net_->listen(ctx_, 0, handle, &listen_comm), ncclSuccess);
  void* send_comm = nullptr;
  EXPECT_EQ(net_->connect(ctx_, 0, handle, &send_comm, nullptr), ncclSystemError);
  EXPECT_EQ(send_comm, nullptr);
  EXPECT_EQ(net_->closeListen(listen_comm), ncclSuccess);
  unsetenv("NBOX_TCP_CONGESTION");
}

TEST_F(TcpPluginTransfer, ForeignHandleIsRejected) {
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* send_comm = nullptr;
  EXPECT_EQ(net_->connect(ctx_, 0, handle, &send_comm, nullptr), ncclInvalidArgument);
  EXPECT_EQ(send_comm, nullptr);
}

// Raw TCP connections to the listening port that do not present the handle's nonce.
TEST_F(TcpPluginTransfer, StrangersOnTheListenPortAreIgnored) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  void* listen_comm = nullptr;
  ASSERT_EQ(net_->listen(ctx_, 0, handle, &listen_comm), ncclSuccess);
  // A stranger finds the port by scanning; the test reads it from the handle (bridge/tcp/
  // tcp_setup.h: magic u32, version u32, nonce u64, then the socket address).
  sockaddr_in addr{};
  std::memcpy(&addr, handle + 16, sizeof(addr));
  ASSERT_EQ(addr.sin_family, AF_INET);
  int garbage = socket(AF_INET, SOCK_STREAM, 0);
  int silent = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(garbage, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(connect(silent, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const char junk[17] = "GET / HTTP/1.0\r\n";
  ASSERT_EQ(write(garbage, junk, 16), 16);
  void* recv_comm = nullptr;
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(net_->accept(listen_comm, &recv_comm, nullptr), ncclSuccess);
    ASSERT_EQ(recv_comm, nullptr) << "accepted a connection that never presented the handle";
    std::this_thread::sleep_for(milliseconds(1));
  }
  void* send_comm = nullptr;
  const auto deadline = steady_clock::now() + milliseconds(5000);
  while ((send_comm == nullptr || recv_comm == nullptr) && steady_clock::now() < deadline) {
    if (send_comm == nullptr) {
      ASSERT_EQ(net_->connect(ctx_, 0, handle, &send_comm, nullptr), ncclSuccess);
    }
    if (recv_comm == nullptr) {
      ASSERT_EQ(net_->accept(listen_comm, &recv_comm, nullptr), ncclSuccess);
    }
  }
  ASSERT_NE(send_comm, nullptr);
  ASSERT_NE(recv_comm, nullptr);
  char out[6] = "hello", in[6] = {};
  void* r = Recv(recv_comm, in, 6, 0);
  void* s = Send(send_comm, out, 6, 0);
  ASSERT_EQ(WaitRequest(net_, r, nullptr), ncclSuccess);
  ASSERT_EQ(WaitRequest(net_, s, nullptr), ncclSuccess);
  EXPECT_STREQ(in, "hello");
  close(garbage);
  close(silent);
  net_->closeSend(send_comm);
  net_->closeRecv(recv_comm);
  net_->closeListen(listen_comm);
}

// Several threads, each with its own connection, and a second thread testing requests the
// first one posted: NCCL's proxy and main threads use the plugin concurrently.
TEST_F(TcpPluginTransfer, ConcurrentThreadsEachGetTheirOwnMessages) {
  constexpr int kThreads = 4;
  constexpr int kMessages = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      CommPair pair;
      if (!ConnectPair(net_, ctx_, 0, &pair)) {
        ++failures;
        return;
      }
      for (int m = 0; m < kMessages; ++m) {
        const uint64_t seed = 1000 * t + m;
        const size_t size = (seed * 7919) % 70000;
        std::vector<uint8_t> out = Pattern(seed, size), in(size);
        void* s = nullptr;
        void* r = nullptr;
        net_->isend(pair.send_comm, out.data(), size, t, nullptr, nullptr, &s);
        size_t sizes[1] = {size};
        int tags[1] = {t};
        void* datas[1] = {in.data()};
        net_->irecv(pair.recv_comm, 1, datas, sizes, tags, nullptr, nullptr, &r);
        if (s == nullptr || r == nullptr) {
          ++failures;
          break;
        }
        // The send is collected by another thread.
        std::thread tester([&] {
          if (WaitRequest(net_, s, nullptr) != ncclSuccess) ++failures;
        });
        if (WaitRequest(net_, r, nullptr) != ncclSuccess) ++failures;
        tester.join();
        if (FirstMismatch(in.data(), seed, size) != -1) ++failures;
      }
      ClosePair(net_, &pair);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(TcpPluginTransfer, WaitExtensionSleepsUntilACompletion) {
  CommPair pair;
  ASSERT_TRUE(ConnectPair(net_, ctx_, 0, &pair));
  // Nothing in flight: the wait lasts its timeout.
  uint64_t seen = ext_->eventCount();
  auto start = steady_clock::now();
  ext_->waitEvents(seen, 100000);
  const auto idle = steady_clock::now() - start;
  EXPECT_GE(idle, milliseconds(95));
  EXPECT_EQ(ext_->eventCount(), seen);

  // A receive completed by a message sent 100 ms later ends a 10 s wait early.
  char in[4] = {}, out[4] = "abc";
  void* r = Recv(pair.recv_comm, in, 4, 0);
  seen = ext_->eventCount();
  std::thread sender([&] {
    std::this_thread::sleep_for(milliseconds(100));
    void* s = Send(pair.send_comm, out, 4, 0);
    WaitRequest(net_, s, nullptr);
  });
  start = steady_clock::now();
  ext_->waitEvents(seen, 10000000);
  const auto woke = steady_clock::now() - start;
  sender.join();
  EXPECT_GT(ext_->eventCount(), seen);
  EXPECT_LT(woke, milliseconds(5000));
  ASSERT_EQ(WaitRequest(net_, r, nullptr), ncclSuccess);
  EXPECT_STREQ(in, "abc");
  ClosePair(net_, &pair);
}

// One round trip through each older table, with its own signatures (v8: int sizes).
TEST_F(TcpPluginTransfer, OlderTablesMoveData) {
  auto* v10 = library_.Symbol<ncclNet_v10_t>("ncclNetPlugin_v10");
  auto* v9 = library_.Symbol<ncclNet_v9_t>("ncclNetPlugin_v9");
  auto* v8 = library_.Symbol<ncclNet_v8_t>("ncclNetPlugin_v8");
  ASSERT_TRUE(v10 && v9 && v8);
  ASSERT_EQ(v10->init(nullptr, nullptr), ncclSuccess);
  ASSERT_EQ(v9->init(nullptr), ncclSuccess);
  ASSERT_EQ(v8->init(nullptr), ncclSuccess);
  for (int version : {10, 9, 8}) {
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    void *listen_comm = nullptr, *send_comm = nullptr, *recv_comm = nullptr;
    const auto listen = version == 10 ? v10->listen : version == 9 ? v9->listen : v8->listen;
    ASSERT_EQ(listen(0, handle, &listen_comm), ncclSuccess);
    ncclNetCommConfig_v10_t config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
    const auto deadline = steady_clock::now() + milliseconds(5000);
    while ((send_comm == nullptr || recv_comm == nullptr) && steady_clock::now() < deadline) {
      if (send_comm == nullptr) {
        const ncclResult_t r = version == 10 ? v10->connect(0, &config, handle, &send_comm, nullptr)
                                             : v8->connect(0, handle, &send_comm, nullptr);
        ASSERT_EQ(r, ncclSuccess);
      }
      if (recv_comm == nullptr) {
        ASSERT_EQ(v8->accept(listen_comm, &recv_comm, nullptr), ncclSuccess);
      }
    }
    ASSERT_TRUE(send_comm && recv_comm) << "v" << version;
    const size_t size = 5000 + version;
    std::vector<uint8_t> out = Pattern(version, size), in(size + 10, 0);
    void *s = nullptr, *r = nullptr;
    void* datas[1] = {in.data()};
    int tags[1] = {version};
    if (version == 8) {
      int sizes[1] = {static_cast<int>(in.size())};
      ASSERT_EQ(v8->irecv(recv_comm, 1, datas, sizes, tags, nullptr, &r), ncclSuccess);
      ASSERT_EQ(v8->isend(send_comm, out.data(), static_cast<int>(size), version, nullptr, &s),
                ncclSuccess);
    } else if (version == 9) {
      size_t sizes[1] = {in.size()};
      ASSERT_EQ(v9->irecv(recv_comm, 1, datas, sizes, tags, nullptr, &r), ncclSuccess);
      ASSERT_EQ(v9->isend(send_comm, out.data(), size, version, nullptr, &s), ncclSuccess);
    } else {
      size_t sizes[1] = {in.size()};
      ASSERT_EQ(v10->irecv(recv_comm, 1, datas, sizes, tags, nullptr, nullptr, &r), ncclSuccess);
      ASSERT_EQ(v10->isend(send_comm, out.data(), size, version, nullptr, nullptr, &s),
                ncclSuccess);
    }
    int received = -1;
    const auto test = version == 10 ? v10->test : version == 9 ? v9->test : v8->test;
    for (int done = 0; !done;) ASSERT_EQ(test(r, &done, &received), ncclSuccess);
    for (int done = 0; !done;) ASSERT_EQ(test(s, &done, nullptr), ncclSuccess);
    EXPECT_EQ(received, static_cast<int>(size)) << "v" << version;
    EXPECT_EQ(FirstMismatch(in.data(), version, size), -1) << "v" << version;
    v8->closeSend(send_comm);
    v8->closeRecv(recv_comm);
    v8->closeListen(listen_comm);
  }
}

}  // namespace
}  // namespace nbox::bridge::testing
