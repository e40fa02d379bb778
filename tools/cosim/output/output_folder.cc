#include "tools/cosim/output/output_folder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

namespace nbox::cosim {
namespace fs = std::filesystem;
namespace {

constexpr const char* kWriteProbe = ".nbox-write-check";
constexpr const char* kReserve = ".nbox-reserve";

[[noreturn]] void Fail(const std::string& what, const fs::path& path, const std::string& why) {
  throw std::runtime_error(what + " " + path.string() + ": " + why);
}

bool IsPlainFile(const fs::path& path) {
  std::error_code error;
  return fs::symlink_status(path, error).type() == fs::file_type::regular;
}

// The names of the plain files in `folder` that `wanted` picks.
std::vector<std::string> FilesIn(const fs::path& folder, bool (*wanted)(const std::string&)) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (IsPlainFile(entry.path()) && wanted(name)) names.push_back(name);
  }
  if (error) Fail("cannot read", folder, error.message());
  std::sort(names.begin(), names.end());
  return names;
}

bool IsNboxFile(const std::string& name) {
  return IsRunOutput(name) || IsSweepCompanion(name) || name == kWriteProbe || name == kReserve;
}

bool AnyName(const std::string&) {
  return true;
}

bool HoldsOnlyNboxFiles(const fs::path& folder) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (!IsPlainFile(entry.path()) || !IsNboxFile(entry.path().filename().string())) return false;
  }
  if (error) Fail("cannot read", folder, error.message());
  return true;
}

// Removes nbox's own files from `folder`, by name, then the folder if that left it empty.
// Anything else keeps the folder (and itself) where it is.
// Best effort: a failure here loses nothing.
void RemoveNboxFolder(const fs::path& folder) noexcept {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    if (IsPlainFile(entry.path()) && IsNboxFile(entry.path().filename().string())) {
      fs::remove(entry.path(), error);
    }
  }
  fs::remove(folder, error);  // only if empty
}

// The folders beside `target` that runs killed with SIGKILL left behind (a staging folder, or
// the old run's files set aside during a commit): those named after a process that no longer
// exists. A live process's (a run into the same folder right now) is left alone, and so is one
// whose number a new process has taken.
void RemoveAbandonedFolders(const fs::path& target) {
  const std::string name = target.filename().string();
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(target.parent_path(), error)) {
    const std::string entry_name = entry.path().filename().string();
    for (const std::string& prefix :
         {"." + name + ".nbox-staging-", "." + name + ".nbox-previous-"}) {
      if (entry_name.rfind(prefix, 0) != 0) continue;
      const std::string digits = entry_name.substr(prefix.size());
      if (digits.empty() || digits.size() > 9 ||
          digits.find_first_not_of("0123456789") != std::string::npos) {
        continue;
      }
      const pid_t pid = static_cast<pid_t>(std::stol(digits));
      if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) RemoveNboxFolder(entry.path());
    }
  }
}

fs::path Beside(const fs::path& target, const std::string& kind) {
  return target.parent_path() /
         ("." + target.filename().string() + ".nbox-" + kind + "-" + std::to_string(getpid()));
}

}  // namespace

OutputFolder::OutputFolder(const std::string& target, bool force)
    : target_(CheckOutputFolder(target, force)) {
  std::error_code error;
  fs::create_directories(target_.parent_path(), error);
  if (error) Fail("cannot use output folder", target_, error.message());
  RemoveAbandonedFolders(target_);
  staging_ = Beside(target_, "staging");
  RemoveNboxFolder(staging_);  // a previous process of the same pid, killed
  if (!fs::create_directory(staging_, error) || error) {
    Fail("cannot create a folder beside output folder", target_,
         error ? error.message() : "it already exists");
  }
  const fs::path probe = staging_ / kWriteProbe;
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    if (!out) Fail("cannot write beside output folder", target_, std::strerror(errno));
  }
  fs::remove(probe, error);
}

OutputFolder::~OutputFolder() {
  if (!committed_) RemoveNboxFolder(staging_);
}

