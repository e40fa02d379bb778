#include "collectives/group_servers.h"

#include <unordered_set>

namespace nbox::coll {

int GroupRanksPerServer(const std::vector<int>& members, int gpus_per_server) {
  const int gpus = gpus_per_server;
  const auto count = static_cast<int>(members.size());
  if (gpus <= 0 || count == 0) return 0;
  // The first server's members set k and the local GPUs every other server must repeat.
  int k = 0;
  while (k < count && members[k] / gpus == members[0] / gpus) ++k;
  if (count % k != 0) return 0;
  std::unordered_set<int> servers;
  for (int block = 0; block < count / k; ++block) {
    const int server = members[block * k] / gpus;
    if (!servers.insert(server).second) return 0;  // a server visited twice
    for (int slot = 0; slot < k; ++slot) {
      const int member = members[block * k + slot];
      if (member / gpus != server || member % gpus != members[slot] % gpus) return 0;
    }
  }
  return k;
}

int ConsecutiveRanksPerServer(int first, int count, int gpus_per_server) {
  const int gpus = gpus_per_server;
  if (gpus <= 0 || count <= 0 || first < 0) return 0;
  if (first % gpus + count <= gpus) return count;  // inside one server
  return first % gpus == 0 && count % gpus == 0 ? gpus : 0;
}

}  // namespace nbox::coll
