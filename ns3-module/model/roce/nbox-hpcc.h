/*
 * HPCC's sender (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019,
 * Algorithm 1): a window per QP set from the in-band telemetry every ACK echoes, aiming the
 * most utilised link of the path at eta of its capacity with no standing queue.
 */
#ifndef NBOX_HPCC_H
#define NBOX_HPCC_H

#include "ns3/nbox-roce-congestion-control.h"

#include <vector>

namespace ns3
{

/**
 * \ingroup nbox
 * Parameters of one HPCC sender. NboxRoceNic exposes each as an attribute (HpccEta, ...);
 * ns3-module/README.md, "HPCC", gives their sources.
 */
struct NboxHpccConfig
{
    double lineRateBps = 100e9;      //!< the NIC port's rate: the first window is its BDP
    Time baseRtt = MicroSeconds(10); //!< T: the path's base round trip
    double eta = 0.95;               //!< target utilisation of the bottleneck
    uint32_t maxStage = 5;           //!< additive-increase rounds before a multiplicative step
    double rateAiBps = 50e6;         //!< W_AI as a rate: W_AI = rateAi x T
    double minRateBps = 100e6;       //!< the window never gives a rate below this
};

/**
 * \ingroup nbox
 * \brief HPCC's window and pacing rate for one QP.
 *
 * Windows are in wire bytes. W starts at the BDP, B x T, and the pacing rate is W / T. On every
 * ACK with a record of n hops, each hop against the last sample of the same egress port (the
 * previous ACK's, on a fixed path; with packets sprayed over paths, the last that crossed that
 * port):
 *   u_i = min(qLen_i, qLen'_i) / (B_i T) + txRate_i / B_i, txRate_i = dTxBytes_i / dts_i;
 *   u = max_i u_i (tau = dts of that hop, at most T); U = (1 - tau / T) U + tau / T u;
 *   if U >= eta or incStage >= maxStage: W = Wc / (U / eta) + W_AI, else W = Wc + W_AI;
 * and once per round trip (an ACK beyond the PSN recorded at the last update) Wc takes W and
 * incStage restarts from 0 (multiplicative step) or counts one more (additive). W stays
 * within [minRate x T, B x T]. CNPs are ignored (HPCC needs no ECN).
 */
class NboxHpccWindowControl : public NboxRoceCongestionControl
{
  public:
    explicit NboxHpccWindowControl(const NboxHpccConfig& config);

    double GetRate() const override;
    uint64_t GetWindowBytes() const override;
    bool WantsTelemetry() const override;
    void OnPacketSent(uint32_t wireBytes, Time now) override;
    void OnCnp(Time now) override;
    void OnAck(uint32_t ackedPsn, uint32_t nextPsn, const NboxIntTag& telemetry, Time now) override;

    double GetWindow() const;      //!< W, wire bytes
    double GetUtilization() const; //!< U, the estimate of the most utilised hop
    uint32_t GetIncreaseStage() const;
    const NboxHpccConfig& GetConfig() const;

  private:
    /** Updates U from `telemetry` against the last record; false without a usable one. */
    bool MeasureInflight(const NboxIntTag& telemetry);
    void ComputeWindow(bool updateWc);

    NboxHpccConfig m_config;
    double m_maxWindow; //!< B x T, bytes
    double m_minWindow; //!< minRate x T, bytes
    double m_windowAi;  //!< W_AI, bytes
    double m_window;    //!< W
    double m_windowC;   //!< Wc, the reference window of the current round
    double m_u;         //!< U
    uint32_t m_incStage;
    uint32_t m_lastUpdatePsn; //!< Wc updates once an ACK passes this PSN
    /** The last sample of each egress port the QP's packets crossed (one per hop of a fixed
     * path; with spraying, the alternatives too), oldest first. */
    std::vector<NboxIntTag::Hop> m_lastByPort;
    static constexpr size_t kMaxPortsRemembered = 32;
};

} // namespace ns3

#endif /* NBOX_HPCC_H */
