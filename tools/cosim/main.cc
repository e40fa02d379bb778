// nbox-cosim: runs one scenario and reports the training job's iteration time, its breakdown,
// every collective and the network's counters.
//
// Exit status: 0 success, 2 bad input (nothing written), 1 the run failed, 3 the run does not
// fit in the machine's memory (refused before any work, or ran out; nothing written).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "common/units.h"
#include "ns3/simulator.h"
#include "tools/cosim/assembly.h"
#include "tools/cosim/chrome_trace.h"
#include "tools/cosim/interrupt.h"
#include "tools/cosim/link_samples.h"
#include "tools/cosim/machine_memory.h"
#include "tools/cosim/memory_estimate.h"
#include "tools/cosim/message_csv.h"
#include "tools/cosim/output_folder.h"
#include "tools/cosim/output_size.h"
#include "tools/cosim/real_rank_run.h"
#include "tools/cosim/sim_loop.h"
#include "tools/cosim/terminal_report.h"
#include "tools/cosim/traffic_matrix.h"
#include "tools/cosim/workload_registry.h"
#include "tools/scenario/scenario.h"
#include "workloads/chakra/chakra_export.h"

namespace {

constexpr int kExitRunFailed = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitResources = 3;

std::string DefaultOutputDir(const std::string& scenario_path) {
  return (std::filesystem::path("results") / std::filesystem::path(scenario_path).stem()).string();
}

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

  nbox::scenario::Scenario scenario;
  nbox::cosim::JobAssembly assembly;
  try {
    scenario = nbox::scenario::LoadScenario(scenario_path, overrides);
    if (scenario.keys_in_file == 0) {
      std::cerr << "nbox-cosim: note: " << scenario_path
                << " sets no key: every key takes its default (nbox-cosim --list-keys; "
                   "scenarios/default.ini is a scenario to start from)\n";
    }
    if (scenario.output.dir.empty()) scenario.output.dir = DefaultOutputDir(scenario_path);
    // Before any expensive work: a folder the run may not write into (output_folder_rules.h).
    try {
      nbox::cosim::CheckOutputFolder(scenario.output.dir, force);
    } catch (const nbox::cosim::OutputFolderRefusal& e) {
      throw nbox::cosim::OutputFolderRefusal(std::string(e.what()) + " (output.dir, --out)");
    }
    // A network or schedules that cannot fit are refused before they are built, in --check
    // too (memory_estimate.h).
    assembly = nbox::cosim::AssembleJob(scenario, nbox::cosim::AvailableMemoryBytes(memory_limit));
  } catch (const nbox::cosim::ResourceRefusal& e) {
    std::cerr << "nbox-cosim: " << scenario_path << ": " << e.what() << "\n";
    ns3::Simulator::Destroy();
    return kExitResources;
  } catch (const std::bad_alloc&) {
    std::cerr << "nbox-cosim: ran out of memory building the simulation of " << scenario_path
              << "; shrink job.world_size or the topology, or use network.model = flow or "
                 "analytical\n";
    return kExitResources;
  } catch (const std::exception& e) {
    std::cerr << "nbox-cosim: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (check_only) {
    std::cout << "nbox-cosim: " << scenario_path << " is valid ("
              << assembly.net.topology.description << ", " << scenario.job.world_size
              << " ranks; estimated peak memory "
              << nbox::cosim::DescribeMemoryEstimate(assembly.memory) << ")\n";
    ns3::Simulator::Destroy();
    return 0;
  }

  // Every file of the run goes to a staging folder and replaces the output folder as one
  // unit at the end (output_folder.h); a bad output path is found before simulating.
  std::unique_ptr<nbox::cosim::OutputFolder> output;
  try {
    output = std::make_unique<nbox::cosim::OutputFolder>(scenario.output.dir, force);
    output->Reserve(nbox::cosim::EstimateOutputBytes(scenario, assembly));
  } catch (const nbox::cosim::OutputFolderNoRoom& e) {
    std::cerr << "nbox-cosim: " << e.what() << "; nothing was simulated\n";
    ns3::Simulator::Destroy();
    return kExitResources;
  } catch (const std::exception& e) {
    std::cerr << "nbox-cosim: " << e.what() << " (output.dir, --out); nothing was simulated\n";
    ns3::Simulator::Destroy();
    return kExitBadInput;
  }

