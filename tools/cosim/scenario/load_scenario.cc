// LoadScenario: the file, then the overrides, then the cross-key rules.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "common/shortened.h"
#include "tools/cosim/scenario/cross_key_rules.h"
#include "tools/cosim/scenario/ini_document.h"
#include "tools/cosim/scenario/key_schema.h"
#include "tools/cosim/scenario/nearest_name.h"
#include "tools/cosim/scenario/rule_context.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::scenario {
namespace {

std::string Listed(const std::vector<std::string>& names, const char* open, const char* close) {
  std::string text;
  for (const std::string& name : names) {
    if (!text.empty()) text += ", ";
    text += open + name + close;
  }
  return text;
}

// "; did you mean [network]?" or "; valid sections are [job], ..."
std::string SectionHint(std::string_view section) {
  const std::string nearest = NearestName(section, SectionNames());
  if (!nearest.empty()) return fmt::format("; did you mean [{}]?", nearest);
  return "; valid sections are " + Listed(SectionNames(), "[", "]");
}

// The sections other than `section` that have a key called `name`.
std::vector<std::string> SectionsWithKey(std::string_view name, std::string_view section) {
  std::vector<std::string> sections;
  for (const SectionSpec& spec : ScenarioSections()) {
    if (spec.name != section && FindKey(spec.name, name) != nullptr) {
      sections.push_back(spec.name);
    }
  }
  return sections;
}

std::string UnknownKeyMessage(std::string_view section, std::string_view name) {
  const std::vector<std::string> elsewhere = SectionsWithKey(name, section);
  if (!elsewhere.empty()) {
    return fmt::format("unknown key '{}' in [{}]; '{}' belongs in {}", name, section, name,
                       Listed(elsewhere, "[", "]"));
  }
  const std::vector<std::string> keys = KeyNames(section);
  const std::string nearest = NearestName(name, keys);
  if (!nearest.empty()) {
    return fmt::format("unknown key '{}' in [{}]; did you mean '{}'?", name, section, nearest);
  }
  return fmt::format("unknown key '{}' in [{}]; valid keys are {}", name, section,
                     Listed(keys, "", ""));
}

std::string BadValueMessage(const KeySpec& key, std::string_view value) {
  std::string message = fmt::format("[{}] {} = '{}': expected {}", key.section, key.name,
                                    Shortened(value), key.value.expected);
  if (!key.value.choices.empty()) {
    const std::string nearest = NearestName(value, key.value.choices);
    if (!nearest.empty()) message += fmt::format("; did you mean '{}'?", nearest);
  }
  return message;
}

std::string ReadScenarioText(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw ScenarioError(fmt::format("scenario file '{}' does not exist", path));
  }
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ScenarioError(fmt::format("scenario file '{}' is not a regular file", path));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || in.bad()) throw ScenarioError(fmt::format("cannot read scenario file '{}'", path));
  // A binary file (an executable, an archive) named by mistake would give an error per line.
  const std::string content = text.str();
  if (const size_t nul = content.find('\0'); nul != std::string::npos) {
    throw ScenarioError(fmt::format(
        "scenario file '{}' is not a text file (a NUL byte at offset {}); a scenario is an .ini "
        "file such as scenarios/default.ini",
        path, nul));
  }
  return content;
}

// Collects the values and the errors of one load.
class Loader {
 public:
  explicit Loader(std::string path) : path_(std::move(path)), rules_prefix_(path_) {
    scenario_.path = path_;
  }

