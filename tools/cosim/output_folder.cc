#include "tools/cosim/output_folder.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "workloads/chakra/chakra_export.h"

namespace nbox::cosim {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void Fail(const std::string& what, const fs::path& path, const std::string& why) {
  throw std::runtime_error(what + " " + path.string() + ": " + why);
}

// Removes the staging folders of `target` that runs killed with SIGKILL left behind: those
// named after a process that no longer exists. A live process's (a run into the same folder
// right now) is left alone, and so is one whose number a new process has taken (kept, not lost).
void RemoveAbandonedStagingFolders(const fs::path& target) {
  const std::string prefix = "." + target.filename().string() + ".nbox-staging-";
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(target.parent_path(), error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove_all(entry.path(), ignored);
    }
  }
}

}  // namespace

OutputFolder::OutputFolder(const std::string& target) : target_(fs::absolute(target)) {
  if (target_.filename().empty()) target_ = target_.parent_path();  // "dir/" names "dir"
  std::error_code error;
  fs::create_directories(target_.parent_path(), error);
  if (error) Fail("cannot use output folder", target_, error.message());
  if (fs::exists(target_) && !fs::is_directory(target_)) {
    Fail("cannot use output folder", target_, "it is not a folder");
  }
  RemoveAbandonedStagingFolders(target_);
  staging_ = target_.parent_path() /
             ("." + target_.filename().string() + ".nbox-staging-" + std::to_string(getpid()));
  fs::remove_all(staging_, error);  // a previous process of the same pid, killed
  if (!fs::create_directory(staging_, error) || error) {
    Fail("cannot create a folder beside output folder", target_,
         error ? error.message() : "it already exists");
  }
  const fs::path probe = staging_ / ".nbox-write-check";
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    if (!out) Fail("cannot write beside output folder", target_, std::strerror(errno));
  }
  fs::remove(probe, error);
}

OutputFolder::~OutputFolder() {
  if (committed_) return;
  std::error_code ignored;
  fs::remove_all(staging_, ignored);
}

void OutputFolder::Write(const std::string& name, const std::string& content) const {
  Write(name, [&content](std::ostream& out) {
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  });
}

StagedFile::StagedFile(const fs::path& path, fs::path shown)
    : out_(path, std::ios::binary | std::ios::trunc), shown_(std::move(shown)) {
  if (!out_) Fail("cannot write", shown_, std::strerror(errno));
}

void StagedFile::Close() {
  out_.flush();
  if (!out_) Fail("cannot write", shown_, std::strerror(errno));
  out_.close();
  if (!out_) Fail("cannot write", shown_, std::strerror(errno));
}

StagedFile OutputFolder::Open(const std::string& name) const {
  return StagedFile(staging_ / name, target_ / name);
}

void OutputFolder::Write(const std::string& name,
                         const std::function<void(std::ostream&)>& write) const {
  StagedFile file = Open(name);
  write(file.stream());
  file.Close();
}

bool OutputFolder::IsRunOutput(const std::string& name) {
  static const std::regex kRankLog("rank[0-9]+\\.log");
  static const std::regex kChakraTrace(std::string(chakra::kTracePrefix) + "\\.[0-9]+\\.et");
  for (const char* file : {kResultsFile, kPerfFile, kTrafficFile, kLinksFile, kTraceFile,
                           kMessagesFile, chakra::kCommGroupsFile}) {
    if (name == file) return true;
  }
  return std::regex_match(name, kRankLog) || std::regex_match(name, kChakraTrace);
}

void OutputFolder::Commit() {
  std::error_code error;
  if (!fs::exists(target_)) {
    if (std::rename(staging_.c_str(), target_.c_str()) != 0) {
      Fail("cannot move the results into", target_, std::strerror(errno));
    }
    committed_ = true;
    return;
  }
  // Carry over what this run does not write: files as hard links (the same inode, so a
  // writer holding one open, like nbox-sweep's redirect of our output, keeps writing into
  // it), folders by rename.
  for (const auto& entry : fs::directory_iterator(target_, error)) {
    const std::string name = entry.path().filename().string();
    if (IsRunOutput(name) || fs::exists(staging_ / name)) continue;
    if (entry.is_directory()) {
      fs::rename(entry.path(), staging_ / name, error);
    } else {
      fs::create_hard_link(entry.path(), staging_ / name, error);
      if (error) fs::copy_file(entry.path(), staging_ / name, error);
    }
    if (error) Fail("cannot carry " + name + " over into the new", target_, error.message());
  }
  if (error) Fail("cannot read output folder", target_, error.message());
  // One atomic step: the target now holds the new run, the staging name the old one.
  if (renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) != 0) {
    Fail("cannot swap the results into", target_, std::strerror(errno));
  }
  committed_ = true;
  fs::remove_all(staging_, error);  // the previous run's files; a failure here loses nothing
}

}  // namespace nbox::cosim
