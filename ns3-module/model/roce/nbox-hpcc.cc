#include "nbox-hpcc.h"

#include "ns3/abort.h"

#include <algorithm>

namespace ns3
{

NboxHpccWindowControl::NboxHpccWindowControl(const NboxHpccConfig& config)
    : m_config(config)
    , m_u(0)
    , m_incStage(0)
    , m_lastUpdatePsn(0)
{
    NS_ABORT_MSG_UNLESS(config.lineRateBps > 0, "HPCC: line rate must be positive");
    NS_ABORT_MSG_UNLESS(config.baseRtt.IsStrictlyPositive(), "HPCC: base RTT must be positive");
    NS_ABORT_MSG_UNLESS(config.eta > 0 && config.eta <= 1, "HPCC: eta must be in (0, 1]");
    NS_ABORT_MSG_UNLESS(config.minRateBps > 0 && config.minRateBps <= config.lineRateBps,
                        "HPCC: minimum rate must be in (0, line rate]");
    const double t = config.baseRtt.GetSeconds();
    m_maxWindow = config.lineRateBps * t / 8;
    m_minWindow = config.minRateBps * t / 8;
    m_windowAi = config.rateAiBps * t / 8;
    m_window = m_maxWindow;
    m_windowC = m_maxWindow;
}

double
NboxHpccWindowControl::GetRate() const
{
    return std::min(m_window * 8 / m_config.baseRtt.GetSeconds(), m_config.lineRateBps);
}

uint64_t
NboxHpccWindowControl::GetWindowBytes() const
{
    return static_cast<uint64_t>(m_window);
}

bool
NboxHpccWindowControl::WantsTelemetry() const
{
    return true;
}

void
NboxHpccWindowControl::OnPacketSent(uint32_t /* wireBytes */, Time /* now */)
{
}

void
NboxHpccWindowControl::OnCnp(Time /* now */)
{
}

bool
NboxHpccWindowControl::MeasureInflight(const NboxIntTag& t)
{
    const double baseRtt = m_config.baseRtt.GetSeconds();
    double u = 0;
    double tau = baseRtt;
    bool measured = false;
    for (uint32_t i = 0; i < t.GetNHops(); ++i)
    {
        const NboxIntTag::Hop& now = t.GetHop(i);
        auto before
            = std::find_if(m_lastByPort.begin(), m_lastByPort.end(),
                           [&now](const NboxIntTag::Hop& h) { return h.portId == now.portId; });
        if (before == m_lastByPort.end())
        {
            if (m_lastByPort.size() == kMaxPortsRemembered)
            {
                m_lastByPort.erase(m_lastByPort.begin()); // the port seen first
            }
            m_lastByPort.push_back(now);
            continue; // this port's first sample: nothing to compare against
        }
        if (now.timeNs <= before->timeNs)
        {
            continue; // the same or an older packet at this port: no rate to measure
        }
        const double dt = static_cast<double>(now.timeNs - before->timeNs) * 1e-9;
        const double rate = static_cast<double>(now.rateBps);
        const double txRate = static_cast<double>(now.txBytes - before->txBytes) * 8 / dt;
        const double queue = static_cast<double>(std::min(now.queueBytes, before->queueBytes));
        const double ui = queue * 8 / (rate * baseRtt) + txRate / rate;
        if (!measured || ui > u)
        {
            u = ui;
            tau = dt;
            measured = true;
        }
        *before = now;
    }
    if (!measured)
    {
        return false;
    }
    tau = std::min(tau, baseRtt);
    m_u = (1 - tau / baseRtt) * m_u + tau / baseRtt * u;
    return true;
}

void
NboxHpccWindowControl::ComputeWindow(bool updateWc)
{
    double window;
    if (m_u >= m_config.eta || m_incStage >= m_config.maxStage)
    {
        window = m_windowC / (m_u / m_config.eta) + m_windowAi;
        if (updateWc)
        {
            m_incStage = 0;
            m_windowC = std::clamp(window, m_minWindow, m_maxWindow);
        }
    }
    else
    {
        window = m_windowC + m_windowAi;
        if (updateWc)
        {
            ++m_incStage;
            m_windowC = std::clamp(window, m_minWindow, m_maxWindow);
        }
    }
    m_window = std::clamp(window, m_minWindow, m_maxWindow);
}

void
NboxHpccWindowControl::OnAck(uint32_t ackedPsn, uint32_t nextPsn, const NboxIntTag& telemetry,
                             Time /* now */)
{
    if (MeasureInflight(telemetry))
    {
        // Once per round trip the reference window moves; in between W follows U alone.
        const bool updateWc = ackedPsn > m_lastUpdatePsn;
        if (updateWc)
        {
            m_lastUpdatePsn = nextPsn;
        }
        ComputeWindow(updateWc);
    }
}

double
NboxHpccWindowControl::GetWindow() const
{
    return m_window;
}

double
NboxHpccWindowControl::GetUtilization() const
{
    return m_u;
}

uint32_t
NboxHpccWindowControl::GetIncreaseStage() const
{
    return m_incStage;
}

const NboxHpccConfig&
NboxHpccWindowControl::GetConfig() const
{
    return m_config;
}

} // namespace ns3