void OutputFolder::Reserve(uint64_t bytes) {
  Release();
  const fs::path reserve = staging_ / kReserve;
  auto no_room = [&](const std::string& why) {
    throw OutputFolderNoRoom(fmt::format(
        "no room for the run's files beside output folder {}: they need about {:.0f} MiB and {}; "
        "free some space or choose another output.dir (--out)",
        target_.string(), static_cast<double>(bytes) / (1 << 20), why));
  };
  // The free space first: asking the file system for more than it has would fill it.
  struct statvfs info {};
  if (statvfs(staging_.c_str(), &info) == 0) {
    const uint64_t free_bytes = static_cast<uint64_t>(info.f_bavail) * info.f_frsize;
    if (free_bytes < bytes) {
      no_room(fmt::format("its file system has {:.0f} MiB free",
                          static_cast<double>(free_bytes) / (1 << 20)));
    }
  }
  const int fd = open(reserve.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) Fail("cannot write beside output folder", target_, std::strerror(errno));
  // Quotas, or a file system that cannot count free space: the allocation itself decides.
  const int error = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  close(fd);
  reserved_ = true;
  if (error != 0) {
    Release();
    no_room(std::string("the file system refused to set that aside: ") + std::strerror(error));
  }
}

void OutputFolder::Release() noexcept {
  if (!reserved_) return;
  std::error_code error;
  fs::remove(staging_ / kReserve, error);
  reserved_ = false;
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

void OutputFolder::Step(const std::string& what, const fs::path& path,
                        const std::function<bool()>& change) {
  if (++steps_ == fail_at_step_) Fail("cannot " + what, path, "failed on purpose (a test)");
  if (!change()) Fail("cannot " + what, path, std::strerror(errno));
}

void OutputFolder::Commit() {
  Release();
  steps_ = 0;
  std::error_code error;
  if (!fs::exists(fs::symlink_status(target_, error))) {
    Step("move the results into", target_,
         [&] { return std::rename(staging_.c_str(), target_.c_str()) == 0; });
    committed_ = true;
    return;
  }
  if (HoldsOnlyNboxFiles(target_)) {
    // Link nbox-sweep's companions in; where a link cannot be made, go file by file.
    std::vector<std::string> linked;
    try {
      for (const std::string& name : FilesIn(target_, IsSweepCompanion)) {
        if (fs::exists(staging_ / name)) continue;
        Step("link", target_ / name,
             [&] { return link((target_ / name).c_str(), (staging_ / name).c_str()) == 0; });
        linked.push_back(name);
      }
    } catch (const std::runtime_error&) {
      for (const std::string& name : linked) fs::remove(staging_ / name, error);
      ReplaceFileByFile();
      return;
    }
    SwapWhole();
    return;
  }
  ReplaceFileByFile();
}

void OutputFolder::SwapWhole() {
  // One atomic step: the target now holds the new run, the staging name the old one.
  Step("swap the results into", target_, [&] {
    return renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0;
  });
  committed_ = true;
  // The previous run's files; a failure here loses nothing. Something a user put into the
  // folder while the run committed stays there, in the old folder, which then stays too.
  RemoveNboxFolder(staging_);
}

void OutputFolder::ReplaceFileByFile() {
  const fs::path aside = Beside(target_, "previous");
  Step("create", aside, [&] { return mkdir(aside.c_str(), 0700) == 0; });
  std::vector<std::string> set_aside;
  std::vector<std::string> moved_in;
  try {
    for (const std::string& name : FilesIn(target_, IsRunOutput)) {
      Step("set aside", target_ / name,
           [&] { return std::rename((target_ / name).c_str(), (aside / name).c_str()) == 0; });
      set_aside.push_back(name);
    }
    for (const std::string& name : FilesIn(staging_, AnyName)) {
      // A run output's name taken by something that is not a plain file: not nbox's to replace.
      std::error_code error;
      if (fs::exists(fs::symlink_status(target_ / name, error))) {
        Fail("cannot put " + name + " into", target_,
             "an entry of that name is there that nbox did not write");
      }
      Step("move in", target_ / name,
           [&] { return std::rename((staging_ / name).c_str(), (target_ / name).c_str()) == 0; });
      moved_in.push_back(name);
    }
  } catch (const std::runtime_error&) {
    // Back as it was: the new files out, the old ones in.
    for (auto name = moved_in.rbegin(); name != moved_in.rend(); ++name) {
      std::rename((target_ / *name).c_str(), (staging_ / *name).c_str());
    }
    for (const std::string& name : set_aside) {
      std::rename((aside / name).c_str(), (target_ / name).c_str());
    }
    RemoveNboxFolder(aside);
    throw;
  }
  committed_ = true;
  RemoveNboxFolder(aside);
  RemoveNboxFolder(staging_);
}

}  // namespace nbox::cosim
