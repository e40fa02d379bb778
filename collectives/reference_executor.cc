#include "collectives/reference_executor.h"

#include <cstddef>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>

#include "collectives/step_tracker.h"

namespace nbox::coll {
namespace {

template <typename T>
void Accumulate(T& into, T value) {
  if constexpr (std::is_integral_v<T>) {
    // Signed overflow is undefined; the sum wraps as a reduction on hardware would.
    using Unsigned = std::make_unsigned_t<T>;
    into = static_cast<T>(static_cast<Unsigned>(into) + static_cast<Unsigned>(value));
  } else {
    into += value;
  }
}

std::string DescribeStep(const Step& step) {
  const bool send = step.kind == StepKind::kSend;
  return "step " + std::to_string(step.id) + " (" + (send ? "Send to" : "Recv from") + " rank " +
         std::to_string(step.peer) + " on channel " + std::to_string(step.channel) + ", " +
         std::to_string(step.bytes) + " bytes)";
}

struct StepRef {
  int rank;
  uint32_t step;
};

template <typename T>
class Execution {
 public:
  Execution(const Schedule& schedule, std::vector<std::vector<T>>& buffers, uint64_t seed)
      : schedule_(schedule), buffers_(buffers), rng_(seed) {
    Validate();
    ranks_.reserve(schedule.ranks.size());
    for (const RankSchedule& rank : schedule.ranks) ranks_.emplace_back(rank);
    for (const RankSchedule& rank : schedule.ranks) {
      for (const Step& step : rank.steps) {
        if (step.kind != StepKind::kSend) continue;
        const auto key = std::make_tuple(rank.rank, step.peer, step.channel);
        const auto [it, added] = connection_index_.emplace(key, connections_.size());
        if (added) {
          Connection& connection = connections_.emplace_back();
          connection.src = rank.rank;
          connection.dst = step.peer;
          connection.channel = step.channel;
        }
        ranks_[rank.rank].steps[step.id].connection = it->second;
      }
    }
    report_.ranks.resize(schedule.ranks.size());
  }

  ExecutionReport Run() {
    for (int rank = 0; rank < static_cast<int>(ranks_.size()); ++rank) Admit(rank);
    while (true) {
      const size_t starts = startable_.size();
      const size_t deliveries = deliverable_.size();
      const size_t total = starts + deliveries + completable_.size();
      if (total == 0) break;
      // mt19937_64's output sequence is fixed by the standard (unlike the distributions), so
      // a seed means the same interleaving everywhere.
      const size_t pick = static_cast<size_t>(rng_() % total);
      if (pick < starts) {
        Start(TakeAt(startable_, pick));
      } else if (pick < starts + deliveries) {
        Deliver(pick - starts);
      } else {
        CompleteRecv(TakeAt(completable_, pick - starts - deliveries));
      }
      ++report_.actions;
    }
    for (const RankRun& rank : ranks_) {
      if (!rank.tracker.Done()) ReportDeadlock();
    }
    return report_;
  }

 private:
  struct StepRun {
    bool started = false;
    bool arrived = false;  // Recv: its message was delivered
    bool completed = false;
    size_t connection = 0;   // Send: index into connections_
    std::vector<T> payload;  // Recv: the delivered message until the Recv completes
  };

  struct RankRun {
    explicit RankRun(const RankSchedule& schedule)
        : tracker(schedule), steps(schedule.steps.size()) {}
    StepTracker tracker;
    std::vector<StepRun> steps;
  };

  struct Message {
    uint32_t send_step;
    std::vector<T> payload;
  };

  struct Connection {
    int src = 0;
    int dst = 0;
    int channel = 0;
    std::deque<uint32_t> unstarted_sends;  // handed out by the tracker, in order
    std::deque<Message> in_flight;
    uint64_t delivered = 0;
  };

  template <typename Item>
  static Item TakeAt(std::vector<Item>& items, size_t index) {
    Item item = items[index];
    items[index] = items.back();
    items.pop_back();
    return item;
  }

