// A rank's side of the bootstrap: join the communicator through its root, get every rank's
// listen handles, then keep the connection open as the root's line to this rank (the root
// reports a dead rank through it, and sees this rank die when it closes).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bridge/host/bootstrap_wire.h"
#include "bridge/host/unique_id.h"
#include "bridge/net/socket_util.h"

namespace nbox::host {

class BootstrapClient {
 public:
  BootstrapClient() = default;

  // Joins and waits until every rank has: returns all ranks' blobs (index = rank, each the
  // size of join.blob). Throws HostError: nboxRemoteError when the root is unreachable or
  // reports a failure (its message), nboxSystemError on timeout.
  std::vector<std::vector<uint8_t>> Join(const UniqueIdContents& id, const JoinRequest& join,
                                         std::chrono::seconds timeout);

  // Never blocks: "" while all is well, else why the communicator cannot go on (the root's
  // abort message, or that the root itself is gone).
  std::string CheckPeers();

  // Tells the root this rank leaves normally, then closes (best effort).
  void Leave();
  // Closes without a goodbye: the root treats this rank as failed and tells the others.
  void Drop();

 private:
  bridge::UniqueFd fd_;
};

}  // namespace nbox::host
