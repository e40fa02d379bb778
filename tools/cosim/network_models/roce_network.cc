#include "tools/cosim/network_models/roce_network.h"

#include <fmt/format.h>

#include <stdexcept>

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/nbox-roce-switch.h"
#include "ns3/nstime.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

namespace nbox::cosim {

ns3::NboxRoceNetworkHelper MakeRoceNetworkHelper(const scenario::Scenario& s) {
  using ns3::DoubleValue;
  using ns3::Seconds;
  using ns3::TimeValue;
  using ns3::UintegerValue;
  const scenario::RoceSection& r = s.roce;
  ns3::NboxRoceNetworkHelper helper;
  helper.SetMtu(s.network.mtu);
  helper.SetPfcEnabled(r.pfc);
  helper.SetEcmpSeed(s.job.seed);

  helper.SetMmuAttribute("BufferSize", UintegerValue(r.buffer_bytes));
  helper.SetMmuAttribute("Alpha", DoubleValue(r.alpha));
  helper.SetMmuAttribute("XonOffset", UintegerValue(r.xon_offset_bytes));
  helper.SetMmuAttribute("EcnKmin", UintegerValue(r.ecn_kmin_bytes));
  helper.SetMmuAttribute("EcnKmax", UintegerValue(r.ecn_kmax_bytes));
  helper.SetMmuAttribute("EcnPmax", DoubleValue(r.ecn_pmax));
  // PFC protects the data priority; control frames travel on their own, lossy, priority.
  helper.SetMmuAttribute("LosslessPriorities", UintegerValue(1u << r.data_priority));
  // The per-queue reserve goes to the two priorities the NICs use, whichever they are.
  helper.SetMmuAttribute("ReservedPriorities",
                         UintegerValue((1u << r.data_priority) | (1u << r.control_priority)));
  helper.SetSwitchAttribute("Headroom", UintegerValue(r.headroom_bytes));
  // Spraying reorders a QP's packets, so receivers place them as they come.
  // Flowlets keep a QP in order as long as the timeout exceeds the paths' delay difference.
  const bool spray = s.network.routing == scenario::Routing::kSpray;
  const auto balancing = spray ? ns3::NboxRoceSwitch::SPRAY
                         : s.network.routing == scenario::Routing::kFlowlet
                             ? ns3::NboxRoceSwitch::FLOWLET
                             : ns3::NboxRoceSwitch::ECMP;
  helper.SetSwitchAttribute("LoadBalancing", ns3::EnumValue(balancing));
  helper.SetSwitchAttribute("FlowletTimeout", TimeValue(Seconds(s.network.flowlet_timeout_s)));
  helper.SetNicAttribute("AcceptOutOfOrder", ns3::BooleanValue(spray));

  helper.SetNicAttribute("CongestionControl", ns3::StringValue(r.cc));
  helper.SetNicAttribute("G", DoubleValue(r.dcqcn_g));
  helper.SetNicAttribute("AlphaUpdatePeriod", TimeValue(Seconds(r.alpha_update_s)));
  helper.SetNicAttribute("RateIncreasePeriod", TimeValue(Seconds(r.rate_increase_s)));
  helper.SetNicAttribute("ByteCounter", UintegerValue(r.byte_counter_bytes));
  helper.SetNicAttribute("FastRecoverySteps", UintegerValue(r.fast_recovery));
  helper.SetNicAttribute("Rai", DoubleValue(r.rai_bps));
  helper.SetNicAttribute("Rhai", DoubleValue(r.rhai_bps));
  helper.SetNicAttribute("MinRate", DoubleValue(r.min_rate_bps));
  helper.SetNicAttribute("ClampTargetRate", ns3::BooleanValue(r.clamp_target_rate));
  helper.SetNicAttribute("CnpInterval", TimeValue(Seconds(r.cnp_interval_s)));
  helper.SetNicAttribute("HpccEta", DoubleValue(r.hpcc_eta));
  helper.SetNicAttribute("HpccMaxStage", UintegerValue(r.hpcc_max_stage));
  helper.SetNicAttribute("HpccRateAi", DoubleValue(r.hpcc_rate_ai_bps));
  helper.SetNicAttribute("TimelyAlpha", DoubleValue(r.timely_alpha));
  helper.SetNicAttribute("TimelyBeta", DoubleValue(r.timely_beta));
  helper.SetNicAttribute("TimelyTLow", TimeValue(Seconds(r.timely_t_low_s)));
  helper.SetNicAttribute("TimelyTHigh", TimeValue(Seconds(r.timely_t_high_s)));
  helper.SetNicAttribute("TimelyMinRtt", TimeValue(Seconds(r.timely_min_rtt_s)));
  helper.SetNicAttribute("TimelyDelta", DoubleValue(r.timely_delta_bps));
  // HPCC reads what every switch egress port stamps on its packets (in-band telemetry).
  helper.SetSwitchAttribute("StampTelemetry", ns3::BooleanValue(r.cc == "hpcc"));
  helper.SetNicAttribute("AckInterval", UintegerValue(r.ack_interval));
  helper.SetNicAttribute("RetransmissionTimeout", TimeValue(Seconds(r.rto_s)));
  helper.SetNicAttribute("DataPriority", UintegerValue(r.data_priority));
  helper.SetNicAttribute("ControlPriority", UintegerValue(r.control_priority));
  return helper;
}

ns3::Ptr<ns3::NboxNetwork> InstallRoceNetwork(const scenario::Scenario& scenario,
                                              const topo::Topology& topology) {
  try {
    return MakeRoceNetworkHelper(scenario).Install(topology);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format(
        "roce.buffer = {} bytes does not fit this fabric: {} (raise roce.buffer, or lower "
        "roce.headroom or the MTU)",
        scenario.roce.buffer_bytes, e.what()));
  }
}

}  // namespace nbox::cosim
