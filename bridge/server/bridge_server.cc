#include "bridge/server/bridge_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bridge/net/inet_address.h"
#include "bridge/server/bridge_server_impl.h"
#include "bridge/wire/auth.h"

namespace nbox::bridge::server {

using wire::ErrorCode;
using State = ServerSession::State;

namespace {

std::string Milliseconds(std::chrono::milliseconds ms) {
  return std::to_string(ms.count()) + " ms";
}

}  // namespace

std::vector<uint8_t> ErrorFrame(ErrorCode code, uint64_t id, std::string text) {
  if (text.size() > wire::kMaxErrorTextBytes) text.resize(wire::kMaxErrorTextBytes);
  std::replace(text.begin(), text.end(), '\0', ' ');
  return wire::EncodeFrame(wire::Error{code, id, std::move(text)});
}

BridgeServer::Impl::Impl(ServerOptions options, BridgeSink* sink)
    : store_([this](int rank, std::vector<uint8_t> frame) { SendTo(rank, std::move(frame)); }),
      options_(std::move(options)),
      sink_(sink) {
  if (sink_ == nullptr) throw BridgeServerError("bridge server: no sink");
  if (options_.world_size < 1 || static_cast<uint32_t>(options_.world_size) > wire::kMaxWorld) {
    throw BridgeServerError("bridge server: world size " + std::to_string(options_.world_size) +
                            " is not in 1.." + std::to_string(wire::kMaxWorld));
  }
  const std::string secret_problem = wire::CheckSecret(options_.secret, "bridge server secret");
  if (!secret_problem.empty()) throw BridgeServerError(secret_problem);
  if (options_.job_id.empty() || options_.job_id.size() > wire::kMaxJobIdBytes) {
    throw BridgeServerError("bridge server: job id must have 1.." +
                            std::to_string(wire::kMaxJobIdBytes) + " characters");
  }
  if (options_.heartbeat_interval.count() < 1 ||
      options_.heartbeat_timeout <= options_.heartbeat_interval) {
    throw BridgeServerError(
        "bridge server: the heartbeat timeout must exceed the interval (>= 1 ms)");
  }
  // Welcome carries either interval in microseconds (u32).
  if (options_.realtime_heartbeat_interval.count() < 1 ||
      options_.heartbeat_timeout <= options_.realtime_heartbeat_interval ||
      std::chrono::microseconds(options_.heartbeat_interval).count() > UINT32_MAX) {
    throw BridgeServerError(
        "bridge server: the realtime heartbeat interval must be >= 1 us and below the heartbeat "
        "timeout, the heartbeat interval at most 4294 s");
  }
  if (!options_.listen_unix && options_.tcp_listen.empty()) {
    throw BridgeServerError("bridge server: neither a Unix socket nor TCP to listen on");
  }
  if (!options_.real.empty() && options_.real.size() != static_cast<size_t>(options_.world_size)) {
    throw BridgeServerError("bridge server: real names " + std::to_string(options_.real.size()) +
                            " ranks, the world has " + std::to_string(options_.world_size));
  }
  ranks_.assign(static_cast<size_t>(options_.world_size), nullptr);
  if (options_.listen_unix) OpenUnix();
  if (!options_.tcp_listen.empty()) OpenTcp();
}

BridgeServer::Impl::~Impl() {
  sessions_.clear();
  unix_fd_.reset();
  if (!unix_path_.empty()) unlink(unix_path_.c_str());
  if (!private_dir_.empty()) rmdir(private_dir_.c_str());
}

void BridgeServer::Impl::OpenUnix() {
  std::string path = options_.unix_path;
  if (path.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir_template =
        std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/nbox-bridge-XXXXXX";
    if (mkdtemp(dir_template.data()) == nullptr) {  // mode 0700
      throw BridgeServerError("bridge server: cannot create a private directory " + dir_template +
                              ": " + ErrnoText(errno));
    }
    private_dir_ = dir_template;
    path = private_dir_ + "/bridge.sock";
  } else {
    const std::string dir = path.substr(0, path.rfind('/'));
    struct stat info {};
    if (stat(dir.empty() ? "/" : dir.c_str(), &info) != 0) {
      throw BridgeServerError("bridge server: the directory of " + path + " does not exist");
    }
    if ((info.st_mode & 077) != 0 || info.st_uid != geteuid()) {
      throw BridgeServerError("bridge server: the directory of " + path +
                              " must belong to this user with mode 0700 (nothing else may reach "
                              "the socket)");
    }
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) {
    throw BridgeServerError("bridge server: socket path " + path + " is too long");
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) throw BridgeServerError("bridge server: socket(AF_UNIX): " + ErrnoText(errno));
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    throw BridgeServerError("bridge server: bind " + path + ": " + ErrnoText(errno));
  }
  unix_path_ = path;
  chmod(path.c_str(), 0600);
  if (listen(fd.get(), SOMAXCONN) != 0) {
    throw BridgeServerError("bridge server: listen on " + path + ": " + ErrnoText(errno));
  }
  unix_fd_ = std::move(fd);
  unix_endpoint_ = "unix:" + path;
}

