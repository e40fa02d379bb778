#include "bridge/nbox/bridge_client.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "bridge/include/nbox_net_ext.h"
#include "bridge/nbox/nbox_log.h"
#include "bridge/wire/arrival_lag.h"
#include "bridge/wire/auth.h"

namespace nbox::bridge::nboxnet {
namespace {

using WallClock = RankClock::WallClock;

std::mutex& GlobalMutex() {
  static auto* mutex = new std::mutex();  // never destroyed: used until the process ends
  return *mutex;
}

std::shared_ptr<BridgeClient>& CurrentClient() {
  static auto* client = new std::shared_ptr<BridgeClient>();
  return *client;
}

}  // namespace

std::shared_ptr<BridgeClient> BridgeClient::Acquire(std::string* error) {
  std::lock_guard<std::mutex> global(GlobalMutex());
  std::shared_ptr<BridgeClient>& current = CurrentClient();
  if (current != nullptr) {
    std::lock_guard<std::mutex> lock(current->mutex_);
    if (!current->failed_ && !current->ended_) {
      ++current->users_;
      return current;
    }
  }
  try {
    ClientConfig config = ConfigFromEnvironment();
    OpenedSession session = OpenSession(config);
    std::shared_ptr<BridgeClient> client(new BridgeClient(std::move(config), std::move(session)));
    client->users_ = 1;
    client->thread_ = std::thread([raw = client.get()] { raw->Run(); });
    NBOX_NET_INFO("rank %u of %u joined nbox-cosim at %s (session %llu, %s clock)",
                  client->config_.rank, client->config_.world,
                  client->config_.endpoint.ToString().c_str(),
                  static_cast<unsigned long long>(client->welcome_.session),
                  client->config_.clock == wire::ClockMode::kVirtual ? "virtual" : "realtime");
    current = client;
    return client;
  } catch (const std::exception& failure) {
    *error = failure.what();
    return nullptr;
  }
}

std::shared_ptr<BridgeClient> BridgeClient::Latest() {
  std::lock_guard<std::mutex> global(GlobalMutex());
  return CurrentClient();
}

void BridgeClient::Release(std::shared_ptr<BridgeClient> client) {
  std::lock_guard<std::mutex> global(GlobalMutex());
  {
    std::unique_lock<std::mutex> lock(client->mutex_);
    if (--client->users_ > 0) return;
    if (!client->failed_ && !client->ended_) {
      if (client->config_.clock == wire::ClockMode::kRealtime) {
        client->Send(wire::SummariseArrivalLags(client->arrival_lags_));
      }
      client->Send(wire::Goodbye{client->NowLocked(WallClock::now())});
      client->ended_ = true;
      client->FlushLocked();
      client->Wake();
      client->DrainLocked(lock);
    }
  }
  // CurrentClient() keeps pointing at the ended session until the next Acquire replaces it.
}

void BridgeClient::DrainLocked(std::unique_lock<std::mutex>& lock) {
  // The process may exit as soon as this returns, taking the I/O thread with it mid-frame
  // (nbox-cosim would read a torn frame where the Goodbye should be): wait until every
  // queued frame has gone, or the session failed, or the session's timeout passed.
  const auto deadline = WallClock::now() + config_.timeout;
  while (!out_.empty() && !failed_ && WallClock::now() < deadline) {
    lock.unlock();
    pollfd writable{fd_.get(), POLLOUT, 0};
    poll(&writable, 1, 10);
    lock.lock();
    FlushLocked();
  }
}

BridgeClient::BridgeClient(ClientConfig config, OpenedSession session)
    : config_(std::move(config)),
      welcome_(session.welcome),
      fd_(std::move(session.fd)),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      decoder_(wire::Direction::kToClient, wire::kMaxBodyBytes),
      clock_(
          config_.clock, welcome_.start_vtime,
          config_.clock == wire::ClockMode::kRealtime ? session.welcome_stamped : WallClock::now()),
      last_sent_(WallClock::now()),
      last_received_(WallClock::now()) {}

BridgeClient::~BridgeClient() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
}

