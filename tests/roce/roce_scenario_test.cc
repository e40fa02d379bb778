// The [roce] keys: their defaults are the ns-3 attributes' own, the cross-key rules name
// both keys, and network.transport = roce builds the RoCE path with the keys applied.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <typeinfo>

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/nbox-roce-net-device.h"
#include "ns3/nbox-roce-nic.h"
#include "ns3/nbox-roce-switch.h"
#include "ns3/nbox-roce-transport.h"
#include "ns3/nbox-switch-mmu.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"
#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::testing {
namespace {

using ::testing::HasSubstr;

const char* kEmpty = "tests/scenario/fixtures/empty.ini";

std::string LoadError(const std::vector<std::string>& overrides) {
  try {
    scenario::LoadScenario(kEmpty, overrides);
  } catch (const scenario::ScenarioError& error) {
    return error.what();
  }
  return "";
}

// The initial value of attribute `name` of `tid`, as ns-3 would set it (the value itself: a
// round trip through its text would round a TimeValue to 6 significant digits).
template <typename Value>
Value AttributeDefault(ns3::TypeId tid, const std::string& name) {
  ns3::TypeId::AttributeInformation info;
  EXPECT_TRUE(tid.LookupAttributeByName(name, &info)) << name;
  const auto value = ns3::DynamicCast<const Value>(info.initialValue);
  EXPECT_TRUE(value) << name << " is not a " << typeid(Value).name();
  return value ? *value : Value();
}

TEST(RoceScenario, DefaultsAreTheAttributeDefaults) {
  const scenario::RoceSection r = scenario::LoadScenario(kEmpty).roce;
  const ns3::TypeId nic = ns3::NboxRoceNic::GetTypeId();
  const ns3::TypeId mmu = ns3::NboxSwitchMmu::GetTypeId();
  const ns3::TypeId sw = ns3::NboxRoceSwitch::GetTypeId();
  EXPECT_EQ(r.cc, AttributeDefault<ns3::StringValue>(nic, "CongestionControl").Get());
  EXPECT_DOUBLE_EQ(r.dcqcn_g, AttributeDefault<ns3::DoubleValue>(nic, "G").Get());
  EXPECT_EQ(ns3::Seconds(r.alpha_update_s),
            AttributeDefault<ns3::TimeValue>(nic, "AlphaUpdatePeriod").Get());
  EXPECT_EQ(ns3::Seconds(r.rate_increase_s),
            AttributeDefault<ns3::TimeValue>(nic, "RateIncreasePeriod").Get());
  EXPECT_EQ(r.byte_counter_bytes, AttributeDefault<ns3::UintegerValue>(nic, "ByteCounter").Get());
  EXPECT_EQ(static_cast<uint64_t>(r.fast_recovery),
            AttributeDefault<ns3::UintegerValue>(nic, "FastRecoverySteps").Get());
  EXPECT_DOUBLE_EQ(r.rai_bps, AttributeDefault<ns3::DoubleValue>(nic, "Rai").Get());
  EXPECT_DOUBLE_EQ(r.rhai_bps, AttributeDefault<ns3::DoubleValue>(nic, "Rhai").Get());
  EXPECT_DOUBLE_EQ(r.min_rate_bps, AttributeDefault<ns3::DoubleValue>(nic, "MinRate").Get());
  EXPECT_EQ(ns3::Seconds(r.cnp_interval_s),
            AttributeDefault<ns3::TimeValue>(nic, "CnpInterval").Get());
  EXPECT_EQ(static_cast<uint64_t>(r.ack_interval),
            AttributeDefault<ns3::UintegerValue>(nic, "AckInterval").Get());
  EXPECT_EQ(ns3::Seconds(r.rto_s),
            AttributeDefault<ns3::TimeValue>(nic, "RetransmissionTimeout").Get());
  EXPECT_EQ(static_cast<uint64_t>(r.data_priority),
            AttributeDefault<ns3::UintegerValue>(nic, "DataPriority").Get());
  EXPECT_EQ(static_cast<uint64_t>(r.control_priority),
            AttributeDefault<ns3::UintegerValue>(nic, "ControlPriority").Get());
  EXPECT_EQ(r.buffer_bytes, AttributeDefault<ns3::UintegerValue>(mmu, "BufferSize").Get());
  EXPECT_DOUBLE_EQ(r.alpha, AttributeDefault<ns3::DoubleValue>(mmu, "Alpha").Get());
  EXPECT_EQ(r.xon_offset_bytes, AttributeDefault<ns3::UintegerValue>(mmu, "XonOffset").Get());
  EXPECT_EQ(r.ecn_kmin_bytes, AttributeDefault<ns3::UintegerValue>(mmu, "EcnKmin").Get());
  EXPECT_EQ(r.ecn_kmax_bytes, AttributeDefault<ns3::UintegerValue>(mmu, "EcnKmax").Get());
  EXPECT_DOUBLE_EQ(r.ecn_pmax, AttributeDefault<ns3::DoubleValue>(mmu, "EcnPmax").Get());
  EXPECT_EQ(r.pfc, AttributeDefault<ns3::BooleanValue>(mmu, "PfcEnabled").Get());
  EXPECT_EQ(r.headroom_bytes, AttributeDefault<ns3::UintegerValue>(sw, "Headroom").Get());
  // The MMU's default lossless set is the default data priority alone.
  EXPECT_EQ(1u << r.data_priority,
            AttributeDefault<ns3::UintegerValue>(mmu, "LosslessPriorities").Get());
}

TEST(RoceScenario, RulesNameBothKeys) {
  EXPECT_THAT(LoadError({"roce.ecn_kmin=2MB"}),
              HasSubstr("roce.ecn_kmin = 2MB (--set) must not exceed roce.ecn_kmax = 1.6MB "
                        "(default)"));
  EXPECT_THAT(LoadError({"roce.timely_t_low=600us"}),
              HasSubstr("roce.timely_t_low = 600us (--set) must not exceed "
                        "roce.timely_t_high = 500us (default)"));
  EXPECT_THAT(LoadError({"roce.control_priority=3"}),
              HasSubstr("roce.control_priority = 3 (--set) must differ from "
                        "roce.data_priority = 3 (default)"));
  EXPECT_THAT(LoadError({"roce.cc=swift"}), HasSubstr("roce.cc"));
  EXPECT_THAT(LoadError({"roce.cc=swift"}), HasSubstr("one of dcqcn, hpcc, timely, none"));
  EXPECT_EQ(LoadError({"network.transport=roce", "roce.cc=timely"}), "");
  EXPECT_EQ(LoadError({"network.transport=roce", "roce.cc=hpcc"}), "");
  EXPECT_EQ(LoadError({"network.transport=roce", "roce.cc=none"}), "");
}

TEST(RoceScenario, TransportRoceBuildsTheRocePathWithTheKeys) {
  const auto s = scenario::LoadScenario(
      kEmpty, {"network.transport=roce", "job.world_size=2", "roce.pfc=off", "roce.ack_interval=4",
               "roce.cc=none", "roce.buffer=2MB", "workload.iterations=1"});
  auto a = cosim::AssembleJob(s);
  EXPECT_TRUE(ns3::DynamicCast<ns3::NboxRoceTransport>(a.transport));
  auto nic = a.net.network->GetHost(0)->GetObject<ns3::NboxRoceNic>();
  ASSERT_TRUE(nic);
  ns3::UintegerValue ack;
  nic->GetAttribute("AckInterval", ack);
  EXPECT_EQ(ack.Get(), 4u);
  ns3::StringValue cc;
  nic->GetAttribute("CongestionControl", cc);
  EXPECT_EQ(cc.Get(), "none");
  ns3::BooleanValue pfc;
  nic->GetPort(0)->GetAttribute("PfcEnabled", pfc);
  EXPECT_FALSE(pfc.Get());
  auto sw = a.net.network->GetSwitches().Get(0)->GetObject<ns3::NboxRoceSwitch>();
  ASSERT_TRUE(sw);
  ns3::UintegerValue buffer;
  sw->GetMmu()->GetAttribute("BufferSize", buffer);
  EXPECT_EQ(buffer.Get(), 2000000u);
  ns3::Simulator::Destroy();
}

TEST(RoceScenario, TheReserveFollowsTheConfiguredPriorities) {
  const auto s = scenario::LoadScenario(
      kEmpty, {"network.transport=roce", "job.world_size=2", "roce.data_priority=4",
               "roce.control_priority=5", "workload.iterations=1"});
  auto a = cosim::AssembleJob(s);
  auto sw = a.net.network->GetSwitches().Get(0)->GetObject<ns3::NboxRoceSwitch>();
  ASSERT_TRUE(sw);
  ns3::UintegerValue reserved;
  sw->GetMmu()->GetAttribute("ReservedPriorities", reserved);
  EXPECT_EQ(reserved.Get(), (1u << 4) | (1u << 5));
  ns3::UintegerValue lossless;
  sw->GetMmu()->GetAttribute("LosslessPriorities", lossless);
  EXPECT_EQ(lossless.Get(), 1u << 4);
  ns3::Simulator::Destroy();
}

TEST(RoceScenario, ABufferTooSmallForTheHeadroomNamesTheKey) {
  // 8 ports at 100 Gb/s, 1 us, MTU 9000 need about 8 x (2 r d + 3 frames) = 420 KB of PFC
  // headroom alone: 64 KiB cannot hold it.
  const auto s = scenario::LoadScenario(
      kEmpty, {"network.transport=roce", "network.mtu=9000", "roce.buffer=64KiB"});
  try {
    cosim::AssembleJob(s);
    ADD_FAILURE() << "a 64 KiB buffer was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("roce.buffer = 65536 bytes does not fit this fabric"));
    EXPECT_THAT(e.what(), HasSubstr("switch buffer too small"));
  }
  ns3::Simulator::Destroy();
}

}  // namespace
}  // namespace nbox::testing
