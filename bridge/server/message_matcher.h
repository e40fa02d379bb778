// NCCL's matching rule on one connection, for the simulator (and for tests): messages are
// matched in the order they were sent to receives in the order they were posted. A receive
// with several buffers takes the next messages by tag, one per buffer, and is matched once
// every buffer has one; a message whose tag fits no free buffer of the oldest open receive,
// or that is larger than the buffer, fails both requests (as the TCP plugin does).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "bridge/server/bridge_sink.h"

namespace nbox::bridge::server {

struct MatchedMessage {
  uint64_t connection = 0;
  int send_rank = 0;
  uint64_t send_request = 0;
  uint64_t send_vtime = 0;
  uint64_t size = 0;
  int recv_rank = 0;
  uint64_t recv_request = 0;
  uint32_t slot = 0;
  uint64_t recv_vtime = 0;
};

struct MatchFailure {
  int rank = 0;
  uint64_t request = 0;
  std::string text;
};

class MessageMatcher {
 public:
  // Adds a post; appends what it matched (in matching order) and what it failed.
  void Add(const Post& post, std::vector<MatchedMessage>* matched,
           std::vector<MatchFailure>* failed);
  // Drops everything pending on a connection (a comm was closed, a rank left).
  void ForgetConnection(uint64_t connection);
  // Posts still waiting for their other side.
  size_t pending() const;

 private:
  struct OpenRecv {
    Post post;
    std::vector<bool> filled;
    size_t filled_count = 0;
  };
  struct Queue {
    std::deque<Post> sends;
    std::deque<OpenRecv> recvs;
  };

  void Match(uint64_t connection, Queue& queue, std::vector<MatchedMessage>* matched,
             std::vector<MatchFailure>* failed);

  std::map<uint64_t, Queue> queues_;  // by connection
};

}  // namespace nbox::bridge::server
