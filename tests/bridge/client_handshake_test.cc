// Where a realtime rank's clock starts (bridge/nbox/client_handshake.h, welcome_stamped): a
// hand-written server reads its clock for Welcome's start while the handshake's frames are
// slow on the way, and the rank's clock must read the server's clock within what Cristian's
// estimate guarantees (half the round trip), not lag it by Welcome's transit time.
#include "bridge/nbox/client_handshake.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "bridge/nbox/rank_clock.h"
#include "bridge/wire/auth.h"
#include "bridge/wire/frame_codec.h"

namespace nbox::bridge::nboxnet {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

constexpr char kSecret[] = "handshake-test-secret-0123456789";

int64_t SteadyNs(Steady::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

wire::Message ReadOne(int fd, wire::FrameDecoder* decoder) {
  while (true) {
    wire::Decoded decoded = decoder->Next();
    if (decoded.refusal == wire::Refusal::kNone) return decoded.message;
    if (decoded.refusal != wire::Refusal::kTruncated) ADD_FAILURE() << decoded.reason;
    uint8_t buffer[512];
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) return wire::Message{};
    decoder->Append(buffer, static_cast<size_t>(n));
  }
}

void WriteAll(int fd, const std::vector<uint8_t>& frame) {
  ASSERT_EQ(write(fd, frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
}

// A server for one handshake whose clock is this host's steady clock (in ns). Auth reaches it
// `to_server` late (it waits that long after Auth is readable before it reads it), it reads its
// clock for Welcome's start at once, and Welcome leaves `to_client` later.
class SlowHandshakeServer {
 public:
  SlowHandshakeServer(milliseconds to_server, milliseconds to_client) {
    std::string pattern = (std::filesystem::temp_directory_path() / "nbox-handshake-XXXXXX");
    directory_ = mkdtemp(pattern.data());
    path_ = directory_ + "/bridge.sock";
    listen_fd_ = UniqueFd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    EXPECT_EQ(bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(listen(listen_fd_.get(), 1), 0);
    thread_ = std::thread([this, to_server, to_client] { Serve(to_server, to_client); });
  }
  ~SlowHandshakeServer() {
    thread_.join();
    unlink(path_.c_str());
    rmdir(directory_.c_str());
  }
  const std::string& path() const { return path_; }
  int64_t stamped_ns() const { return stamped_ns_; }

 private:
  void Serve(milliseconds to_server, milliseconds to_client) {
    const UniqueFd fd(accept(listen_fd_.get(), nullptr, nullptr));
    wire::FrameDecoder decoder(wire::Direction::kToServer, wire::kMaxBodyBytes);
    const wire::Hello hello = std::get<wire::Hello>(ReadOne(fd.get(), &decoder));
    wire::Challenge challenge;
    challenge.nonce = wire::RandomNonce();
    challenge.proof = wire::ServerProof(kSecret, wire::HelloBody(hello), challenge.nonce);
    WriteAll(fd.get(), wire::EncodeFrame(challenge));
    pollfd readable{fd.get(), POLLIN, 0};
    ASSERT_EQ(poll(&readable, 1, 5000), 1);
    std::this_thread::sleep_for(to_server);
    std::get<wire::Auth>(ReadOne(fd.get(), &decoder));
    stamped_ns_ = SteadyNs(Steady::now());
    std::this_thread::sleep_for(to_client);
    wire::Welcome welcome{1, static_cast<uint64_t>(stamped_ns_), 1000, 100000};
    WriteAll(fd.get(), wire::EncodeFrame(welcome));
  }

  std::string directory_;
  std::string path_;
  UniqueFd listen_fd_;
  std::thread thread_;
  int64_t stamped_ns_ = 0;
};

ClientConfig RealtimeConfig(const std::string& path) {
  ClientConfig config;
  config.endpoint.kind = wire::Endpoint::Kind::kUnix;
  config.endpoint.path = path;
  config.secret = kSecret;
  config.world = 1;
  config.clock = wire::ClockMode::kRealtime;
  return config;
}

// The rank's realtime clock minus the server's (this host's steady clock), read now.
int64_t ClockError(const OpenedSession& session) {
  const RankClock clock(wire::ClockMode::kRealtime, session.welcome.start_vtime,
                        session.welcome_stamped);
  const Steady::time_point now = Steady::now();
  return static_cast<int64_t>(clock.Now(now)) - SteadyNs(now);
}

TEST(ClientHandshake, ARealtimeClockDoesNotLagTheServerByWelcomesTransit) {
  // 30 ms each way: a clock started when Welcome arrives would read 30 ms behind the server's.
  const auto server = std::make_unique<SlowHandshakeServer>(milliseconds(30), milliseconds(30));
  const OpenedSession session = OpenSession(RealtimeConfig(server->path()));
  const int64_t error = ClockError(session);
  EXPECT_LT(std::llabs(error), 10'000'000) << "ns; the transit each way was 30 ms";
}

TEST(ClientHandshake, ARealtimeClockIsWithinHalfTheRoundTripWhenOnlyWelcomeIsSlow) {
  // Cristian's bound: whatever the split of the round trip, the error is at most half of it.
  const auto before = Steady::now();
  const auto server = std::make_unique<SlowHandshakeServer>(milliseconds(0), milliseconds(40));
  const OpenedSession session = OpenSession(RealtimeConfig(server->path()));
  const int64_t round_trip = SteadyNs(Steady::now()) - SteadyNs(before);
  const int64_t error = ClockError(session);
  EXPECT_LE(std::llabs(error), round_trip / 2 + 1'000'000) << "ns; round trip " << round_trip;
  EXPECT_LT(error, 0) << "the server read its clock before Welcome's slow way back";
}

}  // namespace
}  // namespace nbox::bridge::nboxnet
