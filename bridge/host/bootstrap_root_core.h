// What every bootstrap root does with its connections, whoever decides about the joins: the
// host runtime's own root (bootstrap_root.cc) and the one nbox-cosim serves for a job with
// emulated ranks (bridge/server/cosim_bootstrap_root.cc).
//
// A root listens, accepts every process that connects, reads bootstrap frames from each
// (bootstrap_wire.h) and hands the joins to OnJoin; it sends a communicator's table to the ranks
// that joined it (a root may serve several communicators, each a group of its members), lets
// ranks leave with Bye, and when a rank's connection closes without Bye (its process ended
// or aborted) or a rank breaks the protocol, it tells every rank still connected (Abort) and
// stops. Connections that never claimed a rank (strangers) are dropped quietly.
// Single-threaded and non-blocking: everything happens inside PollOnce.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bridge/net/socket_util.h"

namespace nbox::host {

// A random nonce for a unique id: a join must present it.
uint64_t RandomBootstrapNonce();

class BootstrapRootCore {
 public:
  virtual ~BootstrapRootCore() = default;
  BootstrapRootCore(const BootstrapRootCore&) = delete;
  BootstrapRootCore& operator=(const BootstrapRootCore&) = delete;

  // Every rank that joined the first communicator (group 0) got its table.
  bool table_sent() const { return table_sent_; }
  // The root stopped (after Abort); failure() says why.
  bool finished() const { return finished_; }
  const std::string& failure() const { return failure_; }

 protected:
  struct Member {
    bridge::UniqueFd fd;
    int rank = -1;  // -1 until its join arrived
    int group = 0;  // the communicator it joined (the caller's numbering)
    bool left = false;
    std::vector<uint8_t> input;  // bytes received and not yet parsed
  };

  // `error_prefix` starts the texts of the root's own failures (poll, accept).
  BootstrapRootCore(bridge::UniqueFd listen_fd, uint64_t nonce, std::string error_prefix);

  // Waits up to `timeout_ms` (-1: no limit) for activity on the root's sockets and handles
  // what is ready: accepts (until StopAccepting), frames, byes and departures.
  void PollOnce(int timeout_ms);
  bool has_members() const { return !members_.empty(); }

  // A kJoin payload from a connection that has no rank yet. The decision is the caller's: it
  // sets member.rank and eventually calls SendTable, or calls Reject or Abort.
  virtual void OnJoin(Member& member, const std::vector<uint8_t>& payload) = 0;
  // How failure texts name a rank, e.g. "rank 3".
  virtual std::string RankName(int rank) const = 0;

  // A connection that does not speak the protocol: dropped, unless it claimed a rank (then the
  // whole job is aborted, naming it before `what`).
  void Reject(Member& member, const std::string& what);
  // Sends every rank that joined communicator `group` the concatenation of `blobs` (in rank
  // order) and clears them.
  void SendTable(std::vector<std::vector<uint8_t>>* blobs, int group = 0);
  // No one else may connect: the listening socket closes and the strangers are dropped.
  void StopAccepting();
  // Tells every rank still connected why the job cannot go on, then stops.
  void Abort(const std::string& why);

  // What a join must present (the unique id's nonce).
  uint64_t nonce() const { return nonce_; }

 private:
  void AcceptAll();
  void ReadFrom(Member& member);
  void ParseFrames(Member& member);

  const uint64_t nonce_;
  const std::string error_prefix_;
  bridge::UniqueFd listen_fd_;
  std::vector<std::unique_ptr<Member>> members_;
  bool table_sent_ = false;
  bool finished_ = false;
  std::string failure_;
};

}  // namespace nbox::host
