// The server's side of emulated ranks (ServerOptions::real): synthetic handles answered by the
// server, connections from emulated senders made by the server once the bootstrap registered a
// listen, lanes, synthetic completions, heartbeats and op reports reaching the sink. Hand-written
// wire clients over real sockets (raw_client.h); expected values are the frames' own fields.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bridge/server/bridge_server.h"
#include "bridge/wire/listen_handle.h"
#include "tests/bridge/raw_client.h"

namespace nbox::bridge::server {
namespace {

using namespace testing;  // NOLINT: the helpers of raw_client.h

// World of 4: ranks 0 and 2 real, 1 and 3 emulated.
ServerOptions Mixed() {
  ServerOptions options = Options(4);
  options.real = {true, false, true, false};
  return options;
}

TEST(ServerEmulated, AnEmulatedRankMayNotJoin) {
  RecordingSink sink;
  BridgeServer server(Mixed(), &sink);
  EXPECT_TRUE(server.is_real(0));
  EXPECT_FALSE(server.is_real(1));
  RawClient client(server, server.unix_endpoint());
  const wire::Error error = Expect<wire::Error>(client.Handshake(1, 4));
  EXPECT_EQ(error.code, wire::ErrorCode::kAuthFailed);
  EXPECT_EQ(error.text, "rank 1 is emulated in this job (not one of its real ranks)");
  EXPECT_TRUE(sink.joins.empty());
}

TEST(ServerEmulated, RealRanksMustBeNamedForEveryRank) {
  RecordingSink sink;
  ServerOptions options = Mixed();
  options.real = {true, false};
  try {
    BridgeServer server(options, &sink);
    FAIL() << "accepted";
  } catch (const BridgeServerError& error) {
    EXPECT_EQ(std::string(error.what()), "bridge server: real names 2 ranks, the world has 4");
  }
}

TEST(ServerEmulated, AConnectToASyntheticHandleIsAnsweredByTheServerWithoutPayload) {
  RecordingSink sink;
  BridgeServer server(Mixed(), &sink);
  RawClient a(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 4));
  // Rank 1's synthetic listen for messages from rank 0 on lane 2.
  a.Send(wire::Connect{5, 1, -1, wire::SyntheticListenId(0, 2), 0});
  const wire::Connected connected = Expect<wire::Connected>(a.Receive());
  EXPECT_EQ(connected.comm, 5u);
  EXPECT_FALSE(connected.payload_wanted);
  ASSERT_EQ(sink.connections.size(), 1u);
  EXPECT_EQ(sink.connections[0].sender, 0);
  EXPECT_EQ(sink.connections[0].receiver, 1);
  EXPECT_EQ(sink.connections[0].lane, 2);
  EXPECT_EQ(sink.connections[0].id, connected.connection);

  a.Send(wire::PostSend{6, 5, 1000, 4096, 0});
  PumpFor(server, milliseconds(20));
  ASSERT_EQ(sink.posts.size(), 1u);
  EXPECT_EQ(sink.posts[0].peer, 1);
  EXPECT_EQ(sink.posts[0].lane, 2);
  EXPECT_EQ(server.held_payload_bytes(), 0u);
  EXPECT_TRUE(server.CompleteSend(0, 6, 1500));
  const wire::Complete complete = Expect<wire::Complete>(a.Receive());
  EXPECT_EQ(complete.request, 6u);
  EXPECT_EQ(complete.delivery_vtime, 1500u);
  EXPECT_FALSE(complete.synthetic);
  // The send is gone once completed: nothing will ever deliver it.
  EXPECT_FALSE(server.CompleteSend(0, 6, 1600));
}

TEST(ServerEmulated, DataForAPayloadlessSendIsAProtocolError) {
  RecordingSink sink;
  BridgeServer server(Mixed(), &sink);
  RawClient a(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 4));
  a.Send(wire::Connect{5, 3, -1, wire::SyntheticListenId(0, 0), 0});
  Expect<wire::Connected>(a.Receive());
  a.Send(wire::PostSend{6, 5, 0, 4, 0});
  const uint8_t bytes[4] = {1, 2, 3, 4};
  a.Send(wire::Data{6, 0, 0, wire::ByteView{bytes, 4}});
  const wire::Error error = Expect<wire::Error>(a.Receive());
  EXPECT_EQ(error.code, wire::ErrorCode::kProtocol);
  EXPECT_NE(error.text.find("whose payload was not wanted"), std::string::npos) << error.text;
}

