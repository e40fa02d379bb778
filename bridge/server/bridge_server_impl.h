// BridgeServer's insides, shared by bridge_server.cc (sockets, sessions, handshake, timers)
// and server_connections.cc (what an open session's frames do: listens, connects, accepts,
// closes, posts). Not part of the library's interface.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bridge/net/socket_util.h"
#include "bridge/server/bridge_server.h"
#include "bridge/server/server_session.h"
#include "bridge/server/transfer_store.h"
#include "bridge/wire/frame_codec.h"

namespace nbox::bridge::server {

// An Error frame, its text cut to the protocol's limit.
std::vector<uint8_t> ErrorFrame(wire::ErrorCode code, uint64_t id, std::string text);

class BridgeServer::Impl {
 public:
  Impl(ServerOptions options, BridgeSink* sink);
  ~Impl();

  void Poll(std::chrono::microseconds timeout);
  void SendTo(int rank, std::vector<uint8_t> frame);
  bool FailRequest(int rank, uint64_t request, wire::ErrorCode code, const std::string& text);
  void Disconnect(int rank, wire::ErrorCode code, const std::string& text);
  void Shutdown(uint64_t vtime);
  bool connected(int rank) const { return RankSession(rank) != nullptr; }
  bool is_real(int rank) const;
  void RegisterListen(int rank, uint64_t listen_id, int sender, int lane);

  std::string unix_endpoint_;
  std::string tcp_endpoint_;
  TransferStore store_;

 private:
  struct ListenRecord {
    uint64_t nonce = 0;
  };
  struct ConnectionRecord {
    int sender = 0;
    uint64_t send_comm = 0;
    int receiver = 0;
    uint64_t recv_comm = 0;  // 0 until accepted
    int32_t traffic_class = -1;
    int lane = -1;
  };
  // What the bootstrap said a listen is for (RegisterListen).
  struct Registration {
    int sender = 0;
    int lane = -1;
    bool connected = false;  // emulated sender: the server made its connection
  };
  struct PendingConnect {
    int rank;
    wire::Connect connect;
    Clock::time_point deadline;
  };
  using RankId = std::pair<int, uint64_t>;  // (rank, id chosen by that rank)

  void OpenUnix();
  void OpenTcp();
  void AcceptFrom(int listen_fd, bool unix_socket, Clock::time_point now);
  void Serve(ServerSession& session, Clock::time_point now);
  void Handle(ServerSession& session, wire::Message& message, Clock::time_point now);
  void HandleHello(ServerSession& session, const wire::Hello& hello);
  void HandleAuth(ServerSession& session, const wire::Auth& auth, Clock::time_point now);
  void HandleOpen(ServerSession& session, wire::Message& message, Clock::time_point now);
  void HandleListen(ServerSession& session, const wire::Listen& listen);
  void HandleConnect(ServerSession& session, const wire::Connect& connect, Clock::time_point now);
  void HandleAccept(ServerSession& session, const wire::Accept& accept);
  void HandleClose(ServerSession& session, const wire::Close& close);
  void HandlePostSend(ServerSession& session, const wire::PostSend& post);
  void HandlePostRecv(ServerSession& session, wire::PostRecv& post);
  // Connects a pending Connect if its listen is there; false while it must wait.
  bool TryConnect(const PendingConnect& pending);
  // A real rank's Connect to an emulated rank's synthetic handle, answered by the server.
  void ConnectToEmulated(const PendingConnect& pending);
  // Makes the connection from an emulated sender to listen `listen` of `rank` once both the
  // registration and the rank's Listen are there.
  void MaybeConnectFromEmulated(int rank, uint64_t listen);
  int LaneOf(int rank, uint64_t listen) const;
  void Refuse(int rank, uint64_t comm, const std::string& why);
  void CheckTimers(Clock::time_point now);
  void ProtocolError(ServerSession& session, const std::string& reason);
  // Ends a session, reporting an open rank's end to the sink; `reason` "" for a Goodbye.
  void End(ServerSession& session, const std::string& reason);
  void Forget(ServerSession& session, bool keep_in_flight = false);
  void TrackId(ServerSession& session, uint64_t id);
  ServerSession* RankSession(int rank) const;
  void Warn(const std::string& text) const;
  uint64_t NowVtime() const {
    return options_.now_vtime ? options_.now_vtime() : options_.start_vtime;
  }
  uint64_t SimulatorVtime() const {
    return options_.simulator_vtime ? options_.simulator_vtime() : 0;
  }

  ServerOptions options_;
  BridgeSink* sink_;
  std::string private_dir_;  // created by us, removed by the destructor
  std::string unix_path_;
  UniqueFd unix_fd_;
  UniqueFd tcp_fd_;
  uint64_t next_session_ = 1;
  uint64_t next_connection_ = 1;
  std::map<uint64_t, std::unique_ptr<ServerSession>> sessions_;  // by session id
  std::vector<ServerSession*> ranks_;                            // open sessions by rank
  std::map<RankId, ListenRecord> listens_;
  std::map<RankId, Registration> registrations_;
  std::map<uint64_t, ConnectionRecord> connections_;
  std::map<RankId, uint64_t> send_comms_;  // -> connection
  std::map<RankId, uint64_t> recv_comms_;  // -> connection
  std::map<RankId, uint64_t> requests_;    // -> connection
  std::vector<PendingConnect> pending_connects_;
};

}  // namespace nbox::bridge::server
