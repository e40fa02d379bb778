// The bridge server library driven by hand-written wire clients over real sockets: the
// handshake and each way it refuses, dead and silent ranks reported by rank, the
// listen/connect/accept resolution between ranks, and payloads held until a completion may be
// sent. The server runs in this thread; the test pumps Poll() while it waits for frames.
#include "bridge/server/bridge_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bridge/net/inet_address.h"
#include "bridge/net/socket_util.h"
#include "bridge/wire/auth.h"
#include "bridge/wire/frame_codec.h"
#include "tests/bridge/raw_client.h"

namespace nbox::bridge::server {
namespace {

using namespace testing;  // NOLINT: the helpers of raw_client.h

TEST(BridgeServer, HandshakeOpensASessionAndReportsTheRank) {
  RecordingSink sink;
  ServerOptions options = Options(2);
  options.start_vtime = 777;
  BridgeServer server(options, &sink);
  RawClient client(server, server.unix_endpoint());
  const wire::Welcome welcome = Expect<wire::Welcome>(client.Handshake(1, 2));
  EXPECT_EQ(welcome.start_vtime, 777u);
  // A realtime rank: realtime_heartbeat_interval, in microseconds.
  EXPECT_EQ(welcome.heartbeat_us, options.realtime_heartbeat_interval.count());
  EXPECT_EQ(welcome.nic_speed_mbps, 100000u);
  ASSERT_EQ(sink.joins.size(), 1u);
  EXPECT_EQ(sink.joins[0].rank, 1);
  EXPECT_EQ(sink.joins[0].world, 2);
  EXPECT_EQ(sink.joins[0].clock, wire::ClockMode::kRealtime);
  EXPECT_EQ(sink.joins[0].pid, 4242u);
  EXPECT_EQ(sink.joins[0].peer, "unix pid " + std::to_string(getpid()));
  EXPECT_TRUE(server.connected(1));
  EXPECT_FALSE(server.connected(0));
}

TEST(BridgeServer, TheChallengeProvesTheServerKnowsTheSecret) {
  RecordingSink sink;
  BridgeServer server(Options(1), &sink);
  RawClient client(server, server.unix_endpoint());
  const wire::Hello hello = client.MakeHello(0, 1);
  client.Send(hello);
  const wire::Challenge challenge = Expect<wire::Challenge>(client.Receive());
  EXPECT_TRUE(wire::MacsEqual(challenge.proof,
                              wire::ServerProof(kSecret, wire::HelloBody(hello), challenge.nonce)));
  EXPECT_FALSE(wire::MacsEqual(
      challenge.proof,
      wire::ServerProof("another-secret-0123456789", wire::HelloBody(hello), challenge.nonce)));
}

TEST(BridgeServer, AWrongSecretIsRefusedAndClosed) {
  RecordingSink sink;
  std::vector<std::string> log;
  ServerOptions options = Options(1);
  options.log = [&](const std::string& text) { log.push_back(text); };
  BridgeServer server(options, &sink);
  RawClient client(server, server.unix_endpoint());
  const wire::Error error =
      Expect<wire::Error>(client.Handshake(0, 1, "another-secret-0123456789"));
  EXPECT_EQ(error.code, wire::ErrorCode::kAuthFailed);
  EXPECT_EQ(error.id, 0u);
  EXPECT_EQ(error.text,
            "authentication failed: the proof does not match this server's secret (NBOX_SECRET)");
  EXPECT_TRUE(client.ClosedByServer());
  EXPECT_TRUE(sink.joins.empty());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("refused unix pid"), std::string::npos) << log[0];
}

TEST(BridgeServer, HellosThatDoNotFitTheJobAreRefused) {
  RecordingSink sink;
  BridgeServer server(Options(2), &sink);
  {
    RawClient client(server, server.unix_endpoint());
    EXPECT_EQ(Expect<wire::Error>(client.Handshake(0, 2, kSecret, "other")).text,
              "job id 'other' is not this server's job 'nbox'");
  }
  {
    RawClient client(server, server.unix_endpoint());
    EXPECT_EQ(Expect<wire::Error>(client.Handshake(0, 3)).text, "world size 3 is not this job's 2");
  }
  RawClient first(server, server.unix_endpoint());
  Expect<wire::Welcome>(first.Handshake(1, 2));
  RawClient second(server, server.unix_endpoint());
  EXPECT_EQ(Expect<wire::Error>(second.Handshake(1, 2)).text, "rank 1 is already connected");
  EXPECT_EQ(sink.joins.size(), 1u);
}

TEST(BridgeServer, AFrameBeforeHelloIsAProtocolError) {
  RecordingSink sink;
  BridgeServer server(Options(1), &sink);
  RawClient client(server, server.unix_endpoint());
  client.Send(wire::Listen{1, 2});
  const wire::Error error = Expect<wire::Error>(client.Receive());
  EXPECT_EQ(error.code, wire::ErrorCode::kProtocol);
  EXPECT_EQ(error.text, "expected Hello, got Listen");
  EXPECT_TRUE(client.ClosedByServer());
}

TEST(BridgeServer, GarbageAndOversizedHandshakesAreRefused) {
  RecordingSink sink;
  BridgeServer server(Options(1), &sink);
  {
    RawClient client(server, server.unix_endpoint());
    const std::string http = "GET / HTTP/1.1\r\n\r\n";
    client.SendBytes(std::vector<uint8_t>(http.begin(), http.end()));
    const wire::Error error = Expect<wire::Error>(client.Receive());
    EXPECT_EQ(error.text, "frame does not start with \"NBXW\" (byte 0 is 71)");
    EXPECT_TRUE(client.ClosedByServer());
  }
  {
    RawClient client(server, server.unix_endpoint());
    std::vector<uint8_t> header = {'N',  'B',  'X', 'W', wire::kProtocolVersion, 1, 0, 0,
                                   0x88, 0x13, 0,   0};  // 5000
    client.SendBytes(header);
    EXPECT_EQ(Expect<wire::Error>(client.Receive()).text,
              "Hello: body of 5000 bytes is over the limit of 128");
    EXPECT_TRUE(client.ClosedByServer());
  }
  EXPECT_TRUE(sink.joins.empty());
}

TEST(BridgeServer, AConnectionThatNeverAuthenticatesIsDropped) {
  RecordingSink sink;
  ServerOptions options = Options(1);
  options.handshake_timeout = milliseconds(200);
  BridgeServer server(options, &sink);
  RawClient client(server, server.unix_endpoint());
  const auto start = Clock::now();
  EXPECT_TRUE(client.ClosedByServer(milliseconds(3000)));
  EXPECT_GE(Clock::now() - start, milliseconds(190));
}

TEST(BridgeServer, AClosedConnectionIsReportedByRank) {
  RecordingSink sink;
  BridgeServer server(Options(3), &sink);
  RawClient client(server, server.unix_endpoint());
  Expect<wire::Welcome>(client.Handshake(2, 3));
  client.Close();
  PumpFor(server, milliseconds(50));
  EXPECT_EQ(sink.events,
            std::vector<std::string>({"DISCONNECT 2 the connection closed without Goodbye"}));
  EXPECT_FALSE(server.connected(2));
}

TEST(BridgeServer, GoodbyeIsAnOrderlyEndNotADisconnect) {
  RecordingSink sink;
  BridgeServer server(Options(1), &sink);
  RawClient client(server, server.unix_endpoint());
  Expect<wire::Welcome>(client.Handshake(0, 1));
  client.Send(wire::Goodbye{55});
  EXPECT_TRUE(client.ClosedByServer());
  EXPECT_EQ(sink.events, std::vector<std::string>({"GOODBYE 0 55"}));
}

// A realtime rank reports its own lag once, before Goodbye; a second report breaks the protocol.
TEST(BridgeServer, ArrivalLagIsPassedOnOnceThenRefused) {
  RecordingSink sink;
  BridgeServer server(Options(2), &sink);
  RawClient once(server, server.unix_endpoint());
  Expect<wire::Welcome>(once.Handshake(0, 2));
  once.Send(wire::ArrivalLag{12, 300, 900});
  once.Send(wire::Goodbye{55});
  EXPECT_TRUE(once.ClosedByServer());
  RawClient twice(server, server.unix_endpoint());
  Expect<wire::Welcome>(twice.Handshake(1, 2));
  twice.Send(wire::ArrivalLag{1, 5, 5});
  twice.Send(wire::ArrivalLag{1, 5, 5});
  EXPECT_TRUE(twice.ClosedByServer());
  ASSERT_EQ(sink.events.size(), 4u);
  EXPECT_EQ(sink.events[0], "ARRIVAL_LAG 0 12 300 900");
  EXPECT_EQ(sink.events[1], "GOODBYE 0 55");
  EXPECT_EQ(sink.events[2], "ARRIVAL_LAG 1 1 5 5");
  EXPECT_NE(sink.events[3].find("a second ArrivalLag"), std::string::npos) << sink.events[3];
}

// A rank on the virtual clock has no wall-clock lag to report.
TEST(BridgeServer, ArrivalLagFromAVirtualRankIsRefused) {
  RecordingSink sink;
  BridgeServer server(Options(1), &sink);
  RawClient client(server, server.unix_endpoint());
  Expect<wire::Welcome>(client.Handshake(0, 1, kSecret, "nbox", wire::ClockMode::kVirtual));
  client.Send(wire::ArrivalLag{1, 5, 5});
  EXPECT_TRUE(client.ClosedByServer());
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_NE(sink.events[0].find("ArrivalLag from a rank on the virtual clock"), std::string::npos)
      << sink.events[0];
}

TEST(BridgeServer, ASilentRankTimesOutAndIsReportedByRank) {
  RecordingSink sink;
  ServerOptions options = Options(1);
  options.heartbeat_interval = milliseconds(50);
  options.heartbeat_timeout = milliseconds(300);
  BridgeServer server(options, &sink);
  RawClient client(server, server.unix_endpoint());
  Expect<wire::Welcome>(client.Handshake(0, 1));
  const auto joined = Clock::now();
  // The server sends heartbeats while it waits.
  Expect<wire::Heartbeat>(client.Receive(milliseconds(1000), true));
  while (sink.events.empty() && Clock::now() - joined < milliseconds(3000)) {
    server.Poll(milliseconds(5));
  }
  const auto waited = Clock::now() - joined;
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0],
            "DISCONNECT 0 no frame from the rank for 300 ms (heartbeat timeout: hung or "
            "unreachable)");
  EXPECT_GE(waited, milliseconds(290));
  EXPECT_LT(waited, milliseconds(1500));
}

