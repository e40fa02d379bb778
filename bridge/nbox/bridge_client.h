// The nbox plugin's session with nbox-cosim: one per process (one process is one real rank),
// opened by the first init and shared by every communicator of the process.
//
// Every ncclNet call becomes frames to the server (wire/messages.h); nothing goes to another
// rank directly. An I/O thread reads the server's frames, writes what the callers queued, and
// releases completions when the rank's clock (RankClock) reaches their delivery time: a
// receive's bytes are written into the user's buffers only then (LL/LL128 read them as soon
// as they land), held in a private copy until that moment.
//
// Thread-safe: the state below is guarded by one mutex; test() reads only its request's
// atomic state. If the connection breaks or the server ends the session, every pending
// request fails and every later call returns ncclRemoteError.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bridge/nbox/client_config.h"
#include "bridge/nbox/client_handshake.h"
#include "bridge/nbox/nbox_comms.h"
#include "bridge/nbox/out_queue.h"
#include "bridge/nbox/rank_clock.h"
#include "bridge/nbox/wait_state.h"
#include "bridge/wire/frame_codec.h"
#include "bridge/wire/lag_histogram.h"

namespace nbox::bridge::nboxnet {

class BridgeClient {
 public:
  // The process's open session (a new one if there is none, or the last one failed or was
  // finalized), counting one more user. nullptr with *error set when it cannot be opened.
  static std::shared_ptr<BridgeClient> Acquire(std::string* error);
  // One user fewer; the last one says Goodbye and ends the session.
  static void Release(std::shared_ptr<BridgeClient> client);
  // The process's latest session (open, failed or finalized), or nullptr before the first.
  static std::shared_ptr<BridgeClient> Latest();

  ~BridgeClient();
  BridgeClient(const BridgeClient&) = delete;
  BridgeClient& operator=(const BridgeClient&) = delete;

  // The ncclNet calls (see nbox_plugin.cc). Comms are deleted by the caller after Close().
  ncclResult_t Listen(const std::shared_ptr<BridgeClient>& self, void* handle, ListenComm** comm);
  ncclResult_t Connect(const std::shared_ptr<BridgeClient>& self, void* handle, int traffic_class,
                       DataComm** comm);
  ncclResult_t Accept(ListenComm* listen, DataComm** comm);
  ncclResult_t PostSend(DataComm* comm, void* data, uint64_t size, int tag, void** request);
  ncclResult_t PostRecv(DataComm* comm, int n, void** data, const uint64_t* sizes, const int* tags,
                        void** request);
  static ncclResult_t Test(void* request, int* done, int* sizes);
  // Test, plus NBOX_NET_COMPLETION_* bits in *flags once done (nboxNetExt_v2.testFlags).
  static ncclResult_t TestFlags(void* request, int* done, int* sizes, uint32_t* flags);
  void Close(Comm* comm);

  // nboxNetExt_v1: completions (and failures) counted; a blocking wait for the next one. In
  // virtual clock mode the wait is where the rank's clock stands still — while the program
  // waits too, once it says when it does (ProgramWaiting; until then every wait counts).
  uint64_t EventCount() const { return events_.load(std::memory_order_acquire); }
  void WaitEvents(uint64_t seen, int timeout_us);
  // nboxNetExt_v2.programWaiting: a thread of the program starts (true) or stops (false)
  // waiting for the communication library.
  void ProgramWaiting(bool waiting);

  // nboxNetExt_v2: an OpReport stamped with the rank's clock now (the report must be valid:
  // ncclInvalidArgument naming the problem otherwise), and the rank's clock.
  ncclResult_t ReportOp(wire::OpReport report);
  ncclResult_t VirtualTimeNs(uint64_t* ns);

  uint32_t nic_speed_mbps() const { return welcome_.nic_speed_mbps; }
  int rank() const { return static_cast<int>(config_.rank); }

 private:
  BridgeClient(ClientConfig config, OpenedSession session);

