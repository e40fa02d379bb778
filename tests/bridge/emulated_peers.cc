#include "tests/bridge/emulated_peers.h"

#include <algorithm>
#include <cstring>

namespace nbox::bridge::testing {
namespace {

// Runs one collective on every rank's float buffer, steps in id order (sends never wait, a
// receive waits for its message), and appends each message's bytes to `messages`.
void Run(const PlannedCollective& plan,
         std::map<std::tuple<int, int, int>, std::deque<std::vector<uint8_t>>>* messages) {
  const coll::Schedule schedule = coll::BuildSchedule(plan.spec);
  const int world = plan.spec.world_size;
  std::vector<std::vector<float>> buffers = plan.before;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<float>>> in_flight;
  std::vector<size_t> next(world, 0);
  bool progressed = true;
  while (progressed) {
    progressed = false;
    for (int r = 0; r < world; ++r) {
      const auto& steps = schedule.ranks[r].steps;
      while (next[r] < steps.size()) {
        const coll::Step& step = steps[next[r]];
        const size_t first = step.offset / 4;
        const size_t count = step.bytes / 4;
        if (step.kind == coll::StepKind::kSend) {
          std::vector<float> data(buffers[r].begin() + first, buffers[r].begin() + first + count);
          std::vector<uint8_t> bytes(step.bytes);
          std::memcpy(bytes.data(), data.data(), step.bytes);
          (*messages)[{r, step.peer, step.channel}].push_back(std::move(bytes));
          in_flight[{r, step.peer, step.channel}].push_back(std::move(data));
        } else {
          auto& wire = in_flight[{step.peer, r, step.channel}];
          if (wire.empty()) break;
          const std::vector<float> data = std::move(wire.front());
          wire.pop_front();
          for (size_t i = 0; i < count; ++i) {
            float& value = buffers[r][first + i];
            if (!step.reduce) {
              value = data[i];
            } else if (plan.reduction == Reduction::kSum) {
              value = data[i] + value;
            } else {
              value = std::max(value, data[i]);
            }
          }
        }
        ++next[r];
        progressed = true;
      }
    }
  }
}

}  // namespace

EmulatedPeers::EmulatedPeers(int world, std::vector<bool> real, int channels, uint64_t chunk_bytes,
                             Payload payload, std::vector<PlannedCollective> plan,
                             uint64_t delay_ns)
    : real_(real), payload_(payload), delay_ns_(delay_ns) {
  for (const PlannedCollective& collective : plan) Run(collective, &messages_);
  server::ServerOptions options;
  options.world_size = world;
  options.real = real;
  options.secret = kTestSecret;
  options.log = [](const std::string&) {};
  server_ = std::make_unique<server::BridgeServer>(options, this);
  server::CosimBootstrapOptions root;
  root.world_size = world;
  root.real = real;
  root.channels = channels;
  root.chunk_bytes = chunk_bytes;
  root.join_timeout = std::chrono::seconds(30);
  root_ = std::make_unique<server::CosimBootstrapRoot>(root, server_.get());
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      server_->Poll(std::chrono::milliseconds(1));
      root_->Poll(std::chrono::milliseconds(0));
      const std::string failure = root_->failure();
      std::lock_guard<std::mutex> lock(mutex_);
      bootstrap_failure_ = failure;
    }
  });
}

EmulatedPeers::~EmulatedPeers() {
  stop_.store(true);
  thread_.join();
}

void EmulatedPeers::Problem(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  problems_.push_back(text);
}

void EmulatedPeers::OnConnection(const server::ConnectionInfo& connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  connections_.push_back(connection);
}

void EmulatedPeers::OnPost(const server::Post& post) {
  const int sender = post.kind == server::PostKind::kSend ? post.rank : post.peer;
  const int receiver = post.kind == server::PostKind::kSend ? post.peer : post.rank;
  if (real_[sender] && real_[receiver]) {
    std::vector<server::MatchedMessage> matched;
    std::vector<server::MatchFailure> failed;
    matcher_.Add(post, &matched, &failed);
    for (const server::MatchedMessage& m : matched) {
      const uint64_t delivery = std::max(m.send_vtime, m.recv_vtime);
      server_->CompleteSend(m.send_rank, m.send_request, delivery);
      server_->DeliverFromSend(m.recv_rank, m.recv_request, m.slot, m.send_rank, m.send_request,
                               delivery);
    }
    for (const server::MatchFailure& f : failed) Problem("real to real: " + f.text);
    return;
  }
  auto& queue = messages_[{sender, receiver, post.lane}];
  if (queue.empty()) {
    Problem("rank " + std::to_string(post.rank) + " posted a message on (" +
            std::to_string(sender) + " -> " + std::to_string(receiver) + ", lane " +
            std::to_string(post.lane) + ") that the plan does not have");
    return;
  }
  std::vector<uint8_t> bytes = std::move(queue.front());
  queue.pop_front();
  if (post.kind == server::PostKind::kSend) {
    if (post.size != bytes.size()) {
      Problem("a send of " + std::to_string(post.size) + " bytes where the plan has " +
              std::to_string(bytes.size()));
    }
    server_->CompleteSend(post.rank, post.request, post.vtime + delay_ns_);
    return;
  }
  const uint64_t at = post.vtime + delay_ns_;
  switch (payload_) {
    case Payload::kExact:
      server_->DeliverBytes(post.rank, post.request, 0, std::move(bytes), at);
      break;
    case Payload::kZeros:
      server_->DeliverBytes(post.rank, post.request, 0, std::vector<uint8_t>(bytes.size(), 0), at);
      break;
    case Payload::kSynthetic:
      server_->DeliverSynthetic(post.rank, post.request, 0, bytes.size(), at);
      break;
  }
}

void EmulatedPeers::OnHeartbeat(int, uint64_t) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++heartbeats_;
}

void EmulatedPeers::OnOp(int, const wire::OpReport& op) {
  std::lock_guard<std::mutex> lock(mutex_);
  ops_.push_back(op);
}

void EmulatedPeers::OnGoodbye(int, uint64_t) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++goodbyes_;
}

void EmulatedPeers::OnDisconnect(int rank, const std::string& reason) {
  Problem("rank " + std::to_string(rank) + " disconnected: " + reason);
}

std::vector<server::ConnectionInfo> EmulatedPeers::connections() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return connections_;
}
std::vector<wire::OpReport> EmulatedPeers::ops() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ops_;
}
std::vector<std::string> EmulatedPeers::problems() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return problems_;
}
int EmulatedPeers::goodbyes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return goodbyes_;
}
bool EmulatedPeers::WaitForGoodbyes(int count) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (goodbyes() < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

uint64_t EmulatedPeers::heartbeats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return heartbeats_;
}
std::string EmulatedPeers::bootstrap_failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bootstrap_failure_;
}

}  // namespace nbox::bridge::testing
