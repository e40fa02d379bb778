// The I/O thread of BridgeClient: reading and dispatching the server's frames, writing what the
// callers queued, heartbeats, and releasing held completions when the rank's clock reaches
// their delivery time. Everything here runs on that thread, under the client's mutex except
// the socket reads.
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "bridge/nbox/bridge_client.h"
#include "bridge/nbox/nbox_log.h"

namespace nbox::bridge::nboxnet {
namespace {

using WallClock = RankClock::WallClock;

// How often a virtual rank whose clock runs with requests in flight promises its clock.
constexpr std::chrono::milliseconds kRunningPromiseInterval(1);

ncclResult_t ResultOf(wire::ErrorCode code) {
  switch (code) {
    case wire::ErrorCode::kInvalidUsage:
      return ncclInvalidUsage;
    case wire::ErrorCode::kProtocol:
    case wire::ErrorCode::kInternal:
      return ncclInternalError;
    case wire::ErrorCode::kAuthFailed:
      return ncclSystemError;
    case wire::ErrorCode::kRefused:
    case wire::ErrorCode::kPeerGone:
    case wire::ErrorCode::kShutdown:
      return ncclRemoteError;
  }
  return ncclInternalError;
}

}  // namespace

void BridgeClient::Run() {
  // A realtime rank may promise its clock every few tens of microseconds: wake-ups up to 50 us
  // late (the default timer slack of a normal thread) would age its promises by as much.
  if (clock_.mode() == wire::ClockMode::kRealtime) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_ && !failed_) {
    const auto now = WallClock::now();
    const auto wake = NextWake(now);
    const bool want_write = !out_.empty();
    lock.unlock();
    pollfd fds[2] = {{fd_.get(), static_cast<short>(POLLIN | (want_write ? POLLOUT : 0)), 0},
                     {wake_fd_.get(), POLLIN, 0}};
    const auto wait = std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::nanoseconds>(wake - now).count());
    timespec timeout{static_cast<time_t>(wait / 1000000000), static_cast<long>(wait % 1000000000)};
    const int ready = ppoll(fds, 2, &timeout, nullptr);
    if (fds[1].revents & POLLIN) {
      uint64_t count = 0;
      if (read(wake_fd_.get(), &count, sizeof(count)) < 0) count = 0;
    }
    if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ReadAvailable(WallClock::now());  // takes the lock itself
    }
    lock.lock();
    if (stop_ || failed_) break;
    const auto after = WallClock::now();
    FlushLocked();
    ReleaseDue(after);
    if (failed_) break;
    // A realtime rank that waits keeps a completion received early until it is due, so its
    // waiter does not wake to promise again: renew the blocked promise here, counting it.
    if (clock_.mode() == wire::ClockMode::kRealtime) UpdateBlockedLocked(after);
    if (after - last_sent_ >= KeepAliveIntervalLocked() && out_.empty() && !ended_) {
      if (PromisesClockLocked()) {
        Send(wire::Promise{NowLocked(after), false, wakeups_seen_});
        waits_.PromiseTakenBack();
      } else {
        Send(wire::Heartbeat{NowLocked(after)});
      }
      FlushLocked();
    }
    const auto silence = std::max<std::chrono::milliseconds>(
        config_.timeout, std::chrono::ceil<std::chrono::milliseconds>(
                             4 * std::chrono::microseconds(welcome_.heartbeat_us)));
    if (after - last_received_ > silence) {
      Fail("no frame from nbox-cosim at " + config_.endpoint.ToString() + " for " +
           std::to_string(silence.count()) + " ms (the simulator hangs or is unreachable)");
    }
  }
}

bool BridgeClient::PromisesClockLocked() const {
  // A plain promise would take back a blocked one that still holds (the rank still waits and
  // no event has come since): a Heartbeat keeps the session alive instead.
  if (waits_.BlockedPromiseStands(events_.load(std::memory_order_acquire))) return false;
  if (clock_.mode() == wire::ClockMode::kRealtime) return true;
  return !clock_.blocked() && !requests_.empty();
}

