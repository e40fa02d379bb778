// A collective trace recorded by the profiler of libnccl-net-nbox.so (NBOX_PROFILE_TRACE; the
// format is in bridge/README.md, "The collective trace"): one JSON line per collective per
// rank. ReadCollectiveTrace checks it and sorts it by rank; trace_replay.h turns it into
// RankPrograms.
#pragma once

#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::work {

// "path:line: what is wrong" (or "path: ..." for the trace as a whole).
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TraceCollective {
  int line = 0;  // 1-based line of the file
  coll::CollectiveOp op = coll::CollectiveOp::kAllReduce;
  // In nbox's (nccl-tests') size convention, from count x the datatype's size: the all-reduce
  // and broadcast buffer, the all-gather output and the reduce-scatter input (NCCL's count
  // is per rank for these two, so they are multiplied by nranks).
  uint64_t bytes = 0;
  uint64_t start_ns = 0;  // when the rank launched it (host clock)
  uint64_t end_ns = 0;    // when its last work stopped (>= start_ns)
  int root = 0;           // Broadcast and Reduce: the recorded root (a rank of its communicator)
  int comm = 0;           // index into CollectiveTrace::communicators
  uint32_t element_bytes = 1;  // the datatype's size: NCCL cuts the buffer on its boundaries
};

struct TraceCommunicator {
  std::string id;          // as written ("0x...")
  std::vector<int> ranks;  // world ranks; index = rank in the communicator
  int first_line = 0;      // of its first collective, for messages
};

struct CollectiveTrace {
  std::string path;
  int nranks = 0;  // ranks of the job (of its world communicator)
  // communicators[0] spans the job; the others (tensor-, data-parallel groups, ...) follow in
  // the order of their first line.
  std::vector<TraceCommunicator> communicators;
  // ranks[r]: world rank r's collectives on every communicator, in launch order (start_ns,
  // then line). Every member of a communicator has the same sequence of (op, bytes, root) on
  // it.
  std::vector<std::vector<TraceCollective>> ranks;
};

// Reads and checks a trace file. With one communicator, its ranks are the job's. With several
// (a hybrid-parallel job), the one with the most ranks is the job's world and the others' ranks
// are mapped to it by the recording process ("pid", unique per process on one host). Throws
// TraceError naming the file and line: a line that is not a JSON object of format version 1, a
// missing or mistyped field, a collective nbox cannot replay (AlltoAll, Send, ...), an unknown
// datatype, end before start, a rank outside nranks, a rank without collectives, two largest
// communicators, a process outside the largest or in it twice, members of a communicator whose
// sequences of collectives differ, an empty file.
CollectiveTrace ReadCollectiveTrace(const std::string& path);
// The same from a stream; `path` only names it in messages.
CollectiveTrace ParseCollectiveTrace(std::istream& in, const std::string& path);

}  // namespace nbox::work
