// What the bridge server tells its owner (nbox-cosim, or a test) about the real ranks. The
// server calls these from inside BridgeServer::Poll, on the thread that polls; a sink may call
// back into the server (complete, deliver, fail) from inside them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bridge/wire/messages.h"

namespace nbox::bridge::server {

// A rank's session is open (authenticated, its Hello fits the job).
struct RankJoin {
  int rank = 0;
  int world = 0;
  wire::ClockMode clock = wire::ClockMode::kVirtual;
  uint32_t pid = 0;
  std::string peer;  // "unix" or "10.0.0.2:41234"
  uint64_t session = 0;
};

// A send comm of `sender` is connected to a listen of `receiver`. Every message on it goes
// from sender to receiver, in order. One end may be an emulated rank (ServerOptions::real):
// the server made that end up itself (see BridgeServer::RegisterListen).
//
// `lane` is the host runtime's lane of the connection, which is the channel of collectives/
// schedules (lane == channels: Send/Recv), as the bootstrap registered it
// (BridgeServer::RegisterListen); -1 when nobody registered the listen (e.g. NCCL's own
// bootstrap).
struct ConnectionInfo {
  uint64_t id = 0;
  int sender = 0;
  int receiver = 0;
  int32_t traffic_class = -1;
  int lane = -1;
  uint64_t vtime = 0;  // ServerOptions::simulator_vtime when it was made
};

enum class PostKind { kSend, kRecv };

// An isend or irecv of a real rank, stamped with the rank's virtual time.
struct Post {
  PostKind kind = PostKind::kSend;
  int rank = 0;          // who posted
  int peer = 0;          // the other end of the connection
  uint64_t request = 0;  // unique within the rank's session
  uint64_t connection = 0;
  int lane = -1;  // the connection's lane (ConnectionInfo::lane)
  uint64_t vtime = 0;
  // kSend: the message.
  uint64_t size = 0;
  int32_t tag = 0;
  // kRecv: 1..8 buffers (capacity and tag each).
  std::vector<wire::RecvSlot> slots;
};

// A Promise of a rank (wire::Promise explains `blocked`).
struct RankPromise {
  int rank = 0;
  uint64_t vtime = 0;
  bool blocked = false;
  // The rank had received everything that could end its wait when it made the promise: its
  // wakeups_seen equals the completions, connections and errors sent to it
  // (wire::WakesWaiter), and no completion waits for a payload (its Complete would go out
  // later). When false, such news was on its way: a blocked promise then says nothing about
  // the wait that news ends.
  bool saw_every_wakeup = true;
};

class BridgeSink {
 public:
  virtual ~BridgeSink() = default;

  virtual void OnJoin(const RankJoin& join) = 0;
  virtual void OnConnection(const ConnectionInfo& connection) { (void)connection; }
  virtual void OnPost(const Post& post) = 0;
  // The rank will post nothing before `vtime` (wire::Promise explains `blocked`).
  virtual void OnPromise(int rank, uint64_t vtime, bool blocked) {
    (void)rank;
    (void)vtime;
    (void)blocked;
  }
  // What the server calls for every Promise; a sink that needs to know whether the rank had
  // seen its completions overrides this one, the others OnPromise.
  virtual void OnRankPromise(const RankPromise& promise) {
    OnPromise(promise.rank, promise.vtime, promise.blocked);
  }
  // The rank closed its end of a connection (requests on it are forgotten).
  virtual void OnConnectionClosed(int rank, uint64_t connection) {
    (void)rank;
    (void)connection;
  }
  // The rank is alive; in virtual clock mode `vtime` is also a promise (a virtual rank's clock
  // never goes back, so it will post nothing before it). Realtime ranks send Promises instead.
  virtual void OnHeartbeat(int rank, uint64_t vtime) {
    (void)rank;
    (void)vtime;
  }
  // The rank's program reported a call (wire::OpReport): a collective it started, or an
  // iteration mark. Mirror mode and the report use them.
  virtual void OnOp(int rank, const wire::OpReport& op) {
    (void)rank;
    (void)op;
  }
  // A realtime rank's own lag figures (wire::ArrivalLag), sent once, right before its Goodbye.
  virtual void OnArrivalLag(int rank, const wire::ArrivalLag& lag) {
    (void)rank;
    (void)lag;
  }
  // An orderly end: the rank said Goodbye at virtual time `vtime`.
  virtual void OnGoodbye(int rank, uint64_t vtime) = 0;
  // The rank's session ended without Goodbye: its process died, its connection broke, it fell
  // silent past the heartbeat timeout, or it broke the protocol. `reason` says which.
  virtual void OnDisconnect(int rank, const std::string& reason) = 0;
};

}  // namespace nbox::bridge::server
