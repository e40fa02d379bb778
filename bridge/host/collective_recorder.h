// The collective trace of a host-runtime communicator: when NBOX_PROFILE_TRACE names a file,
// every collective the program calls is written to it as one line in the format of the NCCL
// profiler (bridge/README.md, "The collective trace"; bridge/profiler/collective_record.h), so
// a job of real CPU ranks is recorded exactly as a GPU job under NCCL would be, and
// `workload.model = trace` replays (and scales) either. Point-to-point transfers and
// all-to-all are not written: NCCL's profiler does not see them as collectives either.
//
// Times are the rank's clock (Communicator::VirtualTimeNs): CLOCK_MONOTONIC without
// nbox-cosim, the virtual clock under it, so the compute between two collectives is what the
// program spent, not the time it waited on the simulator.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "bridge/host/operation.h"
#include "bridge/profiler/collective_record.h"
#include "bridge/profiler/trace_file.h"

namespace nbox::host {

class CollectiveRecorder {
 public:
  // The recorder of one communicator (comm_id: the same on every rank of it), or nullptr when
  // NBOX_PROFILE_TRACE is unset. Throws HostError naming the file when it cannot be opened.
  static std::unique_ptr<CollectiveRecorder> FromEnvironment(uint64_t comm_id, int nranks,
                                                             int rank);

  // The record of `part` launched at `now_ns` (algorithm, channels, count and type from its
  // spec), or nothing for a part the trace leaves out.
  std::optional<bridge::profiler::CollectiveRecord> Launch(const Part& part, uint64_t now_ns);
  // Writes `record`, ended at `end_ns`; complete = false when the operation failed. Throws
  // HostError naming the file when the write fails.
  void Write(bridge::profiler::CollectiveRecord record, uint64_t end_ns, bool complete);

 private:
  CollectiveRecorder(const std::string& path, uint64_t comm_id, int nranks, int rank);

  bridge::profiler::TraceFile file_;
  const uint64_t comm_id_;
  const int nranks_;
  const int rank_;
  std::mutex mutex_;
  std::map<std::string, uint64_t> seq_;  // per func, as NCCL counts
};

}  // namespace nbox::host
