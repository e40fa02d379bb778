// Server presets and the rail-optimised fabric (servers.h).
#include "topologies/servers.h"

#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <utility>

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

// NCCL's bandwidth of one NVLink, each direction, in GB/s (src/graph/topo.h): SM80_NVLINK_BW
// and SM90_NVLINK_BW in NCCL 2.20.3, SM100_NVLINK_BW from 2.25.1 on. NCCL's topology search
// gives a GPU's path to its NVSwitch this figure times the GPU's NVLink count.
constexpr double kNcclSm80NvlinkGBps = 20.0;
constexpr double kNcclSm90NvlinkGBps = 20.6;
constexpr double kNcclSm100NvlinkGBps = 40.0;

ServerPreset Preset(std::string name, int links, double datasheet_bidirectional_GBps,
                    double nccl_link_GBps, double nic_rate_bps, std::string source) {
  ServerPreset preset;
  preset.name = std::move(name);
  preset.gpus = 8;
  preset.nvlink_links = links;
  preset.nvlink_line_rate_bps = BidirectionalGBpsToBitsPerDirection(datasheet_bidirectional_GBps);
  preset.nvlink_rate_bps = links * nccl_link_GBps * 8e9;
  preset.nic_rate_bps = nic_rate_bps;
  preset.source = std::move(source);
  return preset;
}

}  // namespace

const std::vector<ServerPreset>& ServerPresets() {
  static const std::vector<ServerPreset> presets = {
      Preset("h100", 18, 900, kNcclSm90NvlinkGBps, 400e9,
             "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM: NVLink 900 GB/s, 18 NVLink 4 "
             "links), NVIDIA DGX H100 datasheet (8 GPUs, 8x single-port ConnectX-7 400 Gb/s), "
             "NCCL 2.20.3 src/graph/topo.h (SM90_NVLINK_BW 20.6 GB/s a link)"),
      Preset("a100", 12, 600, kNcclSm80NvlinkGBps, 200e9,
             "NVIDIA A100 Tensor Core GPU datasheet (A100 SXM: NVLink 600 GB/s, 12 NVLink 3 "
             "links), NVIDIA DGX A100 datasheet (8 GPUs, 8x single-port ConnectX-6 HDR 200 "
             "Gb/s), NCCL 2.20.3 src/graph/topo.h (SM80_NVLINK_BW 20.0 GB/s a link)"),
      Preset("b200", 18, 1800, kNcclSm100NvlinkGBps, 400e9,
             "NVIDIA DGX B200 datasheet (8 B200 GPUs, NVLink 5 at 1.8 TB/s per GPU, 18 links; "
             "8x single-port ConnectX-7 400 Gb/s), NCCL 2.25.1 src/graph/topo.h "
             "(SM100_NVLINK_BW 40.0 GB/s a link)"),
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
