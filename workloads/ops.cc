#include "workloads/ops.h"

#include <cctype>
#include <utility>

namespace nbox::work {

Op MarkerOp(OpKind kind, int iteration) {
  Op op;
  op.kind = kind;
  op.iteration = iteration;
  return op;
}

Op ComputeOp(int iteration, std::string label, double duration_s, int microbatch) {
  Op op;
  op.kind = OpKind::kCompute;
  op.iteration = iteration;
  op.microbatch = microbatch;
  op.label = std::move(label);
  op.duration_s = duration_s;
  return op;
}

Op CollectiveOp(int iteration, std::string label, coll::CollectiveOp collective, uint64_t bytes,
                int comm, int stream, int microbatch) {
  Op op;
  op.kind = OpKind::kCollective;
  op.iteration = iteration;
  op.microbatch = microbatch;
  op.label = std::move(label);
  op.collective = collective;
  op.bytes = bytes;
  op.comm = comm;
  op.stream = stream;
  return op;
}

Op AllToAllVOp(int iteration, std::string label, AllToAllCounts counts, int comm, int stream,
               int microbatch) {
  Op op = CollectiveOp(iteration, std::move(label), coll::CollectiveOp::kAllToAllV, 0, comm, stream,
                       microbatch);
  op.counts = std::move(counts);
  return op;
}

Op TransfersOp(int iteration, std::string label, std::vector<coll::Transfer> transfers, int comm,
               int stream, int microbatch) {
  Op op;
  op.kind = OpKind::kTransfers;
  op.iteration = iteration;
  op.microbatch = microbatch;
  op.label = std::move(label);
  op.transfers = std::move(transfers);
  op.comm = comm;
  op.stream = stream;
  return op;
}

Op WaitOp(int iteration, uint32_t target) {
  Op op = MarkerOp(OpKind::kWait, iteration);
  op.target = target;
  return op;
}

Op WaitStreamOp(int iteration, int stream) {
  Op op = MarkerOp(OpKind::kWaitStream, iteration);
  op.stream = stream;
  return op;
}

Op WaitAllOp(int iteration) {
  return MarkerOp(OpKind::kWaitAll, iteration);
}

RankProgram RepeatedCollectiveProgram(coll::CollectiveOp collective, uint64_t bytes,
                                      int iterations) {
  std::string label(coll::ToString(collective));  // "allreduce", "allgather", ...
  for (char& c : label) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  RankProgram program;
  program.iterations = iterations;
  for (int i = 0; i < iterations; ++i) {
    program.ops.push_back(MarkerOp(OpKind::kIterationBegin, i));
    program.ops.push_back(CollectiveOp(i, label, collective, bytes));
    program.ops.push_back(WaitAllOp(i));
    program.ops.push_back(MarkerOp(OpKind::kIterationEnd, i));
  }
  return program;
}

}  // namespace nbox::work