// Two ranks set up a connection through the server and move one message; the server holds the
// payload and sends each completion only when the simulator asks and the bytes are in.
TEST(BridgeServer, AMessageTravelsFromOneRankToAnother) {
  RecordingSink sink;
  ServerOptions options = Options(2);
  options.simulator_vtime = [] { return uint64_t{4321}; };
  BridgeServer server(options, &sink);
  RawClient a(server, server.unix_endpoint());
  RawClient b(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 2));
  Expect<wire::Welcome>(b.Handshake(1, 2));

  b.Send(wire::Listen{10, 77});
  a.Send(wire::Connect{20, 1, 0x28, 10, 77});
  const wire::Connected connected = Expect<wire::Connected>(a.Receive());
  EXPECT_EQ(connected.comm, 20u);
  EXPECT_TRUE(connected.payload_wanted);
  const wire::Incoming incoming = Expect<wire::Incoming>(b.Receive());
  EXPECT_EQ(incoming.listen, 10u);
  EXPECT_EQ(incoming.connection, connected.connection);
  EXPECT_EQ(incoming.peer, 0u);
  // Both ends, and the sink, learn when the simulator made the connection.
  EXPECT_EQ(connected.vtime, 4321u);
  EXPECT_EQ(incoming.vtime, 4321u);
  ASSERT_EQ(sink.connections.size(), 1u);
  EXPECT_EQ(sink.connections[0].sender, 0);
  EXPECT_EQ(sink.connections[0].receiver, 1);
  EXPECT_EQ(sink.connections[0].traffic_class, 0x28);
  EXPECT_EQ(sink.connections[0].vtime, 4321u);
  b.Send(wire::Accept{incoming.connection, 30});

  a.Send(wire::PostSend{21, 20, 500, 5, 3});
  b.Send(wire::PostRecv{31, 30, 600, {{8, 3}}});
  PumpFor(server, milliseconds(20));
  ASSERT_EQ(sink.posts.size(), 2u);
  EXPECT_EQ(sink.posts[0].kind, PostKind::kSend);
  EXPECT_EQ(sink.posts[0].rank, 0);
  EXPECT_EQ(sink.posts[0].peer, 1);
  EXPECT_EQ(sink.posts[0].connection, connected.connection);
  EXPECT_EQ(sink.posts[0].vtime, 500u);
  EXPECT_EQ(sink.posts[0].size, 5u);
  EXPECT_EQ(sink.posts[0].tag, 3);
  EXPECT_EQ(sink.posts[1].kind, PostKind::kRecv);
  EXPECT_EQ(sink.posts[1].rank, 1);
  EXPECT_EQ(sink.posts[1].peer, 0);
  ASSERT_EQ(sink.posts[1].slots.size(), 1u);
  EXPECT_EQ(sink.posts[1].slots[0].size, 8u);

  // Asked before the payload arrived: held.
  EXPECT_TRUE(server.CompleteSend(0, 21, 900));
  EXPECT_TRUE(server.DeliverFromSend(1, 31, 0, 0, 21, 950));
  EXPECT_FALSE(a.Receive(milliseconds(50)).has_value());
  EXPECT_FALSE(b.Receive(milliseconds(10)).has_value());
  EXPECT_EQ(server.held_payload_bytes(), 5u);

  const uint8_t hello[] = {'h', 'e', 'l', 'l', 'o'};
  a.Send(wire::Data{21, 0, 0, wire::ByteView{hello, 5}});
  const wire::Complete sent = Expect<wire::Complete>(a.Receive());
  EXPECT_EQ(sent.request, 21u);
  EXPECT_EQ(sent.delivery_vtime, 900u);
  EXPECT_TRUE(sent.sizes.empty());
  const wire::Complete received = Expect<wire::Complete>(b.Receive());
  EXPECT_EQ(received.request, 31u);
  EXPECT_EQ(received.delivery_vtime, 950u);
  EXPECT_EQ(received.sizes, std::vector<uint64_t>({5}));
  const wire::Data data = Expect<wire::Data>(b.Receive());
  EXPECT_EQ(data.request, 31u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(data.bytes.data), data.bytes.size), "hello");
  EXPECT_EQ(server.held_payload_bytes(), 0u);
  // Each send is delivered once.
  EXPECT_FALSE(server.DeliverFromSend(1, 31, 0, 0, 21, 950));
}

