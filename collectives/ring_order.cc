#include "collectives/ring_order.h"

namespace nbox::coll {
namespace {

int Mod(int value, int modulus) {
  return ((value % modulus) + modulus) % modulus;
}

}  // namespace

RingOrder::RingOrder(const CollectiveSpec& spec, int channel)
    : world_(spec.world_size),
      gpus_(spec.ranks_per_server > 0 ? spec.ranks_per_server : spec.world_size),
      servers_(world_ / gpus_),
      offset_(0),
      out_and_back_(false),
      out_(0),
      reversed_(false),
      plain_(servers_ == 1 || gpus_ == 1) {
  if (spec.ranks_per_server == 0 || gpus_ == 1 || servers_ == 1) return;  // plain order
  if (gpus_ == 2 && servers_ % 2 == 1) {
    out_and_back_ = true;
    out_ = channel % 2;
    return;
  }
  const int used = servers_ % 2 == 0 || gpus_ == 2 ? 2 : 3;
  offset_ = Mod(channel * used, gpus_);
  // Once the channels have gone round the local indices, the next lap runs the other way.
  reversed_ = (channel * used / gpus_) % 2 == 1;
}

int RingOrder::Entry(int server) const {
  if (gpus_ == 1 || servers_ == 1) return 0;
  const bool odd_walk_end = servers_ % 2 == 1 && gpus_ >= 3 && server == servers_ - 1;
  return Mod((odd_walk_end ? 2 : server % 2) + offset_, gpus_);
}

int RingOrder::Exit(int server) const {
  const int entry = Entry(server);
  const int next_entry = Entry(Mod(server + 1, servers_));
  // Equal only when no rail-aligned walk exists (S odd, G == 2) or S == 1: leave from the
  // GPU before the entry, which makes the server's chain e, e+1, ..., e-1.
  return next_entry != entry ? next_entry : Mod(entry - 1, gpus_);
}

int RingOrder::RankAt(int position) const {
  position = Mod(position, world_);
  if (plain_) return position;
  if (out_and_back_) {
    return position < servers_ ? position * 2 + out_ : (world_ - 1 - position) * 2 + 1 - out_;
  }
  if (reversed_) position = Mod(-position, world_);
  const int server = position / gpus_;
  const int step = position % gpus_;
  const int entry = Entry(server);
  const int exit = Exit(server);
  int local;
  if (step == 0) {
    local = entry;
  } else if (step == gpus_ - 1) {
    local = exit;
  } else {
    // Ascending from entry + 1, skipping the exit.
    const int exit_distance = Mod(exit - entry, gpus_);
    local = Mod(entry + (step < exit_distance ? step : step + 1), gpus_);
  }
  return server * gpus_ + local;
}

int RingOrder::PositionOf(int rank) const {
  if (plain_) return rank;
  if (out_and_back_) {
    const int server = rank / 2;
    return rank % 2 == out_ ? server : world_ - 1 - server;
  }
  const int server = rank / gpus_;
  const int local = rank % gpus_;
  const int entry = Entry(server);
  const int exit = Exit(server);
  int step;
  if (local == entry) {
    step = 0;
  } else if (local == exit) {
    step = gpus_ - 1;
  } else {
    const int distance = Mod(local - entry, gpus_);
    step = distance - (distance > Mod(exit - entry, gpus_) ? 1 : 0);
  }
  const int position = server * gpus_ + step;
  return reversed_ ? Mod(-position, world_) : position;
}

}  // namespace nbox::coll
