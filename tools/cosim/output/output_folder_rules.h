// Which folder may hold a run's files, and which files in it are nbox's: the rules that keep
// nbox-cosim from ever deleting or moving a file it did not write (docs/DESIGN.md, "Output
// folder").
//
// - The path is made absolute and normalised first (".", "..", symlinks), so that "--out ."
//   and "--out .." are seen for what they are.
// - Never a run's folder, even with --force: the file system's root, the home folder, the
//   current folder or any folder above it (a run replaces its folder, and a user's working
//   tree is not nbox's to replace).
// - A folder that already exists may hold only nbox's files: the run's own outputs
//   (IsRunOutput), which the new run replaces, and the companions nbox-sweep writes beside
//   them (IsSweepCompanion), which stay. Anything else is refused, naming it, unless the user
//   says --force: then those entries stay where they are, untouched, and only nbox's files
//   change.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace nbox::cosim {

// The files nbox-cosim writes into a run's folder (and rank<N>.log of real ranks, and the
// Chakra traces of --export-chakra: workloads/chakra/chakra_export.h).
inline constexpr const char* kResultsFile = "results.json";
inline constexpr const char* kPerfFile = "perf.json";
inline constexpr const char* kTrafficFile = "traffic.csv";
inline constexpr const char* kLinksFile = "links.csv";
inline constexpr const char* kTraceFile = "trace.json";
inline constexpr const char* kMessagesFile = "messages.csv";
// A cluster run's report of each of its jobs (docs/CLUSTERS.md): "results-<job>.json".
std::string ClusterJobResultsFile(const std::string& job_name);

// A path that cannot be a run's output folder (bad input: nothing was written).
class OutputFolderRefusal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether nbox-cosim writes a file of this name (results.json, perf.json, traffic.csv,
// links.csv, trace.json, messages.csv, a cluster's results-<job>.json, rank<N>.log, the Chakra
// traces): a run replaces them.
bool IsRunOutput(const std::string& name);
// Whether nbox-sweep writes a file of this name into a run's folder (its copy of the
// terminal, the point's parameters and status, and what `nbox-sweep plot RUN` draws:
// tools/sweep/nbox_sweep/point_run.py and plots/run_plots.py): a run keeps them.
bool IsSweepCompanion(const std::string& name);

// `target` made absolute and normalised, checked against the rules above (`force`: entries
// that are not nbox's may be there). Creates nothing. Throws OutputFolderRefusal saying which
// rule and what to do instead.
std::filesystem::path CheckOutputFolder(const std::string& target, bool force);

}  // namespace nbox::cosim
