// Scale-up servers and the rail-optimised fabric that joins them.
//
// A server is G GPUs joined by NVLink-class links through one NVSwitch node, each GPU with a
// NIC of its own. The GPUs are the topology's hosts (one rank per GPU), so a GPU has two
// links: its NVLink link to the server's NVSwitch and its NIC link to the fabric. Hosts never
// forward traffic (topology.h), so the NVSwitch is a dead end for traffic leaving the server,
// and the shortest paths keep every GPU pair of one server on NVLink (2 hops; any path over
// the NICs has at least 4).
//
// The NVSwitch is modelled as one switch node with one full-duplex link per GPU at the GPU's
// whole NVLink bandwidth (an HGX board has several NVSwitch chips; a GPU spreads its NVLink
// lanes over all of them, which behaves as one non-blocking crossbar).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "topologies/topology.h"

namespace nbox::topo {

struct ServerSpec {
  int gpus = 8;
  double nvlink_rate_bps = 0;   // between a GPU and the NVSwitch, each direction
  double nvlink_latency_s = 0;  // propagation delay of that link, each direction
  double nic_rate_bps = 0;      // between a GPU's NIC and its rail switch, each direction
};

// A published server design: GPU count, NVLink links and rates per GPU, and the compute-fabric
// NIC per GPU, each from a datasheet but the NVLink data rate, which is NCCL's. No vendor
// publishes a hardware NVLink latency, so presets leave it to the user.
struct ServerPreset {
  std::string name;  // "h100"
  int gpus = 0;
  int nvlink_links = 0;             // NVLink links per GPU (datasheet)
  double nvlink_line_rate_bps = 0;  // all of them, each direction (datasheet)
  // What data moves at over them, each direction: the links times NCCL's bandwidth of one
  // NVLink of this GPU generation (src/graph/topo.h, SMxx_NVLINK_BW), about 80% of the line
  // rate; the rest is NVLink's packet and flow-control overhead. This is what a rail
  // fabric's NVLink links are simulated at (topologies/README.md, "Presets").
  double nvlink_rate_bps = 0;
  double nic_rate_bps = 0;
  std::string source;  // where the numbers come from
};

// h100, a100, b200 (see servers.cc for each one's source).
const std::vector<ServerPreset>& ServerPresets();
// nullptr when there is no preset of that name.
const ServerPreset* FindServerPreset(std::string_view name);
std::vector<std::string> ServerPresetNames();

// Rail-optimised fabric: `servers` servers of `server.gpus` GPUs; rail switch k ("rail<k>")
// joins NIC k of every server, and every rail switch links to every spine ("spine<m>") at
// fabric_rate_bps, for traffic between GPUs of different local index on different servers.
// NIC and fabric links have latency_s; NVLink links server.nvlink_latency_s.
//
// Nodes: GPU g of server s is host index s*G + g, named "s<s>g<g>"; then switches "nvsw<s>"
// (one per server), "rail<k>" (k = 0..G-1), "spine<m>".
// Links, in id order: the NVLink links in host order (id = host index), the NIC links in host
// order (id = S*G + host index), then rail k to spine m at id 2*S*G + k*spines + m.
// servers >= 1, gpus >= 1, spines >= 1, rates > 0, latencies >= 0 (std::invalid_argument
// otherwise, naming the argument).
Topology MakeRail(int servers, const ServerSpec& server, int spines, double fabric_rate_bps,
                  double latency_s);

}  // namespace nbox::topo
