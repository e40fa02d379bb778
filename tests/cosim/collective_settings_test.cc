// One description of how collectives run (collectives/settings.h) on every face: an emulated
// rank (the ns-3 communicator nbox-cosim assembles from the scenario) and a real rank (the
// host runtime, given the emulated ranks' settings as text in NBOX_COLLECTIVES) build
// identical schedules, for every algorithm of every operation, on a star and on NVLink servers
// with rails, at sizes on both sides of auto's boundary; and the scenario's keys, their docs
// and the communicator's attributes all take exactly the choices of the settings' table.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collectives/group_servers.h"
#include "collectives/schedule.h"
#include "collectives/settings.h"
#include "ns3/core-module.h"
#include "ns3/enum.h"
#include "ns3/nbox-communicator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/scenario/collectives_config.h"
#include "tools/cosim/scenario/key_schema.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::testing {
namespace {

struct Case {
  const char* scenario;
  std::vector<std::string> overrides;
};

void ExpectSameSteps(const coll::RankSchedule& emulated, const coll::RankSchedule& real) {
  ASSERT_EQ(emulated.steps.size(), real.steps.size());
  EXPECT_EQ(emulated.buffer_bytes, real.buffer_bytes);
  for (size_t i = 0; i < emulated.steps.size(); ++i) {
    const coll::Step& a = emulated.steps[i];
    const coll::Step& b = real.steps[i];
    ASSERT_TRUE(a.kind == b.kind && a.peer == b.peer && a.channel == b.channel &&
                a.offset == b.offset && a.bytes == b.bytes && a.reduce == b.reduce &&
                a.deps == b.deps)
        << "step " << i;
  }
}

TEST(CollectiveSettingsTravelWhole, EmulatedAndRealRanksBuildIdenticalSchedules) {
  const std::vector<Case> cases = {
      {"tests/cosim/fixtures/models/ring_star.ini", {}},
      {"tests/cosim/fixtures/models/ring_star.ini",
       {"collectives.allreduce=tree", "collectives.allgather=halving-doubling",
        "collectives.reducescatter=direct", "collectives.broadcast=tree"}},
      {"tests/cosim/fixtures/models/ring_star.ini",
       {"collectives.allreduce=halving-doubling", "collectives.allgather=direct",
        "collectives.reducescatter=halving-doubling", "job.world_size=6"}},
      {"tests/cosim/fixtures/models/ring_star.ini",
       {"collectives.allreduce=auto", "job.world_size=16", "topology.host_link=100Gbps",
        "collectives.channels=3", "collectives.chunk=0"}},
      {"tests/cosim/fixtures/models/ring_star.ini",
       {"collectives.allreduce=direct", "collectives.allgather=auto"}},
      {"tests/cosim/fixtures/rail_tiny.ini", {}},
      {"tests/cosim/fixtures/rail_tiny.ini", {"collectives.allreduce=hierarchical"}},
      {"tests/cosim/fixtures/rail_tiny.ini",
       {"collectives.allreduce=auto", "collectives.broadcast=tree"}},
      {"tests/cosim/fixtures/rail_tiny.ini", {"collectives.channels=auto"}},
  };
  int compared = 0;
  for (const Case& c : cases) {
    std::string label = c.scenario;
    for (const std::string& o : c.overrides) label += " " + o;
    SCOPED_TRACE(label);
    const scenario::Scenario s = scenario::LoadScenario(c.scenario, c.overrides);
    cosim::JobAssembly assembly = cosim::AssembleJob(s);
    const ns3::Ptr<ns3::NboxCommunicator> comm = assembly.job->GetCommunicator();
    // What nbox-cosim sends a real rank, and what the real rank reads back from it.
    const std::string text = coll::EncodeSettings(comm->GetCollectiveSettings());
    const coll::CollectiveSettings real = coll::DecodeSettings(text);
    ns3::UintegerValue element;
    comm->GetAttribute("ElementSize", element);
    const int world = static_cast<int>(comm->GetSize());
    // The host runtime's rule: its communicator spans the job's ranks in order.
    const int per_server = coll::ConsecutiveRanksPerServer(0, world, real.ranks_per_server);
    for (coll::CollectiveOp op :
         {coll::CollectiveOp::kAllReduce, coll::CollectiveOp::kAllGather,
          coll::CollectiveOp::kReduceScatter, coll::CollectiveOp::kBroadcast}) {
      for (uint64_t bytes : {uint64_t{4096} * world, uint64_t{3} << 20, uint64_t{48} << 20}) {
        ns3::NboxCommWork work;
        work.op = op;
        work.bytes = bytes;
        const coll::CollectiveSpec spec = coll::SpecFromSettings(
            real, op, bytes, static_cast<uint32_t>(element.Get()), world, per_server);
        for (int rank = 0; rank < world; ++rank) {
          SCOPED_TRACE(std::string(coll::ToString(op)) + " " + std::to_string(bytes) +
                       " bytes, rank " + std::to_string(rank));
          ExpectSameSteps(comm->BuildRankSchedule(static_cast<uint32_t>(rank), work),
                          coll::BuildRankSchedule(spec, rank));
          ++compared;
        }
      }
    }
    ns3::Simulator::Destroy();
    ns3::Config::Reset();
  }
  EXPECT_EQ(compared, 12 * (8 + 8 + 6 + 16 + 8 + 16 + 16 + 16 + 16));
}

// Every operation of the table: the scenario key collectives.<key> takes exactly its choices
// (its docs list them, in its order), and so does the communicator's attribute, whose value
// is the settings' field; a choice the table does not allow is refused by both.
TEST(CollectiveSettingsTable, TheKeysAndTheAttributesTakeExactlyItsChoices) {
  const std::map<std::string, std::string> attribute_of = {
      {"allreduce", "AllReduceAlgorithm"},
      {"allgather", "AllGatherAlgorithm"},
      {"reducescatter", "ReduceScatterAlgorithm"},
      {"broadcast", "BroadcastAlgorithm"},
      {"reduce", "ReduceAlgorithm"},
      {"alltoall", "AllToAllAlgorithm"}};
  ASSERT_EQ(coll::OperationChoiceTable().size(), attribute_of.size());
  const std::vector<std::pair<coll::AlgorithmChoice, std::string>> every = {
      {coll::AlgorithmChoice::kRing, "Ring"},
      {coll::AlgorithmChoice::kHierarchical, "Hierarchical"},
      {coll::AlgorithmChoice::kDirect, "Direct"},
      {coll::AlgorithmChoice::kHalvingDoubling, "HalvingDoubling"},
      {coll::AlgorithmChoice::kTree, "Tree"},
      {coll::AlgorithmChoice::kAuto, "Auto"}};
  for (const coll::OperationChoices& row : coll::OperationChoiceTable()) {
    SCOPED_TRACE(std::string(row.key));
    const scenario::KeySpec& key = scenario::KeyByFullName("collectives." + std::string(row.key));
    std::vector<std::string> spellings;
    for (coll::AlgorithmChoice choice : row.allowed) spellings.emplace_back(coll::ToString(choice));
    EXPECT_EQ(key.value.choices, spellings);
    auto comm = ns3::CreateObject<ns3::NboxCommunicator>();
    for (const auto& [choice, attribute_spelling] : every) {
      const bool allowed =
          std::find(row.allowed.begin(), row.allowed.end(), choice) != row.allowed.end();
      scenario::Scenario s;
      EXPECT_EQ(key.value.parse(coll::ToString(choice), s), allowed) << coll::ToString(choice);
      EXPECT_EQ(comm->SetAttributeFailSafe(attribute_of.at(std::string(row.key)),
                                           ns3::StringValue(attribute_spelling)),
                allowed)
          << attribute_spelling;
      if (!allowed) continue;
      EXPECT_EQ(scenario::CollectiveSettingsOf(s, 1).*row.member, choice);
      EXPECT_EQ(comm->GetCollectiveSettings().*row.member, choice);
      ns3::EnumValue read;
      comm->GetAttribute(attribute_of.at(std::string(row.key)), read);
      EXPECT_EQ(read.Get(), static_cast<int>(choice));
    }
  }
  // A field set through an attribute to a value the settings do not allow (a chunk below 8
  // bytes) is refused as a bad attribute value, and the settings stay as they were.
  auto comm = ns3::CreateObject<ns3::NboxCommunicator>();
  EXPECT_FALSE(comm->SetAttributeFailSafe("ChunkSize", ns3::UintegerValue(4)));
  EXPECT_EQ(comm->GetCollectiveSettings().chunk_bytes, coll::CollectiveSettings{}.chunk_bytes);
  EXPECT_TRUE(comm->SetAttributeFailSafe("ChunkSize", ns3::UintegerValue(8)));
  EXPECT_EQ(comm->GetCollectiveSettings().chunk_bytes, 8u);
}

}  // namespace
}  // namespace nbox::testing
