// The ncclNet comms of one communicator: a listen comm per (sending peer, lane), whose
// handles every rank learns through the bootstrap, and the send and recv comms, set up lazily
// the first time a lane carries a message (connect and accept are non-blocking, so setting
// one up never stalls the others).
//
// A lane is a FIFO connection between two ranks: lanes 0..channels-1 carry the collectives'
// channels, lane `channels` carries point-to-point Send/Recv, so the two never interleave.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bridge/host/net_plugin.h"

namespace nbox::host {

class Connections {
 public:
  Connections(const NetPlugin& plugin, void* ctx, int device, int rank, int nranks, int lanes);
  ~Connections();
  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;

  // Creates the listen comms; returns this rank's blob: NCCL_NET_HANDLE_MAXSIZE bytes for
  // every (sender, lane), sender-major, zeros for the rank itself. Throws HostError.
  std::vector<uint8_t> Listen();
  // Every rank's blob (index = rank), as the bootstrap returned them.
  void SetPeerHandles(const std::vector<std::vector<uint8_t>>& blobs);
  // Whether `peer` is emulated by nbox-cosim: its handles are the synthetic ones of
  // bridge/wire/listen_handle.h (only nbox-cosim's bootstrap root writes those).
  bool emulated(int peer) const { return emulated_[peer]; }
  bool any_emulated() const;

  // One non-blocking step of setting up the comm to (from) `peer` on `lane`: the comm, or
  // nullptr while it is not up yet. Throws HostError if the plugin fails.
  void* SendComm(int peer, int lane);
  void* RecvComm(int peer, int lane);

  // Closes every comm (pending requests on them are abandoned).
  void CloseAll();

 private:
  size_t Index(int peer, int lane) const { return static_cast<size_t>(peer) * lanes_ + lane; }

  const NetPlugin& plugin_;
  void* ctx_;
  const int device_;
  const int rank_;
  const int nranks_;
  const int lanes_;
  std::vector<void*> listen_comms_;  // by (sender, lane)
  std::vector<void*> send_comms_;    // by (receiver, lane)
  std::vector<void*> recv_comms_;    // by (sender, lane)
  // The peer's handle for this rank, per (receiver, lane). connect() keeps its progress in it,
  // so it must stay where it is between calls.
  std::vector<std::vector<char>> connect_handles_;
  std::vector<bool> emulated_;  // by rank
};

}  // namespace nbox::host
