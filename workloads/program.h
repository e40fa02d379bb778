// What one rank does, in order: the RankProgram.
//
// A program is a flat list of ops. Compute ops run one after another on the rank's compute
// stream. Collective ops are asynchronous: issuing one costs no time; it joins the rank's
// communication stream, where collectives run one at a time in issue order (like NCCL on one
// stream), and starts once issued and the previous collective is done. kWaitCollectives
// blocks the compute stream until every collective issued so far has finished.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::work {

enum class OpKind {
  kIterationBegin,   // marker: iteration `iteration` starts (costs nothing)
  kCompute,          // busy for duration_s
  kCollective,       // issue a collective of `bytes` over the whole world
  kWaitCollectives,  // wait until all issued collectives completed
  kIterationEnd,     // marker: iteration `iteration` ends
};

struct Op {
  OpKind kind = OpKind::kCompute;
  int iteration = 0;
  std::string label;      // "fwd L3", "bwd L7", "optimizer", "allreduce bucket 2"; markers: ""
  double duration_s = 0;  // kCompute
  coll::CollectiveOp collective = coll::CollectiveOp::kAllReduce;  // kCollective
  uint64_t bytes = 0;  // kCollective, nccl-tests size convention
};

struct RankProgram {
  std::vector<Op> ops;
  int iterations = 0;
};

}  // namespace nbox::work
