#include "workloads/program.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

namespace nbox::work {
namespace {

[[noreturn]] void Reject(int rank, size_t op_index, const Op& op, const std::string& problem) {
  throw std::invalid_argument(
      "program of rank " + std::to_string(rank) + ", op " + std::to_string(op_index) +
      (op.label.empty() ? std::string() : " '" + op.label + "'") + ": " + problem);
}

bool IsCommunication(OpKind kind) {
  return kind == OpKind::kCollective || kind == OpKind::kTransfers;
}

}  // namespace

std::string_view ToString(Parallelism parallelism) {
  switch (parallelism) {
    case Parallelism::kData:
      return "dp";
    case Parallelism::kTensor:
      return "tp";
    case Parallelism::kPipeline:
      return "pp";
    case Parallelism::kExpert:
      return "ep";
    case Parallelism::kEmbedding:
      return "emb";
    case Parallelism::kContext:
      return "cp";
    case Parallelism::kOther:
      return "other";
  }
  return "other";
}

JobPrograms SameProgramEverywhere(int world_size, std::shared_ptr<const RankProgram> program,
                                  Parallelism parallelism, std::string stream_name) {
  JobPrograms job;
  Communicator world{"world", parallelism, {}};
  for (int r = 0; r < world_size; ++r) world.ranks.push_back(r);
  job.communicators.push_back(std::move(world));
  job.rank_comms.assign(static_cast<size_t>(world_size), std::vector<int>{0});
  job.programs.assign(static_cast<size_t>(world_size), std::move(program));
  job.stream_names.push_back(std::move(stream_name));
  return job;
}

RankProgram RepeatProgram(const RankProgram& program, int times) {
  if (times < 1) {
    throw std::invalid_argument("RepeatProgram: times must be >= 1 (got " + std::to_string(times) +
                                ")");
  }
  RankProgram repeated;
  repeated.iterations = program.iterations * times;
  repeated.ops.reserve(program.ops.size() * static_cast<size_t>(times));
  for (int copy = 0; copy < times; ++copy) {
    const auto op_offset = static_cast<uint32_t>(program.ops.size() * static_cast<size_t>(copy));
    for (Op op : program.ops) {
      op.iteration += program.iterations * copy;
      if (op.kind == OpKind::kWait) op.target += op_offset;
      repeated.ops.push_back(std::move(op));
    }
  }
  return repeated;
}

ProgramCommunication DistinctCommunication(const RankProgram& program) {
  ProgramCommunication out;
  using Signature = std::tuple<int, coll::CollectiveOp, uint64_t, int, uint32_t, const void*>;
  std::set<Signature> seen;
  std::set<std::pair<int, int>> sends;
  for (const Op& op : program.ops) {
    if (op.kind == OpKind::kCollective) {
      const Signature signature{op.comm, op.collective,    op.bytes,
                                op.root, op.element_bytes, op.counts.get()};
      if (seen.insert(signature).second) out.collectives.push_back(&op);
    } else if (op.kind == OpKind::kTransfers) {
      for (const coll::Transfer& t : op.transfers) {
        if (t.kind == coll::StepKind::kSend) sends.insert({op.comm, t.peer});
      }
    }
  }
  out.sends.assign(sends.begin(), sends.end());
  return out;
}

int RankIn(const Communicator& communicator, int world_rank) {
  const auto it = std::find(communicator.ranks.begin(), communicator.ranks.end(), world_rank);
  return it == communicator.ranks.end() ? -1 : static_cast<int>(it - communicator.ranks.begin());
}

void ValidateJobPrograms(const JobPrograms& job) {
  const int world = job.world_size();
  if (job.rank_comms.size() != job.programs.size()) {
    throw std::invalid_argument("job programs: " + std::to_string(job.rank_comms.size()) +
                                " communicator tables for " + std::to_string(world) + " ranks");
  }
  for (size_t c = 0; c < job.communicators.size(); ++c) {
    for (int member : job.communicators[c].ranks) {
      if (member < 0 || member >= world) {
        throw std::invalid_argument("communicator '" + job.communicators[c].name + "' holds rank " +
                                    std::to_string(member) + ", outside the world of " +
                                    std::to_string(world));
      }
    }
  }
  const int streams = static_cast<int>(job.stream_names.size());
  for (int rank = 0; rank < world; ++rank) {
    const auto& program = job.programs[static_cast<size_t>(rank)];
    if (!program) continue;  // a real rank, driven from outside
    const auto& slots = job.rank_comms[static_cast<size_t>(rank)];
    std::map<int, int> stream_of_comm;  // communicator -> the stream it is used on
    const auto& ops = program->ops;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.kind == OpKind::kWait) {
        if (op.target >= i || !IsCommunication(ops[op.target].kind)) {
          Reject(rank, i, op,
                 "waits for op " + std::to_string(op.target) +
                     ", which is not an earlier communication op");
        }
        continue;
      }
      if (op.kind == OpKind::kWaitStream && (op.stream < 0 || op.stream >= streams)) {
        Reject(rank, i, op,
               "waits for stream " + std::to_string(op.stream) + " of " + std::to_string(streams));
      }
      if (!IsCommunication(op.kind)) continue;
      if (op.comm < 0 || op.comm >= static_cast<int>(slots.size())) {
        Reject(rank, i, op,
               "names communicator slot " + std::to_string(op.comm) + "; the rank has " +
                   std::to_string(slots.size()));
      }
      const int comm_index = slots[static_cast<size_t>(op.comm)];
      if (comm_index < 0 || comm_index >= static_cast<int>(job.communicators.size())) {
        Reject(rank, i, op, "slot " + std::to_string(op.comm) + " names no communicator");
      }
      const Communicator& comm = job.communicators[static_cast<size_t>(comm_index)];
      if (RankIn(comm, rank) < 0) {
        Reject(rank, i, op, "the rank is not a member of communicator '" + comm.name + "'");
      }
      if (op.stream < 0 || op.stream >= streams) {
        Reject(rank, i, op,
               "issues on stream " + std::to_string(op.stream) + " of " + std::to_string(streams));
      }
      const auto [it, inserted] = stream_of_comm.try_emplace(comm_index, op.stream);
      if (it->second != op.stream) {
        Reject(rank, i, op,
               "uses communicator '" + comm.name + "' on stream " + std::to_string(op.stream) +
                   " after stream " + std::to_string(it->second) +
                   " (ops of one communicator must run in one order)");
      }
      const int size = static_cast<int>(comm.ranks.size());
      if (op.kind == OpKind::kTransfers) {
        if (op.transfers.empty()) Reject(rank, i, op, "a transfer group without transfers");
        for (const coll::Transfer& t : op.transfers) {
          if (t.peer < 0 || t.peer >= size || comm.ranks[static_cast<size_t>(t.peer)] == rank ||
              t.bytes == 0) {
            Reject(rank, i, op,
                   "a transfer of " + std::to_string(t.bytes) + " bytes with rank " +
                       std::to_string(t.peer) + " of '" + comm.name +
                       "' (expected another rank of its " + std::to_string(size) +
                       " and at least 1 byte)");
          }
        }
      } else if (op.collective == coll::CollectiveOp::kAllToAllV) {
        if (!op.counts || op.counts->size() != static_cast<size_t>(size) * size) {
          Reject(rank, i, op,
                 "all-to-all-v sizes must be " + std::to_string(size) + " x " +
                     std::to_string(size) + " for communicator '" + comm.name + "'");
        }
      } else if (op.bytes == 0) {
        Reject(rank, i, op, "a collective of 0 bytes");
      }
    }
  }
}

}  // namespace nbox::work
