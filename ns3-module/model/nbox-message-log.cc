#include "nbox-message-log.h"

#include "ns3/abort.h"

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

uint64_t
NboxMessageLog::Post(const NboxMessageRecord& message, const std::string& label)
{
    auto [it, added] = m_labelIndex.emplace(label, static_cast<uint32_t>(m_labels.size()));
    if (added)
    {
        m_labels.push_back(label);
    }
    m_messages.push_back(message);
    m_messages.back().label = it->second;
    return m_messages.size() - 1;
}

void
NboxMessageLog::Deliver(uint64_t id, Time at)
{
    NS_ABORT_MSG_IF(id >= m_messages.size() || m_messages[id].isDelivered,
                    "message " << id << " delivered twice or never posted");
    m_messages[id].delivered = at;
    m_messages[id].isDelivered = true;
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

const std::vector<NboxMessageRecord>&
NboxMessageLog::GetMessages() const
{
    return m_messages;
}

const std::vector<std::string>&
NboxMessageLog::GetLabels() const
{
    return m_labels;
}

} // namespace ns3
