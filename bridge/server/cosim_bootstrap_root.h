// The host runtime's bootstrap root, served by nbox-cosim for a job in which only some ranks
// are real (the others are emulated in ns-3 and never join).
//
// A real rank (nboxCommInitFromEnv with NBOX_UNIQUE_ID = unique_id_text()) joins with its blob
// of listen handles: one per (sender, lane), sender-major, lanes = channels + 1 (the last one
// carries Send/Recv; see bridge/host/connections.h). The root
//   - checks the join as the runtime's own root does (nonce, world size, rank in range and
//     real, channels and chunk bytes equal to what nbox-cosim's scenario says),
//   - decodes every handle of the blob (bridge/wire/listen_handle.h) and registers it with the
//     server: BridgeServer::RegisterListen(rank, listen id, sender, lane);
//   - once every real rank joined, sends each of them the table of all ranks' blobs, where an
//     emulated rank's blob is made of synthetic handles (its rank, SyntheticListenId(sender,
//     lane), nonce 0);
//   - then watches the real ranks' bootstrap connections like the runtime's root: a real rank
//     that leaves without its Bye is reported to the others (Abort) and through failure().
//
// Groups (docs/DESIGN.md, "Real ranks in group communicators"): a join that names members
// (world ranks, in the group's order) joins the job's communicator of exactly those members,
// whenever it comes. Its handles are registered on that communicator's lanes (lane base +
// lane) with world ranks, an emulated member's synthetic handles name its world rank and
// those lanes, and the group's table goes to its real members once all of them joined.
//
// Single-threaded and non-blocking, like BridgeServer: everything happens inside Poll, which
// must run on the server's thread (it calls RegisterListen).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bridge/server/bridge_server.h"

namespace nbox::bridge::server {

// A communicator of the job other than the world, as the emulated ranks hold it: its members'
// world ranks (index = rank in it), the first of the job's lanes it uses and its channels (its
// lanes are lane_base .. lane_base + channels, the last one for Send/Recv).
struct CosimGroup {
  std::vector<int> members;
  int lane_base = 0;
  int channels = 1;
};

struct CosimBootstrapOptions {
  int world_size = 1;
  std::vector<bool> real;    // index = rank; which ranks join (the server's ServerOptions::real)
  int channels = 1;          // NBOX_CHANNELS of the real ranks (= collectives.channels)
  uint64_t chunk_bytes = 0;  // NBOX_CHUNK_BYTES of the real ranks (= collectives.chunk)
  // The emulated ranks' collective settings (coll::EncodeSettings); a real rank that joins with
  // others is refused, naming the fields. Empty: not compared.
  std::string settings;
  // Where the root listens: an IP literal or interface name, port chosen by the OS.
  std::string address = "127.0.0.1";
  // Real ranks must all join the world within this; afterwards failure() says who is missing.
  std::chrono::milliseconds join_timeout{std::chrono::seconds(60)};
  // The communicators real ranks may join after the world (groups of the workload).
  std::vector<CosimGroup> groups;
};

class CosimBootstrapRoot {
 public:
  // Opens the listening socket. Throws BridgeServerError (bad options, socket failure).
  CosimBootstrapRoot(CosimBootstrapOptions options, BridgeServer* server);
  ~CosimBootstrapRoot();
  CosimBootstrapRoot(const CosimBootstrapRoot&) = delete;
  CosimBootstrapRoot& operator=(const CosimBootstrapRoot&) = delete;

  // What the real ranks need in NBOX_UNIQUE_ID (the runtime's text form of its unique id).
  std::string unique_id_text() const;

  // Waits up to `timeout` for activity on the root's sockets and handles what is ready:
  // accepts, joins (registering listens with the server), the table, byes and departures.
  void Poll(std::chrono::milliseconds timeout);

  // Every real rank joined the world and got its table.
  bool all_joined() const;
  // The groups whose real members all joined and got their table (the world not counted).
  int groups_joined() const;
  int joined() const;
  // "" while all is well; else why the job's bootstrap failed (a rank left without Bye, a bad
  // join, the join timeout), e.g. "only 1 of 2 real ranks joined within 60000 ms (missing: 3)".
  // Once set, the real ranks still connected were told (Abort, the same text).
  std::string failure() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nbox::bridge::server
