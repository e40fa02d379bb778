#include "nbox-tcp-rack.h"

#include <algorithm>
#include <cstdint>

namespace ns3
{

namespace
{

/** Linux's cap on reo_wnd's steps (tp->rack.reo_wnd_steps is 8 bits). */
constexpr uint32_t kMaxReorderingSteps = 255;

/** RFC 8985 7.2's WCDelAckT: the longest a receiver may delay the ACK of a lone segment. */
const Time kWorstCaseDelayedAck = MilliSeconds(200);

} // namespace

void
NboxTcpRack::SplitAt(SequenceNumber32 at)
{
    auto next = m_segments.upper_bound(at);
    if (next == m_segments.begin())
    {
        return;
    }
    auto holder = std::prev(next);
    if (holder->first == at || holder->second.end <= at)
    {
        return;
    }
    Segment tail = holder->second;
    holder->second.end = at;
    m_segments.emplace(at, tail);
    Count(tail, +1);
}

void
NboxTcpRack::Count(const Segment& segment, int sign)
{
    m_sackedCount += sign * (segment.delivered ? 1 : 0);
    m_retransmittedCount += sign * (segment.retransmitted ? 1 : 0);
    m_lostOriginalsCount += sign * (segment.lost && !segment.retransmitted ? 1 : 0);
}

void
NboxTcpRack::Sent(SequenceNumber32 seq, uint32_t bytes, Time now, bool retransmission)
{
    const SequenceNumber32 end = seq + SequenceNumber32(bytes);
    if (!retransmission)
    {
        Segment segment;
        segment.end = end;
        segment.sent = now;
        segment.order = ++m_transmissions;
        m_segments[seq] = segment;
        return;
    }
    // A retransmission may cover part of a segment or several (ns-3 resegments its buffer), or
    // bytes forgotten by Reset().
    SplitAt(seq);
    SplitAt(end);
    SequenceNumber32 covered = seq;
    for (auto it = m_segments.lower_bound(seq); it != m_segments.end() && it->first < end; ++it)
    {
        if (covered < it->first)
        {
            Segment gap;
            gap.end = it->first;
            m_segments.emplace(covered, gap);
        }
        covered = it->second.end;
    }
    if (covered < end)
    {
        Segment gap;
        gap.end = end;
        m_segments.emplace(covered, gap);
    }
    ++m_transmissions;
    for (auto it = m_segments.lower_bound(seq); it != m_segments.end() && it->first < end; ++it)
    {
        Count(it->second, -1);
        it->second.sent = now;
        it->second.order = m_transmissions;
        it->second.retransmitted = true;
        it->second.lost = false;
        Count(it->second, +1);
    }
}

void
NboxTcpRack::NoteDelivered(const Segment& segment, Time now, const Path& path)
{
    const Time rtt = now - segment.sent;
    // A retransmitted segment acknowledged sooner than any round trip: the ACK is the
    // original's, so it says nothing about when the retransmission arrived (RFC 8985 6.2 2),
    // and the retransmission was spurious: the network reordered more than reo_wnd allowed.
    // Linux learns that from the receiver's DSACK and widens reo_wnd by a step, at most once a
    // round trip (tcp_rack_update_reo_wnd()); ns-3's receivers send no DSACK, so this stands in.
    if (segment.retransmitted && rtt < path.minRtt)
    {
        m_reorderingSeen = true;
        if (!m_widened || now - m_lastWidening >= path.srtt)
        {
            m_widened = true;
            m_reorderingSteps = std::min(m_reorderingSteps + 1, kMaxReorderingSteps);
            m_lastWidening = now;
        }
        return;
    }
    if (!m_haveRack || segment.order > m_rackOrder)
    {
        m_haveRack = true;
        m_rackOrder = segment.order;
        m_rackRtt = rtt;
    }
}

NboxTcpRack::Verdict
NboxTcpRack::Acked(SequenceNumber32 ack, const TcpOptionSack::SackList& sacks, Time now,
                   const Path& path)
{
    const SequenceNumber32 highestBefore = m_highestDeliveredEnd;
    auto note = [&](const Segment& segment)
    {
        // Delivered below a segment delivered earlier without having been resent: the
        // network reordered (RFC 8985 6.2 step 3).
        if (!segment.retransmitted && segment.end < highestBefore)
        {
            m_reorderingSeen = true;
        }
        NoteDelivered(segment, now, path);
        m_highestDeliveredEnd = std::max(m_highestDeliveredEnd, segment.end);
    };
    SplitAt(ack);
    while (!m_segments.empty() && m_segments.begin()->first < ack)
    {
        const Segment& segment = m_segments.begin()->second;
        if (!segment.delivered)
        {
            note(segment);
        }
        Count(segment, -1);
        m_segments.erase(m_segments.begin());
    }
    for (const TcpOptionSack::SackBlock& block : sacks)
    {
        for (auto it = m_segments.lower_bound(block.first);
             it != m_segments.end() && it->second.end <= block.second; ++it)
        {
            if (!it->second.delivered)
            {
                Count(it->second, -1);
                it->second.delivered = true;
                it->second.lost = false;
                Count(it->second, +1);
                note(it->second);
            }
        }
    }
    return DetectLoss(now, path);
}

NboxTcpRack::Verdict
NboxTcpRack::Recheck(Time now, const Path& path)
{
    return DetectLoss(now, path);
}

Time
NboxTcpRack::ReorderingWindow(const Path& path) const
{
    if (!m_reorderingSeen)
    {
        if (path.inRecovery)
        {
            return Time(0);
        }
        if (m_sackedCount >= path.dupThresh)
        {
            return Time(0);
        }
    }
    return std::min(path.minRtt / 4 * m_reorderingSteps, path.srtt);
}

NboxTcpRack::Verdict
NboxTcpRack::DetectLoss(Time now, const Path& path)
{
    Verdict verdict;
    // Without a SACKed or a resent segment out, every segment out went after the most recently
    // sent delivered one (they were all sent in order, after everything acknowledged).
    if (!m_haveRack || (m_sackedCount == 0 && m_retransmittedCount == 0))
    {
        return verdict;
    }
    const Time reorderingWindow = ReorderingWindow(path);
    for (auto& [seq, segment] : m_segments)
    {
        if (segment.delivered || segment.lost || segment.order >= m_rackOrder)
        {
            continue;
        }
        const Time remaining = segment.sent + m_rackRtt + reorderingWindow - now;
        if (remaining <= Time(0))
        {
            Count(segment, -1);
            segment.lost = true;
            Count(segment, +1);
            verdict.newlyLost = true;
        }
        else
        {
            verdict.recheckIn = std::max(verdict.recheckIn, remaining);
        }
    }
    return verdict;
}

void
NboxTcpRack::Reset()
{
    m_segments.clear();
    m_haveRack = false;
    m_sackedCount = 0;
    m_retransmittedCount = 0;
    m_lostOriginalsCount = 0;
}

bool
NboxTcpRack::IsLost(SequenceNumber32 seq) const
{
    auto it = m_segments.find(seq);
    return it != m_segments.end() && it->second.lost;
}

bool
NboxTcpRack::HasLostOriginal() const
{
    return m_lostOriginalsCount > 0;
}

bool
NboxTcpRack::LastUndelivered(SequenceNumber32* seq, uint32_t* bytes) const
{
    for (auto it = m_segments.rbegin(); it != m_segments.rend(); ++it)
    {
        if (!it->second.delivered)
        {
            *seq = it->first;
            *bytes = it->second.end - it->first;
            return true;
        }
    }
    return false;
}

uint32_t
NboxTcpRack::InFlightSegments() const
{
    return static_cast<uint32_t>(m_segments.size()) - m_sackedCount;
}

Time
NboxTcpRack::ProbeTimeout(Time srtt, uint32_t inFlightSegments, Time slack)
{
    if (!srtt.IsStrictlyPositive())
    {
        return Time(0);
    }
    return 2 * srtt + (inFlightSegments == 1 ? kWorstCaseDelayedAck : slack);
}

bool
NboxTcpRack::ReorderingSeen() const
{
    return m_reorderingSeen;
}

} // namespace ns3
