#include "tests/bridge/loopback_network.h"

#include <algorithm>
#include <cstdio>

namespace nbox::bridge::testing {

void LoopbackNetwork::Record(const std::string& event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(event);
}

void LoopbackNetwork::OnJoin(const server::RankJoin& join) {
  Record("JOIN " + std::to_string(join.rank));
  std::lock_guard<std::mutex> lock(mutex_);
  ++joined_;
}

void LoopbackNetwork::OnPost(const server::Post& post) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    posts_.push_back(post);
  }
  std::vector<server::MatchedMessage> matched;
  std::vector<server::MatchFailure> failed;
  matcher_.Add(post, &matched, &failed);
  for (const server::MatchedMessage& m : matched) {
    const uint64_t delivery = std::max(m.send_vtime, m.recv_vtime) + delay_ns_;
    server_->CompleteSend(m.send_rank, m.send_request, delivery);
    server_->DeliverFromSend(m.recv_rank, m.recv_request, m.slot, m.send_rank, m.send_request,
                             delivery);
  }
  for (const server::MatchFailure& f : failed) {
    server_->FailRequest(f.rank, f.request, wire::ErrorCode::kInvalidUsage, f.text);
  }
}

void LoopbackNetwork::OnRankPromise(const server::RankPromise& promise) {
  std::lock_guard<std::mutex> lock(mutex_);
  promises_.push_back({promise.rank, promise.vtime, promise.blocked, promise.saw_every_wakeup});
}

void LoopbackNetwork::OnConnectionClosed(int, uint64_t connection) {
  matcher_.ForgetConnection(connection);
}

void LoopbackNetwork::OnGoodbye(int rank, uint64_t) {
  Record("GOODBYE " + std::to_string(rank));
  std::lock_guard<std::mutex> lock(mutex_);
  ++left_;
}

void LoopbackNetwork::OnDisconnect(int rank, const std::string& reason) {
  Record("DISCONNECT " + std::to_string(rank) + " " + reason);
  std::lock_guard<std::mutex> lock(mutex_);
  ++left_;
}

std::vector<std::string> LoopbackNetwork::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

std::vector<server::Post> LoopbackNetwork::posts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return posts_;
}

std::vector<ObservedPromise> LoopbackNetwork::promises() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return promises_;
}

int LoopbackNetwork::joined() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return joined_;
}

int LoopbackNetwork::left() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return left_;
}

}  // namespace nbox::bridge::testing
