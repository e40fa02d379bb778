// PlaceRanksFromFile: a job's hosts listed in a file, one rank after another.
//
// Words are host names or ranges of them ("s0g0..s0g7"), as in a topology file, any number to
// a line, everything from '#' on a comment; rank r runs on the r-th host named. Every error
// names the file and line.
#include <fmt/format.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/shortened.h"
#include "topologies/file_names.h"
#include "topologies/topology.h"

namespace nbox::topo {

std::vector<int> PlaceRanksFromFile(const Topology& topology, int world_size,
                                    const std::string& path, const std::vector<bool>& taken) {
  std::ifstream in(path);
  if (!in) {
    throw std::invalid_argument(
        fmt::format("{}: cannot open the placement file; expected a readable file", path));
  }
  const std::vector<std::string> host_names = HostNames(topology);
  std::unordered_map<std::string, int> host_index;
  for (size_t host = 0; host < host_names.size(); ++host) {
    host_index.emplace(host_names[host], static_cast<int>(host));
  }
  std::unordered_set<std::string> switches;
  for (auto [vertex, end] = boost::vertices(topology.graph); vertex != end; ++vertex) {
    if (topology.graph[*vertex].kind == NodeKind::kSwitch) {
      switches.insert(topology.graph[*vertex].name);
    }
  }
  std::vector<int> host_of_rank;
  std::vector<int> line_of_host(topology.hosts.size(), 0);  // where each host was named
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(fmt::format("{}:{}: {}", path, number, what));
    };
    for (std::string_view word : internal::SplitWords(line)) {
      std::vector<std::string> names;
      try {
        names = internal::ExpandNames(word);
      } catch (const internal::NameError& error) {
        fail(fmt::format("'{}': {}", Shortened(word), error.what()));
      }
      for (const std::string& name : names) {
        const auto found = host_index.find(name);
        if (found == host_index.end()) {
          if (switches.count(name) > 0)
            fail(fmt::format("'{}' is a switch; expected a host", name));
          const std::string nearest = internal::NearestName(name, host_names);
          fail(fmt::format("no host '{}' in the topology{}", Shortened(name),
                           nearest.empty() ? "" : fmt::format(" (nearest: '{}')", nearest)));
        }
        if (!taken.empty() && taken[static_cast<size_t>(found->second)]) {
          fail(
              fmt::format("host '{}' is taken by an earlier job of the cluster; expected a "
                          "free host",
                          name));
        }
        int& named_on = line_of_host[static_cast<size_t>(found->second)];
        if (named_on > 0) {
          fail(
              fmt::format("host '{}' was already given a rank on line {}; expected each host "
                          "once (one rank a host)",
                          name, named_on));
        }
        if (static_cast<int>(host_of_rank.size()) == world_size) {
          fail(fmt::format("more hosts than job.world_size = {}; expected one host per rank",
                           world_size));
        }
        named_on = number;
        host_of_rank.push_back(found->second);
      }
    }
  }
  if (static_cast<int>(host_of_rank.size()) < world_size) {
    throw std::invalid_argument(
        fmt::format("{}: {} hosts for job.world_size = {}; expected one host per rank", path,
                    host_of_rank.size(), world_size));
  }
  return host_of_rank;
}

}  // namespace nbox::topo