// A sender whose send completed may close its comm and end its job (Goodbye) before the
// receiver posts the receive that message is for (seen with two real PyTorch ranks: the
// receiver's last receive then never completed). The message stays in flight and is
// delivered; a sender that disconnects without Goodbye takes its messages with it.
TEST(BridgeServer, AMessageOutlivesASenderThatSaidGoodbye) {
  RecordingSink sink;
  BridgeServer server(Options(3), &sink);
  RawClient a(server, server.unix_endpoint());
  RawClient b(server, server.unix_endpoint());
  RawClient c(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 3));
  Expect<wire::Welcome>(b.Handshake(1, 3));
  Expect<wire::Welcome>(c.Handshake(2, 3));
  b.Send(wire::Listen{10, 77});
  b.Send(wire::Listen{11, 78});
  a.Send(wire::Connect{20, 1, 0, 10, 77});
  c.Send(wire::Connect{40, 1, 0, 11, 78});
  Expect<wire::Connected>(a.Receive());
  const wire::Incoming from_a = Expect<wire::Incoming>(b.Receive());
  Expect<wire::Connected>(c.Receive());
  const wire::Incoming from_c = Expect<wire::Incoming>(b.Receive());
  b.Send(wire::Accept{from_a.connection, 30});
  b.Send(wire::Accept{from_c.connection, 50});

  const uint8_t bytes[] = {'b', 'y', 'e'};
  for (RawClient* sender : {&a, &c}) {
    const uint64_t comm = sender == &a ? 20 : 40;
    sender->Send(wire::PostSend{21, comm, 500, 3, 0});
    sender->Send(wire::Data{21, 0, 0, wire::ByteView{bytes, 3}});
  }
  PumpFor(server, milliseconds(20));
  EXPECT_TRUE(server.CompleteSend(0, 21, 900));
  EXPECT_EQ(Expect<wire::Complete>(a.Receive()).request, 21u);
  EXPECT_TRUE(server.CompleteSend(2, 21, 900));
  EXPECT_EQ(Expect<wire::Complete>(c.Receive()).request, 21u);
  a.Send(wire::Close{wire::CloseKind::kSend, 20});
  c.Send(wire::Close{wire::CloseKind::kSend, 40});
  PumpFor(server, milliseconds(20));
  a.Send(wire::Goodbye{950});
  EXPECT_TRUE(a.ClosedByServer());
  c.Close();
  PumpFor(server, milliseconds(50));

  b.Send(wire::PostRecv{31, 30, 1000, {{8, 0}}});
  b.Send(wire::PostRecv{32, 50, 1000, {{8, 0}}});
  PumpFor(server, milliseconds(20));
  EXPECT_TRUE(server.DeliverFromSend(1, 31, 0, 0, 21, 1000));
  const wire::Complete received = Expect<wire::Complete>(b.Receive());
  EXPECT_EQ(received.request, 31u);
  EXPECT_EQ(received.sizes, std::vector<uint64_t>({3}));
  const wire::Data data = Expect<wire::Data>(b.Receive());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(data.bytes.data), data.bytes.size), "bye");
  EXPECT_FALSE(server.DeliverFromSend(1, 32, 0, 2, 21, 1000)) << "the disconnected sender's";
  EXPECT_EQ(server.held_payload_bytes(), 0u);
}

