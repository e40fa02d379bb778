// TEST DOUBLE — not a network model. A BridgeSink that plays an ideal network for the bridge
// tests: a message is delivered the instant both its send and its receive are posted, at
// virtual time max(send time, receive time) + `delay_ns`, and the send completes at that same
// time. It lets the tests drive the real plugin and the real server library end to end;
// nbox-cosim's ns-3 network replaces it in real use.
//
// Thread-safe observation: the server calls it on its polling thread, tests read what it saw
// through the accessors.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "bridge/server/bridge_server.h"
#include "bridge/server/message_matcher.h"

namespace nbox::bridge::testing {

struct ObservedPromise {
  int rank;
  uint64_t vtime;
  bool blocked;
  bool saw_every_wakeup;  // server::RankPromise's
};

class LoopbackNetwork : public server::BridgeSink {
 public:
  explicit LoopbackNetwork(uint64_t delay_ns = 0) : delay_ns_(delay_ns) {}
  void Attach(server::BridgeServer* server) { server_ = server; }

  void OnJoin(const server::RankJoin& join) override;
  void OnPost(const server::Post& post) override;
  void OnRankPromise(const server::RankPromise& promise) override;
  void OnConnectionClosed(int rank, uint64_t connection) override;
  void OnGoodbye(int rank, uint64_t vtime) override;
  void OnDisconnect(int rank, const std::string& reason) override;

  // "JOIN 0", "GOODBYE 0", "DISCONNECT 2 <reason>", in the order they happened.
  std::vector<std::string> events() const;
  std::vector<server::Post> posts() const;
  std::vector<ObservedPromise> promises() const;
  int joined() const;
  int left() const;  // goodbyes and disconnects

 private:
  void Record(const std::string& event);

  const uint64_t delay_ns_;
  server::BridgeServer* server_ = nullptr;
  server::MessageMatcher matcher_;
  mutable std::mutex mutex_;
  std::vector<std::string> events_;
  std::vector<server::Post> posts_;
  std::vector<ObservedPromise> promises_;
  int joined_ = 0;
  int left_ = 0;
};

}  // namespace nbox::bridge::testing
