#include "tools/cosim/scenario/roce_keys.h"

#include "tools/cosim/scenario/value_kinds.h"

namespace nbox::scenario {

// Defaults are those of the ns-3 attributes they set (NboxRoceNic, NboxSwitchMmu); the
// meanings name their sources, which scenarios/README.md repeats.
std::vector<KeySpec> RoceKeys() {
  auto roce = [](auto member) { return FieldOf(&Scenario::roce, member); };
  constexpr uint64_t kMaxBuffer = uint64_t{1} << 34;
  return {
      {"roce", "cc",
       "congestion control of every QP: DCQCN (ECN marks, CNPs), HPCC (in-band telemetry from "
       "every switch), TIMELY (round-trip times), or none (line rate, relying on PFC)",
       Choice(roce(&RoceSection::cc), {"dcqcn", "hpcc", "timely", "none"})},
      {"roce", "pfc", "PFC (802.1Qbb) on the lossless data priority of every port",
       Switch(roce(&RoceSection::pfc))},
      {"roce", "buffer",
       "shared packet buffer of each switch (12 MiB: Broadcom Trident II, HPCC's ns-3 default)",
       Bytes(roce(&RoceSection::buffer_bytes), 64 * 1024, kMaxBuffer)},
      {"roce", "alpha",
       "dynamic threshold of PFC: xoff = alpha x free shared buffer (1/8, HPCC's default)",
       Real(roce(&RoceSection::alpha), 0, 64, /*min_excluded=*/true)},
      {"roce", "headroom",
       "PFC headroom per port and lossless priority; 0 = computed from rate, delay and MTU",
       Bytes(roce(&RoceSection::headroom_bytes), 0, kMaxBuffer)},
      {"roce", "xon_offset",
       "a paused queue resumes this far below xoff (3 KiB, HPCC's resume offset)",
       Bytes(roce(&RoceSection::xon_offset_bytes), 0, kMaxBuffer)},
      {"roce", "ecn_kmin",
       "queue above which marking starts, at 100 Gb/s, scaled with port rate (400 KB: 100 KB "
       "at 25 Gb/s in public RDMA models)",
       Bytes(roce(&RoceSection::ecn_kmin_bytes), 0, kMaxBuffer)},
      {"roce", "ecn_kmax",
       "queue above which every packet is marked, at 100 Gb/s, scaled with port rate (1600 KB)",
       Bytes(roce(&RoceSection::ecn_kmax_bytes), 0, kMaxBuffer)},
      {"roce", "ecn_pmax", "marking probability at ecn_kmax (0.2, public RDMA models)",
       Real(roce(&RoceSection::ecn_pmax), 0, 1)},
      {"roce", "dcqcn_g", "DCQCN gain g of alpha (1/16, HPCC's ns-3 RDMA model)",
       Real(roce(&RoceSection::dcqcn_g), 0, 1, /*min_excluded=*/true)},
      {"roce", "alpha_update", "DCQCN alpha decay period without CNP (55 us, DCQCN paper)",
       Duration(roce(&RoceSection::alpha_update_s), 1e-9, 1)},
      {"roce", "rate_increase",
       "DCQCN rate-increase timer (300 us; public models use 300 to 1500 us)",
       Duration(roce(&RoceSection::rate_increase_s), 1e-9, 1)},
      {"roce", "byte_counter", "DCQCN bytes per byte-counter rate increase (150 KB)",
       Bytes(roce(&RoceSection::byte_counter_bytes), 1, kMaxBuffer)},
      {"roce", "fast_recovery", "DCQCN fast-recovery steps F (5)",
       WholeNumber(roce(&RoceSection::fast_recovery), 0, 1000)},
      {"roce", "rai", "DCQCN additive increase step (50 Mb/s)",
       Rate(roce(&RoceSection::rai_bps), 0, 1e12)},
      {"roce", "rhai", "DCQCN hyper increase step (100 Mb/s)",
       Rate(roce(&RoceSection::rhai_bps), 0, 1e12)},
      {"roce", "min_rate", "DCQCN lowest rate of a QP (100 Mb/s, HPCC's ns-3 RDMA model)",
       Rate(roce(&RoceSection::min_rate_bps), 1e3, 10e12)},
      {"roce", "clamp_target_rate",
       "DCQCN: on, every CNP sets the target rate to the current one (the DCQCN paper); off, "
       "only a CNP after the rate began to rise again, so a run of cuts recovers towards the "
       "rate it started from (NVIDIA NICs' clamp_tgt_rate = 0, HPCC's ns-3 model)",
       Switch(roce(&RoceSection::clamp_target_rate))},
      {"roce", "cnp_interval", "shortest time between CNPs of one QP (50 us, DCQCN's N)",
       Duration(roce(&RoceSection::cnp_interval_s), 0, 1)},
      {"roce", "hpcc_eta", "HPCC target utilisation eta of the bottleneck (0.95, HPCC paper)",
       Real(roce(&RoceSection::hpcc_eta), 0, 1, /*min_excluded=*/true)},
      {"roce", "hpcc_max_stage",
       "HPCC additive-increase rounds before a multiplicative step (maxStage 5, HPCC paper)",
       WholeNumber(roce(&RoceSection::hpcc_max_stage), 0, 1000)},
      {"roce", "hpcc_rate_ai",
       "HPCC additive increase W_AI as a rate, W_AI = rate x base RTT (50 Mb/s, HPCC's ns-3 "
       "configuration; larger converges to fair shares sooner and loads the link more)",
       Rate(roce(&RoceSection::hpcc_rate_ai_bps), 0, 1e12)},
      {"roce", "timely_alpha",
       "TIMELY EWMA weight of a new RTT difference (0.875, HPCC's ns-3 TIMELY)",
       Real(roce(&RoceSection::timely_alpha), 0, 1, /*min_excluded=*/true)},
      {"roce", "timely_beta", "TIMELY multiplicative decrease factor (0.8, TIMELY paper)",
       Real(roce(&RoceSection::timely_beta), 0, 1)},
      {"roce", "timely_t_low", "TIMELY RTT below which the rate only grows (50 us, TIMELY paper)",
       Duration(roce(&RoceSection::timely_t_low_s), 0, 1)},
      {"roce", "timely_t_high",
       "TIMELY RTT above which the rate falls by how far it is above (500 us, TIMELY paper)",
       Duration(roce(&RoceSection::timely_t_high_s), 0, 1)},
      {"roce", "timely_min_rtt", "TIMELY RTT that normalises the gradient (20 us, TIMELY paper)",
       Duration(roce(&RoceSection::timely_min_rtt_s), 1e-9, 1)},
      {"roce", "timely_delta",
       "TIMELY additive step, 5 times it after 5 increases in a row (10 Mb/s, TIMELY paper)",
       Rate(roce(&RoceSection::timely_delta_bps), 0, 1e12)},
      {"roce", "ack_interval",
       "data packets per ACK, and one at every message end (16: coalesced ACKs, under 0.3% of "
       "the reverse link at MTU 1500; HPCC's ns-3 model ACKs every packet)",
       WholeNumber(roce(&RoceSection::ack_interval), 1, 65536)},
      {"roce", "rto",
       "retransmission timeout of a QP without ACK progress (NCCL's QP timeout, 4.096 us x "
       "2^NCCL_IB_TIMEOUT with its default 18: 1.074 s)",
       Duration(roce(&RoceSection::rto_s), 1e-6, 10)},
      {"roce", "data_priority", "PFC priority of data (3, NVIDIA's lossless RoCE class)",
       WholeNumber(roce(&RoceSection::data_priority), 0, 7)},
      {"roce", "control_priority", "priority of ACK, NACK and CNP (6, NVIDIA NICs' CNP priority)",
       WholeNumber(roce(&RoceSection::control_priority), 0, 7)},
  };
}

}  // namespace nbox::scenario