TEST(BridgeServer, AReceiveWithSeveralBuffersCompletesWhenAllAreFilled) {
  RecordingSink sink;
  BridgeServer server(Options(2), &sink);
  RawClient a(server, server.unix_endpoint());
  RawClient b(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 2));
  Expect<wire::Welcome>(b.Handshake(1, 2));
  b.Send(wire::Listen{1, 5});
  a.Send(wire::Connect{2, 1, -1, 1, 5});
  const uint64_t connection = Expect<wire::Connected>(a.Receive()).connection;
  Expect<wire::Incoming>(b.Receive());
  b.Send(wire::Accept{connection, 3});
  b.Send(wire::PostRecv{4, 3, 0, {{10, 1}, {10, 2}}});
  PumpFor(server, milliseconds(20));
  // Messages made up by the simulator (from a simulated rank), out of buffer order.
  EXPECT_TRUE(server.DeliverBytes(1, 4, 1, {7, 7, 7}, 3000));
  EXPECT_FALSE(b.Receive(milliseconds(30)).has_value());
  EXPECT_THROW(server.DeliverBytes(1, 4, 1, {1}, 3000), std::invalid_argument);  // filled
  EXPECT_THROW(server.DeliverBytes(1, 4, 0, std::vector<uint8_t>(11), 1), std::invalid_argument);
  EXPECT_THROW(server.DeliverBytes(1, 4, 2, {1}, 1), std::invalid_argument);  // no buffer 2
  EXPECT_TRUE(server.DeliverBytes(1, 4, 0, {1, 2}, 2000));
  const wire::Complete complete = Expect<wire::Complete>(b.Receive());
  EXPECT_EQ(complete.delivery_vtime, 3000u);  // the later of the two
  EXPECT_EQ(complete.sizes, std::vector<uint64_t>({2, 3}));
  const wire::Data first = Expect<wire::Data>(b.Receive());
  EXPECT_EQ(first.slot, 0u);
  EXPECT_EQ(first.bytes.size, 2u);
  const wire::Data second = Expect<wire::Data>(b.Receive());
  EXPECT_EQ(second.slot, 1u);
  EXPECT_EQ(second.bytes.size, 3u);
}