void BridgeClient::Wake() {
  const uint64_t one = 1;
  if (write(wake_fd_.get(), &one, sizeof(one)) < 0) {
    // The counter is saturated or the fd is gone: the thread is awake or stopping anyway.
  }
}

void BridgeClient::Send(const wire::Message& message) {
  out_.PushFrame(wire::EncodeFrame(message));
}

void BridgeClient::FlushLocked() {
  if (failed_ || out_.empty()) return;
  std::string error;
  const bool had = !out_.empty();
  if (!out_.Flush(fd_.get(), &error)) {
    Fail("the connection to nbox-cosim at " + config_.endpoint.ToString() + " broke: " + error);
    return;
  }
  if (had) last_sent_ = WallClock::now();
  if (!out_.empty()) Wake();  // the I/O thread finishes when the socket takes more
}

// --- calls from NCCL -------------------------------------------------------------------------

ncclResult_t BridgeClient::RefuseCall(const char* call) {
  NBOX_NET_WARN("%s: %s", call,
                failed_ ? failure_.c_str() : "the session with nbox-cosim was finalized");
  return failed_ ? ncclRemoteError : ncclInvalidUsage;
}

ncclResult_t BridgeClient::Listen(const std::shared_ptr<BridgeClient>& self, void* handle,
                                  ListenComm** comm) {
  *comm = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_ || ended_) return RefuseCall("listen");
  auto* listen = new ListenComm(NextId(), self);
  ListenHandle h;
  h.rank = config_.rank;
  h.listen = listen->id;
  h.nonce = wire::RandomU64();
  wire::EncodeListenHandle(h, handle);
  listens_[listen->id] = listen;
  Send(wire::Listen{listen->id, h.nonce});
  FlushLocked();
  *comm = listen;
  return ncclSuccess;
}

ncclResult_t BridgeClient::Connect(const std::shared_ptr<BridgeClient>& self, void* handle,
                                   int traffic_class, DataComm** comm) {
  *comm = nullptr;
  ListenHandle h;
  if (!wire::DecodeListenHandle(handle, &h)) {
    NBOX_NET_WARN("connect: the handle was not written by the nbox plugin's listen");
    return ncclInvalidArgument;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_ || ended_) return RefuseCall("connect");
  if (h.progress == 0) {
    auto* send = new DataComm(Comm::Kind::kSend, NextId(), self);
    send->peer = h.rank;
    connecting_[send->id] = send;
    Send(wire::Connect{send->id, h.rank, traffic_class, h.listen, h.nonce});
    FlushLocked();
    wire::SetListenHandleProgress(handle, send->id);
    return ncclSuccess;
  }
  auto it = connecting_.find(h.progress);
  if (it == connecting_.end()) {
    NBOX_NET_WARN("connect: the handle's connection in progress is unknown to this process");
    return ncclInvalidUsage;
  }
  DataComm* send = it->second;
  // Not yet (NCCL calls again): no answer, or one made at a time the clock has not reached.
  if (send->connect_state == 0) return ncclSuccess;
  if (send->connect_state > 0 && NowLocked(WallClock::now()) < send->connected_vtime) {
    return ncclSuccess;
  }
  connecting_.erase(it);
  wire::SetListenHandleProgress(handle, 0);
  if (send->connect_state < 0) {
    const std::string why = refusals_[send->id];
    refusals_.erase(send->id);
    NBOX_NET_WARN("connect to rank %u: %s", send->peer, why.c_str());
    delete send;
    return ncclRemoteError;
  }
  *comm = send;
  return ncclSuccess;
}

ncclResult_t BridgeClient::Accept(ListenComm* listen, DataComm** comm) {
  *comm = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_ || ended_) return RefuseCall("accept");
  if (listen->incoming.empty() || listen->incoming.front().vtime > NowLocked(WallClock::now())) {
    return ncclSuccess;  // none yet, or made at a time the clock has not reached
  }
  const IncomingConnection incoming = listen->incoming.front();
  listen->incoming.pop_front();
  auto* recv = new DataComm(Comm::Kind::kRecv, NextId(), listen->client);
  recv->peer = incoming.peer;
  recv->connection = incoming.connection;
  Send(wire::Accept{incoming.connection, recv->id});
  FlushLocked();
  *comm = recv;
  return ncclSuccess;
}

