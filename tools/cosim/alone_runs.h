// Each job of a cluster run alone, on the cluster's fabric and the hosts it has in the
// cluster (cluster.alone): what it would take with nobody beside it, for the slowdown the
// jobs cost each other (docs/CLUSTERS.md).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "tools/cosim/scenario/scenario.h"

namespace nbox::cosim {

// `cluster`'s `jobs` (LoadClusterJobs; cluster.job.world_size their total), each simulated in
// turn on a fresh simulator: its steady iteration time alone, or nothing where its run did not
// finish (said on `err`). Writes no file. Throws what AssembleJob throws (a job that does not
// fit is refused as the cluster would be).
std::vector<std::optional<double>> RunJobsAlone(const scenario::Scenario& cluster,
                                                const std::vector<scenario::Scenario>& jobs,
                                                uint64_t available_bytes, std::ostream& err);

}  // namespace nbox::cosim
