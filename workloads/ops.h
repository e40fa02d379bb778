// Constructors of the ops of a RankProgram (program.h), one per kind, so generators and tests
// write what an op is rather than the order of Op's fields.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/program.h"

namespace nbox::work {

Op MarkerOp(OpKind kind, int iteration);  // kIterationBegin or kIterationEnd
Op ComputeOp(int iteration, std::string label, double duration_s, int microbatch = -1);
Op CollectiveOp(int iteration, std::string label, coll::CollectiveOp collective, uint64_t bytes,
                int comm = 0, int stream = 0, int microbatch = -1);
Op AllToAllVOp(int iteration, std::string label, AllToAllCounts counts, int comm, int stream,
               int microbatch = -1);
Op TransfersOp(int iteration, std::string label, std::vector<coll::Transfer> transfers, int comm,
               int stream, int microbatch = -1);
Op WaitOp(int iteration, uint32_t target);
Op WaitStreamOp(int iteration, int stream);
Op WaitAllOp(int iteration);

// `iterations` iterations of one `collective` of `bytes` on slot 0, stream 0, each waited for
// and labelled with the op's name in lower case ("allreduce"): the bare collective that
// examples, tests and benchmarks run.
RankProgram RepeatedCollectiveProgram(coll::CollectiveOp collective, uint64_t bytes,
                                      int iterations);

}  // namespace nbox::work