std::chrono::microseconds BridgeClient::KeepAliveIntervalLocked() const {
  const std::chrono::microseconds welcome(welcome_.heartbeat_us);
  if (clock_.mode() == wire::ClockMode::kVirtual && PromisesClockLocked()) {
    return std::min<std::chrono::microseconds>(welcome, kRunningPromiseInterval);
  }
  return welcome;
}

WallClock::time_point BridgeClient::NextWake(WallClock::time_point now) const {
  auto wake = std::min(last_sent_ + KeepAliveIntervalLocked(), last_received_ + config_.timeout);
  for (const Request* r : held_) {
    if (r->BytesIn()) wake = std::min(wake, clock_.WallWhen(r->delivery_vtime, now));
  }
  if (!held_connections_.empty()) {
    wake = std::min(wake, clock_.WallWhen(*held_connections_.begin(), now));
  }
  return std::max(wake, now);
}

void BridgeClient::ReadAvailable(WallClock::time_point now) {
  // Socket reads and decoding need no lock (only this thread uses them); dispatching does.
  uint8_t buffer[64 * 1024];
  size_t total = 0;
  std::string broken;
  bool closed = false;
  while (total < (4u << 20)) {
    const ssize_t n = recv(fd_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      decoder_.Append(buffer, static_cast<size_t>(n));
      total += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      closed = true;
    } else if (errno == EINTR) {
      continue;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      broken = std::strerror(errno);
    }
    break;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (total > 0) last_received_ = now;
  while (!failed_) {
    wire::Decoded decoded = decoder_.Next();
    if (decoded.refusal == wire::Refusal::kTruncated) break;
    if (decoded.refusal != wire::Refusal::kNone) {
      Fail("nbox-cosim sent a malformed frame: " + decoded.reason);
      break;
    }
    Dispatch(decoded.message, now);
  }
  if (failed_) return;
  if (closed) {
    Fail("nbox-cosim at " + config_.endpoint.ToString() +
         " closed the connection (it exited or crashed)");
  } else if (!broken.empty()) {
    Fail("the connection to nbox-cosim at " + config_.endpoint.ToString() + " broke: " + broken);
  }
}

void BridgeClient::Dispatch(wire::Message& message, WallClock::time_point now) {
  const wire::MessageType type = wire::TypeOf(message);
  if (wire::WakesWaiter(type)) {
    // Every one counts, also one for a comm closed meanwhile: the server counts what it sent.
    // A new count is news, so the next wait sends a new blocked Promise.
    ++wakeups_seen_;
    ++activity_;
  }
  switch (type) {
    case wire::MessageType::kConnected: {
      const auto& connected = std::get<wire::Connected>(message);
      auto it = connecting_.find(connected.comm);
      if (it == connecting_.end()) return;  // closed while connecting
      it->second->connection = connected.connection;
      it->second->payload_wanted = connected.payload_wanted;
      it->second->connect_state = 1;
      it->second->connected_vtime = connected.vtime;
      NoteConnectionLocked(connected.vtime, now);
      return;
    }
    case wire::MessageType::kIncoming: {
      const auto& incoming = std::get<wire::Incoming>(message);
      auto it = listens_.find(incoming.listen);
      if (it == listens_.end()) return;
      it->second->incoming.push_back({incoming.connection, incoming.peer, incoming.vtime});
      NoteConnectionLocked(incoming.vtime, now);  // as for Connected: an accept waits for it
      return;
    }
    case wire::MessageType::kComplete:
      OnComplete(std::get<wire::Complete>(message), now);
      return;
    case wire::MessageType::kData:
      OnData(std::get<wire::Data>(message));
      return;
    case wire::MessageType::kError:
      OnError(std::get<wire::Error>(message));
      return;
    case wire::MessageType::kGoodbye:
      Fail("nbox-cosim ended the session (Goodbye: the simulation is over)");
      return;
    case wire::MessageType::kHeartbeat:
      return;
    default:
      Fail(std::string("nbox-cosim sent ") + wire::TypeName(wire::TypeOf(message)) +
           " after the handshake");
      return;
  }
}

void BridgeClient::OnComplete(const wire::Complete& complete, WallClock::time_point now) {
  if (config_.clock == wire::ClockMode::kRealtime) {
    const uint64_t read_at = NowLocked(now);
    arrival_lags_.Add(read_at > complete.delivery_vtime ? read_at - complete.delivery_vtime : 0);
  }
  auto it = requests_.find(complete.request);
  if (it == requests_.end()) return;  // its comm was closed meanwhile
  Request* r = it->second;
  if (r->completion_known) {
    Fail("nbox-cosim completed request " + std::to_string(r->id) + " twice");
    return;
  }
  if (r->is_send ? !complete.sizes.empty() : complete.sizes.size() != static_cast<size_t>(r->n)) {
    Fail("nbox-cosim completed request " + std::to_string(r->id) + " with " +
         std::to_string(complete.sizes.size()) + " sizes");
    return;
  }
  for (int i = 0; !r->is_send && i < r->n; ++i) {
    if (complete.sizes[i] > r->capacity[i]) {
      FailRequest(r, ncclInvalidUsage,
                  "a message of " + std::to_string(complete.sizes[i]) +
                      " bytes for a receive buffer of " + std::to_string(r->capacity[i]));
      return;
    }
    r->sizes[i] = complete.sizes[i];
  }
  if (complete.synthetic) {
    if (r->is_send) {
      Fail("nbox-cosim completed send " + std::to_string(r->id) + " as synthetic");
      return;
    }
    // No Data follows: the rank fills the buffers itself (payload = self).
    r->synthetic = true;
    r->direct = true;  // nothing to stage
    for (int i = 0; i < r->n; ++i) r->received[i] = r->sizes[i];
  }
  r->completion_known = true;
  r->delivery_vtime = complete.delivery_vtime;
  const bool due = NowLocked(now) >= complete.delivery_vtime;
  if (due && r->BytesIn()) {
    Finish(r);
    return;
  }
  if (due) {
    r->direct = true;  // the bytes may land in the user's buffers as they come
  } else if (!r->synthetic) {
    for (int i = 0; !r->is_send && i < r->n; ++i) r->staging[i].resize(r->sizes[i]);
  }
  held_.push_back(r);
}

void BridgeClient::OnData(const wire::Data& data) {
  auto it = requests_.find(data.request);
  if (it == requests_.end()) return;
  Request* r = it->second;
  if (r->is_send || !r->completion_known || r->synthetic ||
      data.slot >= static_cast<uint32_t>(r->n) || data.offset != r->received[data.slot] ||
      data.bytes.size > r->sizes[data.slot] - r->received[data.slot]) {
    Fail("nbox-cosim sent Data for request " + std::to_string(data.request) +
         " that does not fit its completion");
    return;
  }
  uint8_t* target = r->direct ? r->data[data.slot] : r->staging[data.slot].data();
  std::memcpy(target + data.offset, data.bytes.data, data.bytes.size);
  r->received[data.slot] += data.bytes.size;
  // Release happens in ReleaseDue once every buffer is in.
}

void BridgeClient::OnError(const wire::Error& error) {
  if (error.id == 0) {
    Fail("nbox-cosim ended the session: " + error.text);
    return;
  }
  auto request = requests_.find(error.id);
  if (request != requests_.end()) {
    FailRequest(request->second, ResultOf(error.code), error.text);
    return;
  }
  auto connect = connecting_.find(error.id);
  if (connect != connecting_.end()) {
    refusals_[error.id] = error.text;
    connect->second->connect_state = -1;
    SignalEventLocked();
  }
}

void BridgeClient::SignalEventLocked() {
  events_.fetch_add(1, std::memory_order_acq_rel);
  events_cv_.notify_all();
}

void BridgeClient::NoteConnectionLocked(uint64_t vtime, WallClock::time_point now) {
  if (vtime > NowLocked(now)) held_connections_.insert(vtime);
  // The thread waiting for this connection has news: it wakes to use it (once the clock is
  // there), and no blocked promise goes out until it has acted (wait_state.h).
  SignalEventLocked();
}

void BridgeClient::ReleaseDue(WallClock::time_point now) {
  if (held_.empty() && held_connections_.empty()) return;
  if (clock_.blocked()) {
    // The rank waits on the simulator: its clock moves on to the earliest delivery that is
    // ready to hand over, or connection (docs/DESIGN.md, "Time": the virtual clock).
    uint64_t earliest = held_connections_.empty() ? UINT64_MAX : *held_connections_.begin();
    for (const Request* r : held_) {
      if (r->BytesIn()) earliest = std::min(earliest, r->delivery_vtime);
    }
    if (earliest != UINT64_MAX) clock_.AdvanceTo(earliest);
  }
  const uint64_t vnow = NowLocked(now);
  if (!held_connections_.empty() && *held_connections_.begin() <= vnow) {
    held_connections_.erase(held_connections_.begin(), held_connections_.upper_bound(vnow));
    SignalEventLocked();  // connect / accept return it now
  }
  std::vector<Request*> keep;
  std::vector<Request*> due;
  for (Request* r : held_) {
    (r->BytesIn() && r->delivery_vtime <= vnow ? due : keep).push_back(r);
  }
  held_.swap(keep);
  // In delivery order, so that a later event never overtakes an earlier one.
  std::stable_sort(due.begin(), due.end(), [](const Request* a, const Request* b) {
    return a->delivery_vtime < b->delivery_vtime;
  });
  for (Request* r : due) Finish(r);
}

bool BridgeClient::HoldsDueLocked(WallClock::time_point now) const {
  const uint64_t vnow = NowLocked(now);
  // A running virtual clock can pass a held connection's time some microseconds before the I/O
  // thread wakes to release it (timer slack); a blocked promise made then would be broken by
  // the post the connection's waiter makes once released.
  if (!held_connections_.empty() && *held_connections_.begin() <= vnow) return true;
  return std::any_of(held_.begin(), held_.end(),
                     [&](const Request* r) { return r->delivery_vtime <= vnow; });
}

void BridgeClient::Finish(Request* r) {
  requests_.erase(r->id);
  if (!r->is_send && !r->direct) {
    for (int i = 0; i < r->n; ++i) {
      if (r->sizes[i] > 0) std::memcpy(r->data[i], r->staging[i].data(), r->sizes[i]);
      r->staging[i] = std::vector<uint8_t>();
    }
  }
  ++activity_;
  r->state.store(kRequestDone, std::memory_order_release);
  SignalEventLocked();
}

void BridgeClient::FailRequest(Request* r, ncclResult_t code, const std::string& why) {
  NBOX_NET_WARN("request %llu failed: %s", static_cast<unsigned long long>(r->id), why.c_str());
  requests_.erase(r->id);
  out_.Detach(r->id);
  held_.erase(std::remove(held_.begin(), held_.end(), r), held_.end());
  for (int i = 0; i < r->n; ++i) r->staging[i] = std::vector<uint8_t>();
  r->error = code;
  r->state.store(kRequestFailed, std::memory_order_release);
  SignalEventLocked();
}

void BridgeClient::Fail(const std::string& why) {
  if (failed_) return;
  failed_ = true;
  failure_ = ended_ ? "the session with nbox-cosim was finalized" : why;
  if (!ended_) NBOX_NET_WARN("rank %u: %s", config_.rank, why.c_str());
  out_.Clear();
  held_.clear();
  std::map<uint64_t, Request*> pending;
  pending.swap(requests_);
  for (auto& [id, r] : pending) {
    for (int i = 0; i < r->n; ++i) r->staging[i] = std::vector<uint8_t>();
    r->error = ncclRemoteError;
    r->state.store(kRequestFailed, std::memory_order_release);
  }
  for (auto& [id, send] : connecting_) {
    if (send->connect_state == 0) {
      send->connect_state = -1;
      refusals_[id] = failure_;
    }
  }
  shutdown(fd_.get(), SHUT_RDWR);
  SignalEventLocked();
}

}  // namespace nbox::bridge::nboxnet
