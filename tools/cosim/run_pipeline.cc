#include "tools/cosim/run_pipeline.h"

#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>

#include "ns3/simulator.h"
#include "tools/cosim/alone_runs.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/assembly/machine_memory.h"
#include "tools/cosim/assembly/memory_estimate.h"
#include "tools/cosim/assembly/output_size.h"
#include "tools/cosim/loop/interrupt.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/network_models.h"
#include "tools/cosim/output/output_folder.h"
#include "tools/cosim/real_ranks/real_rank_run.h"
#include "tools/cosim/reports/chrome_trace.h"
#include "tools/cosim/reports/cluster_results.h"
#include "tools/cosim/reports/collect_result.h"
#include "tools/cosim/reports/link_samples.h"
#include "tools/cosim/reports/message_csv.h"
#include "tools/cosim/reports/terminal_report.h"
#include "tools/cosim/reports/traffic_matrix.h"
#include "tools/cosim/scenario/cross_key_rules.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::cosim {
namespace {

// A phase that ended the run early (having said why on stderr), and the exit status.
struct PhaseEnd {
  int status;
};

std::string DefaultOutputDir(const std::string& scenario_path) {
  return (std::filesystem::path("results") / std::filesystem::path(scenario_path).stem()).string();
}

// Load: the scenario, every check that needs no network, and the output folder's rules.
scenario::Scenario Load(const RunRequest& request) {
  scenario::Scenario scenario =
      scenario::LoadScenario(request.scenario_path, request.overrides, {CheckNetworkModel});
  if (scenario.keys_in_file == 0) {
    std::cerr << "nbox-cosim: note: " << request.scenario_path
              << " sets no key: every key takes its default (nbox-cosim --list-keys; "
                 "scenarios/default.ini is a scenario to start from)\n";
  }
  if (scenario.output.dir.empty()) scenario.output.dir = DefaultOutputDir(request.scenario_path);
  // Before any expensive work: a folder the run may not write into (output_folder_rules.h).
  try {
    CheckOutputFolder(scenario.output.dir, request.force);
  } catch (const OutputFolderRefusal& e) {
    throw OutputFolderRefusal(std::string(e.what()) + " (output.dir, --out)");
  }
  return scenario;
}

// Load, then assemble: the network, the workload and the job, with the checks that need them
// built. A network, programs or schedules that cannot fit are refused before they are built,
// in --check too (memory_estimate.h).
// With cluster.alone (not for --check), each job runs alone first, into `alone`.
std::pair<scenario::Scenario, JobAssembly> LoadAndAssemble(
    const RunRequest& request, std::vector<std::optional<double>>& alone) {
  try {
    scenario::Scenario scenario = Load(request);
    // A cluster's jobs, each its own scenario; the fabric carries all their ranks.
    std::vector<scenario::Scenario> jobs;
    if (!scenario.cluster.jobs.empty()) {
      jobs = scenario::LoadClusterJobs(scenario, request.overrides, {CheckNetworkModel});
      int ranks = 0;
      for (const scenario::Scenario& job : jobs) ranks += job.job.world_size;
      scenario.job.world_size = ranks;
      scenario.settings["job.world_size"] = std::to_string(ranks);
      const std::string beyond = scenario::EventRankBeyond(scenario.events, ranks);
      if (!beyond.empty()) throw std::invalid_argument(scenario.path + ": " + beyond);
    }
    if (scenario.cluster.alone && !request.check_only) {
      alone = RunJobsAlone(scenario, jobs, AvailableMemoryBytes(request.memory_limit), std::cerr);
      if (const int signal = InterruptSignal(); signal != 0) {
        std::cerr << fmt::format(
            "nbox-cosim: stopped by signal {} ({}) while running the jobs alone, before the "
            "cluster; nothing was written\n",
            signal, strsignal(signal));
        throw PhaseEnd{kExitRunFailed};
      }
    }
    JobAssembly assembly = AssembleJob(scenario, AvailableMemoryBytes(request.memory_limit), jobs);
    return {std::move(scenario), std::move(assembly)};
  } catch (const PhaseEnd&) {
    throw;
  } catch (const ResourceRefusal& e) {
    std::cerr << "nbox-cosim: " << request.scenario_path << ": " << e.what() << "\n";
    throw PhaseEnd{kExitResources};
  } catch (const std::bad_alloc&) {
    std::cerr << "nbox-cosim: ran out of memory building the simulation of "
              << request.scenario_path
              << "; shrink job.world_size or the topology, or use network.model = flow or "
                 "analytical\n";
    throw PhaseEnd{kExitResources};
  } catch (const std::exception& e) {
    std::cerr << "nbox-cosim: " << e.what() << "\n";
    throw PhaseEnd{kExitBadInput};
  }
}

void ReportCheck(const RunRequest& request, const scenario::Scenario& scenario,
                 const JobAssembly& assembly) {
  std::cout << "nbox-cosim: " << request.scenario_path << " is valid ("
            << assembly.net.topology.description << ", " << scenario.job.world_size
            << " ranks; estimated peak memory " << DescribeMemoryEstimate(assembly.memory) << ")\n";
}

// Every file of the run goes to a staging folder and replaces the output folder as one unit
// at the end (output_folder.h); a bad output path is found before simulating.
std::unique_ptr<OutputFolder> OpenOutput(const RunRequest& request,
                                         const scenario::Scenario& scenario,
                                         const JobAssembly& assembly) {
  try {
    auto output = std::make_unique<OutputFolder>(scenario.output.dir, request.force);
    output->Reserve(EstimateOutputBytes(scenario, assembly));
    return output;
  } catch (const OutputFolderNoRoom& e) {
    std::cerr << "nbox-cosim: " << e.what() << "; nothing was simulated\n";
    throw PhaseEnd{kExitResources};
  } catch (const std::exception& e) {
    std::cerr << "nbox-cosim: " << e.what() << " (output.dir, --out); nothing was simulated\n";
    throw PhaseEnd{kExitBadInput};
  }
}

// What watches the run as it goes, writing as it goes: links.csv on the loop's slices,
// messages.csv.
struct RunWatchers {
  RunWatchers(const scenario::Scenario& scenario, const JobAssembly& assembly, OutputFolder& output)
      : link_sample_s(scenario.output.link_sample_s) {
    // Sampling links rides on the loop's slices: one slice per sample.
    if (link_sample_s > 0) {
      links_csv.emplace(assembly.net.model, assembly.job, output.Open(kLinksFile));
      links_csv->Sample(ns3::Simulator::Now().GetSeconds());
      after_slice = [this] { links_csv->Sample(ns3::Simulator::Now().GetSeconds()); };
    }
    if (scenario.output.messages == scenario::MessageLog::kCsv) {
      auto job = assembly.job;
      job->GetRecords()->messages.Enable(job->GetWorldSize());
      messages_csv.emplace(*job->GetRecords(), output.Open(kMessagesFile));
    }
  }
  // after_slice holds `this`.
  RunWatchers(const RunWatchers&) = delete;
  RunWatchers& operator=(const RunWatchers&) = delete;
  double slice_s() const { return link_sample_s > 0 ? link_sample_s : 100e-6; }

