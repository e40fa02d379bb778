// Test helpers for the bridge server library: a sink that records what the server reports, a
// client speaking the wire protocol by hand over real sockets (pumping the server's Poll while
// it waits), and small utilities. The server runs in the test's thread.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bridge/net/inet_address.h"
#include "bridge/net/socket_util.h"
#include "bridge/server/bridge_server.h"
#include "bridge/wire/auth.h"
#include "bridge/wire/frame_codec.h"

namespace nbox::bridge::server::testing {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

inline constexpr char kSecret[] = "server-test-secret-0123456789";

// Records what the server reports; answers nothing by itself.
class RecordingSink : public BridgeSink {
 public:
  void OnJoin(const RankJoin& join) override { joins.push_back(join); }
  void OnConnection(const ConnectionInfo& c) override { connections.push_back(c); }
  void OnPost(const Post& post) override { posts.push_back(post); }
  void OnRankPromise(const RankPromise& p) override {
    promises.push_back({p.rank, p.vtime, p.blocked, p.saw_every_wakeup});
  }
  void OnHeartbeat(int rank, uint64_t vtime) override { heartbeats.push_back({rank, vtime}); }
  void OnOp(int rank, const wire::OpReport& op) override { ops.push_back({rank, op}); }
  void OnArrivalLag(int rank, const wire::ArrivalLag& lag) override {
    events.push_back("ARRIVAL_LAG " + std::to_string(rank) + " " + std::to_string(lag.completions) +
                     " " + std::to_string(lag.p99_ns) + " " + std::to_string(lag.max_ns));
  }
  void OnGoodbye(int rank, uint64_t vtime) override {
    events.push_back("GOODBYE " + std::to_string(rank) + " " + std::to_string(vtime));
  }
  void OnDisconnect(int rank, const std::string& reason) override {
    events.push_back("DISCONNECT " + std::to_string(rank) + " " + reason);
  }
  struct PromiseSeen {
    int rank;
    uint64_t vtime;
    bool blocked;
    bool saw_every_wakeup;
  };
  std::vector<RankJoin> joins;
  std::vector<ConnectionInfo> connections;
  std::vector<Post> posts;
  std::vector<PromiseSeen> promises;
  std::vector<std::string> events;
  std::vector<std::pair<int, uint64_t>> heartbeats;
  std::vector<std::pair<int, wire::OpReport>> ops;
};

// A client speaking the wire protocol by hand.
class RawClient {
 public:
  RawClient(BridgeServer& server, const std::string& endpoint) : server_(server) {
    if (endpoint.rfind("unix:", 0) == 0) {
      fd_ = UniqueFd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      const std::string path = endpoint.substr(5);
      std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
      connected_ = connect(fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    } else {
      const std::string text = endpoint.substr(4);
      const size_t colon = text.rfind(':');
      InetAddress remote = ParseLocalAddress(text.substr(0, colon), "test").address;
      remote.set_port(static_cast<uint16_t>(std::stoi(text.substr(colon + 1))));
      fd_ = StartConnect(InetAddress(), remote);
      const auto deadline = Clock::now() + milliseconds(2000);
      while (!ConnectFinished(fd_.get(), remote) && Clock::now() < deadline)
        server_.Poll(milliseconds(1));
      connected_ = true;
    }
  }

  bool connected() const { return connected_; }
  void SendBytes(const std::vector<uint8_t>& bytes) {
    ASSERT_EQ(send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void Send(const wire::Message& message) { SendBytes(wire::EncodeFrame(message)); }
  void Close() { fd_.reset(); }

  // The next frame from the server (heartbeats skipped unless `heartbeats`), pumping its Poll
  // meanwhile; nullopt on timeout or EOF.
  std::optional<wire::Message> Receive(milliseconds timeout = milliseconds(2000),
                                       bool heartbeats = false) {
    const auto deadline = Clock::now() + timeout;
    while (true) {
      wire::Decoded decoded = decoder_.Next();
      if (decoded.refusal == wire::Refusal::kNone) {
        if (!heartbeats && std::holds_alternative<wire::Heartbeat>(decoded.message)) continue;
        // Keep Data bytes alive: copy them out of the decoder's buffer.
        if (auto* data = std::get_if<wire::Data>(&decoded.message)) {
          last_data_.assign(data->bytes.data, data->bytes.data + data->bytes.size);
          data->bytes.data = last_data_.data();
        }
        return decoded.message;
      }
      EXPECT_EQ(decoded.refusal, wire::Refusal::kTruncated) << decoded.reason;
      if (Clock::now() > deadline || eof_) return std::nullopt;
      server_.Poll(milliseconds(1));
      uint8_t buffer[65536];
      const ssize_t n = recv(fd_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
      if (n > 0) decoder_.Append(buffer, static_cast<size_t>(n));
      if (n == 0) eof_ = true;
    }
  }
  // True once the server closed the connection (within `timeout`).
  bool ClosedByServer(milliseconds timeout = milliseconds(2000)) {
    const auto deadline = Clock::now() + timeout;
    while (!eof_ && Clock::now() < deadline) {
      if (Receive(milliseconds(10)).has_value()) continue;
    }
    return eof_;
  }

  wire::Hello MakeHello(uint32_t rank, uint32_t world, const std::string& job = "nbox") {
    wire::Hello hello;
    hello.rank = rank;
    hello.world = world;
    hello.clock = wire::ClockMode::kRealtime;
    hello.pid = 4242;
    hello.nonce = wire::RandomNonce();
    hello.job_id = job;
    return hello;
  }
  // Hello, Challenge, Auth; returns the server's answer (Welcome or Error).
  std::optional<wire::Message> Handshake(uint32_t rank, uint32_t world,
                                         const std::string& secret = kSecret,
                                         const std::string& job = "nbox",
                                         wire::ClockMode clock = wire::ClockMode::kRealtime) {
    wire::Hello hello = MakeHello(rank, world, job);
    hello.clock = clock;
    Send(hello);
    std::optional<wire::Message> challenge = Receive();
    if (!challenge || !std::holds_alternative<wire::Challenge>(*challenge)) return challenge;
    wire::Auth auth;
    auth.proof = wire::ClientProof(secret, wire::HelloBody(hello),
                                   std::get<wire::Challenge>(*challenge).nonce);
    Send(auth);
    return Receive();
  }

 private:
  BridgeServer& server_;
  UniqueFd fd_;
  bool connected_ = false;
  bool eof_ = false;
  wire::FrameDecoder decoder_{wire::Direction::kToClient, wire::kMaxBodyBytes};
  std::vector<uint8_t> last_data_;
};

inline ServerOptions Options(int world) {
  ServerOptions options;
  options.world_size = world;
  options.secret = kSecret;
  options.log = [](const std::string&) {};
  return options;
}

template <typename T>
T Expect(const std::optional<wire::Message>& message) {
  if (!message) {
    ADD_FAILURE() << "no frame";
    return T();
  }
  if (!std::holds_alternative<T>(*message)) {
    std::string what = wire::TypeName(wire::TypeOf(*message));
    if (auto* error = std::get_if<wire::Error>(&*message)) what += ": " + error->text;
    ADD_FAILURE() << "got " << what;
    return T();
  }
  return std::get<T>(*message);
}

inline void PumpFor(BridgeServer& server, milliseconds duration) {
  const auto until = Clock::now() + duration;
  while (Clock::now() < until) server.Poll(milliseconds(1));
}

}  // namespace nbox::bridge::server::testing
