/*
 * DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
 * SIGCOMM 2015): the per-QP sending rate of a RoCEv2 NIC, cut on each CNP and raised again by
 * a timer and a byte counter.
 */
#ifndef NBOX_DCQCN_H
#define NBOX_DCQCN_H

#include "ns3/nbox-roce-congestion-control.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup nbox
 * Parameters of one DCQCN reaction point. NboxRoceNic exposes each as an attribute; the
 * defaults there (and in the scenario keys) come from the literature, see ns3-module/README.md,
 * "DCQCN defaults".
 */
struct NboxDcqcnConfig
{
    double lineRateBps = 100e9;                  //!< never above this (the port's rate)
    double minRateBps = 100e6;                   //!< never below this
    double g = 1.0 / 16;                         //!< gain of the alpha moving average
    Time alphaUpdatePeriod = MicroSeconds(55);   //!< alpha decays once per quiet period
    Time rateIncreasePeriod = MicroSeconds(300); //!< the rate-increase timer
    uint64_t byteCounterBytes = 150000;          //!< an increase event per this many bytes
    uint32_t fastRecoverySteps = 5;              //!< F: increase events in fast recovery
    double raiBps = 50e6;                        //!< additive increase of the target rate
    double rhaiBps = 100e6;                      //!< hyper increase step of the target rate
    /** Whether every CNP sets the target rate to the current rate (the DCQCN paper), or only
     * a CNP that comes after the rate began to increase again (NVIDIA's clamp_tgt_rate = 0,
     * HPCC's ns-3 model of it: ClampTargetRate false). */
    bool clampTargetRate = false;
};

/**
 * \ingroup nbox
 * \brief The rate of one QP under DCQCN, as a state machine driven by explicit times.
 *
 * Starts at line rate with alpha = 1 (as the NIC does). On a CNP at time t:
 *   target = current (with clampTargetRate, or when an increase event came since the last
 *   CNP, or at the first CNP); current *= (1 - alpha/2) (not below the minimum rate);
 *   alpha = (1 - g) alpha + g; the timer and byte counters restart from zero at t.
 * Alpha stays at 1 until the first CNP; from then on it decays, alpha *= (1 - g), at every
 * full AlphaUpdatePeriod that passes without a CNP (the period restarts at each CNP).
 * Rate increase: the timer fires at t + k * RateIncreasePeriod (k = 1, 2, ...) after the last
 * CNP and counts T; every ByteCounter bytes sent count BC. Each firing of either is one
 * increase event, applied after its counter was incremented:
 *   max(T, BC) <= F  fast recovery:   current = (target + current) / 2
 *   min(T, BC) > F   hyper increase:  target += Rhai * (min(T, BC) - F), then as below
 *   otherwise        additive:        target += Rai; current = (target + current) / 2
 * Target and current never exceed line rate; once both are at line rate nothing is left to
 * increase and the timer is idle until the next CNP.
 *
 * Timers are evaluated lazily: every input first runs the timer events due up to its time
 * (AdvanceTo), in time order, so the result equals an event-driven implementation without
 * costing the simulator an event per period. Times passed in must not decrease.
 */
class NboxDcqcnRateControl : public NboxRoceCongestionControl
{
  public:
    NboxDcqcnRateControl();
    explicit NboxDcqcnRateControl(const NboxDcqcnConfig& config);

    /** Runs the rate-increase timer events due at or before `now`. */
    void AdvanceTo(Time now);
    /** A congestion notification packet arrived at `now`. */
    void OnCnp(Time now) override;
    /** `bytes` (wire bytes of a data packet) left the NIC at `now`. */
    void OnBytesSent(uint64_t bytes, Time now);

    // NboxRoceCongestionControl: a rate and no window; ACKs carry nothing DCQCN reads.
    double GetRate() const override;
    void OnPacketSent(uint32_t wireBytes, Time now) override;
    void OnAck(uint32_t ackedPsn, uint32_t nextPsn, const NboxIntTag& telemetry, Time now) override;

    double GetCurrentRate() const; //!< bits/s
    double GetTargetRate() const;  //!< bits/s
    /** Alpha as of the last CNP or the last AdvanceTo, whichever was later. */
    double GetAlpha() const;
    uint32_t GetTimerCount() const;       //!< T since the last CNP
    uint32_t GetByteCounterCount() const; //!< BC since the last CNP
    uint64_t GetCnpCount() const;         //!< CNPs handled
    /** When the timer fires next, or Time::Max() when it is idle. */
    Time GetNextTimerEvent() const;
    const NboxDcqcnConfig& GetConfig() const;

  private:
    /** One rate-increase event, after T or BC was incremented. */
    void Increase();
    /** Brings alpha up to `now`: one decay per full period since the last reference time. */
    void DecayAlpha(Time now);
    bool AtLineRate() const;

    NboxDcqcnConfig m_config;
    double m_current;
    double m_target;
    double m_alpha;
    bool m_seenCnp;        //!< alpha decays only after the first CNP
    Time m_alphaReference; //!< start of the current alpha period
    Time m_nextTimer;      //!< next rate-increase timer event; Max when idle
    uint32_t m_timerCount;
    uint32_t m_byteCount;
    uint64_t m_bytesSinceEvent; //!< bytes towards the next byte-counter event
    uint64_t m_cnps;
};

} // namespace ns3

#endif /* NBOX_DCQCN_H */