void BridgeServer::Impl::OpenTcp() {
  const std::string& text = options_.tcp_listen;
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    throw BridgeServerError("bridge server: TCP listen '" + text + "' is not host:port");
  }
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string port_text = text.substr(colon + 1);
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port < 0 || port > 65535) {
    throw BridgeServerError("bridge server: TCP listen '" + text + "': port is not 0..65535");
  }
  try {
    LocalAddress local = ParseLocalAddress(host, "bridge server TCP listen");
    local.address.set_port(static_cast<uint16_t>(port));
    InetAddress bound;
    tcp_fd_ = Listen(local.address, &bound);
    tcp_endpoint_ = "tcp:" + bound.ToString();
  } catch (const std::exception& error) {
    throw BridgeServerError(std::string("bridge server: ") + error.what());
  }
}

void BridgeServer::Impl::Warn(const std::string& text) const {
  if (options_.log) {
    options_.log(text);
  } else {
    std::fprintf(stderr, "nbox bridge: %s\n", text.c_str());
  }
}

ServerSession* BridgeServer::Impl::RankSession(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(ranks_.size())) return nullptr;
  return ranks_[static_cast<size_t>(rank)];
}

void BridgeServer::Impl::SendTo(int rank, std::vector<uint8_t> frame) {
  ServerSession* session = RankSession(rank);
  if (session == nullptr) return;
  // Counted as queued: the session's frames reach the rank in this order, so a Promise that
  // counts as many wake-ups was made after the rank had seen every one of them.
  if (frame.size() > 5 && wire::WakesWaiter(static_cast<wire::MessageType>(frame[5]))) {
    ++session->wakeups_sent;
  }
  session->Queue(std::move(frame));
}

void BridgeServer::Impl::Poll(std::chrono::microseconds timeout) {
  using std::chrono::microseconds;
  Clock::time_point now = Clock::now();
  // Wake up in time for the next heartbeat or deadline.
  microseconds wait = std::min<microseconds>(timeout, options_.heartbeat_interval);
  for (const auto& [id, session] : sessions_) {
    if (session->state() != State::kOpen) {
      wait = std::min(wait, std::chrono::ceil<microseconds>(session->deadline() - now));
    }
  }
  for (const PendingConnect& pending : pending_connects_) {
    wait = std::min(wait, std::chrono::ceil<microseconds>(pending.deadline - now));
  }
  wait = std::max(wait, microseconds(0));

  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;  // session of fds[i], 0 for the listeners
  for (int fd : {unix_fd_.get(), tcp_fd_.get()}) {
    if (fd >= 0) {
      fds.push_back({fd, POLLIN, 0});
      ids.push_back(0);
    }
  }
  for (const auto& [id, session] : sessions_) {
    if (session->state() == State::kClosed) continue;
    fds.push_back(
        {session->fd(), static_cast<short>(POLLIN | (session->WantsWrite() ? POLLOUT : 0)), 0});
    ids.push_back(id);
  }
  // ppoll: realtime runs wait for tens of microseconds (poll() counts whole milliseconds).
  const timespec timeout_spec{static_cast<time_t>(wait.count() / 1000000),
                              static_cast<long>(wait.count() % 1000000) * 1000};
  const int ready = ppoll(fds.data(), fds.size(), &timeout_spec, nullptr);
  if (ready < 0 && errno != EINTR)
    throw BridgeServerError("bridge server: poll: " + ErrnoText(errno));
  now = Clock::now();
  for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    if (ids[i] == 0) {
      AcceptFrom(fds[i].fd, fds[i].fd == unix_fd_.get(), now);
      continue;
    }
    auto it = sessions_.find(ids[i]);
    if (it == sessions_.end() || it->second->state() == State::kClosed) continue;
    ServerSession& session = *it->second;
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (!session.Read(now)) {
        Serve(session, now);  // frames that arrived before the end still count
        if (session.state() != State::kClosed) End(session, session.end_reason());
        continue;
      }
      Serve(session, now);
    }
  }
  CheckTimers(now);
  for (auto& [id, session] : sessions_) {
    if (session->state() == State::kClosed || !session->WantsWrite()) continue;
    if (!session->Flush(now)) End(*session, session->end_reason());
  }
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    it = it->second->state() == State::kClosed ? sessions_.erase(it) : std::next(it);
  }
}

