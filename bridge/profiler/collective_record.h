// One collective as the profiler saw it on one rank, and its line in a trace file (the format
// is described in bridge/README.md, "The collective trace").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nbox::bridge::profiler {

// The version written as "v" in every line; the reader (workloads/trace_reader.h) refuses
// others.
inline constexpr int kTraceFormatVersion = 1;

struct CollectiveRecord {
  // The communicator: NCCL's commId (hash), its name, size and this rank.
  uint64_t comm_id = 0;
  std::string comm_name;
  int nranks = 0;
  int rank = 0;
  int pid = 0;
  // What NCCL's coll event descriptor says.
  uint64_t seq = 0;  // per communicator and per func
  std::string func;  // "AllReduce", ...
  uint64_t count = 0;
  std::string datatype;  // "ncclFloat32", ...
  int root = 0;
  std::string algo;
  std::string proto;
  int nchannels = 0;
  int nwarps = 0;
  // Host steady clock (CLOCK_MONOTONIC, ns): when NCCL launched the collective, and when its
  // last piece of work (proxy op or kernel channel) stopped.
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  // GPU global timer (ns) of the earliest kernel channel start and the latest stop, when NCCL
  // reported kernel channels.
  std::optional<uint64_t> gpu_start_ns;
  std::optional<uint64_t> gpu_end_ns;
  // False when the communicator ended before every piece of work of the collective stopped
  // (end_ns is then the last stop seen).
  bool complete = true;
};

// The record as one line of JSON, ending in '\n'. Keys in a fixed order; strings escaped.
std::string TraceLine(const CollectiveRecord& record);

}  // namespace nbox::bridge::profiler