TEST(BridgeServer, AConnectWaitsForItsListenThenIsRefusedIfItNeverComes) {
  RecordingSink sink;
  ServerOptions options = Options(2);
  options.handshake_timeout = milliseconds(300);
  BridgeServer server(options, &sink);
  RawClient a(server, server.unix_endpoint());
  RawClient b(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 2));
  Expect<wire::Welcome>(b.Handshake(1, 2));
  // Connect first, Listen after: the two sockets have no order between them.
  a.Send(wire::Connect{2, 1, -1, 40, 9});
  PumpFor(server, milliseconds(30));
  b.Send(wire::Listen{40, 9});
  Expect<wire::Connected>(a.Receive());
  // A listen that never comes: refused after the handshake timeout, naming the comm.
  a.Send(wire::Connect{3, 1, -1, 41, 9});
  const wire::Error error = Expect<wire::Error>(a.Receive(milliseconds(3000)));
  EXPECT_EQ(error.code, wire::ErrorCode::kRefused);
  EXPECT_EQ(error.id, 3u);
  EXPECT_EQ(error.text, "connect refused: rank 1 has no listen 41");
  // A handle with the wrong nonce is refused at once.
  a.Send(wire::Connect{4, 1, -1, 40, 8});
  EXPECT_EQ(Expect<wire::Error>(a.Receive()).text,
            "connect refused: the handle does not match listen 40 of rank 1 (wrong nonce: a "
            "stale or foreign handle)");
}

