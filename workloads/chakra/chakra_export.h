// A job's programs as MLCommons Chakra execution traces (workloads/chakra/README.md): one file
// per rank, <dir>/<prefix>.<rank>.et, and <dir>/comm_groups.json naming every communicator's
// ranks (ASTRA-sim's communicator-group file), from the program model's ops and their order
// (workloads/program.h) without simulating anything.
#pragma once

#include <string>
#include <vector>

#include "workloads/chakra/et_def.pb.h"
#include "workloads/program.h"

namespace nbox::chakra {

// The Chakra schema version nbox writes (GlobalMetadata.version) and declares (et_def.proto).
inline constexpr const char* kSchemaVersion = "0.0.4";
// The files WriteChakraTraces writes: <prefix>.<rank>.et with this prefix by default, and the
// communicator groups.
inline constexpr const char* kTracePrefix = "nbox";
inline constexpr const char* kCommGroupsFile = "comm_groups.json";
// The values of a marker node's nbox_marker attribute.
inline constexpr const char* kIterationBegin = "iteration_begin";
inline constexpr const char* kIterationEnd = "iteration_end";

// Rank `rank`'s program as Chakra nodes, ids 0, 1, ... in program order, each depending (data
// deps) on what it waits for in the program model.
std::vector<ChakraProtoMsg::Node> RankNodes(const work::JobPrograms& job, int rank);

// Writes every rank's trace and the communicator groups into `dir` (created if missing);
// returns the files written. Throws EtError naming a file that cannot be written.
std::vector<std::string> WriteChakraTraces(const work::JobPrograms& job, const std::string& dir,
                                           const std::string& prefix = kTracePrefix);

}  // namespace nbox::chakra