void BridgeServer::Impl::AcceptFrom(int listen_fd, bool unix_socket, Clock::time_point now) {
  while (true) {
    UniqueFd fd;
    try {
      fd = AcceptNonBlocking(listen_fd);
    } catch (const NetError& error) {
      Warn(error.what());
      return;
    }
    if (fd.get() < 0) return;
    std::string peer;
    if (unix_socket) {
      ucred credentials{};
      socklen_t length = sizeof(credentials);
      peer = getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0
                 ? "unix pid " + std::to_string(credentials.pid)
                 : "unix";
    } else {
      peer = PeerName(fd.get());
    }
    const uint64_t id = next_session_++;
    auto session = std::make_unique<ServerSession>(id, std::move(fd), peer, now);
    session->set_deadline(now + options_.handshake_timeout);
    sessions_.emplace(id, std::move(session));
  }
}

void BridgeServer::Impl::Serve(ServerSession& session, Clock::time_point now) {
  while (session.state() != State::kClosed && session.state() != State::kClosing) {
    wire::Decoded decoded = session.NextFrame();
    if (decoded.refusal == wire::Refusal::kTruncated) return;
    if (decoded.refusal != wire::Refusal::kNone) {
      ProtocolError(session, decoded.reason);
      return;
    }
    Handle(session, decoded.message, now);
  }
}

void BridgeServer::Impl::Handle(ServerSession& session, wire::Message& message,
                                Clock::time_point now) {
  switch (session.state()) {
    case State::kAwaitHello:
      if (auto* hello = std::get_if<wire::Hello>(&message)) {
        HandleHello(session, *hello);
      } else {
        ProtocolError(session,
                      std::string("expected Hello, got ") + wire::TypeName(wire::TypeOf(message)));
      }
      return;
    case State::kAwaitAuth:
      if (auto* auth = std::get_if<wire::Auth>(&message)) {
        HandleAuth(session, *auth, now);
      } else {
        ProtocolError(session,
                      std::string("expected Auth, got ") + wire::TypeName(wire::TypeOf(message)));
      }
      return;
    case State::kOpen:
      HandleOpen(session, message, now);
      return;
    default:
      return;
  }
}

void BridgeServer::Impl::HandleHello(ServerSession& session, const wire::Hello& hello) {
  session.hello = hello;
  session.hello_body = wire::HelloBody(hello);
  session.server_nonce = wire::RandomNonce();
  wire::Challenge challenge;
  challenge.nonce = session.server_nonce;
  challenge.proof = wire::ServerProof(options_.secret, session.hello_body, session.server_nonce);
  session.Queue(wire::EncodeFrame(challenge));
  session.set_state(State::kAwaitAuth);
}