  void Run();  // the I/O thread
  void ReadAvailable(RankClock::WallClock::time_point now);
  void Dispatch(wire::Message& message, RankClock::WallClock::time_point now);
  void OnComplete(const wire::Complete& complete, RankClock::WallClock::time_point now);
  void OnData(const wire::Data& data);
  void OnError(const wire::Error& error);
  void ReleaseDue(RankClock::WallClock::time_point now);
  // A held completion whose delivery time the clock has reached (released once its bytes are
  // in), or a held connection whose time it has reached: the I/O thread releases it next, and
  // the thread waiting for it then acts without news from the simulator.
  bool HoldsDueLocked(RankClock::WallClock::time_point now) const;
  // A connection made at `vtime` arrived: held until the clock reaches it.
  void NoteConnectionLocked(uint64_t vtime, RankClock::WallClock::time_point now);
  // Virtual mode: the clock stands still exactly while a thread waits in WaitEvents and (once
  // the program reports its waits) the program waits too; sends the blocked Promise while it
  // holds (wait_state.h: no waiter has news, no held completion is due).
  void UpdateBlockedLocked(RankClock::WallClock::time_point now);
  // The keep-alive: realtime ranks, and virtual ranks whose clock runs while requests are in
  // flight, promise their clock every kRunningPromiseInterval (so the simulator can keep up
  // with a rank that computes while its messages travel); others, and every rank whose blocked
  // promise stands (wait_state.h), send a Heartbeat every Welcome's interval.
  bool PromisesClockLocked() const;
  std::chrono::microseconds KeepAliveIntervalLocked() const;
  RankClock::WallClock::time_point NextWake(RankClock::WallClock::time_point now) const;
  // One more event (EventCount): wakes every thread in WaitEvents.
  void SignalEventLocked();
  void Finish(Request* request);
  void FailRequest(Request* request, ncclResult_t code, const std::string& why);
  // Ends the session: every request fails, every later call errs.
  void Fail(const std::string& why);
  ncclResult_t RefuseCall(const char* call);
  void Send(const wire::Message& message);
  void FlushLocked();
  // Writes out everything queued before the session ends (bounded by the session's timeout).
  void DrainLocked(std::unique_lock<std::mutex>& lock);
  void Wake();
  uint64_t NextId() { return next_id_++; }
  // The rank posted: news for a later blocked promise, and the end of the last one (nbox-cosim
  // reads a post as the rank acting at its clock).
  void NoteActionLocked() {
    ++activity_;
    waits_.PromiseTakenBack();
  }
  uint64_t NowLocked(RankClock::WallClock::time_point now) const { return clock_.Now(now); }

  const ClientConfig config_;
  const wire::Welcome welcome_;
  UniqueFd fd_;
  UniqueFd wake_fd_;  // eventfd: new frames to write, a waiter blocked, stop
  std::thread thread_;
  wire::FrameDecoder decoder_;  // I/O thread only

  mutable std::mutex mutex_;
  std::condition_variable events_cv_;
  std::atomic<uint64_t> events_{0};
  bool stop_ = false;
  bool failed_ = false;
  bool ended_ = false;  // Goodbye sent
  std::string failure_;
  int users_ = 0;
  uint64_t next_id_ = 1;
  RankClock clock_;
  OutQueue out_;
  RankClock::WallClock::time_point last_sent_;
  RankClock::WallClock::time_point last_received_;
  std::map<uint64_t, Request*> requests_;  // pending, by id
  std::vector<Request*> held_;             // completions known, not yet released
  // Connections made at a virtual time the clock has not reached (wire.h, Connected): not
  // usable until it does, like a held completion.
  std::multiset<uint64_t> held_connections_;
  std::map<uint64_t, ListenComm*> listens_;
  std::map<uint64_t, DataComm*> connecting_;  // send comms waiting for Connected
  std::map<uint64_t, std::string> refusals_;  // why a connect was refused, by comm id
  WaitState waits_;                           // threads in WaitEvents, the program's waits
  uint64_t activity_ = 0;                     // posts, releases and Completes received so far
  uint64_t promised_activity_ = ~0ull;        // activity_ at the last blocked Promise
  // Frames that wake a waiting thread (wire::WakesWaiter) received in this session (wrapping):
  // every Promise carries it, so the server knows whether the rank had seen its latest
  // completion or connection when it promised.
  uint32_t wakeups_seen_ = 0;
  // Realtime only: how late each Complete was read, by the rank's clock (wire::ArrivalLag).
  wire::LagHistogram arrival_lags_;
};

}  // namespace nbox::bridge::nboxnet
