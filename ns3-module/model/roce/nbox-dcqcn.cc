#include "nbox-dcqcn.h"

#include "ns3/abort.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NboxDcqcnRateControl::NboxDcqcnRateControl()
    : NboxDcqcnRateControl(NboxDcqcnConfig{})
{
}

NboxDcqcnRateControl::NboxDcqcnRateControl(const NboxDcqcnConfig& config)
    : m_config(config)
    , m_current(config.lineRateBps)
    , m_target(config.lineRateBps)
    , m_alpha(1.0)
    , m_seenCnp(false)
    , m_alphaReference(Seconds(0))
    , m_nextTimer(Time::Max())
    , m_timerCount(0)
    , m_byteCount(0)
    , m_bytesSinceEvent(0)
    , m_cnps(0)
{
    NS_ABORT_MSG_UNLESS(config.lineRateBps > 0, "DCQCN: line rate must be positive");
    NS_ABORT_MSG_UNLESS(config.minRateBps > 0 && config.minRateBps <= config.lineRateBps,
                        "DCQCN: minimum rate must be in (0, line rate]");
    NS_ABORT_MSG_UNLESS(config.g > 0 && config.g <= 1, "DCQCN: g must be in (0, 1]");
    NS_ABORT_MSG_UNLESS(config.alphaUpdatePeriod.IsStrictlyPositive(),
                        "DCQCN: alpha update period must be positive");
    NS_ABORT_MSG_UNLESS(config.rateIncreasePeriod.IsStrictlyPositive(),
                        "DCQCN: rate increase period must be positive");
    NS_ABORT_MSG_UNLESS(config.byteCounterBytes > 0, "DCQCN: byte counter must be positive");
}

bool
NboxDcqcnRateControl::AtLineRate() const
{
    return m_current >= m_config.lineRateBps && m_target >= m_config.lineRateBps;
}

void
NboxDcqcnRateControl::AdvanceTo(Time now)
{
    while (m_nextTimer <= now)
    {
        const Time fired = m_nextTimer;
        ++m_timerCount;
        Increase();
        m_nextTimer = AtLineRate() ? Time::Max() : fired + m_config.rateIncreasePeriod;
    }
    DecayAlpha(now);
}

void
NboxDcqcnRateControl::DecayAlpha(Time now)
{
    if (!m_seenCnp || now < m_alphaReference + m_config.alphaUpdatePeriod)
    {
        return;
    }
    const int64_t periods
        = (now - m_alphaReference).GetTimeStep() / m_config.alphaUpdatePeriod.GetTimeStep();
    m_alpha *= std::pow(1.0 - m_config.g, static_cast<double>(periods));
    m_alphaReference += TimeStep(periods * m_config.alphaUpdatePeriod.GetTimeStep());
}

void
NboxDcqcnRateControl::OnCnp(Time now)
{
    AdvanceTo(now);
    ++m_cnps;
    // Without clamping, a cut in a run of cuts keeps the target the run started from, so fast
    // recovery heads back there rather than to the last, lowest rate.
    if (m_config.clampTargetRate || !m_seenCnp || m_timerCount + m_byteCount > 0)
    {
        m_target = m_current;
    }
    m_current = std::max(m_current * (1.0 - m_alpha / 2.0), m_config.minRateBps);
    m_alpha = (1.0 - m_config.g) * m_alpha + m_config.g;
    m_seenCnp = true;
    m_alphaReference = now;
    m_timerCount = 0;
    m_byteCount = 0;
    m_bytesSinceEvent = 0;
    m_nextTimer = now + m_config.rateIncreasePeriod;
}

void
NboxDcqcnRateControl::OnBytesSent(uint64_t bytes, Time now)
{
    AdvanceTo(now);
    if (AtLineRate())
    {
        return; // nothing to increase; the counter restarts at the next CNP anyway
    }
    m_bytesSinceEvent += bytes;
    while (m_bytesSinceEvent >= m_config.byteCounterBytes)
    {
        m_bytesSinceEvent -= m_config.byteCounterBytes;
        ++m_byteCount;
        Increase();
    }
    if (AtLineRate())
    {
        m_nextTimer = Time::Max();
    }
}

void
NboxDcqcnRateControl::Increase()
{
    const uint32_t f = m_config.fastRecoverySteps;
    const uint32_t most = std::max(m_timerCount, m_byteCount);
    const uint32_t least = std::min(m_timerCount, m_byteCount);
    if (most > f)
    {
        const double step = least > f ? m_config.rhaiBps * (least - f) : m_config.raiBps;
        m_target = std::min(m_target + step, m_config.lineRateBps);
    }
    m_current = std::min((m_target + m_current) / 2.0, m_config.lineRateBps);
    // Halving the gap never closes it in floating point; within a billionth it is closed.
    if (m_config.lineRateBps - m_current < 1e-9 * m_config.lineRateBps
        && m_target >= m_config.lineRateBps)
    {
        m_current = m_config.lineRateBps;
    }
}

double
NboxDcqcnRateControl::GetCurrentRate() const
{
    return m_current;
}

double
NboxDcqcnRateControl::GetTargetRate() const
{
    return m_target;
}

double
NboxDcqcnRateControl::GetAlpha() const
{
    return m_alpha;
}

uint32_t
NboxDcqcnRateControl::GetTimerCount() const
{
    return m_timerCount;
}

uint32_t
NboxDcqcnRateControl::GetByteCounterCount() const
{
    return m_byteCount;
}

uint64_t
NboxDcqcnRateControl::GetCnpCount() const
{
    return m_cnps;
}

Time
NboxDcqcnRateControl::GetNextTimerEvent() const
{
    return m_nextTimer;
}

const NboxDcqcnConfig&
NboxDcqcnRateControl::GetConfig() const
{
    return m_config;
}

double
NboxDcqcnRateControl::GetRate() const
{
    return GetCurrentRate();
}

void
NboxDcqcnRateControl::OnPacketSent(uint32_t wireBytes, Time now)
{
    OnBytesSent(wireBytes, now);
}

void
NboxDcqcnRateControl::OnAck(uint32_t /* ackedPsn */, uint32_t /* nextPsn */,
                            const NboxIntTag& /* telemetry */, Time /* now */)
{
}

} // namespace ns3