void BridgeServer::Impl::HandleAuth(ServerSession& session, const wire::Auth& auth,
                                    Clock::time_point now) {
  const wire::Mac expected =
      wire::ClientProof(options_.secret, session.hello_body, session.server_nonce);
  const wire::Hello& hello = session.hello;
  std::string refusal;
  if (!wire::MacsEqual(expected, auth.proof)) {
    refusal = "authentication failed: the proof does not match this server's secret (NBOX_SECRET)";
  } else if (hello.job_id != options_.job_id) {
    refusal = "job id '" + hello.job_id + "' is not this server's job '" + options_.job_id + "'";
  } else if (hello.world != static_cast<uint32_t>(options_.world_size)) {
    refusal = "world size " + std::to_string(hello.world) + " is not this job's " +
              std::to_string(options_.world_size);
  } else if (!is_real(static_cast<int>(hello.rank))) {
    refusal = "rank " + std::to_string(hello.rank) +
              " is emulated in this job (not one of its real ranks)";
  } else if (RankSession(static_cast<int>(hello.rank)) != nullptr) {
    refusal = "rank " + std::to_string(hello.rank) + " is already connected";
  }
  if (!refusal.empty()) {
    Warn("refused " + session.peer() + " (rank " + std::to_string(hello.rank) + "): " + refusal);
    session.Queue(ErrorFrame(ErrorCode::kAuthFailed, 0, refusal));
    session.CloseAfterFlush(now + std::chrono::seconds(1));
    return;
  }
  session.rank = static_cast<int>(hello.rank);
  session.set_state(State::kOpen);
  session.OpenFullSize();
  ranks_[hello.rank] = &session;
  wire::Welcome welcome;
  welcome.session = session.id();
  welcome.start_vtime = NowVtime();
  const std::chrono::microseconds heartbeat = hello.clock == wire::ClockMode::kRealtime
                                                  ? options_.realtime_heartbeat_interval
                                                  : options_.heartbeat_interval;
  welcome.heartbeat_us = static_cast<uint32_t>(heartbeat.count());
  welcome.nic_speed_mbps = options_.nic_speed_mbps;
  session.Queue(wire::EncodeFrame(welcome));
  RankJoin join;
  join.rank = session.rank;
  join.world = static_cast<int>(hello.world);
  join.clock = hello.clock;
  join.pid = hello.pid;
  join.peer = session.peer();
  join.session = session.id();
  sink_->OnJoin(join);
  // Connects that were waiting for this rank may go ahead once it listens; nothing to do yet.
}

void BridgeServer::Impl::TrackId(ServerSession& session, uint64_t id) {
  session.highest_id = std::max(session.highest_id, id);
}

void BridgeServer::Impl::HandleOpen(ServerSession& session, wire::Message& message,
                                    Clock::time_point now) {
  const int rank = session.rank;
  switch (wire::TypeOf(message)) {
    case wire::MessageType::kListen:
      HandleListen(session, std::get<wire::Listen>(message));
      return;
    case wire::MessageType::kConnect:
      HandleConnect(session, std::get<wire::Connect>(message), now);
      return;
    case wire::MessageType::kAccept:
      HandleAccept(session, std::get<wire::Accept>(message));
      return;
    case wire::MessageType::kClose:
      HandleClose(session, std::get<wire::Close>(message));
      return;
    case wire::MessageType::kPostSend:
      HandlePostSend(session, std::get<wire::PostSend>(message));
      return;
    case wire::MessageType::kPostRecv:
      HandlePostRecv(session, std::get<wire::PostRecv>(message));
      return;
    case wire::MessageType::kData: {
      const auto& data = std::get<wire::Data>(message);
      if (!store_.HasRequest(rank, data.request) && data.request <= session.highest_id &&
          requests_.count({rank, data.request}) == 0) {
        return;  // the tail of a send whose comm was closed meanwhile
      }
      const std::string problem = store_.AddPayload(rank, data.request, data.offset, data.bytes);
      if (!problem.empty()) ProtocolError(session, problem);
      return;
    }
    case wire::MessageType::kPromise: {
      const auto& promise = std::get<wire::Promise>(message);
      // Everything that could end the rank's wait reached it before it promised: it saw every
      // completion and connection sent, and no completion waits for a payload (it would be
      // sent later).
      const bool saw_every_wakeup =
          promise.wakeups_seen == session.wakeups_sent && !store_.CompletionWaiting(rank);
      sink_->OnRankPromise(RankPromise{rank, promise.vtime, promise.blocked, saw_every_wakeup});
      return;
    }
    case wire::MessageType::kGoodbye:
      session.said_goodbye = true;
      sink_->OnGoodbye(rank, std::get<wire::Goodbye>(message).vtime);
      End(session, "");
      return;
    case wire::MessageType::kHeartbeat:
      // Read() already noted that the rank is alive.
      sink_->OnHeartbeat(rank, std::get<wire::Heartbeat>(message).vtime);
      return;
    case wire::MessageType::kOpReport:
      sink_->OnOp(rank, std::get<wire::OpReport>(message));
      return;
    case wire::MessageType::kArrivalLag:
      if (session.hello.clock != wire::ClockMode::kRealtime || session.sent_arrival_lag) {
        ProtocolError(session, session.sent_arrival_lag
                                   ? "a second ArrivalLag"
                                   : "ArrivalLag from a rank on the virtual clock");
        return;
      }
      session.sent_arrival_lag = true;
      sink_->OnArrivalLag(rank, std::get<wire::ArrivalLag>(message));
      return;
    case wire::MessageType::kError: {
      const auto& error = std::get<wire::Error>(message);
      End(session, "the rank reported an error: " + error.text);
      return;
    }
    default:
      ProtocolError(session, std::string(wire::TypeName(wire::TypeOf(message))) +
                                 " is not expected after the handshake");
      return;
  }
}