TEST(ServerEmulated, HandlesThatAreNotTheSendersSyntheticListenAreRefused) {
  RecordingSink sink;
  BridgeServer server(Mixed(), &sink);
  RawClient a(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 4));
  a.Send(wire::Connect{5, 1, -1, 77, 0});                               // a plugin listen id
  a.Send(wire::Connect{7, 1, -1, wire::SyntheticListenId(2, 0), 0});    // rank 2's listen
  a.Send(wire::Connect{9, 1, -1, wire::SyntheticListenId(0, 0), 123});  // a nonce
  for (uint64_t comm : {5u, 7u, 9u}) {
    const wire::Error error = Expect<wire::Error>(a.Receive());
    EXPECT_EQ(error.code, wire::ErrorCode::kRefused);
    EXPECT_EQ(error.id, comm);
    EXPECT_NE(error.text.find("rank 1 is emulated"), std::string::npos) << error.text;
  }
  EXPECT_TRUE(sink.connections.empty());
}

// The server connects an emulated sender to a real rank's listen once it knows both the
// registration and the Listen, in either order.
TEST(ServerEmulated, AnEmulatedSenderIsConnectedOnceListenAndRegistrationAreThere) {
  RecordingSink sink;
  BridgeServer server(Mixed(), &sink);
  RawClient b(server, server.unix_endpoint());
  Expect<wire::Welcome>(b.Handshake(2, 4));
  // Registration first, then the Listen frame.
  server.RegisterListen(2, 40, 1, 0);
  EXPECT_TRUE(sink.connections.empty());
  b.Send(wire::Listen{40, 99});
  const wire::Incoming first = Expect<wire::Incoming>(b.Receive());
  EXPECT_EQ(first.listen, 40u);
  EXPECT_EQ(first.peer, 1u);
  // Listen first, then the registration.
  b.Send(wire::Listen{41, 98});
  PumpFor(server, milliseconds(20));
  ASSERT_EQ(sink.connections.size(), 1u);
  server.RegisterListen(2, 41, 3, 1);
  const wire::Incoming second = Expect<wire::Incoming>(b.Receive());
  EXPECT_EQ(second.listen, 41u);
  EXPECT_EQ(second.peer, 3u);
  ASSERT_EQ(sink.connections.size(), 2u);
  EXPECT_EQ(sink.connections[0].sender, 1);
  EXPECT_EQ(sink.connections[0].receiver, 2);
  EXPECT_EQ(sink.connections[0].lane, 0);
  EXPECT_EQ(sink.connections[0].id, first.connection);
  EXPECT_EQ(sink.connections[1].sender, 3);
  EXPECT_EQ(sink.connections[1].lane, 1);

  // Accept, post a two-buffer receive, and have it filled without bytes.
  b.Send(wire::Accept{second.connection, 50});
  b.Send(wire::PostRecv{51, 50, 700, {{100, 0}, {200, 1}}});
  PumpFor(server, milliseconds(20));
  ASSERT_EQ(sink.posts.size(), 1u);
  EXPECT_EQ(sink.posts[0].peer, 3);
  EXPECT_EQ(sink.posts[0].lane, 1);
  EXPECT_TRUE(server.DeliverSynthetic(2, 51, 1, 150, 900));
  // A receive fills all its buffers one way: bytes now would mix the two.
  EXPECT_THROW(server.DeliverBytes(2, 51, 0, {1, 2}, 900), std::invalid_argument);
  EXPECT_THROW(server.DeliverSynthetic(2, 51, 0, 101, 900), std::invalid_argument);  // too big
  EXPECT_TRUE(server.DeliverSynthetic(2, 51, 0, 100, 800));
  const wire::Complete complete = Expect<wire::Complete>(b.Receive());
  EXPECT_EQ(complete.request, 51u);
  EXPECT_TRUE(complete.synthetic);
  EXPECT_EQ(complete.delivery_vtime, 900u);
  EXPECT_EQ(complete.sizes, std::vector<uint64_t>({100, 150}));
  EXPECT_FALSE(b.Receive(milliseconds(30)).has_value()) << "no Data after a synthetic Complete";
}

