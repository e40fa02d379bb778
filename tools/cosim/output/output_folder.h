// A run's output folder, written without ever touching what nbox did not write.
//
// Every file of the run is written into a staging folder beside the target
// ("<parent>/.<name>.nbox-staging-<pid>"), and Commit puts it in place:
//
// - no target yet: the staging folder is renamed to it;
// - a target that holds only nbox's files (output_folder_rules.h): nbox-sweep's companions are
//   hard-linked into the staging folder (the same file: a writer still holding one open, such
//   as nbox-sweep's redirect of our output, keeps writing into it) and the two folders are
//   swapped in one atomic rename (renameat2 RENAME_EXCHANGE), so a reader sees the previous
//   run's complete set or this run's, never a mix;
// - a target that holds other entries (only with --force), or where hard links cannot be
//   made: file by file. The old run's files are set aside, the new ones renamed in, and the
//   old ones removed; everything else in the folder stays where it is. A failure at any step
//   puts back what was moved.
//
// Whatever fails, the target is left as it was, and nothing of nbox's is left beside it. What
// nbox removes, it removes by name (its own files), never a whole tree: a folder that still
// holds something else is left in place.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>

#include "tools/cosim/output/output_folder_rules.h"

namespace nbox::cosim {

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

// The output folder's file system has no room for the run's files (OutputFolder::Reserve).
class OutputFolderNoRoom : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OutputFolder {
 public:
  // Checks the target (CheckOutputFolder; throws OutputFolderRefusal), creates its parent
  // folders and the staging folder, and checks that files can be written in it, so that a bad
  // output path is found before simulating. Throws std::runtime_error naming the folder and
  // the OS error. `force`: the target may hold entries nbox did not write (left as they are).
  explicit OutputFolder(const std::string& target, bool force = false);
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

  // Sets aside `bytes` of the staging folder's file system for the run's files, so that a disk
  // without room for them is found before simulating, not after (output_size.h estimates
  // them). Throws OutputFolderNoRoom, leaving nothing behind, if the file system has less free
  // space than that or refuses to allocate it. Release gives the room back just before the
  // files are written into it; a second Reserve replaces the first.
  void Reserve(uint64_t bytes);
  void Release() noexcept;

  // Puts the run's files in place (see the file comment). Throws std::runtime_error, leaving
  // the target as it was, if it cannot.
  void Commit();

  // For tests: the n-th change Commit makes to the file system (1 = the first) fails as if the
  // OS refused it. 0: none.
  void FailAtStepForTest(int step) { fail_at_step_ = step; }
  // The changes the last Commit made or tried.
  int StepsForTest() const { return steps_; }

 private:
  // Runs one change to the file system; throws std::runtime_error("cannot <what> <path>: ...")
  // if it fails (or is the step chosen to fail).
  void Step(const std::string& what, const std::filesystem::path& path,
            const std::function<bool()>& change);
  void SwapWhole();
  void ReplaceFileByFile();

  std::filesystem::path target_;
  std::filesystem::path staging_;
  bool committed_ = false;
  bool reserved_ = false;
  int steps_ = 0;
  int fail_at_step_ = 0;
};

}  // namespace nbox::cosim
