// A run's output folder, replaced as one unit: every file of the run is written into a
// staging folder beside the target ("<parent>/.<name>.nbox-staging-<pid>"), and Commit swaps
// it with the target in one atomic rename (renameat2 RENAME_EXCHANGE), so a reader sees either
// the previous run's complete set of files or this run's, never a mix, and a run that fails
// before Commit leaves the target as it was and no staging folder behind.
//
// Files in the target that nbox-cosim does not write (IsRunOutput: nbox-sweep's cosim.out,
// cosim.err, status.json and pictures, a user's notes) are carried over into the new folder
// by hard link (the same file: a writer still holding it open keeps writing into it), and
// folders by rename, before the swap. A run killed with SIGKILL leaves its staging folder; the
// next run into the same target removes it (the process it is named after no longer exists).
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <string>

namespace nbox::cosim {

// The files nbox-cosim writes into a run's folder (and rank<N>.log of real ranks, and the
// Chakra traces of --export-chakra: workloads/chakra/chakra_export.h): the names
// OutputFolder::IsRunOutput knows, and main.cc writes.
inline constexpr const char* kResultsFile = "results.json";
inline constexpr const char* kPerfFile = "perf.json";
inline constexpr const char* kTrafficFile = "traffic.csv";
inline constexpr const char* kLinksFile = "links.csv";
inline constexpr const char* kTraceFile = "trace.json";
inline constexpr const char* kMessagesFile = "messages.csv";

// A file of the run being written in the staging folder (OutputFolder::Open): a file that grows
// while the run goes on (messages.csv) is written as it grows. Close flushes and checks it.
class StagedFile {
 public:
  std::ostream& stream() { return out_; }
  // Throws std::runtime_error naming the file (as it will be in the output folder) and the OS
  // error if any write to it failed.
  void Close();

 private:
  friend class OutputFolder;
  StagedFile(const std::filesystem::path& path, std::filesystem::path shown);

  std::ofstream out_;
  std::filesystem::path shown_;
};

class OutputFolder {
 public:
  // Creates the target's parent folders and the staging folder, and checks that files can be
  // written in it, so that a bad output path is found before simulating. Throws
  // std::runtime_error naming the folder and the OS error.
  explicit OutputFolder(const std::string& target);
  ~OutputFolder();  // removes the staging folder unless committed
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  // Where the run writes its files until Commit.
  const std::filesystem::path& staging() const { return staging_; }
  const std::filesystem::path& target() const { return target_; }

  // Opens staging()/name for writing; throws std::runtime_error naming the file and the OS
  // error. Write the file, then Close it before Commit.
  StagedFile Open(const std::string& name) const;
  // Writes staging()/name whole; throws std::runtime_error naming the file and the OS error.
  void Write(const std::string& name, const std::string& content) const;
  // The same, with the content written by `write` straight into the file: outputs that grow
  // with the run (trace.json, messages.csv, links.csv) are never held whole in memory.
  void Write(const std::string& name, const std::function<void(std::ostream&)>& write) const;

  // Replaces the target with the staging folder as one unit (see the file comment). Throws
  // std::runtime_error, leaving the target as it was, if it cannot.
  void Commit();

  // Whether nbox-cosim writes a file of this name (results.json, perf.json, traffic.csv,
  // links.csv, trace.json, messages.csv, rank<N>.log, the Chakra traces): the files a run
  // replaces rather than carries over.
  static bool IsRunOutput(const std::string& name);

 private:
  std::filesystem::path target_;
  std::filesystem::path staging_;
  bool committed_ = false;
};

}  // namespace nbox::cosim
