// Server presets and the rail-optimised fabric (servers.h).
#include "topologies/servers.h"

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>

#include "common/units.h"
#include "topologies/builder_checks.h"

namespace nbox::topo {

using internal::CheckAtLeast;
using internal::CheckLatency;
using internal::CheckRate;
using internal::CheckSize;
using internal::Indexed;

namespace {

// NVIDIA quotes NVLink bandwidth per GPU as the sum of both directions ("900 GB/s"); a link
// of the graph carries its rate in each direction, so presets hold half of it, in bits/s.
constexpr double BidirectionalGBpsToBitsPerDirection(double gigabytes_per_s) {
  return gigabytes_per_s / 2 * 8e9;
}

}  // namespace

const std::vector<ServerPreset>& ServerPresets() {
  static const std::vector<ServerPreset> presets = {
      {"h100", 8, BidirectionalGBpsToBitsPerDirection(900), 400e9,
       "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM: NVLink 900 GB/s, 18 NVLink 4 links) "
       "and NVIDIA DGX H100 datasheet (8 GPUs, 8x single-port ConnectX-7 400 Gb/s)"},
      {"a100", 8, BidirectionalGBpsToBitsPerDirection(600), 200e9,
       "NVIDIA A100 Tensor Core GPU datasheet (A100 SXM: NVLink 600 GB/s, 12 NVLink 3 links) "
       "and NVIDIA DGX A100 datasheet (8 GPUs, 8x single-port ConnectX-6 HDR 200 Gb/s)"},
      {"b200", 8, BidirectionalGBpsToBitsPerDirection(1800), 400e9,
       "NVIDIA DGX B200 datasheet (8 B200 GPUs, NVLink 5 at 1.8 TB/s per GPU, 8x single-port "
       "ConnectX-7 400 Gb/s)"},
  };
  return presets;
}

const ServerPreset* FindServerPreset(std::string_view name) {
  for (const ServerPreset& preset : ServerPresets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

std::vector<std::string> ServerPresetNames() {
  std::vector<std::string> names;
  for (const ServerPreset& preset : ServerPresets()) names.push_back(preset.name);
  return names;
}

Topology MakeRail(int servers, const ServerSpec& server, int spines, double fabric_rate_bps,
                  double latency_s) {
  constexpr const char* kFunction = "MakeRail";
  CheckAtLeast(kFunction, "servers", servers, 1);
  CheckAtLeast(kFunction, "server.gpus", server.gpus, 1);
  CheckAtLeast(kFunction, "spines", spines, 1);
  CheckRate(kFunction, "server.nvlink_rate_bps", server.nvlink_rate_bps);
  CheckLatency(kFunction, "server.nvlink_latency_s", server.nvlink_latency_s);
  CheckRate(kFunction, "server.nic_rate_bps", server.nic_rate_bps);
  CheckRate(kFunction, "fabric_rate_bps", fabric_rate_bps);
  CheckLatency(kFunction, "latency_s", latency_s);
  const int64_t gpus = server.gpus;
  const int64_t host_count = int64_t{servers} * gpus;
  CheckSize(kFunction, host_count, 2 * host_count + gpus * spines);

  Topology topology;
  topology.description = fmt::format(
      "rail, {} servers x {} GPUs (NVLink {}, NIC {}), {} rails x {} spines, {} fabric links, "
      "{} latency ({} NVLink)",
      servers, gpus, FormatRate(server.nvlink_rate_bps), FormatRate(server.nic_rate_bps), gpus,
      spines, FormatRate(fabric_rate_bps), FormatSeconds(latency_s),
      FormatSeconds(server.nvlink_latency_s));
  for (int s = 0; s < servers; ++s) {
    for (int64_t g = 0; g < gpus; ++g) topology.AddHost(fmt::format("s{}g{}", s, g));
  }
  std::vector<Vertex> nvswitch(servers), rail(gpus), spine(spines);
  for (int s = 0; s < servers; ++s) nvswitch[s] = topology.AddSwitch(Indexed("nvsw", s));
  for (int64_t k = 0; k < gpus; ++k) rail[k] = topology.AddSwitch(Indexed("rail", k));
  for (int m = 0; m < spines; ++m) spine[m] = topology.AddSwitch(Indexed("spine", m));

  for (int64_t h = 0; h < host_count; ++h) {
    topology.AddLink(topology.hosts[h], nvswitch[h / gpus], server.nvlink_rate_bps,
                     server.nvlink_latency_s);
  }
  for (int64_t h = 0; h < host_count; ++h) {
    topology.AddLink(topology.hosts[h], rail[h % gpus], server.nic_rate_bps, latency_s);
  }
  for (int64_t k = 0; k < gpus; ++k) {
    for (int m = 0; m < spines; ++m) {
      topology.AddLink(rail[k], spine[m], fabric_rate_bps, latency_s);
    }
  }
  return topology;
}

}  // namespace nbox::topo