TEST(BridgeServer, AConnectClosedWhileWaitingIsForgotten) {
  RecordingSink sink;
  BridgeServer server(Options(2), &sink);
  RawClient a(server, server.unix_endpoint());
  RawClient b(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 2));
  Expect<wire::Welcome>(b.Handshake(1, 2));
  a.Send(wire::Connect{2, 1, -1, 40, 9});
  a.Send(wire::Close{wire::CloseKind::kSend, 2});
  PumpFor(server, milliseconds(20));
  b.Send(wire::Listen{40, 9});
  EXPECT_FALSE(a.Receive(milliseconds(50)).has_value());
  EXPECT_FALSE(b.Receive(milliseconds(10)).has_value());
  EXPECT_TRUE(sink.connections.empty());
}

TEST(BridgeServer, PayloadBytesOutOfOrderEndTheRanksSession) {
  RecordingSink sink;
  BridgeServer server(Options(2), &sink);
  RawClient a(server, server.unix_endpoint());
  RawClient b(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 2));
  Expect<wire::Welcome>(b.Handshake(1, 2));
  b.Send(wire::Listen{1, 5});
  a.Send(wire::Connect{2, 1, -1, 1, 5});
  Expect<wire::Connected>(a.Receive());
  a.Send(wire::PostSend{3, 2, 0, 10, 0});
  const uint8_t bytes[4] = {};
  a.Send(wire::Data{3, 4, 0, wire::ByteView{bytes, 4}});  // offset 4 before offset 0
  const wire::Error error = Expect<wire::Error>(a.Receive());
  EXPECT_EQ(error.code, wire::ErrorCode::kProtocol);
  EXPECT_TRUE(a.ClosedByServer());
  ASSERT_EQ(sink.events.size(), 1u);
  EXPECT_EQ(sink.events[0],
            "DISCONNECT 0 protocol error: Data for send 3 at offset 4 with 4 bytes (expected "
            "offset 0, at most 10 bytes)");
}