  // Reads `document`: the scenario file itself (`job_file` empty) or, over it, a cluster's job
  // file (`job_file` its path), which may set only [job], [workload] and [collectives]: its
  // keys replace the cluster file's and are named by its path and line.
  void ReadFile(const IniDocument& document, const std::string& job_file = "") {
    const bool job_layer = !job_file.empty();
    const std::string& file = job_layer ? job_file : path_;
    auto at_line = [&](int line, const std::string& message) {
      Add(line, fmt::format("{}:{}: {}", file, line, message));
    };
    for (const IniProblem& problem : document.problems) at_line(problem.line, problem.message);
    for (const IniSectionHeader& header : document.headers) {
      if (!IsSection(header.name)) {
        at_line(header.line,
                fmt::format("unknown section [{}]{}", header.name, SectionHint(header.name)));
      } else if (job_layer && !IsJobLayerSection(header.name)) {
        at_line(header.line, fmt::format("[{}] is the cluster's ({}): a job file sets only [job], "
                                         "[workload] and [collectives], every job sharing the rest",
                                         header.name, path_));
      }
    }
    std::map<std::string, int> job_file_lines;  // "section.key" -> its line in the job file
    std::map<std::string, int>& lines = job_layer ? job_file_lines : file_lines_;
    for (const IniEntry& entry : document.entries) {
      if (entry.section.empty()) {
        at_line(entry.line, OutsideSectionMessage(entry.key));
        continue;
      }
      // Sections that are not the file's to set are reported at their header.
      if (!IsSection(entry.section) || (job_layer && !IsJobLayerSection(entry.section))) continue;
      const KeySpec* key = FindKey(entry.section, entry.key);
      if (key == nullptr) {
        at_line(entry.line, UnknownKeyMessage(entry.section, entry.key));
        continue;
      }
      const auto [earlier, first] = lines.emplace(key->FullName(), entry.line);
      if (!first && !key->value.repeatable) {
        at_line(entry.line, fmt::format("duplicate key '{}' in [{}]; first set on line {}",
                                        entry.key, entry.section, earlier->second));
        continue;
      }
      if (!key->value.parse(entry.value, scenario_)) {
        at_line(entry.line, BadValueMessage(*key, entry.value));
        continue;
      }
      origins_[key->FullName()] = KeyOrigin{entry.line, job_layer ? job_file : ""};
      if (!job_layer) ++scenario_.keys_in_file;
    }
    if (job_layer) {
      rules_prefix_ = fmt::format("{} (job {})", path_, job_file);
      job_of_cluster_ = true;
      scenario_.path = job_file;
    }
  }

  void ApplyOverride(const std::string& override_text) {
    const std::string where = "--set " + Shortened(override_text, 60);
    const size_t equals = override_text.find('=');
    const size_t dot = override_text.find('.');
    if (equals == std::string::npos || dot == std::string::npos || dot > equals) {
      Add(0, fmt::format("{}: expected section.key=value, such as --set network.mtu=9000", where));
      return;
    }
    const std::string_view text(override_text);
    const std::string section(Trim(text.substr(0, dot)));
    const std::string name(Trim(text.substr(dot + 1, equals - dot - 1)));
    const std::string_view value = Trim(text.substr(equals + 1));
    if (!IsSection(section)) {
      Add(0, fmt::format("{}: unknown section [{}]{}", where, section, SectionHint(section)));
      return;
    }
    const KeySpec* key = FindKey(section, name);
    if (key == nullptr) {
      Add(0, fmt::format("{}: {}", where, UnknownKeyMessage(section, name)));
      return;
    }
    const auto earlier = overridden_.find(key->FullName());
    if (earlier != overridden_.end() && !key->value.repeatable) {
      Add(0, fmt::format("{}: {} is already set by --set {}", where, key->FullName(),
                         earlier->second));
      return;
    }
    overridden_[key->FullName()] = override_text;
    if (!key->value.parse(value, scenario_)) {
      Add(0, fmt::format("{}: {}", where, BadValueMessage(*key, value)));
      return;
    }
    origins_[key->FullName()] = KeyOrigin{0};
  }

