// TEST DOUBLE — not nbox-cosim. Plays the emulated ranks of a job with real ranks for the bridge
// tests: a BridgeServer with ServerOptions::real and a CosimBootstrapRoot on a background thread,
// and a BridgeSink that answers the real ranks' posts on an ideal network (everything is
// delivered at the time it is posted):
//   - a send of a real rank to an emulated one completes at once (its size is checked against
//     the planned message);
//   - a receive of a real rank from an emulated one gets the emulated rank's next message on
//     that (sender, lane): computed by running the planned collectives on float32 data for all
//     ranks (kExact), all zeros (kZeros), or no bytes at all (kSynthetic: payload = self).
// The plan must list the collectives the real rank will call, in order, with every rank's input.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bridge/server/bridge_server.h"
#include "bridge/server/cosim_bootstrap_root.h"
#include "bridge/server/message_matcher.h"
#include "collectives/schedule.h"
#include "tests/bridge/emulated_peers_inputs.h"
#include "tests/bridge/server_thread.h"  // kTestSecret

namespace nbox::bridge::testing {

enum class Payload { kExact, kZeros, kSynthetic };

enum class Reduction { kSum, kMax };

// One collective of the plan: the spec the runtime builds (ring, the job's channels and chunk)
// and each rank's float32 buffer before it (schedule.h's in-place conventions).
struct PlannedCollective {
  coll::CollectiveSpec spec;
  Reduction reduction = Reduction::kSum;
  std::vector<std::vector<float>> before = {};  // per rank
};

class EmulatedPeers : public server::BridgeSink {
 public:
  // Messages to and from emulated ranks are delivered (and sends complete) `delay_ns` after
  // they were posted.
  EmulatedPeers(int world, std::vector<bool> real, int channels, uint64_t chunk_bytes,
                Payload payload, std::vector<PlannedCollective> plan, uint64_t delay_ns = 0);
  ~EmulatedPeers() override;

  std::string bridge_endpoint() const { return server_->unix_endpoint(); }
  std::string unique_id_text() const { return root_->unique_id_text(); }

  // What happened, for the test (thread-safe).
  std::vector<server::ConnectionInfo> connections() const;
  std::vector<wire::OpReport> ops() const;
  std::vector<std::string> problems() const;  // mismatches the double noticed
  int goodbyes() const;
  // Waits (up to 10 s) until `count` ranks said Goodbye: everything they sent before has been
  // handled then. False on timeout.
  bool WaitForGoodbyes(int count) const;
  uint64_t heartbeats() const;
  std::string bootstrap_failure() const;

  void OnJoin(const server::RankJoin& /*join*/) override {}
  void OnConnection(const server::ConnectionInfo& connection) override;
  void OnPost(const server::Post& post) override;
  void OnPromise(int, uint64_t, bool) override {}
  void OnHeartbeat(int rank, uint64_t vtime) override;
  void OnOp(int rank, const wire::OpReport& op) override;
  void OnGoodbye(int rank, uint64_t vtime) override;
  void OnDisconnect(int rank, const std::string& reason) override;

 private:
  using Wire = std::tuple<int, int, int>;  // (sender, receiver, lane)
  void Problem(const std::string& text);

  const std::vector<bool> real_;
  const Payload payload_;
  const uint64_t delay_ns_;
  server::MessageMatcher matcher_;  // real <-> real
  // Messages of the plan per (sender, receiver, lane), in order: their bytes.
  std::map<Wire, std::deque<std::vector<uint8_t>>> messages_;
  std::unique_ptr<server::BridgeServer> server_;
  std::unique_ptr<server::CosimBootstrapRoot> root_;
  mutable std::mutex mutex_;
  std::vector<server::ConnectionInfo> connections_;
  std::vector<wire::OpReport> ops_;
  std::vector<std::string> problems_;
  int goodbyes_ = 0;
  uint64_t heartbeats_ = 0;
  std::string bootstrap_failure_;  // copied from the root by the polling thread
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace nbox::bridge::testing
