#include "tools/cosim/assembly/run_records.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ns3/nbox-rank-app.h"

namespace nbox::cosim {
namespace {

// What one program contributes per rank that runs it.
struct ProgramCounts {
  uint64_t communication = 0;
  uint64_t waits = 0;
  uint64_t compute = 0;
  uint64_t ops = 0;
  uint64_t communication_label_bytes = 0;
  uint64_t compute_label_bytes = 0;
  std::map<int, uint64_t> communication_by_slot;
  uint64_t bytes = 0;
  uint64_t slack_bytes = 0;  // of `bytes`: the ops vector's room past its ops
};

ProgramCounts Count(const work::RankProgram& program, std::set<const void*>& shared_counts) {
  ProgramCounts c;
  c.ops = program.ops.size();
  c.bytes = sizeof(work::RankProgram) + program.ops.capacity() * sizeof(work::Op);
  c.slack_bytes = (program.ops.capacity() - program.ops.size()) * sizeof(work::Op);
  for (const work::Op& op : program.ops) {
    c.bytes +=
        StringHeapBytes(op.label.capacity()) + op.transfers.capacity() * sizeof(coll::Transfer);
    if (op.counts && shared_counts.insert(op.counts.get()).second) {
      c.bytes += sizeof(*op.counts) + op.counts->capacity() * sizeof(uint64_t);
    }
    switch (op.kind) {
      case work::OpKind::kCollective:
      case work::OpKind::kTransfers:
        ++c.communication;
        ++c.communication_by_slot[op.comm];
        c.communication_label_bytes += StringHeapBytes(op.label.size());
        break;
      case work::OpKind::kWait:
      case work::OpKind::kWaitStream:
      case work::OpKind::kWaitAll:
        ++c.waits;
        break;
      case work::OpKind::kCompute:
        ++c.compute;
        c.compute_label_bytes += StringHeapBytes(op.label.size());
        break;
      default:
        break;
    }
  }
  return c;
}

// The capacity of a std::vector after `n` push_backs from empty: libstdc++ doubles it.
uint64_t GrownCapacity(uint64_t n) {
  uint64_t capacity = n > 0 ? 1 : 0;
  while (capacity < n) capacity *= 2;
  return capacity;
}

// A communicator's ops as one program names them: the program and its slot for it.
using ProgramSlot = std::pair<const work::RankProgram*, int>;

// The report's entries: one per communicator, iteration and label (Summarize), where the
// members' labels may differ (a pipeline send and its receive are two). Each program's labels
// on a slot are read once, however many communicators and ranks it serves.
uint64_t CountInstances(const std::map<int, std::set<ProgramSlot>>& members_ops) {
  using Key = std::pair<int, std::string>;  // iteration, label
  std::map<ProgramSlot, std::vector<Key>> keys_of;
  auto keys = [&](const ProgramSlot& ps) -> const std::vector<Key>& {
    auto [it, added] = keys_of.try_emplace(ps);
    if (added) {
      for (const work::Op& op : ps.first->ops) {
        const bool communication =
            op.kind == work::OpKind::kCollective || op.kind == work::OpKind::kTransfers;
        if (communication && op.comm == ps.second) it->second.emplace_back(op.iteration, op.label);
      }
      std::sort(it->second.begin(), it->second.end());
      it->second.erase(std::unique(it->second.begin(), it->second.end()), it->second.end());
    }
    return it->second;
  };
  uint64_t instances = 0;
  for (const auto& [communicator, sources] : members_ops) {
    if (sources.size() == 1) {
      instances += keys(*sources.begin()).size();
      continue;
    }
    std::set<Key> all;
    for (const ProgramSlot& ps : sources) all.insert(keys(ps).begin(), keys(ps).end());
    instances += all.size();
  }
  return instances;
}

}  // namespace

// A label kept once per job: its std::string in the deque and its unordered_map entry (a node of
// a view and an id, and a bucket).
constexpr uint64_t kInternedLabelBytes = sizeof(std::string) + 48;

uint64_t StringHeapBytes(uint64_t length) {
  if (length <= 15) return 0;
  return (length + 1 + 8 + 15) / 16 * 16;
}

RunRecordCounts& RunRecordCounts::operator+=(const RunRecordCounts& other) {
  for (auto member :
       {&RunRecordCounts::collective_records, &RunRecordCounts::wait_records,
        &RunRecordCounts::compute_records, &RunRecordCounts::iteration_records,
        &RunRecordCounts::compute_totals, &RunRecordCounts::label_bytes,
        &RunRecordCounts::collective_instances, &RunRecordCounts::ops,
        &RunRecordCounts::program_bytes, &RunRecordCounts::issued_bytes,
        &RunRecordCounts::program_slack_bytes, &RunRecordCounts::issued_slack_bytes}) {
    this->*member += other.*member;
  }
  return *this;
}

uint64_t RunRecordCounts::record_bytes() const {
  return collective_records * sizeof(ns3::NboxCollectiveRecord) +
         wait_records * sizeof(ns3::NboxWaitRecord) +
         compute_records * sizeof(ns3::NboxComputeRecord) +
         iteration_records * sizeof(ns3::NboxIterationRecord) +
         compute_totals * sizeof(ns3::NboxComputeTotal) + label_bytes;
}

RunRecordCounts CountRunRecords(const work::JobPrograms& job, bool record_compute_ops) {
  RunRecordCounts counts;
  std::map<const work::RankProgram*, ProgramCounts> programs;
  std::set<const void*> shared_counts;
  std::map<int, std::set<ProgramSlot>> members_ops;
  counts.program_bytes = job.programs.capacity() * sizeof(job.programs[0]);
  for (const auto& slots : job.rank_comms) {
    counts.program_bytes += sizeof(slots) + slots.capacity() * sizeof(int);
  }
  for (int rank = 0; rank < job.world_size(); ++rank) {
    const auto& program = job.programs[static_cast<size_t>(rank)];
    if (!program) continue;
    auto [it, added] = programs.try_emplace(program.get());
    if (added) {
      it->second = Count(*program, shared_counts);
      counts.program_bytes += it->second.bytes;
      counts.program_slack_bytes += it->second.slack_bytes;
      // A collective record's label is kept once per job (NboxJobRecords::InternLabel): at
      // most each program's labels, a string and its index entry each.
      counts.label_bytes +=
          it->second.communication_label_bytes + it->second.communication * kInternedLabelBytes;
    }
    const ProgramCounts& c = it->second;
    const auto& slots = job.rank_comms[static_cast<size_t>(rank)];
    // A wait ends in one record, or two where the op it waited for ran on a communicator
    // across stages (the bubble before its peers were ready, then the communication).
    bool crosses_stages = false;
    for (int index : slots)
      crosses_stages |= job.communicators[static_cast<size_t>(index)].crosses_stages;
    const auto iterations = static_cast<uint64_t>(program->iterations);
    counts.collective_records += c.communication;
    counts.wait_records += c.waits * (crosses_stages ? 2 : 1);
    counts.iteration_records += iterations;
    if (c.compute > 0) counts.compute_totals += iterations;
    if (record_compute_ops) {
      counts.compute_records += c.compute;
      counts.label_bytes += c.compute_label_bytes;
    }
    counts.ops += c.ops;
    // NboxRankApp keeps every communication op it issued in a vector grown by doubling.
    const uint64_t issued = GrownCapacity(c.communication);
    counts.issued_bytes += issued * ns3::NboxRankApp::GetIssuedOpBytes();
    counts.issued_slack_bytes += (issued - c.communication) * ns3::NboxRankApp::GetIssuedOpBytes();
    for (const auto& [slot, n] : c.communication_by_slot) {
      members_ops[slots[static_cast<size_t>(slot)]].insert({program.get(), slot});
    }
  }
  counts.collective_instances = CountInstances(members_ops);
  return counts;
}

void ReserveRunRecords(const RunRecordCounts& counts, ns3::NboxJobRecords& records) {
  records.collectives.reserve(counts.collective_records);
  records.waits.reserve(counts.wait_records);
  records.compute.reserve(counts.compute_records);
  records.iterations.reserve(counts.iteration_records);
  records.computeTotals.reserve(counts.compute_totals);
}

}  // namespace nbox::cosim