void BridgeServer::Impl::CheckTimers(Clock::time_point now) {
  for (auto& [id, session] : sessions_) {
    switch (session->state()) {
      case State::kAwaitHello:
      case State::kAwaitAuth:
        if (now >= session->deadline()) {
          Warn("dropped " + session->peer() + ": no authentication within " +
               Milliseconds(options_.handshake_timeout));
          session->CloseNow();
        }
        break;
      case State::kClosing:
        if (now >= session->deadline()) session->CloseNow();
        break;
      case State::kOpen:
        if (now - session->last_received() > options_.heartbeat_timeout) {
          End(*session, "no frame from the rank for " + Milliseconds(options_.heartbeat_timeout) +
                            " (heartbeat timeout: hung or unreachable)");
        } else if (now - session->last_sent() >= options_.heartbeat_interval &&
                   !session->WantsWrite()) {
          session->Queue(wire::EncodeFrame(wire::Heartbeat{NowVtime()}));
        }
        break;
      case State::kClosed:
        break;
    }
  }
  std::vector<PendingConnect> waiting;
  waiting.swap(pending_connects_);
  for (PendingConnect& pending : waiting) {
    if (TryConnect(pending)) continue;
    if (now < pending.deadline) {
      pending_connects_.push_back(pending);
      continue;
    }
    const int peer = static_cast<int>(pending.connect.peer);
    Refuse(pending.rank, pending.connect.comm,
           RankSession(peer) == nullptr
               ? "rank " + std::to_string(peer) + " is not connected to nbox-cosim"
               : "rank " + std::to_string(peer) + " has no listen " +
                     std::to_string(pending.connect.listen));
  }
}

void BridgeServer::Impl::ProtocolError(ServerSession& session, const std::string& reason) {
  if (session.state() == State::kClosed || session.state() == State::kClosing) return;
  Warn("protocol error from " + session.peer() +
       (session.rank >= 0 ? " (rank " + std::to_string(session.rank) + ")" : "") + ": " + reason);
  session.Queue(ErrorFrame(ErrorCode::kProtocol, 0, reason));
  if (session.rank >= 0) {
    End(session, "protocol error: " + reason);
  } else {
    session.CloseAfterFlush(Clock::now() + std::chrono::seconds(1));
  }
}

void BridgeServer::Impl::End(ServerSession& session, const std::string& reason) {
  if (session.state() == State::kClosed) return;
  const int rank = session.rank;
  const bool was_open = rank >= 0 && RankSession(rank) == &session;
  // A rank that said Goodbye leaves its messages in flight to be delivered.
  if (was_open) Forget(session, session.said_goodbye);
  if (!session.end_reason().empty()) {
    session.CloseNow();  // the socket is gone: nothing more can be written
  } else {
    session.CloseAfterFlush(Clock::now() + std::chrono::seconds(1));
  }
  if (was_open && !session.said_goodbye) sink_->OnDisconnect(rank, reason);
}

void BridgeServer::Impl::Forget(ServerSession& session, bool keep_in_flight) {
  const int rank = session.rank;
  ranks_[static_cast<size_t>(rank)] = nullptr;
  store_.ForgetRank(rank, keep_in_flight);
  for (auto it = requests_.begin(); it != requests_.end();) {
    it = it->first.first == rank ? requests_.erase(it) : std::next(it);
  }
  for (auto it = listens_.begin(); it != listens_.end();) {
    it = it->first.first == rank ? listens_.erase(it) : std::next(it);
  }
  // A new session of the rank draws its listen ids afresh.
  for (auto it = registrations_.begin(); it != registrations_.end();) {
    it = it->first.first == rank ? registrations_.erase(it) : std::next(it);
  }
  pending_connects_.erase(std::remove_if(pending_connects_.begin(), pending_connects_.end(),
                                         [&](const PendingConnect& p) { return p.rank == rank; }),
                          pending_connects_.end());
  for (auto* comms : {&send_comms_, &recv_comms_}) {
    for (auto it = comms->begin(); it != comms->end();) {
      it = it->first.first == rank ? comms->erase(it) : std::next(it);
    }
  }
}

