#include "bridge/nbox/client_handshake.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "bridge/wire/auth.h"
#include "bridge/wire/frame_codec.h"

namespace nbox::bridge::nboxnet {
namespace {

UniqueFd ConnectUnix(const std::string& path, const std::string& where) {
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw std::runtime_error("socket(AF_UNIX): " + ErrnoText(errno));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  // A local connect completes (or fails) at once.
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    throw std::runtime_error("cannot connect to nbox-cosim at " + where + ": " + ErrnoText(errno) +
                             " (is nbox-cosim running, and NBOX_BRIDGE what it printed?)");
  }
  return fd;
}

UniqueFd ConnectTcp(const wire::Endpoint& endpoint, const std::string& where,
                    Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status =
      getaddrinfo(endpoint.host.c_str(), std::to_string(endpoint.port).c_str(), &hints, &found);
  if (status != 0 || found == nullptr) {
    throw std::runtime_error("cannot resolve " + where + ": " + gai_strerror(status));
  }
  InetAddress remote;
  std::memcpy(&remote.sa, found->ai_addr, std::min<size_t>(found->ai_addrlen, sizeof(remote.v6)));
  freeaddrinfo(found);
  try {
    return ConnectBlocking(remote, deadline, "nbox-cosim at " + where);
  } catch (const NetError& error) {
    throw std::runtime_error(error.what());
  }
}

// Reads until one whole frame is decoded.
wire::Message ReadFrame(int fd, wire::FrameDecoder* decoder, Clock::time_point deadline,
                        const std::string& where) {
  while (true) {
    wire::Decoded decoded = decoder->Next();
    if (decoded.refusal == wire::Refusal::kNone) return decoded.message;
    if (decoded.refusal != wire::Refusal::kTruncated) {
      throw std::runtime_error("nbox-cosim at " + where +
                               " sent a malformed frame: " + decoded.reason);
    }
    uint8_t buffer[4096];
    RecvAll(fd, buffer, 1, deadline, "the handshake with nbox-cosim at " + where);
    decoder->Append(buffer, 1);
    const ssize_t more = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (more > 0) decoder->Append(buffer, static_cast<size_t>(more));
  }
}

[[noreturn]] void Unexpected(const wire::Message& message, const char* expected,
                             const std::string& where) {
  if (const auto* error = std::get_if<wire::Error>(&message)) {
    throw std::runtime_error("nbox-cosim at " + where + " refused this rank: " + error->text);
  }
  throw std::runtime_error("nbox-cosim at " + where + " sent " +
                           wire::TypeName(wire::TypeOf(message)) + " where " + expected +
                           " was expected");
}

}  // namespace

OpenedSession OpenSession(const ClientConfig& config) {
  const std::string where = config.endpoint.ToString();
  const Clock::time_point deadline = Clock::now() + config.timeout;
  UniqueFd fd = config.endpoint.kind == wire::Endpoint::Kind::kUnix
                    ? ConnectUnix(config.endpoint.path, where)
                    : ConnectTcp(config.endpoint, where, deadline);
  try {
    wire::Hello hello;
    hello.rank = config.rank;
    hello.world = config.world;
    hello.clock = config.clock;
    hello.pid = static_cast<uint32_t>(getpid());
    hello.nonce = wire::RandomNonce();
    hello.job_id = config.job_id;
    const std::vector<uint8_t> hello_frame = wire::EncodeFrame(hello);
    SendAll(fd.get(), hello_frame.data(), hello_frame.size(), deadline, "Hello to nbox-cosim");

    wire::FrameDecoder decoder(wire::Direction::kToClient, wire::kMaxBodyBytes);
    const wire::Message first = ReadFrame(fd.get(), &decoder, deadline, where);
    const auto* challenge = std::get_if<wire::Challenge>(&first);
    if (challenge == nullptr) Unexpected(first, "Challenge", where);
    const std::vector<uint8_t> hello_body = wire::HelloBody(hello);
    if (!wire::MacsEqual(wire::ServerProof(config.secret, hello_body, challenge->nonce),
                         challenge->proof)) {
      throw std::runtime_error("the server at " + where +
                               " could not prove it knows NBOX_SECRET (a different secret, or "
                               "not nbox-cosim)");
    }
    wire::Auth auth;
    auth.proof = wire::ClientProof(config.secret, hello_body, challenge->nonce);
    const std::vector<uint8_t> auth_frame = wire::EncodeFrame(auth);
    const Clock::time_point auth_sent = Clock::now();
    SendAll(fd.get(), auth_frame.data(), auth_frame.size(), deadline, "Auth to nbox-cosim");

    const wire::Message second = ReadFrame(fd.get(), &decoder, deadline, where);
    const Clock::time_point welcome_read = Clock::now();
    const auto* welcome = std::get_if<wire::Welcome>(&second);
    if (welcome == nullptr) Unexpected(second, "Welcome", where);
    if (decoder.buffered() != 0) {
      throw std::runtime_error("nbox-cosim at " + where + " sent frames before the session opened");
    }
    OpenedSession session;
    session.welcome = *welcome;
    session.welcome_stamped = auth_sent + (welcome_read - auth_sent) / 2;
    session.fd = std::move(fd);
    return session;
  } catch (const NetError& error) {
    throw std::runtime_error(error.what());
  }
}

}  // namespace nbox::bridge::nboxnet
