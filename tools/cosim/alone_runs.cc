#include "tools/cosim/alone_runs.h"

#include <fmt/format.h>

#include "ns3/simulator.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/reports/summary.h"

namespace nbox::cosim {

std::vector<std::optional<double>> RunJobsAlone(const scenario::Scenario& cluster,
                                                const std::vector<scenario::Scenario>& jobs,
                                                uint64_t available_bytes, std::ostream& err) {
  const std::vector<int> hosts = PlaceClusterJobs(cluster, BuildTopology(cluster), jobs);
  std::vector<std::optional<double>> steady;
  size_t first_rank = 0;
  for (const scenario::Scenario& job : jobs) {
    const size_t ranks = static_cast<size_t>(job.job.world_size);
    const std::vector<int> own(hosts.begin() + static_cast<std::ptrdiff_t>(first_rank),
                               hosts.begin() + static_cast<std::ptrdiff_t>(first_rank + ranks));
    first_rank += ranks;
    scenario::Scenario alone = cluster;
    alone.job.world_size = job.job.world_size;
    alone.output.trace = scenario::Timeline::kNone;
    std::optional<double> time;
    {
      const JobAssembly assembly = AssembleJob(alone, available_bytes, {job}, own);
      auto run = assembly.job;
      LoopSettings settings;
      settings.progress = ProgressMode::kOff;
      const SimLoopResult loop =
          RunLoop([run] { return run->IsFinished(); },
                  [run] { return run->IsStalled() || !run->GetRecords()->GetFailure().empty(); },
                  settings, err);
      if (loop.interrupted != 0) {
        // Stopped by the user: the cluster is not run either (RunPipeline).
        ns3::Simulator::Destroy();
        steady.resize(jobs.size());
        return steady;
      }
      if (loop.finished && run->GetRecords()->GetFailure().empty()) {
        time = SteadyIterationTime(Summarize(*run->GetRecords()));
      } else {
        err << fmt::format(
            "nbox-cosim: job '{}' alone did not finish (it stalled or failed); its slowdown "
            "is left out\n",
            scenario::ClusterJobName(job.path));
      }
    }
    ns3::Simulator::Destroy();
    steady.push_back(time);
  }
  return steady;
}

}  // namespace nbox::cosim