  double link_sample_s;
  std::optional<LinkSampler> links_csv;
  std::function<void()> after_slice;
  std::optional<MessagesCsvStream> messages_csv;
};

struct RunOutcome {
  SimLoopResult loop;
  RealRanksReport real_ranks;
};

// Run: the simulated ranks alone, or with real ranks in the loop as its partner (the bridge,
// the conservative clock, the launched ranks); either way the loop's figures and, with real
// ranks, their report.
RunOutcome Run(const scenario::Scenario& scenario, JobAssembly& assembly, RunWatchers& watchers,
               const OutputFolder& output) {
  LoopSettings settings;
  settings.progress = ParseProgressMode(scenario.output.progress);
  settings.slice_s = watchers.slice_s();
  settings.after_slice = watchers.after_slice;
  RunOutcome outcome;
  if (!scenario.realranks.ranks.empty()) {
    // A run that fails still writes what it has, marked failed, and exits 1.
    auto run =
        RunWithRealRanks(scenario, assembly, settings, output.staging(), std::cout, std::cerr);
    outcome.loop = run.loop;
    outcome.real_ranks = std::move(run.report);
    if (outcome.real_ranks.failed)
      std::cerr << "nbox-cosim: " << outcome.real_ranks.failure << "\n";
    return outcome;
  }
  auto job = assembly.job;
  // A schedule disagreement found on the way (NboxJobRecords::Fail) ends the loop too.
  outcome.loop =
      RunLoop([job] { return job->IsFinished(); },
              [job] { return job->IsStalled() || !job->GetRecords()->GetFailure().empty(); },
              settings, std::cerr);
  return outcome;
}

// Collect: the records into a result, and why a run failed part-way (a schedule
// disagreement found on the way, a job that can never finish, messages nobody received, a
// signal).
RunResult Collect(const scenario::Scenario& scenario, const JobAssembly& assembly,
                  const RunOutcome& outcome) {
  const bool real_ranks = !scenario.realranks.ranks.empty();
  const SimLoopResult& loop = outcome.loop;
  auto job = assembly.job;
  std::string failure = job->GetRecords()->GetFailure();
  if (failure.empty() && !real_ranks && !loop.finished && loop.interrupted == 0) {
    failure = fmt::format(
        "the job stalled with {} of {} ranks finished: no rank computes and no message is in "
        "flight (a deadlock)",
        job->GetRecords()->ranksFinished, job->GetWorldSize());
  }
  RunResult result = CollectResult(scenario, assembly, loop);
  result.real_ranks = outcome.real_ranks;
  // A run whose ranks all finished with messages nobody received had schedules that did not
  // agree: its times mean nothing.
  uint64_t unconsumed = 0;
  for (const auto& communicator : job->GetCommunicators()) {
    unconsumed += communicator->GetUnconsumedMessages();
  }
  if (!failure.empty() && !real_ranks) {
    result.failure = failure;
    std::cerr << fmt::format("nbox-cosim: {} at {:.6f} s simulated; writing the partial results\n",
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
    std::cerr << fmt::format("nbox-cosim: {} at {:.6f} s simulated; writing the partial results\n",
                             result.interrupted, loop.simulated_s);
  }
  return result;
}

// A cluster's jobs, each as its own run's result: its records, with the whole run's ending.
std::vector<RunResult> CollectClusterJobs(const scenario::Scenario& scenario,
                                          const JobAssembly& assembly, const RunOutcome& outcome,
                                          const RunResult& whole) {
  std::vector<RunResult> jobs;
  for (const ClusterJob& job : assembly.cluster_jobs) {
    RunResult result = CollectResult(scenario, assembly, outcome.loop, &job);
    result.failure = whole.failure;
    result.interrupted = whole.interrupted;
    jobs.push_back(std::move(result));
  }
  return jobs;
}

PerfFigures PerfOf(const SimLoopResult& loop) {
  PerfFigures perf;
  perf.wall_s = loop.wall_s;
  perf.events_per_s = loop.wall_s > 0 ? static_cast<double>(loop.events) / loop.wall_s : 0;
  perf.wall_per_simulated_s = loop.simulated_s > 0 ? loop.wall_s / loop.simulated_s : 0;
  perf.peak_rss_kib = PeakRssKib();
  return perf;
}

// Write: every file into the staging folder, the folder committed, then the terminal report.
void Write(const scenario::Scenario& scenario, const JobAssembly& assembly,
           const RunOutcome& outcome, const RunResult& result,
           const std::vector<std::optional<double>>& alone, const PerfFigures& perf,
           RunWatchers& watchers, OutputFolder& output) {
  const bool real_ranks = !scenario.realranks.ranks.empty();
  auto job = assembly.job;
  output.Release();  // the room set aside for the files written now
  const std::filesystem::path dir(scenario.output.dir);
  std::vector<std::string> written;
  auto write = [&](const std::string& name, const auto& content) {
    output.Write(name, content);
    written.push_back((dir / name).string());
  };
  const std::vector<RunResult> jobs = CollectClusterJobs(scenario, assembly, outcome, result);
  std::vector<ClusterJobFacts> facts;
  const std::vector<std::string> host_names = topo::HostNames(assembly.net.topology);
  for (size_t j = 0; j < assembly.cluster_jobs.size(); ++j) {
    const ClusterJob& job = assembly.cluster_jobs[j];
    facts.push_back(
        FactsOf(host_names, assembly.net.rank_to_host, job.first_rank, job.world_size()));
    if (j < alone.size()) facts.back().alone_steady_s = alone[j];
  }
  if (jobs.empty()) {
    write(kResultsFile, [&](std::ostream& out) { WriteResultsJson(result, out); });
  } else {
    for (const RunResult& job : jobs) {
      write(ClusterJobResultsFile(job.cluster_job),
            [&](std::ostream& out) { WriteResultsJson(job, out); });
    }
    write(kResultsFile, ClusterResultsJson(result, jobs, facts));
  }
  write(kPerfFile, PerfJson(result, perf));
  // The traffic a program implies: real ranks run a program nbox-cosim does not know.
  if (!real_ranks) {
    write(kTrafficFile,
          TrafficCsv(ProgramTraffic(assembly.workload.programs, job->GetCommunicators()),
                     assembly.workload.programs));
  }
  if (watchers.messages_csv) {
    watchers.messages_csv->Finish();
    written.push_back((dir / kMessagesFile).string());
  }
  if (watchers.links_csv) {
    watchers.links_csv->Finish();
    written.push_back((dir / kLinksFile).string());
  }
  if (scenario.output.trace == scenario::Timeline::kChrome) {
    write(kTraceFile, [&](std::ostream& out) { WriteChromeTrace(*job->GetRecords(), out); });
  }
  output.Commit();
  if (jobs.empty()) {
    PrintSummary(result, perf, written, std::cout);
  } else {
    PrintClusterSummary(result, jobs, facts, perf, written, std::cout);
  }
}

// Open the output, run, collect, write: the status of a run that got as far as running.
int RunAndWrite(const RunRequest& request, const scenario::Scenario& scenario,
                JobAssembly& assembly, const std::vector<std::optional<double>>& alone) {
  const std::unique_ptr<OutputFolder> output = OpenOutput(request, scenario, assembly);
  try {
    RunWatchers watchers(scenario, assembly, *output);
    const RunOutcome outcome = Run(scenario, assembly, watchers, *output);
    const RunResult result = Collect(scenario, assembly, outcome);
    Write(scenario, assembly, outcome, result, alone, PerfOf(outcome.loop), watchers, *output);
    const bool failed =
        outcome.real_ranks.failed || outcome.loop.interrupted != 0 || !result.failure.empty();
    return failed ? kExitRunFailed : kExitSuccess;
  } catch (const std::bad_alloc&) {
    std::cerr << "nbox-cosim: ran out of memory while simulating; no results written (the "
                 "estimate before the run missed it: please report the scenario)\n";
    return kExitResources;
  } catch (const std::exception& e) {
    std::cerr << "nbox-cosim: " << e.what() << "\n";
    return kExitRunFailed;
  }
}

}  // namespace

int RunPipeline(const RunRequest& request) {
  int status = kExitSuccess;
  try {
    std::vector<std::optional<double>> alone;  // cluster.alone: each job's steady time alone
    auto [scenario, assembly] = LoadAndAssemble(request, alone);
    if (request.check_only) {
      ReportCheck(request, scenario, assembly);
    } else {
      status = RunAndWrite(request, scenario, assembly, alone);
    }
  } catch (const PhaseEnd& end) {
    status = end.status;
  }
  ns3::Simulator::Destroy();
  return status;
}

}  // namespace nbox::cosim
