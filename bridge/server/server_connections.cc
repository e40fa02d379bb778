// What an open session's frames do to the links between ranks: listens, connects (which may
// wait for their listen), accepts, closes, and the posts on the resulting connections.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>

#include "bridge/server/bridge_server_impl.h"
#include "bridge/wire/listen_handle.h"

namespace nbox::bridge::server {

using wire::ErrorCode;

void BridgeServer::Impl::HandleListen(ServerSession& session, const wire::Listen& listen) {
  TrackId(session, listen.listen);
  if (!listens_.emplace(RankId{session.rank, listen.listen}, ListenRecord{listen.nonce}).second) {
    ProtocolError(session, "Listen " + std::to_string(listen.listen) + " announced twice");
    return;
  }
  MaybeConnectFromEmulated(session.rank, listen.listen);
  // Connects that arrived before this Listen (two sockets, no order between them).
  std::vector<PendingConnect> waiting;
  waiting.swap(pending_connects_);
  for (PendingConnect& pending : waiting) {
    if (!TryConnect(pending)) pending_connects_.push_back(pending);
  }
}

void BridgeServer::Impl::HandleConnect(ServerSession& session, const wire::Connect& connect,
                                       Clock::time_point now) {
  TrackId(session, connect.comm);
  if (send_comms_.count({session.rank, connect.comm}) > 0) {
    ProtocolError(session, "Connect reuses send comm " + std::to_string(connect.comm));
    return;
  }
  if (connect.peer >= static_cast<uint32_t>(options_.world_size)) {
    Refuse(session.rank, connect.comm,
           "rank " + std::to_string(connect.peer) + " is not in this job of " +
               std::to_string(options_.world_size) + " ranks");
    return;
  }
  PendingConnect pending{session.rank, connect, now + options_.handshake_timeout};
  if (!TryConnect(pending)) pending_connects_.push_back(pending);
}

bool BridgeServer::Impl::is_real(int rank) const {
  return options_.real.empty() ||
         (rank >= 0 && rank < static_cast<int>(options_.real.size()) && options_.real[rank]);
}

int BridgeServer::Impl::LaneOf(int rank, uint64_t listen) const {
  auto it = registrations_.find({rank, listen});
  return it == registrations_.end() ? -1 : it->second.lane;
}

void BridgeServer::Impl::RegisterListen(int rank, uint64_t listen_id, int sender, int lane) {
  const auto in_job = [&](int r) { return r >= 0 && r < options_.world_size; };
  if (!in_job(rank) || !in_job(sender) || rank == sender) {
    throw std::invalid_argument("RegisterListen: rank " + std::to_string(rank) + " and sender " +
                                std::to_string(sender) + " must be two ranks of 0.." +
                                std::to_string(options_.world_size - 1));
  }
  if (!is_real(rank)) {
    throw std::invalid_argument("RegisterListen: rank " + std::to_string(rank) +
                                " is emulated; only real ranks listen");
  }
  if (lane < 0) throw std::invalid_argument("RegisterListen: lane " + std::to_string(lane));
  if (!registrations_.emplace(RankId{rank, listen_id}, Registration{sender, lane, false}).second) {
    throw std::invalid_argument("RegisterListen: listen " + std::to_string(listen_id) +
                                " of rank " + std::to_string(rank) + " registered twice");
  }
  MaybeConnectFromEmulated(rank, listen_id);
}

void BridgeServer::Impl::MaybeConnectFromEmulated(int rank, uint64_t listen) {
  auto reg = registrations_.find({rank, listen});
  if (reg == registrations_.end() || is_real(reg->second.sender) || reg->second.connected) return;
  if (RankSession(rank) == nullptr || listens_.count({rank, listen}) == 0) return;
  reg->second.connected = true;
  const int sender = reg->second.sender;
  const uint64_t id = next_connection_++;
  connections_[id] = ConnectionRecord{sender, 0, rank, 0, -1, reg->second.lane};
  const uint64_t vtime = SimulatorVtime();
  SendTo(rank, wire::EncodeFrame(wire::Incoming{listen, id, static_cast<uint32_t>(sender), vtime}));
  sink_->OnConnection(ConnectionInfo{id, sender, rank, -1, reg->second.lane, vtime});
}

void BridgeServer::Impl::ConnectToEmulated(const PendingConnect& pending) {
  const int peer = static_cast<int>(pending.connect.peer);
  uint32_t sender = 0;
  uint32_t lane = 0;
  if (!wire::DecodeSyntheticListenId(pending.connect.listen, &sender, &lane) ||
      sender != static_cast<uint32_t>(pending.rank) || pending.connect.nonce != 0 ||
      lane > static_cast<uint32_t>(INT32_MAX)) {
    Refuse(pending.rank, pending.connect.comm,
           "rank " + std::to_string(peer) + " is emulated, and listen " +
               std::to_string(pending.connect.listen) + " is not its synthetic listen for rank " +
               std::to_string(pending.rank) + " (a handle not from nbox-cosim's bootstrap)");
    return;
  }
  const uint64_t id = next_connection_++;
  const int lane_index = static_cast<int>(lane);
  connections_[id] = ConnectionRecord{
      pending.rank, pending.connect.comm, peer, 0, pending.connect.traffic_class, lane_index};
  send_comms_[{pending.rank, pending.connect.comm}] = id;
  const uint64_t vtime = SimulatorVtime();
  SendTo(pending.rank, wire::EncodeFrame(wire::Connected{pending.connect.comm, id, false, vtime}));
  sink_->OnConnection(
      ConnectionInfo{id, pending.rank, peer, pending.connect.traffic_class, lane_index, vtime});
}

bool BridgeServer::Impl::TryConnect(const PendingConnect& pending) {
  const int peer = static_cast<int>(pending.connect.peer);
  if (!is_real(peer)) {
    ConnectToEmulated(pending);
    return true;
  }
  if (RankSession(peer) == nullptr) return false;
  auto listen = listens_.find({peer, pending.connect.listen});
  if (listen == listens_.end()) return false;
  if (listen->second.nonce != pending.connect.nonce) {
    Refuse(pending.rank, pending.connect.comm,
           "the handle does not match listen " + std::to_string(pending.connect.listen) +
               " of rank " + std::to_string(peer) + " (wrong nonce: a stale or foreign handle)");
    return true;
  }
  const uint64_t id = next_connection_++;
  const int lane = LaneOf(peer, pending.connect.listen);
  connections_[id] = ConnectionRecord{
      pending.rank, pending.connect.comm, peer, 0, pending.connect.traffic_class, lane};
  send_comms_[{pending.rank, pending.connect.comm}] = id;
  const uint64_t vtime = SimulatorVtime();
  SendTo(pending.rank, wire::EncodeFrame(wire::Connected{pending.connect.comm, id, true, vtime}));
  SendTo(peer, wire::EncodeFrame(wire::Incoming{pending.connect.listen, id,
                                                static_cast<uint32_t>(pending.rank), vtime}));
  sink_->OnConnection(
      ConnectionInfo{id, pending.rank, peer, pending.connect.traffic_class, lane, vtime});
  return true;
}

void BridgeServer::Impl::Refuse(int rank, uint64_t comm, const std::string& why) {
  SendTo(rank, ErrorFrame(ErrorCode::kRefused, comm, "connect refused: " + why));
}

void BridgeServer::Impl::HandleAccept(ServerSession& session, const wire::Accept& accept) {
  TrackId(session, accept.comm);
  auto it = connections_.find(accept.connection);
  if (it == connections_.end() || it->second.receiver != session.rank ||
      it->second.recv_comm != 0 || recv_comms_.count({session.rank, accept.comm}) > 0) {
    ProtocolError(session, "Accept of connection " + std::to_string(accept.connection) +
                               " that was not offered to this rank, or with a used comm id");
    return;
  }
  it->second.recv_comm = accept.comm;
  recv_comms_[{session.rank, accept.comm}] = accept.connection;
}

void BridgeServer::Impl::HandleClose(ServerSession& session, const wire::Close& close) {
  const RankId key{session.rank, close.id};
  if (close.kind == wire::CloseKind::kListen) {
    listens_.erase(key);
    return;
  }
  if (close.kind == wire::CloseKind::kSend) {
    // A send comm closed while its Connect still waited for the listen.
    pending_connects_.erase(std::remove_if(pending_connects_.begin(), pending_connects_.end(),
                                           [&](const PendingConnect& p) {
                                             return p.rank == session.rank &&
                                                    p.connect.comm == close.id;
                                           }),
                            pending_connects_.end());
  }
  auto& comms = close.kind == wire::CloseKind::kSend ? send_comms_ : recv_comms_;
  auto it = comms.find(key);
  if (it == comms.end()) return;  // e.g. a send comm whose connect was refused
  const uint64_t connection = it->second;
  comms.erase(it);
  std::vector<uint64_t> requests;
  for (const auto& [request_key, request_connection] : requests_) {
    if (request_key.first == session.rank && request_connection == connection) {
      requests.push_back(request_key.second);
    }
  }
  for (uint64_t request : requests) {
    // Closing a comm in order leaves its messages in flight to be delivered.
    store_.Forget(session.rank, request, /*keep_in_flight=*/true);
    requests_.erase({session.rank, request});
  }
  sink_->OnConnectionClosed(session.rank, connection);
}

void BridgeServer::Impl::HandlePostSend(ServerSession& session, const wire::PostSend& post) {
  TrackId(session, post.request);
  if (requests_.count({session.rank, post.request}) > 0) {
    ProtocolError(session, "request id " + std::to_string(post.request) + " is already in use");
    return;
  }
  auto comm = send_comms_.find({session.rank, post.comm});
  if (comm == send_comms_.end()) {
    session.Queue(ErrorFrame(
        ErrorCode::kInvalidUsage, post.request,
        "isend on comm " + std::to_string(post.comm) + ", which is not a connected send comm"));
    return;
  }
  const ConnectionRecord& connection = connections_.at(comm->second);
  requests_[{session.rank, post.request}] = comm->second;
  store_.AddSend(session.rank, post.request, post.size, is_real(connection.receiver));
  Post event;
  event.kind = PostKind::kSend;
  event.rank = session.rank;
  event.peer = connection.receiver;
  event.request = post.request;
  event.connection = comm->second;
  event.lane = connection.lane;
  event.vtime = post.vtime;
  event.size = post.size;
  event.tag = post.tag;
  sink_->OnPost(event);
}

void BridgeServer::Impl::HandlePostRecv(ServerSession& session, wire::PostRecv& post) {
  TrackId(session, post.request);
  if (requests_.count({session.rank, post.request}) > 0) {
    ProtocolError(session, "request id " + std::to_string(post.request) + " is already in use");
    return;
  }
  auto comm = recv_comms_.find({session.rank, post.comm});
  if (comm == recv_comms_.end()) {
    session.Queue(ErrorFrame(
        ErrorCode::kInvalidUsage, post.request,
        "irecv on comm " + std::to_string(post.comm) + ", which is not an accepted recv comm"));
    return;
  }
  const ConnectionRecord& connection = connections_.at(comm->second);
  requests_[{session.rank, post.request}] = comm->second;
  store_.AddRecv(session.rank, post.request, post.slots);
  Post event;
  event.kind = PostKind::kRecv;
  event.rank = session.rank;
  event.peer = connection.sender;
  event.request = post.request;
  event.connection = comm->second;
  event.lane = connection.lane;
  event.vtime = post.vtime;
  event.slots = std::move(post.slots);
  sink_->OnPost(event);
}

}  // namespace nbox::bridge::server
