// What a job's run keeps as it goes, counted from its programs before it runs: the records
// its ranks append (ns3::NboxJobRecords), the collective instances its report lists, and the
// programs themselves. The memory estimate (memory_estimate.h) and the output-size estimate
// (output_size.h) both start from these counts, and the records' vectors are reserved to them
// up front (ReserveRunRecords), so they never double as they fill.
#pragma once

#include <cstdint>

#include "ns3/nbox-job-records.h"
#include "workloads/program.h"

namespace nbox::cosim {

struct RunRecordCounts {
  uint64_t collective_records = 0;    // one per communication op of every emulated rank
  uint64_t wait_records = 0;          // at most: two per wait on a communicator across stages
  uint64_t compute_records = 0;       // one per compute op, only when they are recorded
  uint64_t iteration_records = 0;     // one per iteration of every emulated rank
  uint64_t compute_totals = 0;        // the same, for the ranks that compute
  uint64_t label_bytes = 0;           // the records' labels: compute ones' heap, the job's table
  uint64_t collective_instances = 0;  // counted once per communicator: the report's entries
  uint64_t ops = 0;                   // every emulated rank's ops (a trace's events)
  uint64_t program_bytes = 0;         // the programs as held: each shared one once
  uint64_t issued_bytes = 0;          // what each rank keeps of the ops it issued, as held
  // Of program_bytes and issued_bytes: the room vectors hold past their elements (libstdc++
  // doubles a vector as it grows), which does not grow evenly with the job.
  uint64_t program_slack_bytes = 0;
  uint64_t issued_slack_bytes = 0;
  uint64_t record_bytes() const;  // the records above, as held
  // Both jobs' counts together (a cluster's jobs keep their records in one run).
  RunRecordCounts& operator+=(const RunRecordCounts& other);
};

// `record_compute_ops`: NboxRankApp's RecordComputeOps (on only for the Chrome trace).
// Ranks without a program (real ranks) count nothing.
RunRecordCounts CountRunRecords(const work::JobPrograms& job, bool record_compute_ops);

// Reserves `records`' vectors for `counts`, so that they are allocated once, at their size.
void ReserveRunRecords(const RunRecordCounts& counts, ns3::NboxJobRecords& records);

// The heap a std::string of `length` characters takes (libstdc++ keeps up to 15 inline;
// glibc's malloc adds an 8-byte header and rounds to 16).
uint64_t StringHeapBytes(uint64_t length);

}  // namespace nbox::cosim
