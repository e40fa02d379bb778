// Chakra execution traces as nbox programs (workloads/chakra/README.md, "What nbox reads"): one
// file per rank, <dir>/<prefix>.<rank>.et, and <dir>/comm_groups.json where there is one,
// become a JobPrograms that nbox-cosim runs on its network: compute nodes take their recorded
// duration, collectives run nbox's collective algorithms, sends and receives are point to
// point. nbox's own traces and those of other tools (ASTRA-sim's examples, Chakra's converters)
// alike.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "workloads/compute_model.h"
#include "workloads/program.h"

namespace nbox::chakra {

struct ChakraReadOptions {
  // The files' prefix, <prefix>.<rank>.et; empty: the one prefix in the folder whose files
  // hold every rank (FindTracePrefix).
  std::string prefix;
  int replays = 1;  // the trace runs this many times, one after another
  // Times a compute node that records no duration but its num_ops (and tensor_size): the
  // larger of num_ops at the model's FLOP rate and tensor_size at its memory bandwidth (where
  // it has one), as ASTRA-sim's roofline times it.
  work::ComputeModel compute;
};

struct ImportedJob {
  work::JobPrograms programs;
  // The trace's iterations (the largest nbox_iteration + 1, or 1 without that attribute)
  // times the replays.
  int iterations = 0;
  std::string prefix;        // of the files read
  bool groups_file = false;  // comm_groups.json was there (else every collective is the world's)
  // Attributes of the traces' nodes nbox does not use, each once ("num_ops", ...): reported,
  // not guessed from.
  std::vector<std::string> ignored_attributes;
  // Nodes of a type nbox does not run (metadata and memory nodes), by type, over every rank.
  std::map<std::string, int> skipped_nodes;
  int modelled_compute_nodes = 0;  // timed from num_ops (ChakraReadOptions::compute), all ranks
};

// The prefix of the folder's trace files that hold ranks 0..world_size-1: the only one, or
// "nbox" (nbox's own) when several do. Throws EtError naming the folder and the prefixes found
// (with their ranks) when none does, or when several do and none is nbox's.
std::string FindTracePrefix(const std::string& dir, int world_size);

// Reads the traces of `world_size` ranks. Throws EtError naming the file, the node and what
// is wrong: a missing file or group, a schema version other than 0.0.4, a node type nbox
// cannot run (an invalid one), a collective type it does not have (GATHER, SCATTER,
// BARRIER, ...), a dependency on a later node, a send or receive without its peer's, sizes
// out of range.
ImportedJob ReadChakraTraces(const std::string& dir, int world_size,
                             const ChakraReadOptions& options = {});

}  // namespace nbox::chakra
