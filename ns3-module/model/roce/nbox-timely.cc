#include "nbox-timely.h"

#include "ns3/abort.h"

#include <algorithm>

namespace ns3
{

NboxTimelyRateControl::NboxTimelyRateControl(const NboxTimelyConfig& config)
    : m_config(config)
    , m_rate(config.lineRateBps)
    , m_rttDiff(0)
    , m_havePrevious(false)
    , m_increases(0)
    , m_lastUpdatePsn(0)
{
    NS_ABORT_MSG_UNLESS(config.lineRateBps > 0, "TIMELY: line rate must be positive");
    NS_ABORT_MSG_UNLESS(config.minRateBps > 0 && config.minRateBps <= config.lineRateBps,
                        "TIMELY: minimum rate must be in (0, line rate]");
    NS_ABORT_MSG_UNLESS(config.minRtt.IsStrictlyPositive(), "TIMELY: minRtt must be positive");
    NS_ABORT_MSG_UNLESS(config.tLow <= config.tHigh, "TIMELY: T_low must not exceed T_high");
}

double
NboxTimelyRateControl::GetRate() const
{
    return m_rate;
}

bool
NboxTimelyRateControl::WantsTimestamps() const
{
    return true;
}

void
NboxTimelyRateControl::OnPacketSent(uint32_t /* wireBytes */, Time /* now */)
{
}

void
NboxTimelyRateControl::OnCnp(Time /* now */)
{
}

void
NboxTimelyRateControl::OnAck(uint32_t /* ackedPsn */, uint32_t /* nextPsn */,
                             const NboxIntTag& /* telemetry */, Time /* now */)
{
}

void
NboxTimelyRateControl::OnRttSample(Time rtt, uint32_t ackedPsn, uint32_t nextPsn, Time /* now */)
{
    if (ackedPsn <= m_lastUpdatePsn && m_havePrevious)
    {
        return; // one update per round trip
    }
    m_lastUpdatePsn = nextPsn;
    if (!m_havePrevious)
    {
        m_previousRtt = rtt;
        m_havePrevious = true;
        return;
    }
    const double r = rtt.GetSeconds();
    const double newDiff = r - m_previousRtt.GetSeconds();
    m_previousRtt = rtt;
    m_rttDiff = (1 - m_config.alpha) * m_rttDiff + m_config.alpha * newDiff;
    const double gradient = m_rttDiff / m_config.minRtt.GetSeconds();
    auto increase = [this]()
    {
        const double step
            = m_increases >= m_config.haiThreshold ? 5 * m_config.deltaBps : m_config.deltaBps;
        m_rate += step;
        ++m_increases;
    };
    if (rtt < m_config.tLow)
    {
        increase();
    }
    else if (rtt > m_config.tHigh)
    {
        m_rate *= 1 - m_config.beta * (1 - m_config.tHigh.GetSeconds() / r);
        m_increases = 0;
    }
    else if (gradient <= 0)
    {
        increase();
    }
    else
    {
        m_rate *= std::max(0.0, 1 - m_config.beta * gradient);
        m_increases = 0;
    }
    m_rate = std::clamp(m_rate, m_config.minRateBps, m_config.lineRateBps);
}

double
NboxTimelyRateControl::GetRttDiffSeconds() const
{
    return m_rttDiff;
}

uint32_t
NboxTimelyRateControl::GetIncreaseCount() const
{
    return m_increases;
}

const NboxTimelyConfig&
NboxTimelyRateControl::GetConfig() const
{
    return m_config;
}

} // namespace ns3
