// The server end of the bridge, as a library for nbox-cosim: it accepts real ranks over a Unix
// domain socket (default) and/or TCP, authenticates them, decodes their frames, resolves the
// listen/connect/accept handshakes between ranks, keeps the payload of every send, and hands
// the rest to a BridgeSink. The simulator answers through the methods below (complete a send,
// deliver a message into a receive, fail a request).
//
// Single-threaded and non-blocking: nothing happens except inside Poll(timeout), which the
// simulator's loop calls; every sink callback runs inside it. Methods must be called from that
// same thread.
//
// Timing is the simulator's business: the server sends a completion as soon as it is asked,
// stamped with the delivery time the simulator chose, and the rank holds it until its own
// clock reaches that time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bridge/server/bridge_sink.h"
#include "bridge/wire/messages.h"

namespace nbox::bridge::server {

// Bad options, or a socket that cannot be set up; what() says which.
class BridgeServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ServerOptions {
  int world_size = 1;
  // Which ranks are real (index = rank): only they may join; a connect to any other rank is
  // answered by the server (the receiver is simulated: no payload), and listens registered for
  // messages from another rank get their connection from the server (RegisterListen). Empty:
  // every rank is real.
  std::vector<bool> real;
  std::string job_id = "nbox";  // ranks must present the same
  std::string secret;           // >= 16 bytes; ranks get it through NBOX_SECRET
  // Unix domain socket: listen at unix_path, or when it is empty (and listen_unix) at
  // "bridge.sock" in a fresh directory of mode 0700 under $TMPDIR (else /tmp), removed again
  // by the destructor. An explicit path's directory must be accessible to its owner only.
  bool listen_unix = true;
  std::string unix_path;
  // TCP for ranks on other hosts: "host:port" (port 0: the OS picks), empty for none.
  std::string tcp_listen;
  // The virtual time a joining rank's clock starts at, and the time heartbeats carry: the
  // simulator's clock when now_vtime is set (realtime ranks need it), else start_vtime.
  uint64_t start_vtime = 0;
  std::function<uint64_t()> now_vtime;
  // The simulator's own clock, stamped on every connection the server makes (Connected and
  // Incoming carry it, ConnectionInfo too): a rank waiting for a connection wakes no earlier.
  // Unset: 0.
  std::function<uint64_t()> simulator_vtime;
  uint32_t nic_speed_mbps = 100000;  // what the plugin reports to NCCL
  std::chrono::milliseconds heartbeat_interval{250};
  // The heartbeat interval Welcome gives realtime ranks: they send a Promise of their wall
  // clock that often when idle, and the simulator may not run past their last promise, so it
  // is what a realtime delivery lags by at least (nbox-cosim: realranks.realtime_heartbeat).
  std::chrono::microseconds realtime_heartbeat_interval{200};
  std::chrono::milliseconds heartbeat_timeout{5000};  // silence after which a rank is dead
  std::chrono::milliseconds handshake_timeout{5000};  // to authenticate, and for a Connect to
                                                      // find its listen
  // Warnings about connections that are not (yet) a rank; default: stderr.
  std::function<void(const std::string&)> log;
};

class BridgeServer {
 public:
  // Opens the listening sockets. Throws BridgeServerError.
  BridgeServer(ServerOptions options, BridgeSink* sink);
  ~BridgeServer();
  BridgeServer(const BridgeServer&) = delete;
  BridgeServer& operator=(const BridgeServer&) = delete;

  // What to put in NBOX_BRIDGE: "unix:/tmp/nbox-bridge-abc123/bridge.sock", "tcp:127.0.0.1:4100";
  // "" for a transport not listened on.
  std::string unix_endpoint() const;
  std::string tcp_endpoint() const;

  // Waits up to `timeout` for activity, then does everything that is ready: accepts, reads and
  // decodes frames (calling the sink), writes queued frames, sends heartbeats and detects
  // silent ranks. Returns early once something was handled.
  void Poll(std::chrono::microseconds timeout);

  // --- the simulator's answers (false when the rank or request no longer exists: it left, or
  // closed the comm) -------------------------------------------------------------------------

  // Completes a send at the sender. Sent once the send's payload has fully arrived.
  bool CompleteSend(int rank, uint64_t request, uint64_t delivery_vtime);
  // Fills buffer `slot` of receive `recv_request` of `recv_rank` with the payload of send
  // `send_request` of `send_rank` (consumed: each send is delivered once). A receive completes
  // when all its buffers are filled, at the latest of their delivery times. Throws
  // std::invalid_argument when the message does not fit the buffer or the slot is filled.
  bool DeliverFromSend(int recv_rank, uint64_t recv_request, uint32_t slot, int send_rank,
                       uint64_t send_request, uint64_t delivery_vtime);
  // The same with bytes the simulator made up (a message from a simulated rank).
  bool DeliverBytes(int recv_rank, uint64_t recv_request, uint32_t slot, std::vector<uint8_t> bytes,
                    uint64_t delivery_vtime);
  // Completes a receive whose sender is emulated without bytes (payload = self): the Complete
  // carries the sizes and the synthetic flag, and the rank fills its buffers itself. Each of
  // the receive's buffers is given once, by this or DeliverBytes; a receive whose buffers mix
  // both throws std::invalid_argument (one connection has one sender), as does a size larger
  // than the buffer.
  bool DeliverSynthetic(int recv_rank, uint64_t recv_request, uint32_t slot, uint64_t size,
                        uint64_t delivery_vtime);
  // Fails one request of a rank (its test() returns an error).
  bool FailRequest(int rank, uint64_t request, wire::ErrorCode code, const std::string& text);
  // Ends a rank's session with an error (every pending and later call of the rank fails).
  void Disconnect(int rank, wire::ErrorCode code, const std::string& text);
  // Goodbye to every rank; sessions close once their queued frames are written.
  void Shutdown(uint64_t vtime);

  // Called by the bootstrap (CosimBootstrapRoot) for every listen handle a real rank
  // published: listen `listen_id` of rank `rank` is for messages from `sender` on `lane`.
  //   - sender real: its Connect to this listen gets the lane (ConnectionInfo::lane);
  //   - sender emulated: as soon as `rank` has also sent the Listen itself, the server makes the
  //     connection: Incoming(listen, connection, sender) goes to `rank` (so its accept
  //     succeeds) and OnConnection{sender, rank, lane} to the sink. Its posts are receives that
  //     the simulator fills with DeliverBytes or DeliverSynthetic.
  // Either order of RegisterListen and the rank's Listen frame works. Throws
  // std::invalid_argument for a rank or sender out of range, a `rank` that is not real,
  // or a listen registered twice.
  void RegisterListen(int rank, uint64_t listen_id, int sender, int lane);
  // Whether `rank` is real (ServerOptions::real).
  bool is_real(int rank) const;

  bool connected(int rank) const;
  // Bytes of send payload held, for tests and reports.
  uint64_t held_payload_bytes() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nbox::bridge::server
