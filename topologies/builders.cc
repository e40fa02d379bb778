// The standard topologies: star, two-tier leaf-spine and k-ary fat-tree.
//
// Vertex order is hosts first (so host index == vertex index), then switches tier by tier;
// link ids follow the order documented in topology.h. Both are part of the contract: ranks
// are placed on host indices, and reports name links by id.
#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/units.h"
#include "topologies/builder_checks.h"
#include "topologies/topology.h"

namespace nbox::topo {

using internal::CheckAtLeast;
using internal::CheckLatency;
using internal::CheckRate;
using internal::CheckSize;
using internal::Indexed;

Topology MakeStar(int hosts, double rate_bps, double latency_s) {
  constexpr const char* kFunction = "MakeStar";
  CheckAtLeast(kFunction, "hosts", hosts, 1);
  CheckRate(kFunction, "rate_bps", rate_bps);
  CheckLatency(kFunction, "latency_s", latency_s);

  Topology topology;
  topology.description = fmt::format("star, {} hosts, {} links, {} latency", hosts,
                                     FormatRate(rate_bps), FormatSeconds(latency_s));
  for (int h = 0; h < hosts; ++h) topology.AddHost(Indexed("h", h));
  const Vertex sw = topology.AddSwitch("sw0");
  for (int h = 0; h < hosts; ++h) topology.AddLink(topology.hosts[h], sw, rate_bps, latency_s);
  return topology;
}

Topology MakeLeafSpine(int leaves, int spines, int hosts_per_leaf, double host_rate_bps,
                       double fabric_rate_bps, double latency_s) {
  constexpr const char* kFunction = "MakeLeafSpine";
  CheckAtLeast(kFunction, "leaves", leaves, 1);
  CheckAtLeast(kFunction, "spines", spines, 1);
  CheckAtLeast(kFunction, "hosts_per_leaf", hosts_per_leaf, 1);
  CheckRate(kFunction, "host_rate_bps", host_rate_bps);
  CheckRate(kFunction, "fabric_rate_bps", fabric_rate_bps);
  CheckLatency(kFunction, "latency_s", latency_s);
  const int64_t host_count = int64_t{leaves} * hosts_per_leaf;
  CheckSize(kFunction, host_count, host_count + int64_t{leaves} * spines);

  Topology topology;
  topology.description =
      fmt::format("leaf-spine {}x{}, {} hosts/leaf, {} host links, {} fabric links, {} latency",
                  leaves, spines, hosts_per_leaf, FormatRate(host_rate_bps),
                  FormatRate(fabric_rate_bps), FormatSeconds(latency_s));
  for (int64_t h = 0; h < host_count; ++h) topology.AddHost(Indexed("h", h));
  std::vector<Vertex> leaf(leaves), spine(spines);
  for (int l = 0; l < leaves; ++l) leaf[l] = topology.AddSwitch(Indexed("leaf", l));
  for (int s = 0; s < spines; ++s) spine[s] = topology.AddSwitch(Indexed("spine", s));

  for (int64_t h = 0; h < host_count; ++h) {
    topology.AddLink(topology.hosts[h], leaf[h / hosts_per_leaf], host_rate_bps, latency_s);
  }
  for (int l = 0; l < leaves; ++l) {
    for (int s = 0; s < spines; ++s) {
      topology.AddLink(leaf[l], spine[s], fabric_rate_bps, latency_s);
    }
  }
  return topology;
}

Topology MakeFatTree(int k, double rate_bps, double latency_s) {
  constexpr const char* kFunction = "MakeFatTree";
  if (k < 2 || k % 2 != 0) {
    throw std::invalid_argument(
        fmt::format("{}: k must be an even integer >= 2, got {}", kFunction, k));
  }
  CheckRate(kFunction, "rate_bps", rate_bps);
  CheckLatency(kFunction, "latency_s", latency_s);
  const int64_t half = k / 2;
  const int64_t host_count = int64_t{k} * half * half;
  CheckSize(kFunction, host_count, 3 * host_count);

  Topology topology;
  topology.description =
      fmt::format("fat-tree k={}, {} hosts, {} switches, {} links, {} latency", k, host_count,
                  5 * half * half, FormatRate(rate_bps), FormatSeconds(latency_s));
  for (int64_t h = 0; h < host_count; ++h) topology.AddHost(Indexed("h", h));

  // edge[p][e], agg[p][a], core[a * half + c].
  std::vector<std::vector<Vertex>> edge(k), agg(k);
  std::vector<Vertex> core(half * half);
  for (int p = 0; p < k; ++p) {
    for (int64_t e = 0; e < half; ++e) {
      edge[p].push_back(topology.AddSwitch(fmt::format("edge{}_{}", p, e)));
    }
  }
  for (int p = 0; p < k; ++p) {
    for (int64_t a = 0; a < half; ++a) {
      agg[p].push_back(topology.AddSwitch(fmt::format("agg{}_{}", p, a)));
    }
  }
  for (int64_t c = 0; c < half * half; ++c) core[c] = topology.AddSwitch(Indexed("core", c));

  for (int64_t h = 0; h < host_count; ++h) {
    const int64_t pod = h / (half * half);
    const int64_t edge_in_pod = (h / half) % half;
    topology.AddLink(topology.hosts[h], edge[pod][edge_in_pod], rate_bps, latency_s);
  }
  for (int p = 0; p < k; ++p) {
    for (int64_t e = 0; e < half; ++e) {
      for (int64_t a = 0; a < half; ++a) {
        topology.AddLink(edge[p][e], agg[p][a], rate_bps, latency_s);
      }
    }
  }
  for (int p = 0; p < k; ++p) {
    for (int64_t a = 0; a < half; ++a) {
      for (int64_t c = 0; c < half; ++c) {
        topology.AddLink(agg[p][a], core[a * half + c], rate_bps, latency_s);
      }
    }
  }
  return topology;
}

}  // namespace nbox::topo
