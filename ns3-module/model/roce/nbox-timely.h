/*
 * TIMELY's sender (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter",
 * SIGCOMM 2015, Algorithm 1): a rate per QP steered by the round-trip time its ACKs measure
 * and by that time's gradient.
 */
#ifndef NBOX_TIMELY_H
#define NBOX_TIMELY_H

#include "ns3/nbox-roce-congestion-control.h"

namespace ns3
{

/**
 * \ingroup nbox
 * Parameters of one TIMELY sender. NboxRoceNic exposes each as an attribute (TimelyAlpha,
 * ...); ns3-module/README.md, "TIMELY", gives their sources.
 */
struct NboxTimelyConfig
{
    double lineRateBps = 100e9;     //!< the start rate and the ceiling
    double minRateBps = 100e6;      //!< the floor
    double alpha = 0.875;           //!< EWMA weight of a new RTT difference
    double beta = 0.8;              //!< multiplicative decrease factor
    Time tLow = MicroSeconds(50);   //!< below it the rate only grows
    Time tHigh = MicroSeconds(500); //!< above it the rate falls by how far it is above
    Time minRtt = MicroSeconds(20); //!< normalises the gradient
    double deltaBps = 10e6;         //!< additive step delta
    uint32_t haiThreshold = 5;      //!< increases in a row after which steps are 5 delta
};

/**
 * \ingroup nbox
 * \brief TIMELY's rate for one QP, from RTT samples.
 *
 * Once per round trip (an ACK beyond the PSN recorded at the last update), with that ACK's
 * RTT sample r against the previous update's r':
 *   diff = (1 - alpha) diff + alpha (r - r'); gradient = diff / minRtt;
 *   r < T_low: rate += delta (an increase);
 *   r > T_high: rate *= 1 - beta (1 - T_high / r);
 *   gradient <= 0: rate += delta (an increase);
 *   otherwise: rate *= 1 - beta gradient (not below 0);
 * an increase that comes after haiThreshold increases in a row adds 5 delta instead (TIMELY's
 * hyperactive increase), any decrease restarts the count; the rate stays within
 * [minRate, line rate]. The first sample only records r'. No window; ECN is ignored.
 */
class NboxTimelyRateControl : public NboxRoceCongestionControl
{
  public:
    explicit NboxTimelyRateControl(const NboxTimelyConfig& config);

    double GetRate() const override;
    bool WantsTimestamps() const override;
    void OnPacketSent(uint32_t wireBytes, Time now) override;
    void OnCnp(Time now) override;
    void OnAck(uint32_t ackedPsn, uint32_t nextPsn, const NboxIntTag& telemetry, Time now) override;
    void OnRttSample(Time rtt, uint32_t ackedPsn, uint32_t nextPsn, Time now) override;

    double GetRttDiffSeconds() const;  //!< the smoothed RTT difference
    uint32_t GetIncreaseCount() const; //!< increases in a row
    const NboxTimelyConfig& GetConfig() const;

  private:
    NboxTimelyConfig m_config;
    double m_rate;
    double m_rttDiff; //!< seconds
    Time m_previousRtt;
    bool m_havePrevious;
    uint32_t m_increases;
    uint32_t m_lastUpdatePsn;
};

} // namespace ns3

#endif /* NBOX_TIMELY_H */