TEST(ServerEmulated, RegistrationsAreChecked) {
  RecordingSink sink;
  BridgeServer server(Mixed(), &sink);
  EXPECT_THROW(server.RegisterListen(4, 1, 0, 0), std::invalid_argument);   // rank out of range
  EXPECT_THROW(server.RegisterListen(0, 1, -1, 0), std::invalid_argument);  // sender
  EXPECT_THROW(server.RegisterListen(0, 1, 0, 0), std::invalid_argument);   // itself
  EXPECT_THROW(server.RegisterListen(1, 1, 0, 0), std::invalid_argument);   // emulated listener
  EXPECT_THROW(server.RegisterListen(0, 1, 2, -1), std::invalid_argument);  // lane
  server.RegisterListen(0, 1, 2, 0);
  EXPECT_THROW(server.RegisterListen(0, 1, 3, 0), std::invalid_argument);  // twice
}

TEST(ServerEmulated, RealToRealConnectionsTakeTheRegisteredLane) {
  RecordingSink sink;
  BridgeServer server(Mixed(), &sink);
  RawClient a(server, server.unix_endpoint());
  RawClient b(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 4));
  Expect<wire::Welcome>(b.Handshake(2, 4));
  server.RegisterListen(2, 40, 0, 3);
  b.Send(wire::Listen{40, 9});
  b.Send(wire::Listen{41, 9});  // not registered: NCCL's own bootstrap, say
  PumpFor(server, milliseconds(20));
  EXPECT_TRUE(sink.connections.empty()) << "a real sender connects by itself";
  a.Send(wire::Connect{5, 2, -1, 40, 9});
  EXPECT_TRUE(Expect<wire::Connected>(a.Receive()).payload_wanted);
  a.Send(wire::Connect{6, 2, -1, 41, 9});
  Expect<wire::Connected>(a.Receive());
  ASSERT_EQ(sink.connections.size(), 2u);
  EXPECT_EQ(sink.connections[0].lane, 3);
  EXPECT_EQ(sink.connections[1].lane, -1);
  a.Send(wire::PostSend{7, 5, 10, 0, 0});
  PumpFor(server, milliseconds(20));
  ASSERT_EQ(sink.posts.size(), 1u);
  EXPECT_EQ(sink.posts[0].lane, 3);
}

TEST(ServerEmulated, HeartbeatsAndOpReportsReachTheSink) {
  RecordingSink sink;
  BridgeServer server(Mixed(), &sink);
  RawClient a(server, server.unix_endpoint());
  Expect<wire::Welcome>(a.Handshake(0, 4));
  a.Send(wire::Heartbeat{12345});
  const wire::OpReport report{
      777, wire::OpReportKind::kCollective, wire::ReportedOp::kBroadcast, 7, 0, 3, 256, 1024, 9};
  a.Send(report);
  PumpFor(server, milliseconds(30));
  ASSERT_EQ(sink.heartbeats.size(), 1u);
  EXPECT_EQ(sink.heartbeats[0], std::make_pair(0, uint64_t{12345}));
  ASSERT_EQ(sink.ops.size(), 1u);
  EXPECT_EQ(sink.ops[0].first, 0);
  const wire::OpReport& seen = sink.ops[0].second;
  EXPECT_EQ(seen.vtime, 777u);
  EXPECT_EQ(seen.op, wire::ReportedOp::kBroadcast);
  EXPECT_EQ(seen.root, 3);
  EXPECT_EQ(seen.bytes, 1024u);
  EXPECT_EQ(seen.seq, 9u);
}

TEST(ServerEmulated, VirtualRanksGetTheNormalHeartbeatAndRealtimeRanksAShortOne) {
  RecordingSink sink;
  ServerOptions options = Options(2);
  options.heartbeat_interval = milliseconds(300);
  options.realtime_heartbeat_interval = std::chrono::microseconds(40);
  BridgeServer server(options, &sink);
  RawClient realtime(server, server.unix_endpoint());
  EXPECT_EQ(Expect<wire::Welcome>(realtime.Handshake(0, 2)).heartbeat_us, 40u);
  RawClient virtual_rank(server, server.unix_endpoint());
  wire::Hello hello = virtual_rank.MakeHello(1, 2);
  hello.clock = wire::ClockMode::kVirtual;
  virtual_rank.Send(hello);
  const wire::Challenge challenge = Expect<wire::Challenge>(virtual_rank.Receive());
  virtual_rank.Send(
      wire::Auth{wire::ClientProof(kSecret, wire::HelloBody(hello), challenge.nonce)});
  EXPECT_EQ(Expect<wire::Welcome>(virtual_rank.Receive()).heartbeat_us, 300000u);
}

}  // namespace
}  // namespace nbox::bridge::server