  void Validate() const {
    const CollectiveSpec& spec = schedule_.spec;
    const int world = static_cast<int>(schedule_.ranks.size());
    if (spec.element_bytes != sizeof(T)) {
      throw std::invalid_argument("ExecuteSchedule: spec.element_bytes is " +
                                  std::to_string(spec.element_bytes) + " but the buffers hold " +
                                  std::to_string(sizeof(T)) + "-byte elements");
    }
    if (buffers_.size() != schedule_.ranks.size()) {
      throw std::invalid_argument("ExecuteSchedule: " + std::to_string(buffers_.size()) +
                                  " buffers for " + std::to_string(world) + " ranks");
    }
    for (int r = 0; r < world; ++r) {
      const RankSchedule& rank = schedule_.ranks[r];
      const std::string where = "ExecuteSchedule: rank " + std::to_string(r);
      if (rank.rank != r) {
        throw std::invalid_argument(where + " carries rank " + std::to_string(rank.rank));
      }
      if (buffers_[r].size() * sizeof(T) != rank.buffer_bytes) {
        throw std::invalid_argument(
            where + ": buffer of " + std::to_string(buffers_[r].size() * sizeof(T)) +
            " bytes, schedule expects " + std::to_string(rank.buffer_bytes));
      }
      for (const Step& step : rank.steps) {
        const bool fits = step.bytes <= rank.buffer_bytes &&
                          step.offset <= rank.buffer_bytes - step.bytes &&
                          step.offset % sizeof(T) == 0 && step.bytes % sizeof(T) == 0;
        if (!fits || step.peer < 0 || step.peer >= world || step.channel < 0) {
          throw std::invalid_argument(where + " " + DescribeStep(step) + " at offset " +
                                      std::to_string(step.offset) +
                                      (fits ? " names a peer or channel that does not exist"
                                            : " is not a whole-element region of the buffer"));
        }
      }
    }
  }

  // Takes the tracker's newly ready steps of `rank` into the pools of possible actions.
  void Admit(int rank) {
    for (uint32_t id : ranks_[rank].tracker.TakeReady()) {
      const Step& step = schedule_.ranks[rank].steps[id];
      if (step.kind == StepKind::kRecv) {
        startable_.push_back({rank, id});
        continue;
      }
      // A connection's Sends start in the order handed out; only the oldest is startable.
      Connection& connection = connections_[ranks_[rank].steps[id].connection];
      connection.unstarted_sends.push_back(id);
      if (connection.unstarted_sends.size() == 1) startable_.push_back({rank, id});
    }
  }

  void Start(StepRef ref) {
    const Step& step = schedule_.ranks[ref.rank].steps[ref.step];
    StepRun& run = ranks_[ref.rank].steps[ref.step];
    run.started = true;
    if (step.kind == StepKind::kRecv) {
      if (run.arrived) completable_.push_back(ref);
      return;
    }
    Connection& connection = connections_[run.connection];
    connection.unstarted_sends.pop_front();
    if (!connection.unstarted_sends.empty()) {
      startable_.push_back({ref.rank, connection.unstarted_sends.front()});
    }
    const T* data = buffers_[ref.rank].data() + step.offset / sizeof(T);
    if (connection.in_flight.empty()) deliverable_.push_back(run.connection);
    connection.in_flight.push_back({ref.step, std::vector<T>(data, data + step.bytes / sizeof(T))});
    report_.ranks[ref.rank].bytes_sent += step.bytes;
    ++report_.ranks[ref.rank].messages_sent;
  }