namespace {

Request* FreeRequest(DataComm* comm) {
  for (Request& request : comm->pool) {
    if (request.state.load(std::memory_order_acquire) == kRequestFree) return &request;
  }
  return nullptr;
}

void ResetRequest(Request* r, uint64_t id, bool is_send, int n) {
  r->error = ncclSuccess;
  r->id = id;
  r->is_send = is_send;
  r->n = n;
  r->completion_known = false;
  r->delivery_vtime = 0;
  r->direct = false;
  r->synthetic = false;
  for (int i = 0; i < kMaxRecvs; ++i) {
    r->received[i] = 0;
    r->sizes[i] = 0;
    r->staging[i] = std::vector<uint8_t>();
  }
}

}  // namespace

ncclResult_t BridgeClient::PostSend(DataComm* comm, void* data, uint64_t size, int tag,
                                    void** request) {
  *request = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_ || ended_) return RefuseCall("isend");
  Request* r = FreeRequest(comm);
  if (r == nullptr) return ncclSuccess;  // all busy: NCCL tries again
  ResetRequest(r, NextId(), true, 1);
  r->data[0] = static_cast<uint8_t*>(data);
  r->capacity[0] = size;
  r->sizes[0] = size;
  r->state.store(kRequestPending, std::memory_order_release);
  requests_[r->id] = r;
  Send(wire::PostSend{r->id, comm->id, NowLocked(WallClock::now()), size, tag});
  if (comm->payload_wanted && size > 0) out_.PushPayload(r->id, r->data[0], size);
  NoteActionLocked();
  FlushLocked();
  *request = r;
  return ncclSuccess;
}

ncclResult_t BridgeClient::PostRecv(DataComm* comm, int n, void** data, const uint64_t* sizes,
                                    const int* tags, void** request) {
  *request = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_ || ended_) return RefuseCall("irecv");
  Request* r = FreeRequest(comm);
  if (r == nullptr) return ncclSuccess;
  ResetRequest(r, NextId(), false, n);
  wire::PostRecv post;
  post.request = r->id;
  post.comm = comm->id;
  post.vtime = NowLocked(WallClock::now());
  for (int i = 0; i < n; ++i) {
    r->data[i] = static_cast<uint8_t*>(data[i]);
    r->capacity[i] = sizes[i];
    post.slots.push_back(wire::RecvSlot{sizes[i], tags[i]});
  }
  r->state.store(kRequestPending, std::memory_order_release);
  requests_[r->id] = r;
  Send(post);
  NoteActionLocked();
  FlushLocked();
  *request = r;
  return ncclSuccess;
}

ncclResult_t BridgeClient::Test(void* request, int* done, int* sizes) {
  uint32_t flags = 0;
  return TestFlags(request, done, sizes, &flags);
}

ncclResult_t BridgeClient::TestFlags(void* request, int* done, int* sizes, uint32_t* flags) {
  auto* r = static_cast<Request*>(request);
  *flags = 0;
  const int state = r->state.load(std::memory_order_acquire);
  if (state == kRequestPending) {
    *done = 0;
    return ncclSuccess;
  }
  *done = 1;
  ncclResult_t result = ncclSuccess;
  if (state == kRequestFailed) {
    result = r->error;
  } else {
    if (r->synthetic) *flags |= NBOX_NET_COMPLETION_SYNTHETIC;
    for (int i = 0; sizes != nullptr && i < r->n; ++i) {
      sizes[i] = r->sizes[i] > INT32_MAX ? INT32_MAX : static_cast<int>(r->sizes[i]);
    }
  }
  r->state.store(kRequestFree, std::memory_order_release);
  return result;
}

