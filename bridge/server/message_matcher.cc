#include "bridge/server/message_matcher.h"

namespace nbox::bridge::server {

void MessageMatcher::Add(const Post& post, std::vector<MatchedMessage>* matched,
                         std::vector<MatchFailure>* failed) {
  Queue& queue = queues_[post.connection];
  if (post.kind == PostKind::kSend) {
    queue.sends.push_back(post);
  } else {
    queue.recvs.push_back(OpenRecv{post, std::vector<bool>(post.slots.size(), false), 0});
  }
  Match(post.connection, queue, matched, failed);
}

void MessageMatcher::Match(uint64_t connection, Queue& queue, std::vector<MatchedMessage>* matched,
                           std::vector<MatchFailure>* failed) {
  while (!queue.sends.empty() && !queue.recvs.empty()) {
    const Post& send = queue.sends.front();
    OpenRecv& recv = queue.recvs.front();
    size_t slot = 0;
    while (slot < recv.post.slots.size() &&
           (recv.filled[slot] || recv.post.slots[slot].tag != send.tag)) {
      ++slot;
    }
    std::string problem;
    if (slot == recv.post.slots.size()) {
      problem = "a message with tag " + std::to_string(send.tag) +
                " matches no free buffer of the receive";
    } else if (send.size > recv.post.slots[slot].size) {
      problem = "a message of " + std::to_string(send.size) + " bytes is larger than the " +
                std::to_string(recv.post.slots[slot].size) + "-byte receive buffer";
    }
    if (!problem.empty()) {
      failed->push_back({send.rank, send.request, problem});
      failed->push_back({recv.post.rank, recv.post.request, problem});
      queue.sends.pop_front();
      queue.recvs.pop_front();
      continue;
    }
    MatchedMessage message;
    message.connection = connection;
    message.send_rank = send.rank;
    message.send_request = send.request;
    message.send_vtime = send.vtime;
    message.size = send.size;
    message.recv_rank = recv.post.rank;
    message.recv_request = recv.post.request;
    message.slot = static_cast<uint32_t>(slot);
    message.recv_vtime = recv.post.vtime;
    matched->push_back(message);
    recv.filled[slot] = true;
    ++recv.filled_count;
    queue.sends.pop_front();
    if (recv.filled_count == recv.filled.size()) queue.recvs.pop_front();
  }
  if (queue.sends.empty() && queue.recvs.empty()) queues_.erase(connection);
}

void MessageMatcher::ForgetConnection(uint64_t connection) {
  queues_.erase(connection);
}

size_t MessageMatcher::pending() const {
  size_t count = 0;
  for (const auto& [connection, queue] : queues_) count += queue.sends.size() + queue.recvs.size();
  return count;
}

}  // namespace nbox::bridge::server