  // Delivers the oldest message of connection deliverable_[slot].
  void Deliver(size_t slot) {
    const size_t index = deliverable_[slot];
    Connection& connection = connections_[index];
    Message message = std::move(connection.in_flight.front());
    connection.in_flight.pop_front();
    if (connection.in_flight.empty()) TakeAt(deliverable_, slot);
    ++connection.delivered;

    const std::string what = "message " + std::to_string(connection.delivered) + " from rank " +
                             std::to_string(connection.src) + " to rank " +
                             std::to_string(connection.dst) + " on channel " +
                             std::to_string(connection.channel);
    uint32_t recv_id = 0;
    try {
      recv_id = ranks_[connection.dst].tracker.MatchArrival(connection.src, connection.channel);
    } catch (const std::logic_error&) {
      throw ExecutionError(what + " has no matching Recv (the receiver's schedule has fewer)");
    }
    const Step& recv = schedule_.ranks[connection.dst].steps[recv_id];
    const uint64_t bytes = message.payload.size() * sizeof(T);
    if (recv.bytes != bytes) {
      throw ExecutionError(what + " carries " + std::to_string(bytes) +
                           " bytes but its matching Recv, " + DescribeStep(recv) + ", expects " +
                           std::to_string(recv.bytes));
    }
    StepRun& recv_run = ranks_[connection.dst].steps[recv_id];
    recv_run.arrived = true;
    recv_run.payload = std::move(message.payload);
    if (recv_run.started) completable_.push_back({connection.dst, recv_id});

    ranks_[connection.src].steps[message.send_step].completed = true;
    ranks_[connection.src].tracker.Complete(message.send_step);
    Admit(connection.src);
  }

  void CompleteRecv(StepRef ref) {
    const Step& step = schedule_.ranks[ref.rank].steps[ref.step];
    StepRun& run = ranks_[ref.rank].steps[ref.step];
    T* region = buffers_[ref.rank].data() + step.offset / sizeof(T);
    for (size_t i = 0; i < run.payload.size(); ++i) {
      if (step.reduce) {
        Accumulate(region[i], run.payload[i]);
      } else {
        region[i] = run.payload[i];
      }
    }
    run.payload = {};
    run.completed = true;
    report_.ranks[ref.rank].bytes_received += step.bytes;
    ++report_.ranks[ref.rank].messages_received;
    ranks_[ref.rank].tracker.Complete(ref.step);
    Admit(ref.rank);
  }

  [[noreturn]] void ReportDeadlock() const {
    constexpr int kShownPerRank = 4;
    std::string text = "deadlock: no step can progress";
    for (size_t r = 0; r < ranks_.size(); ++r) {
      const RankRun& rank = ranks_[r];
      if (rank.tracker.Done()) continue;
      const RankSchedule& schedule = schedule_.ranks[r];
      text += "\n  rank " + std::to_string(r) + ": " + std::to_string(rank.tracker.completed()) +
              " of " + std::to_string(schedule.steps.size()) + " steps done;";
      int shown = 0;
      for (const Step& step : schedule.steps) {
        const StepRun& run = rank.steps[step.id];
        if (run.completed) continue;
        if (shown++ == kShownPerRank) {
          text += " ...";
          break;
        }
        text += " " + DescribeStep(step);
        if (run.started) {
          text += " waits for its message;";
          continue;
        }
        std::string pending;
        for (uint32_t dep : step.deps) {
          if (!rank.steps[dep].completed) pending += " " + std::to_string(dep);
        }
        text += pending.empty() ? " waits for an earlier Send on its connection;"
                                : " waits for steps" + pending + ";";
      }
    }
    throw DeadlockError(text);
  }

  const Schedule& schedule_;
  std::vector<std::vector<T>>& buffers_;
  std::mt19937_64 rng_;
  std::vector<RankRun> ranks_;
  std::vector<Connection> connections_;
  std::map<std::tuple<int, int, int>, size_t> connection_index_;
  std::vector<StepRef> startable_;  // handed-out Recvs and the oldest unstarted Send per connection
  std::vector<size_t> deliverable_;   // connections with a message in flight
  std::vector<StepRef> completable_;  // started Recvs whose message has arrived
  ExecutionReport report_;
};

}  // namespace

template <typename T>
ExecutionReport ExecuteSchedule(const Schedule& schedule, std::vector<std::vector<T>>& buffers,
                                uint64_t seed) {
  return Execution<T>(schedule, buffers, seed).Run();
}

template ExecutionReport ExecuteSchedule<float>(const Schedule&, std::vector<std::vector<float>>&,
                                                uint64_t);
template ExecutionReport ExecuteSchedule<double>(const Schedule&, std::vector<std::vector<double>>&,
                                                 uint64_t);
template ExecutionReport ExecuteSchedule<int32_t>(const Schedule&,
                                                  std::vector<std::vector<int32_t>>&, uint64_t);

}  // namespace nbox::coll
