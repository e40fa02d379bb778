// The workload kinds nbox-cosim runs, chosen by workload.kind: each turns a scenario into the
// programs of every rank (workloads/program.h) and says what it ran. A new kind is a generator
// in workloads/ plus an entry here. Nothing else in nbox-cosim names a kind but the scenario's
// rules (which keys a kind reads) and the reports of nccl-tests' sweep, whose table replaces
// the iterations (reports/nccl_tests_table.h, by work::kNcclTestsKind).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tools/cosim/assembly/run_records.h"
#include "tools/cosim/scenario/scenario.h"
#include "workloads/ddp.h"
#include "workloads/program.h"

namespace nbox::cosim {

struct Workload {
  work::JobPrograms programs;
  std::string description;  // one line for the terminal: "ddp resnet50 (25.6M parameters), ..."
  work::ModelSpec model;    // name, parameters, layers, FLOPs per sample, source
  // What results.json says of the workload beyond the model: its parallelism and the like.
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
  uint32_t element_bytes = 4;  // the communicators cut buffers on these boundaries
};

struct WorkloadKind {
  std::string name;         // the value of workload.kind
  std::string description;  // for the docs
  Workload (*build)(const scenario::Scenario& scenario);
  // What the run of a workload too large to build first will keep (run_records_forecast.h);
  // null for kinds whose programs are as small as their inputs.
  std::optional<RunRecordCounts> (*forecast)(const scenario::Scenario& scenario,
                                             bool record_compute_ops) = nullptr;
};

// Every kind, in a fixed order.
const std::vector<WorkloadKind>& WorkloadKinds();

// The workload of `scenario`; throws std::invalid_argument naming the key for an unknown kind,
// and whatever the generator throws for settings it cannot use.
Workload BuildWorkload(const scenario::Scenario& scenario);

// The forecast of the records `scenario`'s run keeps, where its kind has one and it applies.
std::optional<RunRecordCounts> ForecastWorkloadRecords(const scenario::Scenario& scenario,
                                                       bool record_compute_ops);

}  // namespace nbox::cosim
