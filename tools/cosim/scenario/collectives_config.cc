#include "tools/cosim/scenario/collectives_config.h"

namespace nbox::scenario {

coll::CollectiveSettings CollectiveSettingsOf(const Scenario& s, uint64_t host_nic_bps) {
  coll::CollectiveSettings settings;
  settings.channels = s.collectives.channels;
  settings.chunk_bytes = s.collectives.chunk_bytes;
  settings.all_reduce = s.collectives.allreduce;
  settings.all_gather = s.collectives.allgather;
  settings.reduce_scatter = s.collectives.reducescatter;
  settings.broadcast = s.collectives.broadcast;
  settings.reduce = s.collectives.reduce;
  settings.all_to_all = s.collectives.alltoall;
  settings.protocol = s.collectives.protocol;
  // Ranks fill servers in order (PlaceRanks on a rail topology's server-major GPUs).
  const bool servers = s.topology.kind == TopologyKind::kRail;
  settings.ranks_per_server = servers ? s.servers.gpus : 0;
  settings.nic_bps = servers ? static_cast<uint64_t>(s.servers.nic_bps) : host_nic_bps;
  settings.scale_up_bps = static_cast<uint64_t>(s.servers.nvlink_bps);
  return settings;
}

}  // namespace nbox::scenario
