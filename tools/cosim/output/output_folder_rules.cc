#include "tools/cosim/output/output_folder_rules.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <system_error>
#include <vector>

#include "workloads/chakra/chakra_export.h"

namespace nbox::cosim {
namespace fs = std::filesystem;
namespace {

fs::path Normalised(const fs::path& path) {
  std::error_code error;
  fs::path normal = fs::weakly_canonical(fs::absolute(path), error);
  if (error) normal = fs::absolute(path).lexically_normal();
  if (normal.filename().empty() && normal.has_relative_path()) normal = normal.parent_path();
  return normal;
}

// Whether `inner` is `outer` or lies below it (both normalised).
bool Within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

std::vector<fs::path> HomeFolders() {
  std::vector<fs::path> homes;
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    homes.push_back(Normalised(home));
  }
  if (const passwd* entry = getpwuid(getuid()); entry != nullptr && entry->pw_dir != nullptr) {
    homes.push_back(Normalised(entry->pw_dir));
  }
  return homes;
}

[[noreturn]] void Refuse(const fs::path& target, const std::string& why,
                         const std::string& instead) {
  throw OutputFolderRefusal("refusing output folder " + target.string() + ": " + why + "; " +
                            instead);
}

constexpr const char* kOwnFolder = "give the run a folder of its own (e.g. --out results/run1)";

}  // namespace

std::string ClusterJobResultsFile(const std::string& job_name) {
  return "results-" + job_name + ".json";
}

bool IsRunOutput(const std::string& name) {
  static const std::regex kRankLog("rank[0-9]+\\.log");
  static const std::regex kClusterJobResults("results-.+\\.json");
  static const std::regex kChakraTrace(std::string(chakra::kTracePrefix) + "\\.[0-9]+\\.et");
  for (const char* file : {kResultsFile, kPerfFile, kTrafficFile, kLinksFile, kTraceFile,
                           kMessagesFile, chakra::kCommGroupsFile}) {
    if (name == file) return true;
  }
  return std::regex_match(name, kRankLog) || std::regex_match(name, kChakraTrace) ||
         std::regex_match(name, kClusterJobResults);
}

bool IsSweepCompanion(const std::string& name) {
  static const char* const kNames[] = {"point.json",      "cosim.out",       "cosim.err",
                                       "status.json",     "collectives.csv", "ports.csv",
                                       "timeline.csv",    "ports.png",       "timeline.png",
                                       "collectives.png", "traffic.png",     "links.png"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

fs::path CheckOutputFolder(const std::string& target, bool force) {
  if (target.empty())
    throw OutputFolderRefusal("the output folder is empty; " + std::string(kOwnFolder));
  const fs::path folder = Normalised(target);
  if (folder == folder.root_path()) Refuse(folder, "it is the file system's root", kOwnFolder);
  for (const fs::path& home : HomeFolders()) {
    if (folder == home) Refuse(folder, "it is the home folder", kOwnFolder);
  }
  std::error_code error;
  const fs::path current = Normalised(fs::current_path(error));
  if (!error && Within(current, folder)) {
    Refuse(folder, folder == current ? "it is the current folder" : "it holds the current folder",
           kOwnFolder);
  }
  if (!fs::exists(folder, error)) return folder;
  if (!fs::is_directory(folder, error)) Refuse(folder, "it is not a folder", kOwnFolder);
  if (force) return folder;
  std::vector<std::string> others;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    const bool file = entry.symlink_status(error).type() == fs::file_type::regular;
    if (!(file && (IsRunOutput(name) || IsSweepCompanion(name)))) others.push_back(name);
  }
  if (error) Refuse(folder, "cannot read it (" + error.message() + ")", kOwnFolder);
  if (!others.empty()) {
    std::sort(others.begin(), others.end());
    const std::string more =
        others.size() > 1 ? " and " + std::to_string(others.size() - 1) + " more entries" : "";
    Refuse(folder, "it holds " + others.front() + more + " that nbox did not write",
           "choose another folder, or add --force to write into it anyway (what nbox did not "
           "write stays as it is)");
  }
  return folder;
}

}  // namespace nbox::cosim
