#include "nbox-message-log.h"

#include "ns3/abort.h"

#include <utility>

namespace ns3
{

void
NboxMessageLog::Enable(uint32_t worldSize)
{
    m_enabled = true;
    m_lastAdvanced.assign(worldSize, kNoMessage);
}

bool
NboxMessageLog::IsEnabled() const
{
    return m_enabled;
}

void
NboxMessageLog::SetSink(Sink sink)
{
    m_sink = std::move(sink);
    HandOnDelivered();
}

void
NboxMessageLog::Flush()
{
    HandOn(false);
}

void
NboxMessageLog::HandOnDelivered()
{
    HandOn(true);
}

void
NboxMessageLog::HandOn(bool deliveredOnly)
{
    while (m_sink && !m_held.empty() && (!deliveredOnly || m_held.front().isDelivered))
    {
        m_sink(m_firstHeld, m_held.front());
        m_held.pop_front();
        ++m_firstHeld;
    }
}

uint64_t
NboxMessageLog::Post(const NboxMessageRecord& message, const std::string& label)
{
    auto [it, added] = m_labelIndex.emplace(label, static_cast<uint32_t>(m_labels.size()));
    if (added)
    {
        m_labels.push_back(label);
    }
    m_held.push_back(message);
    m_held.back().label = it->second;
    return m_firstHeld + m_held.size() - 1;
}

void
NboxMessageLog::Deliver(uint64_t id, Time at)
{
    // One handed on was delivered already, so an id below the held ones is a second delivery.
    NS_ABORT_MSG_IF(id < m_firstHeld || id - m_firstHeld >= m_held.size()
                        || m_held[id - m_firstHeld].isDelivered,
                    "message " << id << " delivered twice or never posted");
    NboxMessageRecord& message = m_held[id - m_firstHeld];
    message.delivered = at;
    message.isDelivered = true;
    HandOnDelivered();
}

void
NboxMessageLog::Advanced(uint32_t rank, uint64_t id)
{
    m_lastAdvanced.at(rank) = id;
}

uint64_t
NboxMessageLog::LastAdvanced(uint32_t rank) const
{
    return m_lastAdvanced.at(rank);
}

const std::deque<NboxMessageRecord>&
NboxMessageLog::GetHeld() const
{
    return m_held;
}

uint64_t
NboxMessageLog::GetFirstHeld() const
{
    return m_firstHeld;
}

const std::vector<std::string>&
NboxMessageLog::GetLabels() const
{
    return m_labels;
}

} // namespace ns3