void BridgeClient::Close(Comm* comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  wire::CloseKind kind = wire::CloseKind::kListen;
  if (comm->kind == Comm::Kind::kListen) {
    listens_.erase(comm->id);
  } else {
    auto* data = static_cast<DataComm*>(comm);
    kind = comm->kind == Comm::Kind::kSend ? wire::CloseKind::kSend : wire::CloseKind::kRecv;
    connecting_.erase(comm->id);
    refusals_.erase(comm->id);
    // Nothing may touch the comm's requests (or the user's buffers) once it is gone.
    for (Request& r : data->pool) {
      if (r.state.load(std::memory_order_acquire) != kRequestPending) continue;
      requests_.erase(r.id);
      out_.Detach(r.id);
      held_.erase(std::remove(held_.begin(), held_.end(), &r), held_.end());
    }
  }
  if (!failed_ && !ended_) {
    Send(wire::Close{kind, comm->id});
    FlushLocked();
  }
}

ncclResult_t BridgeClient::ReportOp(wire::OpReport report) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_ || ended_) return RefuseCall("reportOp");
  report.vtime = NowLocked(WallClock::now());
  // The decoder's rules are the definition of a valid report: check it with them.
  const std::vector<uint8_t> frame = wire::EncodeFrame(report);
  const wire::Decoded decoded =
      wire::DecodeFrame(frame.data(), frame.size(), wire::Direction::kToServer);
  if (decoded.refusal != wire::Refusal::kNone) {
    NBOX_NET_WARN("reportOp: %s", decoded.reason.c_str());
    return ncclInvalidArgument;
  }
  Send(report);
  waits_.PromiseTakenBack();  // nbox-cosim reads a report as the rank acting
  FlushLocked();
  return ncclSuccess;
}

ncclResult_t BridgeClient::VirtualTimeNs(uint64_t* ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  *ns = NowLocked(WallClock::now());
  return ncclSuccess;
}

void BridgeClient::WaitEvents(uint64_t seen, int timeout_us) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (failed_ || events_.load(std::memory_order_acquire) != seen) return;
  const WaitState::Waiter waiter = waits_.Enter(seen);
  UpdateBlockedLocked(WallClock::now());
  events_cv_.wait_for(lock, std::chrono::microseconds(std::max(timeout_us, 0)),
                      [&] { return failed_ || events_.load(std::memory_order_acquire) != seen; });
  waits_.Leave(waiter);
  UpdateBlockedLocked(WallClock::now());
}

void BridgeClient::ProgramWaiting(bool waiting) {
  std::lock_guard<std::mutex> lock(mutex_);
  waits_.ProgramWaiting(waiting);
  UpdateBlockedLocked(WallClock::now());
}

void BridgeClient::UpdateBlockedLocked(WallClock::time_point now) {
  // A virtual clock stands still while the rank waits; a realtime one runs on, but the wait is
  // still worth a blocked promise: it lets nbox-cosim run ahead of the wall clock to the
  // completion that wakes the rank (which the rank then holds until it is due).
  const bool virtual_clock = clock_.mode() == wire::ClockMode::kVirtual;
  if (!waits_.StandsStill()) {
    if (virtual_clock && clock_.blocked()) clock_.Unblock(now);
    return;
  }
  const bool newly_blocked = virtual_clock && !clock_.blocked();
  if (newly_blocked) clock_.Block(now);
  // Only when something changed since the last one, or a plain promise replaced it (the host
  // runtime waits in short slices, and an unchanged blocked promise still holds), and only
  // while it holds (wait_state.h): no waiter has news it has not acted on, and no held
  // completion is already due (the I/O thread releases it next, or once its bytes are in,
  // which wakes its waiter without news from the simulator).
  const uint64_t events = events_.load(std::memory_order_acquire);
  if ((activity_ != promised_activity_ || !waits_.HasBlockedPromise()) && !ended_ && !failed_ &&
      waits_.MayPromiseBlocked(events) && !HoldsDueLocked(now)) {
    Send(wire::Promise{NowLocked(now), true, wakeups_seen_});
    promised_activity_ = activity_;
    waits_.PromisedBlocked(events);
    FlushLocked();
  }
  if (newly_blocked) Wake();  // held completions may be released now that the clock may jump
}

}  // namespace nbox::bridge::nboxnet