TEST(BridgeServer, PostsOnUnknownCommsFailOnlyThatRequest) {
  RecordingSink sink;
  BridgeServer server(Options(1), &sink);
  RawClient a(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 1));
  a.Send(wire::PostSend{5, 99, 0, 1, 0});
  const wire::Error error = Expect<wire::Error>(a.Receive());
  EXPECT_EQ(error.code, wire::ErrorCode::kInvalidUsage);
  EXPECT_EQ(error.id, 5u);
  EXPECT_EQ(error.text, "isend on comm 99, which is not a connected send comm");
  EXPECT_TRUE(server.connected(0));
  EXPECT_TRUE(sink.posts.empty());
}

TEST(BridgeServer, TheDefaultSocketLivesInAPrivateDirectory) {
  RecordingSink sink;
  std::string path;
  {
    BridgeServer server(Options(1), &sink);
    ASSERT_EQ(server.unix_endpoint().rfind("unix:", 0), 0u);
    path = server.unix_endpoint().substr(5);
    const std::string dir = path.substr(0, path.rfind('/'));
    struct stat info {};
    ASSERT_EQ(stat(dir.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0700u);
    ASSERT_EQ(stat(path.c_str(), &info), 0);
    EXPECT_TRUE(S_ISSOCK(info.st_mode));
    EXPECT_EQ(info.st_mode & 0777, 0600u);
  }
  struct stat info {};
  EXPECT_NE(stat(path.c_str(), &info), 0) << "the socket outlived the server";
}

TEST(BridgeServer, AnExplicitPathInAnOpenDirectoryIsRefused) {
  RecordingSink sink;
  ServerOptions options = Options(1);
  options.unix_path = "/tmp/nbox-bridge-test.sock";  // /tmp is world-writable
  try {
    BridgeServer server(options, &sink);
    ADD_FAILURE() << "accepted";
  } catch (const BridgeServerError& error) {
    EXPECT_EQ(std::string(error.what()),
              "bridge server: the directory of /tmp/nbox-bridge-test.sock must belong to this "
              "user with mode 0700 (nothing else may reach the socket)");
  }
}

TEST(BridgeServer, RanksMayJoinOverTcp) {
  RecordingSink sink;
  ServerOptions options = Options(1);
  options.listen_unix = false;
  options.tcp_listen = "127.0.0.1:0";
  BridgeServer server(options, &sink);
  EXPECT_EQ(server.unix_endpoint(), "");
  ASSERT_EQ(server.tcp_endpoint().rfind("tcp:127.0.0.1:", 0), 0u) << server.tcp_endpoint();
  RawClient client(server, server.tcp_endpoint());
  Expect<wire::Welcome>(client.Handshake(0, 1));
  ASSERT_EQ(sink.joins.size(), 1u);
  EXPECT_EQ(sink.joins[0].peer.rfind("127.0.0.1:", 0), 0u);
}

TEST(BridgeServer, BadOptionsAreRefusedWithTheReason) {
  RecordingSink sink;
  ServerOptions options = Options(1);
  options.secret = "short";
  EXPECT_THROW(BridgeServer(options, &sink), BridgeServerError);
  options = Options(0);
  EXPECT_THROW(BridgeServer(options, &sink), BridgeServerError);
  options = Options(1);
  options.heartbeat_timeout = options.heartbeat_interval;
  EXPECT_THROW(BridgeServer(options, &sink), BridgeServerError);
  options = Options(1);
  options.realtime_heartbeat_interval = std::chrono::microseconds(0);
  EXPECT_THROW(BridgeServer(options, &sink), BridgeServerError);
  options.realtime_heartbeat_interval = options.heartbeat_timeout;
  EXPECT_THROW(BridgeServer(options, &sink), BridgeServerError);
  options.realtime_heartbeat_interval = std::chrono::microseconds(1);
  BridgeServer one_microsecond(options, &sink);  // the shortest interval Welcome can carry
}

TEST(BridgeServer, PromisesReachTheSink) {
  RecordingSink sink;
  BridgeServer server(Options(1), &sink);
  RawClient a(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 1));
  a.Send(wire::Promise{1234, true});
  a.Send(wire::Promise{2000, false});
  PumpFor(server, milliseconds(30));
  ASSERT_EQ(sink.promises.size(), 2u);
  EXPECT_EQ(sink.promises[0].vtime, 1234u);
  EXPECT_TRUE(sink.promises[0].blocked);
  EXPECT_EQ(sink.promises[1].vtime, 2000u);
  EXPECT_FALSE(sink.promises[1].blocked);
}

