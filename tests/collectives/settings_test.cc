// The one description of a job's collectives (settings.h): its text form round-trips for
// every algorithm choice, bad text is refused naming the field, each operation takes only
// the algorithms that run it, and the choice resolves as documented (hierarchical falls back
// without whole servers; auto follows NCCL's rule).
#include "collectives/settings.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "collectives/nccl_tuning.h"

namespace nbox::coll {
namespace {

using C = AlgorithmChoice;

std::string DecodeError(const std::string& text) {
  try {
    DecodeSettings(text);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

TEST(CollectiveSettings, TheTextFormRoundTrips) {
  CollectiveSettings settings;
  EXPECT_EQ(EncodeSettings(settings),
            "channels=2 chunk=1048576 ranks_per_server=0 allreduce=ring allgather=ring "
            "reducescatter=ring broadcast=ring reduce=ring alltoall=direct protocol=ideal "
            "nic_bps=100000000000 "
            "scaleup_bps=3600000000000");
  for (C all_reduce :
       {C::kRing, C::kHierarchical, C::kDirect, C::kHalvingDoubling, C::kTree, C::kAuto}) {
    settings.all_reduce = all_reduce;
    settings.all_gather = C::kHalvingDoubling;
    settings.broadcast = C::kTree;
    settings.reduce = C::kTree;
    settings.all_to_all = C::kHierarchical;
    settings.channels = 7;
    settings.chunk_bytes = 0;
    settings.ranks_per_server = 8;
    EXPECT_EQ(DecodeSettings(EncodeSettings(settings)), settings);
  }
}

TEST(CollectiveSettings, BadTextIsRefusedNamingTheField) {
  const std::string good = EncodeSettings(CollectiveSettings{});
  EXPECT_EQ(DecodeError(good), "");
  EXPECT_EQ(DecodeError(good + " colour=red"), "collective settings: colour: unknown field");
  EXPECT_EQ(DecodeError("channels=2"), "collective settings: chunk: missing");
  EXPECT_EQ(DecodeError(good + " channels=3"), "collective settings: channels: given twice");
  std::string text = good;
  text.replace(text.find("allgather=ring"), 14, "allgather=tree");
  EXPECT_EQ(DecodeError(text),
            "collective settings: allgather: 'tree' does not run it; expected one of ring, "
            "direct, halving-doubling, auto");
  text = good;
  text.replace(text.find(" reduce=ring"), 12, " reduce=direct");
  EXPECT_EQ(DecodeError(text),
            "collective settings: reduce: 'direct' does not run it; expected one of ring, tree, "
            "auto");
  text = good;
  text.replace(text.find("channels=2"), 10, "channels=65");
  EXPECT_EQ(DecodeError(text), "collective settings: channels: expected 0 (auto) or 1..64, got 65");
  text = good;
  text.replace(text.find("chunk=1048576"), 13, "chunk=1MiB");
  EXPECT_EQ(DecodeError(text), "collective settings: chunk: expected a whole number, got '1MiB'");
}

TEST(CollectiveSettings, ChoicesResolveAsDocumented) {
  CollectiveSettings settings;
  settings.all_reduce = C::kHierarchical;
  settings.all_to_all = C::kHierarchical;
  settings.ranks_per_server = 4;
  EXPECT_EQ(ChooseAlgorithm(settings, CollectiveOp::kAllReduce, 1 << 20, 8, 4),
            Algorithm::kHierarchical);
  EXPECT_EQ(ChooseAlgorithm(settings, CollectiveOp::kAllReduce, 1 << 20, 6, 0), Algorithm::kRing);
  EXPECT_EQ(ChooseAlgorithm(settings, CollectiveOp::kAllToAll, 1 << 20, 6, 0), Algorithm::kDirect);
  EXPECT_EQ(ChooseAlgorithm(settings, CollectiveOp::kAllGather, 1 << 20, 8, 4), Algorithm::kRing);
  // auto: NCCL's rule (16 single-GPU nodes, 100 Gb/s, 2 channels: tests/collectives/
  // nccl_tuning_test.cc puts the boundary between 2.5 and 3.5 MiB); others: the ring.
  settings = CollectiveSettings{};
  settings.all_reduce = C::kAuto;
  settings.broadcast = C::kAuto;
  settings.reduce = C::kAuto;
  EXPECT_EQ(ChooseAlgorithm(settings, CollectiveOp::kAllReduce, 5 << 19, 16, 0), Algorithm::kTree);
  EXPECT_EQ(ChooseAlgorithm(settings, CollectiveOp::kAllReduce, 7 << 19, 16, 0), Algorithm::kRing);
  EXPECT_EQ(ChooseAlgorithm(settings, CollectiveOp::kBroadcast, 1024, 16, 0), Algorithm::kRing);
  EXPECT_EQ(ChooseAlgorithm(settings, CollectiveOp::kReduce, 1024, 16, 0), Algorithm::kRing);
  settings.reduce = C::kTree;
  EXPECT_EQ(ChooseAlgorithm(settings, CollectiveOp::kReduce, 1024, 16, 0), Algorithm::kTree);
  EXPECT_EQ(SpecFromSettings(settings, CollectiveOp::kReduce, 64, 4, 16, 0, 5).root, 5);
  const CollectiveSpec spec =
      SpecFromSettings(settings, CollectiveOp::kAllReduce, 5 << 19, 4, 16, 0);
  EXPECT_EQ(spec.algorithm, Algorithm::kTree);
  EXPECT_EQ(spec.channels, 2);
  EXPECT_EQ(spec.ranks_per_server, 0);
}

TEST(CollectiveSettings, DifferencesAreNamedFieldByField) {
  CollectiveSettings here;
  CollectiveSettings there = here;
  EXPECT_EQ(DescribeDifference(here, there), "");
  there.channels = 4;
  there.all_reduce = C::kTree;
  EXPECT_EQ(DescribeDifference(here, there),
            "channels: 2 here, 4 there; allreduce: ring here, tree there");
}

// Auto channels: one per NIC the group has on each of several servers (two laps running
// opposite ways use every NIC both ways: ring_order_test.cc), else 2; a count set is kept.
TEST(CollectiveSettings, AutoChannelsFollowTheGroupsNicsPerServer) {
  CollectiveSettings settings;
  settings.channels = 0;
  EXPECT_EQ(GroupChannels(settings, 128, 8), 8);  // the world of 16 servers of 8
  EXPECT_EQ(GroupChannels(settings, 32, 2), 2);   // t = 4: two GPUs on each of 16 servers
  EXPECT_EQ(GroupChannels(settings, 64, 4), 4);
  EXPECT_EQ(GroupChannels(settings, 8, 8), 2);   // one server: NVLink only
  EXPECT_EQ(GroupChannels(settings, 16, 1), 2);  // one GPU per server, its NIC both ways
  EXPECT_EQ(GroupChannels(settings, 16, 0), 2);  // not regular on servers
  EXPECT_EQ(SpecFromSettings(settings, CollectiveOp::kAllReduce, 1 << 20, 4, 128, 8).channels, 8);
  settings.channels = 3;
  EXPECT_EQ(GroupChannels(settings, 128, 8), 3);
  // 0 is auto, and survives the text form real ranks get.
  settings.channels = 0;
  EXPECT_NO_THROW(ValidateSettings(settings));
  EXPECT_EQ(DecodeSettings(EncodeSettings(settings)).channels, 0);
}

}  // namespace
}  // namespace nbox::coll
