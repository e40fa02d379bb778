/*
 * NboxCommunicator's schedule runner: a started op's steps (sends and receives of its
 * collectives/ schedule, or one timed whole by a collective timer) run as the transport
 * delivers; arrivals are matched to receives by the schedule's FIFO rule, by tag.
 */
#include "nbox-communicator.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include "collectives/all_to_all.h"
#include "collectives/protocol.h"
#include "collectives/send_lanes.h"
#include "collectives/traffic.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ns3
{

using nbox::coll::CollectiveOp;
using nbox::coll::StepKind;

void
NboxCommunicator::Start(uint32_t rank, Pending pending)
{
    RankState& state = m_ranks[rank];
    auto owned = std::make_shared<Running>();
    Running& running = *owned;
    running.tag = pending.tag;
    running.rank = rank;
    running.started = Simulator::Now();
    running.pending = std::move(pending);
    const bool collective = !running.pending.work.isTransfers;
    state.running[running.tag] = std::move(owned);
    if (collective)
    {
        Instance& instance = m_instances[running.tag];
        ++instance.started;
        instance.lastStart = Simulator::Now();
        if (m_settings.protocol != nbox::coll::ProtocolChoice::kIdeal)
        {
            const nbox::coll::CollectiveSpec spec = SpecOf(running.pending.work);
            running.protocol
                = nbox::coll::CostOf(spec.protocol, spec.algorithm, spec.op, ProtocolGroupOf());
            running.protocolKind = spec.protocol;
        }
        if (!BuildsCollectiveSchedules())
        {
            StartTimed(rank, running, *m_transport->GetCollectiveTimer());
            return;
        }
    }
    running.tracker
        = std::make_unique<nbox::coll::StepTracker>(BuildStepSource(rank, running.pending.work));
    // Messages that came before this op started: a collective's carry its tag; the others'
    // (groups', external ranks') are in order per connection, so each belongs to this op if
    // it still expects one from that connection (stop at the first that does not).
    if (collective)
    {
        auto it = state.tagged.lower_bound({running.tag, 0, 0});
        while (it != state.tagged.end() && std::get<0>(it->first) == running.tag)
        {
            for (const Arrival& arrival : it->second.arrived)
            {
                MatchToRunning(running, std::get<1>(it->first), std::get<2>(it->first), arrival);
            }
            it = state.tagged.erase(it);
        }
    }
    for (auto& [key, inbox] : state.untagged)
    {
        const auto [src, channel] = key;
        while (!inbox.arrived.empty()
               && running.tracker->ExpectsArrival(static_cast<int>(src), static_cast<int>(channel)))
        {
            const Arrival arrival = inbox.arrived.front();
            inbox.arrived.pop_front();
            MatchToRunning(running, src, channel, arrival);
        }
    }
    Advance(running);
}

void
NboxCommunicator::StartTimed(uint32_t rank, Running& running, NboxCollectiveTimer& timer)
{
    Instance& instance = m_instances[running.tag];
    instance.timedRanks.push_back(rank);
    if (instance.started < m_members.size())
    {
        return;
    }
    const NboxCommWork& work = running.pending.work;
    nbox::coll::CollectiveSpec spec = SpecOf(work);
    // The protocol's pace as more bytes (whole elements; all-to-all-v's matrix as it is) and
    // its latencies on the critical path (collectives/protocol.h).
    const double share = running.protocol.rate_share;
    uint64_t protocolBytes = 0;
    if (share < 1 && spec.op != nbox::coll::CollectiveOp::kAllToAllV)
    {
        const nbox::coll::CollectiveSpec own = spec;
        const uint64_t element = spec.element_bytes;
        spec.bytes = (nbox::coll::WireBytes(spec.bytes, share) + element - 1) / element * element;
        protocolBytes = ProtocolBytesOf(own, spec);
        m_records->protocolBytesSent += protocolBytes;
    }
    const nbox::coll::ProtocolGroup group = ProtocolGroupOf();
    const double hopsUs
        = nbox::coll::CriticalPathHopMicros(spec.protocol, spec.algorithm, spec.op, group);
    const double latencyUs
        = nbox::coll::CriticalPathLatencyMicros(spec.protocol, spec.algorithm, spec.op, group);
    const Time hops = NanoSeconds(std::llround(hopsUs * 1000));
    const Time base = NanoSeconds(std::llround(latencyUs * 1000)) - hops;
    if (base.IsZero())
    {
        FinishTimed(running.tag, timer.TimeCollective(spec, m_members, m_laneBase, hops),
                    protocolBytes);
        return;
    }
    // The protocol's base latency first (its kernel's start), then the collective, whose
    // timer pays the hops as its critical path has them.
    ++m_protocolWaits;
    const uint64_t tag = running.tag;
    Simulator::Schedule(base,
                        [this, spec, tag, hops, protocolBytes, &timer]()
                        {
                            --m_protocolWaits;
                            FinishTimed(tag,
                                        timer.TimeCollective(spec, m_members, m_laneBase, hops),
                                        protocolBytes);
                        });
}

uint64_t
NboxCommunicator::ProtocolBytesOf(const nbox::coll::CollectiveSpec& spec,
                                  const nbox::coll::CollectiveSpec& paced)
{
    const auto key = std::make_tuple(static_cast<int>(spec.op), static_cast<int>(spec.algorithm),
                                     spec.bytes, paced.bytes, spec.root);
    auto it = m_protocolBytesOf.find(key);
    if (it == m_protocolBytesOf.end())
    {
        auto laneBytes = [](const nbox::coll::CollectiveSpec& s)
        {
            uint64_t total = 0;
            nbox::coll::ForEachLane(s, [&total](const nbox::coll::LaneTraffic& lane)
                                    { total += lane.bytes; });
            return total;
        };
        it = m_protocolBytesOf.emplace(key, laneBytes(paced) - laneBytes(spec)).first;
    }
    return it->second;
}

void
NboxCommunicator::FinishTimed(uint64_t tag, Time duration, uint64_t protocolBytes)
{
    if (protocolBytes > 0)
    {
        Simulator::Schedule(duration, [records = m_records, protocolBytes]()
                            { records->protocolBytesDelivered += protocolBytes; });
    }
    // In the order the members started it, so equal end times finish in a fixed order.
    for (uint32_t member : m_instances[tag].timedRanks)
    {
        Simulator::Schedule(duration, &NboxCommunicator::Finish, this, member, tag);
    }
}

bool
NboxCommunicator::IsWaitingOnProtocol() const
{
    return m_protocolWaits > 0;
}

void
NboxCommunicator::Advance(Running& running)
{
    const uint32_t rank = running.rank;
    const uint64_t tag = running.tag;
    nbox::coll::StepTracker& tracker = *running.tracker;
    // Receives whose message is already in the inbox complete at once and may release more
    // steps, so keep going until nothing new is ready.
    // The op's vector, taken (not referenced) in case a transport ever calls back into this
    // op from Send, and given back at the end.
    std::vector<uint32_t> ready = std::move(running.ready);
    for (tracker.TakeReady(ready); !ready.empty(); tracker.TakeReady(ready))
    {
        for (uint32_t id : ready)
        {
            const nbox::coll::Step& step = tracker.step(id);
            if (step.kind == StepKind::kSend)
            {
                const Time delay = ProtocolDelay(running, step);
                if (delay.IsZero())
                {
                    Post(running, id);
                }
                else
                {
                    // The GPU's hop under the protocol: the send leaves once it has passed.
                    ++m_protocolWaits;
                    Simulator::Schedule(delay,
                                        [this, rank, tag, id]()
                                        {
                                            --m_protocolWaits;
                                            Post(*m_ranks[rank].running.at(tag), id);
                                        });
                }
                continue;
            }
            const auto early = running.early.find(id);
            if (early == running.early.end())
            {
                continue; // handed out: it completes when its message arrives
            }
            const Arrival arrival = early->second;
            running.early.erase(early);
            CompleteRecv(running, id, arrival);
        }
    }
    running.ready = std::move(ready);
    if (tracker.Done())
    {
        Finish(rank, tag);
    }
}

Time
NboxCommunicator::ProtocolDelay(Running& running, const nbox::coll::Step& step) const
{
    const nbox::coll::ProtocolCost& cost = running.protocol;
    if (cost.Free())
    {
        return Time(0); // the ideal protocol: every send at once, as before protocols
    }
    const int perServer = GroupRanksPerServer();
    const bool inside = perServer > 0
                     && running.rank / static_cast<uint32_t>(perServer)
                            == static_cast<uint32_t>(step.peer) / static_cast<uint32_t>(perServer);
    const Time hop
        = NanoSeconds(std::llround((inside ? cost.intra_hop_us : cost.inter_hop_us) * 1000));
    const Time kernel = running.started + NanoSeconds(std::llround(cost.base_us * 1000));
    Time& last = running.lastPost[uint64_t{static_cast<uint32_t>(step.peer)} << 32
                                  | static_cast<uint32_t>(step.channel)];
    last = Max(Max(Simulator::Now(), kernel) + hop, last);
    return last - Simulator::Now();
}

void
NboxCommunicator::Post(Running& running, uint32_t stepId)
{
    const nbox::coll::Step& step = running.tracker->step(stepId);
    const uint32_t rank = running.rank;
    const auto peer = static_cast<uint32_t>(step.peer);
    const auto channel = static_cast<uint32_t>(step.channel);
    const uint64_t message
        = m_records->messages.IsEnabled() ? LogSend(running, step) : NboxMessageLog::kNoMessage;
    // On the wire the protocol's pace: its flags, its share of the links' rate.
    const uint64_t wire = nbox::coll::WireBytes(step.bytes, running.protocol.rate_share);
    m_records->protocolBytesSent += wire - step.bytes;
    const uint32_t slot = m_sent.Park({rank, stepId, peer, channel, step.bytes, Simulator::Now(),
                                       running.tag, message, wire - step.bytes});
    // The callback carries the slot only: std::function holds it without allocating.
    m_transport->Send(m_members[rank], m_members[peer], m_laneBase + channel, wire,
                      [this, slot]() { OnDelivered(slot); });
}

void
NboxCommunicator::CompleteRecv(Running& running, uint32_t stepId, const Arrival& arrival)
{
    const nbox::coll::Step& step = running.tracker->step(stepId);
    if (arrival.bytes != step.bytes)
    {
        // The two ends cut the op differently: their schedules disagree (a real rank's call
        // against its emulated peers', or traces that do not pair up). The run ends with both
        // sides named; this op never completes.
        m_records->Fail(DescribeMismatch(running, step, arrival.bytes));
        return;
    }
    running.peersPosted = std::max(running.peersPosted, arrival.posted);
    if (arrival.message != NboxMessageLog::kNoMessage)
    {
        running.stepMessage[stepId] = arrival.message;
        m_records->messages.Advanced(m_members[running.rank], arrival.message);
    }
    running.tracker->Complete(stepId);
}

std::string
NboxCommunicator::DescribeMismatch(const Running& running, const nbox::coll::Step& step,
                                   uint64_t arrivedBytes) const
{
    const auto peer = static_cast<uint32_t>(step.peer);
    std::ostringstream text;
    text << "the ranks' schedules disagree: rank " << running.rank << " of '" << m_name << "' ("
         << (IsExternal(running.rank) ? "real" : "emulated") << " world rank "
         << m_members[running.rank] << ", running " << DescribeWork(running.pending.work)
         << ") matched a " << arrivedBytes << "-byte message from rank " << peer << " ("
         << (IsExternal(peer) ? "real" : "emulated") << " world rank " << m_members[peer];
    const auto sender = m_ranks[peer].running.find(running.tag);
    if (running.tag != kUntagged && sender != m_ranks[peer].running.end())
    {
        text << ", running " << DescribeWork(sender->second->pending.work);
    }
    text << ") on channel " << step.channel << " to a " << step.bytes << "-byte receive";
    return text.str();
}

std::string
NboxCommunicator::DescribeWork(const NboxCommWork& work) const
{
    std::ostringstream text;
    text << "'" << work.label << "': ";
    if (work.isTransfers)
    {
        text << work.transfers.size() << " point-to-point transfers";
        return text.str();
    }
    const nbox::coll::CollectiveSpec spec = SpecOf(work);
    text << nbox::coll::ToString(spec.op) << " of " << spec.bytes << " bytes in "
         << spec.element_bytes << "-byte elements, " << nbox::coll::ToString(spec.algorithm) << ", "
         << spec.channels << " channel" << (spec.channels == 1 ? "" : "s");
    return text.str();
}

uint64_t
NboxCommunicator::LogSend(const Running& running, const nbox::coll::Step& step)
{
    NboxMessageLog& log = m_records->messages;
    const uint32_t src = m_members[running.rank];
    NboxMessageRecord message;
    message.src = src;
    message.dst = m_members[static_cast<uint32_t>(step.peer)];
    message.comm = m_id;
    message.channel = static_cast<uint32_t>(step.channel);
    message.bytes = step.bytes;
    message.iteration = running.pending.work.iteration;
    message.posted = Simulator::Now();
    for (uint32_t dep : step.deps)
    {
        const auto logged = running.stepMessage.find(dep);
        if (logged != running.stepMessage.end())
        {
            message.deps.push_back(logged->second);
        }
    }
    if (step.deps.empty() && log.LastAdvanced(src) != NboxMessageLog::kNoMessage)
    {
        message.deps.push_back(log.LastAdvanced(src));
    }
    return log.Post(message, running.pending.work.label);
}

NboxCommunicator::Running*
NboxCommunicator::UntaggedReceiver(uint32_t rank, uint32_t src, uint32_t channel)
{
    for (auto& [tag, running] : m_ranks[rank].running)
    {
        if (running->tracker
            && running->tracker->ExpectsArrival(static_cast<int>(src), static_cast<int>(channel)))
        {
            return running.get();
        }
    }
    return nullptr;
}

void
NboxCommunicator::OnArrival(uint32_t dst, uint32_t src, uint32_t channel, uint64_t bytes,
                            Time posted, uint64_t message, uint64_t tag)
{
    if (!m_external.empty() && m_external[dst])
    {
        m_onExternalArrival(dst, src, channel, bytes);
        return;
    }
    RankState& state = m_ranks[dst];
    const Arrival arrival{bytes, posted, message};
    if (tag != kUntagged)
    {
        auto running = state.running.find(tag);
        if (running == state.running.end())
        {
            state.tagged[{tag, src, channel}].arrived.push_back(arrival);
            return;
        }
        MatchToRunning(*running->second, src, channel, arrival);
        Advance(*running->second);
        return;
    }
    // Untagged messages of one connection arrive in order; one for a later op waits in the
    // inbox, and so must every message after it.
    Inbox& inbox = state.untagged[{src, channel}];
    Running* receiver = inbox.arrived.empty() ? UntaggedReceiver(dst, src, channel) : nullptr;
    if (receiver == nullptr)
    {
        inbox.arrived.push_back(arrival);
        return;
    }
    MatchToRunning(*receiver, src, channel, arrival);
    Advance(*receiver);
}

void
NboxCommunicator::MatchToRunning(Running& running, uint32_t src, uint32_t channel,
                                 const Arrival& arrival)
{
    const uint32_t id
        = running.tracker->MatchArrival(static_cast<int>(src), static_cast<int>(channel));
    if (running.tracker->IsHandedOut(id))
    {
        CompleteRecv(running, id, arrival);
        return;
    }
    running.early.emplace(id, arrival);
}

void
NboxCommunicator::OnDelivered(uint32_t slot)
{
    const SentMessage sent = m_sent.Take(slot);
    m_records->protocolBytesDelivered += sent.protocolBytes;
    if (sent.message != NboxMessageLog::kNoMessage)
    {
        m_records->messages.Deliver(sent.message, Simulator::Now());
    }
    OnArrival(sent.peer, sent.rank, sent.channel, sent.bytes, sent.posted, sent.message, sent.tag);
    OnSendDelivered(sent.rank, sent.tag, sent.stepId, sent.message);
}

void
NboxCommunicator::OnSendDelivered(uint32_t rank, uint64_t tag, uint32_t stepId, uint64_t message)
{
    Running& running = *m_ranks[rank].running.at(tag);
    if (message != NboxMessageLog::kNoMessage)
    {
        running.stepMessage[stepId] = message;
        m_records->messages.Advanced(m_members[rank], message);
    }
    running.tracker->Complete(stepId);
    Advance(running);
}

} // namespace ns3