bool BridgeServer::Impl::FailRequest(int rank, uint64_t request, ErrorCode code,
                                     const std::string& text) {
  ServerSession* session = RankSession(rank);
  if (session == nullptr || requests_.count({rank, request}) == 0) return false;
  store_.Forget(rank, request);
  requests_.erase({rank, request});
  session->Queue(ErrorFrame(code, request, text));
  return true;
}

void BridgeServer::Impl::Disconnect(int rank, ErrorCode code, const std::string& text) {
  ServerSession* session = RankSession(rank);
  if (session == nullptr) return;
  session->Queue(ErrorFrame(code, 0, text));
  session->said_goodbye = true;  // the simulator ended it: nothing to report back to it
  Forget(*session);
  session->CloseAfterFlush(Clock::now() + std::chrono::seconds(1));
}

void BridgeServer::Impl::Shutdown(uint64_t vtime) {
  for (int rank = 0; rank < static_cast<int>(ranks_.size()); ++rank) {
    ServerSession* session = ranks_[static_cast<size_t>(rank)];
    if (session == nullptr) continue;
    session->Queue(wire::EncodeFrame(wire::Goodbye{vtime}));
    session->said_goodbye = true;
    Forget(*session);
    session->CloseAfterFlush(Clock::now() + std::chrono::seconds(1));
  }
}

// --- BridgeServer ----------------------------------------------------------------------------

BridgeServer::BridgeServer(ServerOptions options, BridgeSink* sink)
    : impl_(std::make_unique<Impl>(std::move(options), sink)) {}
BridgeServer::~BridgeServer() = default;

std::string BridgeServer::unix_endpoint() const {
  return impl_->unix_endpoint_;
}
std::string BridgeServer::tcp_endpoint() const {
  return impl_->tcp_endpoint_;
}
void BridgeServer::Poll(std::chrono::microseconds timeout) {
  impl_->Poll(timeout);
}
bool BridgeServer::CompleteSend(int rank, uint64_t request, uint64_t delivery_vtime) {
  return connected(rank) && impl_->store_.CompleteSend(rank, request, delivery_vtime);
}
bool BridgeServer::DeliverFromSend(int recv_rank, uint64_t recv_request, uint32_t slot,
                                   int send_rank, uint64_t send_request, uint64_t delivery_vtime) {
  return impl_->store_.DeliverFromSend(recv_rank, recv_request, slot, send_rank, send_request,
                                       delivery_vtime);
}
bool BridgeServer::DeliverBytes(int recv_rank, uint64_t recv_request, uint32_t slot,
                                std::vector<uint8_t> bytes, uint64_t delivery_vtime) {
  return impl_->store_.DeliverBytes(recv_rank, recv_request, slot, std::move(bytes),
                                    delivery_vtime);
}
bool BridgeServer::DeliverSynthetic(int recv_rank, uint64_t recv_request, uint32_t slot,
                                    uint64_t size, uint64_t delivery_vtime) {
  return impl_->store_.DeliverSynthetic(recv_rank, recv_request, slot, size, delivery_vtime);
}
void BridgeServer::RegisterListen(int rank, uint64_t listen_id, int sender, int lane) {
  impl_->RegisterListen(rank, listen_id, sender, lane);
}
bool BridgeServer::is_real(int rank) const {
  return impl_->is_real(rank);
}
bool BridgeServer::FailRequest(int rank, uint64_t request, wire::ErrorCode code,
                               const std::string& text) {
  return impl_->FailRequest(rank, request, code, text);
}
void BridgeServer::Disconnect(int rank, wire::ErrorCode code, const std::string& text) {
  impl_->Disconnect(rank, code, text);
}
void BridgeServer::Shutdown(uint64_t vtime) {
  impl_->Shutdown(vtime);
}
bool BridgeServer::connected(int rank) const {
  return impl_->connected(rank);
}
uint64_t BridgeServer::held_payload_bytes() const {
  return impl_->store_.held_payload_bytes();
}

}  // namespace nbox::bridge::server
