// Chakra execution traces as nbox programs (workloads/chakra/README.md, "What nbox reads"): one
// file per rank, <dir>/<prefix>.<rank>.et, and <dir>/comm_groups.json, become a JobPrograms
// that nbox-cosim runs on its network: compute nodes take their recorded duration,
// collectives run nbox's collective algorithms, sends and receives are point to point.
#pragma once

#include <string>
#include <vector>

#include "workloads/program.h"

namespace nbox::chakra {

struct ImportedJob {
  work::JobPrograms programs;
  int iterations = 0;  // the largest nbox_iteration + 1, or 1 without that attribute
  // Attributes of the traces' nodes nbox does not use, each once ("num_ops", ...): reported,
  // not guessed from.
  std::vector<std::string> ignored_attributes;
};

// Reads the traces of `world_size` ranks. Throws EtError naming the file, the node and what
// is wrong: a missing file or group, a node type nbox cannot run (memory, storage, metadata
// nodes), a collective type it does not have (GATHER, SCATTER, BARRIER, ...), a dependency on
// a later node, a send or receive without its peer's, sizes out of range.
ImportedJob ReadChakraTraces(const std::string& dir, int world_size,
                             const std::string& prefix = "nbox");

}  // namespace nbox::chakra
