// Executes a Schedule on real per-rank buffers, to check that it computes what it claims.
//
// Semantics, deliberately the loosest any engine may give, so a schedule that is right here
// is right everywhere:
//   - each rank's steps run through a StepTracker; a Send snapshots its region when it
//     starts and puts the message on its connection (src, dst, channel), which delivers in
//     FIFO order; delivery completes the Send;
//   - the matching rule pairs a delivered message with its Recv; the Recv applies it
//     (overwrite, or add when `reduce`) when it completes, which is some time after both the
//     Recv has started and the message has arrived;
//   - at every point the next action (start a handed-out step, deliver the oldest message of
//     some connection, complete a Recv) is drawn at random from all possible ones with a
//     seeded generator, so a missing dependency shows up, for some seed, as a wrong result.
// The same seed gives the same interleaving and bit-identical buffers on every platform.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll {

// The schedule broke the matching rule (a message with no Recv, or of another size).
class ExecutionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Nothing can progress but some steps have not completed; what() lists what each stuck rank
// waits for.
class DeadlockError : public ExecutionError {
 public:
  using ExecutionError::ExecutionError;
};

struct RankTraffic {
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
};

struct ExecutionReport {
  std::vector<RankTraffic> ranks;  // indexed by rank
  uint64_t actions = 0;            // starts, deliveries and Recv completions performed
};

// Runs `schedule` in place on `buffers` (buffers[r] is rank r's buffer of
// ranks[r].buffer_bytes / sizeof(T) elements) and returns the traffic. The reduction is the
// sum (wrapping for integers). T is float, double or int32_t, and spec.element_bytes must be
// sizeof(T). Throws std::invalid_argument if the buffers or the schedule's regions, peers or
// channels do not fit, ExecutionError or DeadlockError as above.
template <typename T>
ExecutionReport ExecuteSchedule(const Schedule& schedule, std::vector<std::vector<T>>& buffers,
                                uint64_t seed);

extern template ExecutionReport ExecuteSchedule<float>(const Schedule&,
                                                       std::vector<std::vector<float>>&, uint64_t);
extern template ExecutionReport ExecuteSchedule<double>(const Schedule&,
                                                        std::vector<std::vector<double>>&,
                                                        uint64_t);
extern template ExecutionReport ExecuteSchedule<int32_t>(const Schedule&,
                                                         std::vector<std::vector<int32_t>>&,
                                                         uint64_t);

}  // namespace nbox::coll
