// The one description of how a job's collectives run: channels, chunks, servers and the
// algorithm of every operation. nbox-cosim derives it from the scenario (the ns-3
// communicator's attributes are its ns-3 face), sends it whole to every real rank
// (NBOX_COLLECTIVES, EncodeSettings), and the bootstrap compares it whole, so a real rank and
// its emulated peers always build the same schedule (ChooseAlgorithm + BuildRankSchedule).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/schedule.h"

namespace nbox::coll {

// What a scenario key names: an Algorithm, or kAuto (NCCL's tuner: nccl_tuning.h).
enum class AlgorithmChoice { kRing, kHierarchical, kDirect, kHalvingDoubling, kTree, kAuto };

// The scenario's spelling: "ring", "hierarchical", "direct", "halving-doubling", "tree", "auto".
std::string_view ToString(AlgorithmChoice choice);

// What collectives.protocol names: a Protocol, or kAuto (NCCL's tuner: nccl_tuning.h).
enum class ProtocolChoice { kIdeal, kAuto, kLl, kLl128, kSimple };

// The scenario's spelling: "ideal", "auto", "ll", "ll128", "simple"; and back.
std::string_view ToString(ProtocolChoice choice);
std::optional<ProtocolChoice> ParseProtocolChoice(std::string_view spelling);
const std::vector<ProtocolChoice>& ProtocolChoices();  // in the key's order

struct CollectiveSettings {
  int channels = 2;                          // 0: auto (GroupChannels)
  uint64_t chunk_bytes = uint64_t{1} << 20;  // 0 = no chunking
  int ranks_per_server = 0;                  // 0 = no servers
  AlgorithmChoice all_reduce = AlgorithmChoice::kRing;
  AlgorithmChoice all_gather = AlgorithmChoice::kRing;
  AlgorithmChoice reduce_scatter = AlgorithmChoice::kRing;
  AlgorithmChoice broadcast = AlgorithmChoice::kRing;
  AlgorithmChoice reduce = AlgorithmChoice::kRing;
  AlgorithmChoice all_to_all = AlgorithmChoice::kDirect;
  ProtocolChoice protocol = ProtocolChoice::kIdeal;
  // A rank's NIC and scale-up (NVLink) rates, each direction: what kAuto decides by.
  uint64_t nic_bps = 100'000'000'000;
  uint64_t scale_up_bps = 3'600'000'000'000;

  bool operator==(const CollectiveSettings& other) const;
  bool operator!=(const CollectiveSettings& other) const { return !(*this == other); }
};

// Which algorithms each operation may be set to run, and where its choice is kept: the one
// table the scenario's keys (collectives.<key>), their docs, the ns-3 communicator's
// attributes, the text form and ValidateSettings all read. All-reduce: any; all-gather,
// reduce-scatter: ring, direct, halving-doubling, auto; broadcast, reduce: ring, tree, auto;
// all-to-all: direct, hierarchical. The first allowed choice is the default.
struct OperationChoices {
  std::string_view key;  // "allreduce": the scenario key and the text form's field
  AlgorithmChoice CollectiveSettings::*member;
  std::vector<AlgorithmChoice> allowed;
};
const std::vector<OperationChoices>& OperationChoiceTable();

// The table's row for `key` ("allreduce", ...); throws std::invalid_argument for another.
const OperationChoices& OperationChoicesOf(std::string_view key);

// The choice spelled `spelling` ("halving-doubling"), or nothing.
std::optional<AlgorithmChoice> ParseAlgorithmChoice(std::string_view spelling);

// Throws std::invalid_argument naming the field and what it must be: channels 0 (auto) or 1..64,
// chunk 0 or 8 bytes..1 GiB, ranks_per_server >= 0, each operation's algorithm one that runs it
// (OperationChoiceTable), rates > 0.
void ValidateSettings(const CollectiveSettings& settings);

// The channels a group of `group_size` ranks with `group_ranks_per_server` members on each
// server it touches (group_servers.h) splits its collectives over: settings.channels, or for 0
// (auto) as many as NCCL's rings use NICs, each NIC both ways. NCCL's ring search finds a ring
// per NIC, each entering and leaving a server through it (src/graph/search.cc), and doubles
// them (src/graph/connect.cc); a ring here leaves a server from one GPU's NIC and enters at
// another's, so it takes k channels, two laps of k / 2 running opposite ways (ring_order.h), to
// use a group's k NICs per server both ways. The doubling adds no path and is not modelled.
// A group on one server, or with one member per server, gets 2. At most kMaxChannels.
int GroupChannels(const CollectiveSettings& settings, int group_size, int group_ranks_per_server);

// The algorithm a collective of `op` and `bytes` runs with in a group of `group_size` ranks
// with `group_ranks_per_server` members on each server it touches (group_servers.h; 0: not
// regular on servers): the operation's choice, with kAuto resolved by NCCL's tuner (all-reduce:
// ring or tree; others: the ring, NCCL's only algorithm for them without NVLS or CollNet), and
// hierarchical falling back to the ring (all-reduce) or direct (all-to-all) for a group that is
// not regular on servers.
Algorithm ChooseAlgorithm(const CollectiveSettings& settings, CollectiveOp op, uint64_t bytes,
                          int group_size, int group_ranks_per_server);

// The protocol a collective of `op` by `algorithm` runs with: the settings' protocol, with kAuto
// resolved as NCCL does: by its tuner for the ring and the tree (nccl_tuning.h); point to point
// (all-to-all) LL up to NCCL_P2P_LL_THRESHOLD's 16 KiB a peer, else Simple; the other algorithms
// as the ring would run the operation.
Protocol ChooseProtocol(const CollectiveSettings& settings, CollectiveOp op, Algorithm algorithm,
                        uint64_t bytes, int group_size, int group_ranks_per_server);

// The spec a collective of `op` runs with: ChooseAlgorithm's algorithm, ChooseProtocol's
// protocol, the settings' channels
// and chunk, the group's ranks per server (so its rings and trees keep to the rails), and `root`
// (broadcast and reduce; 0 for the others). What an emulated rank
// (NboxCommunicator::MakeSpec) and a real rank (the host runtime) both build schedules from.
CollectiveSpec SpecFromSettings(const CollectiveSettings& settings, CollectiveOp op, uint64_t bytes,
                                uint32_t element_bytes, int group_size, int group_ranks_per_server,
                                int root = 0);

// "channels=2 chunk=1048576 ranks_per_server=0 allreduce=ring ..." and back. DecodeSettings
// throws std::invalid_argument naming the field; it validates what it read.
std::string EncodeSettings(const CollectiveSettings& settings);
CollectiveSettings DecodeSettings(std::string_view text);

// "allreduce: tree here, ring there; channels: 2 here, 4 there", or "" when equal.
std::string DescribeDifference(const CollectiveSettings& here, const CollectiveSettings& there);

}  // namespace nbox::coll