  try {
    const auto progress = nbox::cosim::ParseProgressMode(scenario.output.progress);
    auto job = assembly.job;
    // Sampling links rides on the loop's slices: one slice per sample.
    const double link_sample_s = scenario.output.link_sample_s;
    nbox::cosim::LinkSampler sampler(assembly.net.model);
    std::function<void()> after_slice;
    if (link_sample_s > 0) {
      sampler.Sample(ns3::Simulator::Now().GetSeconds());
      after_slice = [&sampler] { sampler.Sample(ns3::Simulator::Now().GetSeconds()); };
    }
    const bool real_ranks = !scenario.realranks.ranks.empty();
    const bool log_messages = scenario.output.messages == "csv";
    std::optional<nbox::cosim::MessagesCsvStream> messages_csv;
    if (log_messages) {
      job->GetRecords()->messages.Enable(job->GetWorldSize());
      messages_csv.emplace(*job->GetRecords(), output->Open(nbox::cosim::kMessagesFile));
    }
    nbox::cosim::SimLoopResult loop;
    nbox::cosim::RealRanksReport real_report;
    if (real_ranks) {
      // Real ranks in the loop: the bridge, the conservative clock, the launched ranks. A run
      // that fails still writes what it has, marked failed, and exits 1.
      auto run = nbox::cosim::RunWithRealRanks(scenario, assembly, after_slice,
                                               link_sample_s > 0 ? link_sample_s : 100e-6,
                                               output->staging(), std::cout, std::cerr);
      loop = run.loop;
      real_report = std::move(run.report);
      if (real_report.failed) std::cerr << "nbox-cosim: " << real_report.failure << "\n";
    } else {
      // A schedule disagreement found on the way (NboxJobRecords::Fail) ends the loop too.
      loop = nbox::cosim::RunSimulation(
          [job] { return job->IsFinished(); },
          [job] { return job->IsStalled() || !job->GetRecords()->GetFailure().empty(); }, progress,
          std::cerr, link_sample_s > 0 ? link_sample_s : 100e-6, after_slice);
    }
    // A run that fails part-way writes what it has, its status saying why: a schedule
    // disagreement found on the way, or a job that can never finish.
    std::string failure = job->GetRecords()->GetFailure();
    if (failure.empty() && !real_ranks && !loop.finished && loop.interrupted == 0) {
      failure = fmt::format(
          "the job stalled with {} of {} ranks finished: no rank computes and no message is in "
          "flight (a deadlock)",
          job->GetRecords()->ranksFinished, job->GetWorldSize());
    }
    auto result = nbox::cosim::CollectResult(scenario, assembly, loop);
    result.real_ranks = real_report;
    // A run whose ranks all finished with messages nobody received had schedules that did not
    // agree: its times mean nothing.
    uint64_t unconsumed = 0;
    for (const auto& communicator : job->GetCommunicators()) {
      unconsumed += communicator->GetUnconsumedMessages();
    }
    if (!failure.empty() && !real_ranks) {
      result.failure = failure;
      std::cerr << fmt::format(
          "nbox-cosim: {} at {:.6f} s simulated; writing the partial "
          "results\n",
          failure, loop.simulated_s);
    } else if (unconsumed > 0 && loop.finished) {
      result.failure = fmt::format(
          "{} message(s) arrived that no receive took: the ranks' schedules disagree (a real "
          "rank's program against its emulated peers', or traces whose sends and receives do "
          "not pair up)",
          unconsumed);
      std::cerr << "nbox-cosim: " << result.failure << "\n";
    }
    if (loop.interrupted != 0) {
      // Worded as the real-rank path words it (real_rank_run.cc).
      result.interrupted =
          fmt::format("stopped by signal {} ({})", loop.interrupted, strsignal(loop.interrupted));
      std::cerr << fmt::format(
          "nbox-cosim: {} at {:.6f} s simulated; writing the partial results\n", result.interrupted,
          loop.simulated_s);
    }
    nbox::cosim::PerfFigures perf;
    perf.wall_s = loop.wall_s;
    perf.events_per_s = loop.wall_s > 0 ? static_cast<double>(loop.events) / loop.wall_s : 0;
    perf.wall_per_simulated_s = loop.simulated_s > 0 ? loop.wall_s / loop.simulated_s : 0;
    perf.peak_rss_kib = nbox::cosim::PeakRssKib();

    output->Release();  // the room set aside for the files written now
    const std::filesystem::path dir(scenario.output.dir);
    std::vector<std::string> written;
    auto write = [&](const std::string& name, const auto& content) {
      output->Write(name, content);
      written.push_back((dir / name).string());
    };
    write(nbox::cosim::kResultsFile,
          [&](std::ostream& out) { nbox::cosim::WriteResultsJson(result, out); });
    write(nbox::cosim::kPerfFile, nbox::cosim::PerfJson(result, perf));
    // The traffic a program implies: real ranks run a program nbox-cosim does not know.
    if (!real_ranks) {
      write(nbox::cosim::kTrafficFile,
            nbox::cosim::TrafficCsv(
                nbox::cosim::ProgramTraffic(assembly.workload.programs, job->GetCommunicators()),
                assembly.workload.programs));
    }
    if (messages_csv) {
      messages_csv->Finish();
      written.push_back((dir / nbox::cosim::kMessagesFile).string());
    }
    if (link_sample_s > 0) {
      write(nbox::cosim::kLinksFile, [&](std::ostream& out) {
        sampler.WriteCsv(result.network, result.summary.job_start_s, out);
      });
    }
    if (scenario.output.trace == nbox::scenario::Timeline::kChrome) {
      write(nbox::cosim::kTraceFile,
            [&](std::ostream& out) { nbox::cosim::WriteChromeTrace(*job->GetRecords(), out); });
    }
    output->Commit();
    nbox::cosim::PrintSummary(result, perf, written, std::cout);
    if (real_report.failed || loop.interrupted != 0 || !result.failure.empty()) {
      ns3::Simulator::Destroy();
      return kExitRunFailed;
    }
  } catch (const std::bad_alloc&) {
    std::cerr << "nbox-cosim: ran out of memory while simulating; no results written (the "
                 "estimate before the run missed it: please report the scenario)\n";
    ns3::Simulator::Destroy();
    return kExitResources;
  } catch (const std::exception& e) {
    std::cerr << "nbox-cosim: " << e.what() << "\n";
    ns3::Simulator::Destroy();
    return kExitRunFailed;
  }
  ns3::Simulator::Destroy();
  return 0;
}
