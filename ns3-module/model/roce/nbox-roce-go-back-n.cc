#include "nbox-roce-go-back-n.h"

#include "ns3/abort.h"
#include "ns3/assert.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NboxGoBackNSender::NboxGoBackNSender(uint32_t payloadPerPacket)
    : m_payload(payloadPerPacket)
    , m_una(0)
    , m_next(0)
    , m_end(0)
    , m_highestSent(0)
    , m_cursor(0)
{
    NS_ABORT_MSG_UNLESS(payloadPerPacket > 0, "go-back-N: payload per packet must be positive");
}

void
NboxGoBackNSender::PostMessage(uint64_t bytes)
{
    NS_ABORT_MSG_UNLESS(bytes > 0, "go-back-N: a message needs at least one byte");
    const uint64_t packets = (bytes + m_payload - 1) / m_payload;
    NS_ABORT_MSG_IF(packets > std::numeric_limits<uint32_t>::max() - m_end,
                    "go-back-N: more than 2^32 packets on one QP (PSN wrap is not modelled)");
    m_messages.push_back(Message{m_end, static_cast<uint32_t>(packets), bytes});
    m_end += static_cast<uint32_t>(packets);
}

bool
NboxGoBackNSender::HasPacketToSend() const
{
    return m_next < m_end;
}

std::size_t
NboxGoBackNSender::FindMessage(uint32_t psn) const
{
    // Messages are sorted by first PSN; the ones before Una were dropped.
    auto it = std::upper_bound(m_messages.begin(), m_messages.end(), psn,
                               [](uint32_t p, const Message& m) { return p < m.firstPsn; });
    NS_ASSERT(it != m_messages.begin());
    return static_cast<std::size_t>(it - m_messages.begin()) - 1;
}

NboxGoBackNSender::Packet
NboxGoBackNSender::TakeNextPacket()
{
    NS_ASSERT(HasPacketToSend());
    while (m_next >= m_messages[m_cursor].firstPsn + m_messages[m_cursor].packets)
    {
        ++m_cursor;
    }
    const Message& m = m_messages[m_cursor];
    const uint32_t index = m_next - m.firstPsn;
    Packet p;
    p.psn = m_next;
    p.lastOfMessage = index + 1 == m.packets;
    p.payloadBytes = p.lastOfMessage ? static_cast<uint32_t>(m.bytes - uint64_t{index} * m_payload)
                                     : m_payload;
    p.messageBytes = p.lastOfMessage ? m.bytes : 0;
    p.retransmission = m_next < m_highestSent;
    ++m_next;
    m_highestSent = std::max(m_highestSent, m_next);
    return p;
}

void
NboxGoBackNSender::DropAcknowledgedMessages()
{
    while (!m_messages.empty() && m_messages.front().firstPsn + m_messages.front().packets <= m_una)
    {
        m_messages.pop_front();
        if (m_cursor > 0)
        {
            --m_cursor;
        }
    }
}

bool
NboxGoBackNSender::Acknowledge(uint32_t expectedPsn)
{
    // An ACK can name at most what was sent; anything else is a stale or bogus packet.
    if (expectedPsn <= m_una || expectedPsn > m_highestSent)
    {
        return false;
    }
    m_una = expectedPsn;
    if (m_next < m_una)
    {
        m_next = m_una;
    }
    DropAcknowledgedMessages();
    if (!m_messages.empty())
    {
        m_cursor = FindMessage(std::min(m_next, m_end - 1));
    }
    else
    {
        m_cursor = 0;
    }
    return true;
}

void
NboxGoBackNSender::GoBackTo(uint32_t expectedPsn)
{
    Acknowledge(expectedPsn);
    if (expectedPsn >= m_una && expectedPsn < m_next)
    {
        m_next = expectedPsn;
        m_cursor = FindMessage(m_next);
    }
}

void
NboxGoBackNSender::GoBackToUnacknowledged()
{
    if (m_next > m_una)
    {
        m_next = m_una;
        m_cursor = FindMessage(m_next);
    }
}

uint32_t
NboxGoBackNSender::GetUnacknowledged() const
{
    return m_una;
}

uint32_t
NboxGoBackNSender::GetNext() const
{
    return m_next;
}

uint32_t
NboxGoBackNSender::GetEnd() const
{
    return m_end;
}

bool
NboxGoBackNSender::HasOutstanding() const
{
    return m_una < m_next;
}

bool
NboxGoBackNSender::IsIdle() const
{
    return m_una == m_end;
}

uint32_t
NboxGoBackNSender::GetPayloadPerPacket() const
{
    return m_payload;
}

NboxGoBackNReceiver::NboxGoBackNReceiver(uint32_t ackInterval, bool acceptOutOfOrder)
    : m_ackInterval(ackInterval)
    , m_acceptOutOfOrder(acceptOutOfOrder)
    , m_expected(0)
    , m_sinceAck(0)
    , m_nackSent(false)
    , m_dupAckSent(false)
{
    NS_ABORT_MSG_UNLESS(ackInterval > 0, "go-back-N: ACK interval must be at least 1");
}

NboxGoBackNReceiver::Verdict
NboxGoBackNReceiver::OnData(uint32_t psn, bool lastOfMessage, uint64_t messageBytes)
{
    Verdict v;
    if (psn == m_expected)
    {
        v.accept = true;
        m_nackSent = false;
        m_dupAckSent = false;
        bool messageEnded = false;
        // The expected packet, then (out of order) every held packet it makes contiguous.
        for (bool last = lastOfMessage; true;)
        {
            ++m_expected;
            ++m_sinceAck;
            if (last)
            {
                messageEnded = true;
                v.delivered.push_back(messageBytes);
            }
            auto next = m_held.find(m_expected);
            if (next == m_held.end())
            {
                break;
            }
            messageBytes = next->second;
            last = messageBytes > 0;
            m_held.erase(next);
        }
        if (messageEnded || m_sinceAck >= m_ackInterval)
        {
            v.sendAck = true;
            m_sinceAck = 0;
        }
        return v;
    }
    if (psn > m_expected && m_acceptOutOfOrder)
    {
        // A packet ahead of a gap: kept (once), no NACK.
        v.accept = m_held.emplace(psn, lastOfMessage ? messageBytes : 0).second;
        return v;
    }
    if (psn > m_expected)
    {
        if (!m_nackSent)
        {
            v.sendNack = true;
            m_nackSent = true;
        }
        return v;
    }
    if (!m_dupAckSent)
    {
        v.sendAck = true;
        m_dupAckSent = true;
    }
    return v;
}

uint32_t
NboxGoBackNReceiver::GetExpected() const
{
    return m_expected;
}

} // namespace ns3
