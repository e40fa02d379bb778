// Rules between keys, checked once the file and the overrides are all read, and the values
// derived from other keys (fabric_link from oversubscription, the topology file's path).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tools/cosim/scenario/scenario.h"

namespace nbox::scenario {

// Where a key's value came from; keys absent from KeyOrigins kept their default.
struct KeyOrigin {
  int line = 0;      // line in the scenario file; 0 = from an override
  std::string file;  // a cluster job's file that set it; "" = the scenario file (or --set)
};
using KeyOrigins = std::map<std::string, KeyOrigin>;  // "section.key" -> origin

// Derives the dependent values in `scenario` and checks every rule between keys. Returns one
// message per broken rule, naming each key with its value and origin:
// "network.tcp_cc = dctcp (line 4) requires network.ecn = on, got network.ecn = off (default)".
// `scenario_folder` is where a relative topology.file starts.
// What a scenario is checked as: one job; a cluster file as a whole (its fabric, network and
// events; its [job], [workload] and [collectives] only as what its jobs' files are read over,
// though its collectives must be valid); or one
// job of a cluster (its events name the cluster's ranks, checked once the jobs are counted:
// EventRankBeyond).
enum class RuleScope { kJob, kWholeCluster, kClusterJob };

std::vector<std::string> ApplyCrossKeyRules(Scenario& scenario, const KeyOrigins& origins,
                                            const std::filesystem::path& scenario_folder,
                                            RuleScope scope = RuleScope::kJob);

// The first rank [events] names at or beyond `world` (a cluster's ranks), said as an error;
// "" when every named rank is below it.
std::string EventRankBeyond(const EventsSection& events, int world);

// The smallest round trip a TCP segment can make on a network whose slowest link runs at
// `slowest_bps`: a full packet of `mtu` bytes (plus the link's 2-byte framing) stored and
// forwarded over two links, the ACK back. network.tcp_min_rto must not be below it: every
// timeout would fire before an ACK could arrive, and TCP would retransmit on a lossless network
// for as long as the run lasts. Checked here for built-in topologies and, once a topology file
// or a rail fabric is built, by nbox-cosim's assembly (TcpMinRtoRefusal).
double SmallestTcpRoundTripSeconds(uint32_t mtu, double slowest_bps);

// "" if `scenario`'s network.tcp_min_rto is at least SmallestTcpRoundTripSeconds for a
// network whose slowest link runs at `slowest_bps` (or the run is not over TCP); else
// what is wrong and what was expected, naming the key with `key_described` ("network.tcp_min_rto
// = 1ms (line 5)") and the network with `network_described`.
std::string TcpMinRtoRefusal(const Scenario& scenario, double slowest_bps,
                             const std::string& key_described,
                             const std::string& network_described);

// The rule above for a built-in topology (star, leaf-spine, fat-tree), whose slowest link the
// scenario gives; the packet model, the one that runs TCP, adds it to its checks.
void CheckTcpMinRto(RuleContext& context);

}  // namespace nbox::scenario
