// Whether a scenario's run fits in the machine's memory, estimated before it is built
// so that a run that cannot fit is refused up front, naming the keys to change,
// instead of dying part-way or under the kernel's OOM killer. Two parts grow with the job:
// - the network model's build: per link (devices, queues, channels) and per route entry (a
//   switch, or a host with several links, keeps one per destination host);
// - the collective schedules every emulated rank holds while its collective runs
//   (2(W-1) x channels x chunks steps per rank for a ring of W ranks, all at once).
// Both coefficients are measured (tools/bench/nbox-bench-memory); docs/DESIGN.md, "Resource
// limits".
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ns3/nbox-communicator.h"
#include "tools/cosim/assembly/run_records.h"
#include "tools/cosim/network_models.h"
#include "tools/cosim/scenario/scenario.h"
#include "topologies/topology.h"
#include "workloads/program.h"

namespace nbox::cosim {

// Measured heap bytes per schedule step while a collective runs (Step, its dependencies, the
// tracker's and the communicator's per-step state): tools/bench/nbox-bench-models, part 2:
// 1029 MiB peak for 1024 ranks of one 64 MiB ring all-reduce on the flow model, 24 MiB of it
// the process without a job (64 ranks), over 1024 x 8184 steps (2 phases x 1023 steps x 2
// channels x a Send and a Recv): 126 bytes, rounded up.
inline constexpr double kBytesPerScheduleStep = 130;

// Measured bytes per connection while a job runs (the transport's connection, its sockets or
// queue pair, the messages it carries at once), apart for a connection that carries messages
// and one opened up front that carries none (every pair of an all-to-all is connected, and an
// all-to-all-v leaves its empty pairs idle; coll::CarryingLaneBound counts the others).
// Carrying: a direct all-reduce of 1 MiB, which connects every pair of ranks and sends to
// every peer at once, at W = 64, 96 and 128 on a star against the same job's peak
// (differences over 10,176 and 14,272 connections): packet over TCP 23.7-23.9 KiB (two ns-3
// sockets and their buffers), RoCE 4.5-4.7 KiB, analytical 0.3 KiB; flow 2.3-2.4 KiB beyond
// the schedule's steps (which kBytesPerScheduleStep counts), measured where only the
// connections change: a direct all-reduce at W = 256 on 1, 2 and 4 channels. Idle, where
// millions of them make it exact, a DLRM job's all-to-alls (nbox-bench-run-memory's
// calibration rows): analytical 235 bytes (2,048 GPUs, 8.4 million connections, nearly all
// idle), flow 432 bytes (1,024 GPUs, 1.8 million idle, freed pages returned at once). The packet
// model's idle connection is charged as a carrying one (not measured apart). Each network model
// gives its own (NetworkModel's connection_cost), as it gives its build's cost per link and route
// entry (memory_cost).

struct MemoryEstimate {
  uint64_t links = 0;
  uint64_t route_entries = 0;         // nodes with several links x destinations
  uint64_t network_bytes = 0;         // the network model's build, with the process itself
  uint64_t schedule_steps = 0;        // summed over emulated ranks, each at its largest collective
  uint64_t schedule_bytes = 0;        // schedule_steps x kBytesPerScheduleStep
  bool schedules_counted = false;     // AddScheduleMemory ran (the job is built)
  uint64_t connections = 0;           // at most this many connections opened
  uint64_t carrying_connections = 0;  // of those, at most this many carry bytes
  uint64_t connection_bytes = 0;      // each at the model's connection_cost, carrying or idle
  uint64_t program_bytes = 0;         // the workload's programs (RunRecordCounts)
  uint64_t record_bytes = 0;          // the records the run keeps as it goes (RunRecordCounts)
  uint64_t report_bytes = 0;          // the report built from them at the end
  uint64_t collective_instances = 0;  // the report's entries
  bool run_forecast = false;          // the run's counts are forecast (run_records_forecast.h)
  // The schedules live while collectives run and the report is built after the last one has
  // completed, so the run peaks with the larger of the two, never both (a GPT-3 175B run on the
  // flow model peaked writing its report, every schedule gone: tools/bench/README.md, "Memory
  // of a whole run").
  uint64_t total_bytes() const {
    return network_bytes + connection_bytes + program_bytes + record_bytes +
           std::max(schedule_bytes, report_bytes);
  }
};

// The network model's build for `topology`, before it is built.
MemoryEstimate EstimateNetworkMemory(const scenario::Scenario& scenario,
                                     const topo::Topology& topology);

// Adds the schedules' peak memory: every emulated rank (a non-null program) at its largest
// collective at once. Collectives the transport times whole (the analytical model) build no
// schedule and count nothing.
void AddScheduleMemory(const work::JobPrograms& job,
                       const std::vector<ns3::Ptr<ns3::NboxCommunicator>>& communicators,
                       MemoryEstimate& estimate);

// Adds the connections the job opens up front (NboxJobHelper::Install), counted before any is:
// per communicator, every member's coll::SendLaneBound for each algorithm its collectives use,
// and each distinct point-to-point pair of its transfers.
void AddConnectionMemory(const scenario::Scenario& scenario, const work::JobPrograms& job,
                         const std::vector<ns3::Ptr<ns3::NboxCommunicator>>& communicators,
                         MemoryEstimate& estimate);

// Measured bytes per collective instance of what a run holds beyond its counted parts: the
// report built at its end (the CollectiveSummary; results.json goes out an instance at a time,
// never as one document) and what the ranks' communicators keep per collective.
// tools/bench/nbox-bench-run-memory's calibration, GPT-3 175B with t 8 and p 16 on 128 to 2048
// GPUs (18,697 to 299,920 instances), once each rank's runtime is counted (kBytesPerRank): 268
// to 302 bytes, median 275 (1,124 while results.json was built whole first).
inline constexpr double kReportBytesPerCollective = 275;

// Measured bytes per rank of the job runtime, whatever the rank runs: its application, its
// state in the communicators and the transport. tools/bench/nbox-bench-run-memory's ResNet-50
// DDP runs on an analytical star (its calibration rows): the peak beyond every counted part
// grows by 5.1 KiB a rank from 1,024 to 4,096 ranks and 5.3 KiB from 4,096 to 16,384.
// Counted with the programs (the programs and the ranks that run them).
inline constexpr double kBytesPerRank = 5400;

// Adds what the run keeps and reports: the workload's programs and the records its ranks
// append, counted (CountRunRecords: sizes as held, the records' vectors reserved to them), the
// `ranks` that run them, and the report, per collective instance.
void AddRunMemory(const RunRecordCounts& counts, int ranks, MemoryEstimate& estimate);

// "N MiB: network N, schedules N, connections N (C of K carrying), programs N, records N,
// report N of K collective instances" (MiB, but the counts C and K).
std::string DescribeMemoryEstimate(const MemoryEstimate& estimate);

// A run refused for its resources (nbox-cosim's exit status 3).
class ResourceRefusal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "Keep less: ..." with the keys that shrink the programs and what the run keeps.
std::string KeepLessOfTheRun(const scenario::Scenario& scenario);

// Throws ResourceRefusal, naming the part that dominates and the keys that shrink it, unless
// `estimate` fits in `available` bytes (0: unknown, always fits).
void RefuseUnlessItFits(const MemoryEstimate& estimate, uint64_t available,
                        const scenario::Scenario& scenario);

}  // namespace nbox::cosim