  // Throws every error found so far, file errors by line, then override errors in order.
  void ThrowIfFailed() {
    if (errors_.empty()) return;
    std::stable_sort(errors_.begin(), errors_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    // Enough to act on; a file that is not a scenario at all would list every line.
    constexpr size_t kShown = 20;
    std::string message;
    for (size_t i = 0; i < std::min(kShown, errors_.size()); ++i) {
      if (!message.empty()) message += '\n';
      message += errors_[i].second;
    }
    if (errors_.size() > kShown) {
      message += fmt::format("\n... and {} more errors", errors_.size() - kShown);
    }
    throw ScenarioError(message);
  }

  Scenario Finish(const std::vector<ScenarioRule>& more_rules) {
    const std::filesystem::path folder = std::filesystem::path(path_).parent_path();
    RuleScope scope = RuleScope::kJob;
    if (job_of_cluster_) {
      scope = RuleScope::kClusterJob;
      scenario_.cluster.jobs.clear();  // a job of a cluster is not one itself
    } else if (!scenario_.cluster.jobs.empty()) {
      scope = RuleScope::kWholeCluster;
    }
    for (std::string& rule : ApplyCrossKeyRules(scenario_, origins_, folder, scope)) {
      Add(kAfterEverything, fmt::format("{}: {}", rules_prefix_, rule));
    }
    RuleContext context(scenario_, origins_);
    for (const ScenarioRule& rule : more_rules) rule(context);
    for (std::string& rule : context.TakeMessages()) {
      Add(kAfterEverything, fmt::format("{}: {}", rules_prefix_, rule));
    }
    ThrowIfFailed();
    for (const KeySpec& key : ScenarioKeys()) {
      scenario_.settings[key.FullName()] = key.value.format(scenario_);
    }
    return std::move(scenario_);
  }

 private:
  // Errors sort by file line; overrides (order 0 -> placed after the file) and rules last.
  static constexpr int kAfterFile = 1 << 30;
  static constexpr int kAfterEverything = kAfterFile + 1;

  static std::string OutsideSectionMessage(std::string_view name) {
    const std::vector<std::string> sections = SectionsWithKey(name, "");
    if (!sections.empty()) {
      return fmt::format("key '{}' comes before any section; it belongs in {}", name,
                         Listed(sections, "[", "]"));
    }
    return fmt::format("key '{}' comes before any section; valid sections are {}", name,
                       Listed(SectionNames(), "[", "]"));
  }

  void Add(int line, std::string message) {
    errors_.emplace_back(line > 0 ? line : kAfterFile, std::move(message));
  }

  // The sections a cluster's job file may set: what differs from job to job.
  static bool IsJobLayerSection(std::string_view section) {
    return section == "job" || section == "workload" || section == "collectives";
  }

  std::string path_;
  std::string rules_prefix_;     // what the cross-key rules' messages start with
  bool job_of_cluster_ = false;  // ReadFile read a cluster's job file over the cluster's
  Scenario scenario_;
  KeyOrigins origins_;
  std::map<std::string, int> file_lines_;          // "section.key" -> its line in the file
  std::map<std::string, std::string> overridden_;  // "section.key" -> the override text
  std::vector<std::pair<int, std::string>> errors_;
};

}  // namespace

Scenario LoadScenario(const std::string& path, const std::vector<std::string>& overrides,
                      const std::vector<ScenarioRule>& more_rules) {
  Loader loader(path);
  loader.ReadFile(ParseIni(ReadScenarioText(path)));
  for (const std::string& override_text : overrides) loader.ApplyOverride(override_text);
  loader.ThrowIfFailed();
  return loader.Finish(more_rules);
}

std::vector<Scenario> LoadClusterJobs(const Scenario& cluster,
                                      const std::vector<std::string>& overrides,
                                      const std::vector<ScenarioRule>& more_rules) {
  const IniDocument base = ParseIni(ReadScenarioText(cluster.path));
  std::vector<Scenario> jobs;
  for (const std::string& job_file : cluster.cluster.jobs) {
    Loader loader(cluster.path);
    loader.ReadFile(base);
    loader.ReadFile(ParseIni(ReadScenarioText(job_file)), job_file);
    for (const std::string& override_text : overrides) loader.ApplyOverride(override_text);
    loader.ThrowIfFailed();
    jobs.push_back(loader.Finish(more_rules));
  }
  return jobs;
}

std::string ClusterJobName(const std::string& job_file) {
  return std::filesystem::path(job_file).stem().string();
}

}  // namespace nbox::scenario