// Completes, Connected and Incoming all count: each can end a wait (wire::WakesWaiter).
TEST(BridgeServer, APromiseSaysWhetherTheRankHadSeenEveryWakeup) {
  RecordingSink sink;
  BridgeServer server(Options(2), &sink);
  RawClient a(server, server.unix_endpoint());
  RawClient b(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 2));
  Expect<wire::Welcome>(b.Handshake(1, 2));
  b.Send(wire::Listen{10, 77});
  a.Send(wire::Connect{20, 1, -1, 10, 77});
  PumpFor(server, milliseconds(20));  // the server makes the connection and sends Connected
  // Made while its Connected was on its way: a waits for it, which is not a wait on the
  // simulator.
  a.Send(wire::Promise{505, true, 0});
  const wire::Connected connected = Expect<wire::Connected>(a.Receive());
  Expect<wire::Incoming>(b.Receive());
  b.Send(wire::Accept{connected.connection, 30});
  a.Send(wire::PostSend{21, 20, 500, 5, 3});
  b.Send(wire::PostRecv{31, 30, 600, {{8, 3}}});
  a.Send(wire::Promise{510, true, 1});  // the Connected seen: 1 of 1
  PumpFor(server, milliseconds(20));
  ASSERT_EQ(sink.promises.size(), 2u);
  EXPECT_FALSE(sink.promises[0].saw_every_wakeup);
  EXPECT_TRUE(sink.promises[1].saw_every_wakeup);

  // Completed and delivered before a's payload arrived: both Completes wait for it, so a
  // promise counting 1 (all that were sent) still missed one.
  ASSERT_TRUE(server.CompleteSend(0, 21, 900));
  ASSERT_TRUE(server.DeliverFromSend(1, 31, 0, 0, 21, 950));
  a.Send(wire::Promise{520, true, 1});
  b.Send(wire::Promise{610, true, 1});
  PumpFor(server, milliseconds(20));
  ASSERT_EQ(sink.promises.size(), 4u);
  EXPECT_FALSE(sink.promises[2].saw_every_wakeup);  // 520 of a or 610 of b
  EXPECT_FALSE(sink.promises[3].saw_every_wakeup);

  // The payload arrives, both Completes go out (2 wake-ups sent to each rank); a promise made
  // before receiving it counts 1, one made after counts 2.
  const uint8_t hello[] = {'h', 'e', 'l', 'l', 'o'};
  a.Send(wire::Data{21, 0, 0, wire::ByteView{hello, 5}});
  a.Send(wire::Promise{530, true, 1});
  PumpFor(server, milliseconds(20));
  Expect<wire::Complete>(a.Receive());
  Expect<wire::Complete>(b.Receive());
  a.Send(wire::Promise{900, true, 2});
  b.Send(wire::Promise{950, false, 2});
  b.Send(wire::Promise{960, true, 3});  // more than were sent: not all of them
  PumpFor(server, milliseconds(20));
  ASSERT_EQ(sink.promises.size(), 8u);
  // The two sessions are read in either order: find each promise by its time.
  const auto saw_all = [&sink](uint64_t vtime) {
    for (const auto& p : sink.promises) {
      if (p.vtime == vtime) return p.saw_every_wakeup;
    }
    ADD_FAILURE() << "no promise at " << vtime;
    return false;
  };
  EXPECT_FALSE(saw_all(530));
  EXPECT_TRUE(saw_all(900));
  EXPECT_TRUE(saw_all(950));
  EXPECT_FALSE(saw_all(960));
}

}  // namespace
}  // namespace nbox::bridge::server
