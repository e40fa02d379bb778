// nbox-cosim: runs one scenario and reports the training job's iteration time, its breakdown,
// every collective and the network's counters.
//
// Exit status: 0 success, 2 bad input (nothing written), 1 the run failed, 3 the run does not
// fit in the machine's memory (refused before any work, or ran out; nothing written).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "common/units.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/assembly/machine_memory.h"
#include "tools/cosim/assembly/workload_registry.h"
#include "tools/cosim/loop/interrupt.h"
#include "tools/cosim/output/output_folder.h"
#include "tools/cosim/run_pipeline.h"
#include "tools/cosim/scenario/scenario.h"
#include "workloads/chakra/chakra_export.h"

namespace {

using nbox::cosim::kExitBadInput;
using nbox::cosim::kExitResources;

// --export-chakra: the scenario's workload as Chakra traces, written into a staging folder that
// replaces `dir` whole (no half-written traces); nothing is simulated.
int ExportChakra(const std::string& scenario_path, const std::vector<std::string>& overrides,
                 const std::string& dir, bool force, uint64_t memory_limit) {
  nbox::cosim::Workload workload;
  try {
    const nbox::scenario::Scenario scenario =
        nbox::scenario::LoadScenario(scenario_path, overrides);
    nbox::cosim::CheckOutputFolder(dir, force);
    workload =
        nbox::cosim::BuildWorkloadWithin(scenario, nbox::cosim::AvailableMemoryBytes(memory_limit));
  } catch (const nbox::cosim::ResourceRefusal& e) {
    std::cerr << "nbox-cosim: " << scenario_path << ": " << e.what() << " (--export-chakra)\n";
    return kExitResources;
  } catch (const nbox::cosim::OutputFolderRefusal& e) {
    std::cerr << "nbox-cosim: " << e.what() << " (--export-chakra)\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "nbox-cosim: " << e.what() << "\n";
    return kExitBadInput;
  }
  try {
    nbox::cosim::OutputFolder output(dir, force);
    const auto files =
        nbox::chakra::WriteChakraTraces(workload.programs, output.staging().string());
    output.Commit();
    std::cout << "nbox-cosim: " << workload.description << "\n  wrote      " << files.size() - 1
              << " Chakra " << nbox::chakra::kSchemaVersion
              << " execution traces and comm_groups.json into " << dir << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "nbox-cosim: " << e.what() << " (--export-chakra)\n";
    return kExitBadInput;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // First, so that a signal during the build of a large job still ends it cleanly.
  nbox::cosim::InstallInterruptHandlers();
  CLI::App app{"nbox-cosim: simulate a distributed training job on an ns-3 network"};
  std::string scenario_path;
  std::vector<std::string> overrides;
  std::string out_dir;
  std::string seed;  // checked as job.seed is, by the scenario's rules
  bool list_keys = false;
  bool check_only = false;
  bool force = false;
  std::string export_chakra;
  std::string memory;  // --memory: bytes with a unit, as the scenario's sizes are written
  app.add_option("scenario", scenario_path, "scenario file (.ini); see scenarios/README.md");
  app.add_option("--set", overrides, "override a key: section.key=value (repeatable)")
      ->type_name("SECTION.KEY=VALUE");
  app.add_option("--out", out_dir, "output folder (default: output.dir, else results/<name>)");
  app.add_option("--seed", seed, "random seed (overrides job.seed)")->type_name("UINT");
  app.add_flag("--list-keys", list_keys, "print every scenario section and key, then exit");
  app.add_flag("--check", check_only,
               "validate the scenario and build the simulation, then exit without running it");
  app.add_flag("--force", force,
               "write into an output folder that holds files nbox did not write (they stay as "
               "they are; without it such a folder is refused)");
  app.add_option("--export-chakra", export_chakra,
                 "write the workload as Chakra execution traces (one per rank) into this folder, "
                 "then exit without simulating (workloads/chakra/README.md)")
      ->type_name("DIR");
  app.add_option("--memory", memory,
                 "the most memory nbox-cosim may take, such as 8GiB (default: what the machine "
                 "has available); a run that needs more is refused with exit status 3")
      ->type_name("SIZE");
  CLI11_PARSE(app, argc, argv);

  if (list_keys) {
    std::cout << nbox::scenario::ScenarioKeysMarkdown();
    return 0;
  }
  if (scenario_path.empty()) {
    std::cerr << "nbox-cosim: a scenario file is required (try scenarios/default.ini)\n";
    return kExitBadInput;
  }
  uint64_t memory_limit = 0;
  if (!memory.empty()) {
    try {
      memory_limit = nbox::ParseBytes(memory);
    } catch (const nbox::UnitError& e) {
      std::cerr << "nbox-cosim: --memory: " << e.what() << "\n";
      return kExitBadInput;
    }
    if (memory_limit == 0) {
      std::cerr << "nbox-cosim: --memory: expected a size above zero, such as 8GiB\n";
      return kExitBadInput;
    }
  }
  if (app.count("--seed") > 0) overrides.push_back("job.seed=" + seed);
  if (!out_dir.empty()) overrides.push_back("output.dir=" + out_dir);

  if (!export_chakra.empty()) {
    return ExportChakra(scenario_path, overrides, export_chakra, force, memory_limit);
  }

  nbox::cosim::RunRequest request;
  request.scenario_path = scenario_path;
  request.overrides = overrides;
  request.check_only = check_only;
  request.force = force;
  request.memory_limit = memory_limit;
  return nbox::cosim::RunPipeline(request);
}
