#include "nbox-flow-transport.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxFlowTransport");

NS_OBJECT_ENSURE_REGISTERED(NboxFlowTransport);

TypeId
NboxFlowTransport::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxFlowTransport")
                            .SetParent<NboxTransport>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxFlowTransport>();
    return tid;
}

NboxFlowTransport::NboxFlowTransport()
    : m_solvePending(false)
{
}

NboxFlowTransport::NboxFlowTransport(Ptr<NboxFlowNetwork> network,
                                     const std::vector<int>& rankToHost)
    : NboxFlowTransport()
{
    if (!network)
    {
        throw std::invalid_argument("NboxFlowTransport: no network");
    }
    network->PlaceRanks(rankToHost);
    m_network = network;
    // Raw pointer: the network must not keep its transport alive (DoDispose clears it).
    m_network->SetFlush([this]() { Flush(); });
    // The network has flushed every connection up to now at the old rates and changed the
    // solver's capacity: the connections through the port get their new rates at this instant
    // (a lone head among them is rescheduled by Solve like any other whose rate changed).
    m_network->AddChangeListener(
        this, [this](uint32_t) { ScheduleSolve(); }, [this]() { Reroute(); });
}

NboxFlowTransport::~NboxFlowTransport() = default;

void
NboxFlowTransport::DoDispose()
{
    for (Connection& c : m_connections)
    {
        c.headSent.Cancel();
        c.loneDelivery.Cancel();
        c.queue.clear();
    }
    m_deliveries.Clear();
    if (m_network)
    {
        m_network->SetFlush(nullptr);
        m_network->RemoveChangeListener(this);
    }
    m_network = nullptr;
    NboxTransport::DoDispose();
}

uint32_t
NboxFlowTransport::GetOrOpen(uint32_t srcRank, uint32_t dstRank, uint32_t channel)
{
    const uint32_t known = m_connectionIds.Find(srcRank, dstRank, channel);
    if (known != NboxConnectionIndex::kNone)
    {
        return known;
    }
    const auto id = static_cast<uint32_t>(m_connections.size());
    Connection c;
    c.ports = m_network->RouteNewConnection(srcRank, dstRank, c.shares);
    const double weight = m_network->GetWireRatio();
    for (const NboxFlowPaths::PortShare& s : c.shares)
    {
        c.uses.push_back({s.port, weight * s.share});
    }
    m_connections.push_back(std::move(c));
    m_connectionIds.Add(srcRank, dstRank, channel, id);
    ++m_stats.connections;
    return id;
}

void
NboxFlowTransport::Connect(uint32_t srcRank, uint32_t dstRank, uint32_t channel)
{
    GetOrOpen(srcRank, dstRank, channel);
}

void
NboxFlowTransport::WhenAllConnected(std::function<void()> ready)
{
    // No handshake: connections are up from the start. Called back from an event, as the
    // packet transports do, so the caller is never re-entered.
    Simulator::ScheduleNow(std::move(ready));
}

void
NboxFlowTransport::Send(uint32_t srcRank, uint32_t dstRank, uint32_t channel, uint64_t bytes,
                        std::function<void()> delivered)
{
    NS_ABORT_MSG_IF(bytes == 0, "NboxFlowTransport::Send: empty message");
    const uint32_t id = GetOrOpen(srcRank, dstRank, channel);
    Connection& c = m_connections[id];
    const Time now = Simulator::Now();
    const bool wasLone = c.lone;
    if (c.lone && c.loneSent <= now)
    {
        RetireLone(c, now); // its flow ended: this message starts a new one
    }
    c.enqueued += bytes;
    c.queue.push_back({c.enqueued, bytes, std::move(delivered)});
    ++m_stats.messagesSent;
    m_stats.bytesSent += bytes;
    if (c.flow >= 0)
    {
        if (wasLone)
        {
            // The head is no longer the last message: an ordinary one, ending at the same time.
            Advance(c, now);
            ScheduleHeadSent(id, now);
        }
        return;
    }
    c.lastUpdate = now;
    c.rate = 0;
    SettleLoneNeighbours(id, false, now);
    NboxMaxMinSolver& solver = m_network->GetSolver();
    const uint32_t flow = solver.AddFlow(c.uses);
    if (flow >= m_connectionOfFlow.size())
    {
        m_connectionOfFlow.resize(flow + 1, kNoConnection);
    }
    m_connectionOfFlow[flow] = id;
    c.flow = flow;
    SettleLoneNeighbours(id, true, now);
    if (!m_solvePending && solver.IsAlone(flow))
    {
        // No other flow's rate depends on this one (a ring step whose ranks drifted
        // apart starts its flows one by one): rated now, with no Solve event. A flow
        // joining its links later, even at this instant, re-solves them together. When a
        // Solve is due at this instant anyway (a burst of starts, as in an all-to-all), the
        // flow joins it instead: a flow rated alone and joined a moment later is scheduled
        // twice.
        c.rate = solver.SolveAlone(flow);
        ScheduleHeadSent(id, now);
    }
    else
    {
        ScheduleSolve();
    }
}

void
NboxFlowTransport::SettleLoneNeighbours(uint32_t id, bool added, Time now)
{
    NboxMaxMinSolver& solver = m_network->GetSolver();
    // A lone flow is alone on its links: the one flow on a link before this connection's is
    // added, one of two after. Links carrying more (an all-to-all's) hold none to settle.
    const uint32_t flowsIfLone = added ? 2 : 1;
    for (const NboxMaxMinSolver::Use& use : m_connections[id].uses)
    {
        if (solver.GetNFlowsOn(use.resource) != flowsIfLone)
        {
            continue;
        }
        for (uint32_t i = 0; i < flowsIfLone; ++i)
        {
            const uint32_t other = m_connectionOfFlow[solver.GetFlowOn(use.resource, i)];
            Connection& n = m_connections[other];
            if (other == id || !n.lone)
            {
                continue;
            }
            if (!added)
            {
                // Only a finished one can be lone here: an unfinished one is left for after.
                if (n.loneSent <= now)
                {
                    RetireLone(n, now);
                }
            }
            else
            {
                // Shared now: an ordinary head, with its HeadSent (the Solve to come may move it).
                Advance(n, now);
                ScheduleHeadSent(other, now);
            }
            break;
        }
    }
}

void
NboxFlowTransport::Advance(Connection& c, Time now)
{
    if (c.rate > 0 && now > c.lastUpdate && !c.queue.empty())
    {
        const double head = static_cast<double>(c.queue.front().end);
        const double step = std::min(c.rate * (now - c.lastUpdate).GetSeconds(), head - c.sent);
        c.sent += step;
        c.headWire += step * m_network->GetWireRatio();
        m_network->CountShares(c.shares, step * m_network->GetWireRatio(), 0);
    }
    c.lastUpdate = now;
}

void
NboxFlowTransport::ScheduleHeadSent(uint32_t id, Time now)
{
    Connection& c = m_connections[id];
    // Skipped when none was ever scheduled (a connection of lone messages): ns-3's Cancel of
    // an empty id still costs a call through the simulator, on every message.
    if (c.headSent.PeekEventImpl() != nullptr)
    {
        c.headSent.Cancel();
    }
    if (c.lone)
    {
        Unlone(c, now);
    }
    if (c.rate <= 0 || c.queue.empty())
    {
        return;
    }
    const double remaining = static_cast<double>(c.queue.front().end) - c.sent;
    // Rounded up to the nanosecond, so the whole message has left when the event runs.
    const auto ns = static_cast<int64_t>(std::ceil(std::max(0.0, remaining) / c.rate * 1e9));
    if (c.queue.size() == 1 && m_network->GetSolver().IsAlone(static_cast<uint32_t>(c.flow)))
    {
        // Its rate holds until something joins its links or its connection, and both come
        // through Send: deliver it at the time HeadSent would have, without HeadSent.
        Message& head = c.queue.front();
        c.lone = true;
        c.loneSent = now + NanoSeconds(ns);
        c.loneSlot = m_deliveries.Park({head.bytes, std::move(head.delivered)});
        c.loneDelivery = Simulator::Schedule(NanoSeconds(ns)
                                                 + m_network->GetDeliveryDelay(c.ports, head.bytes),
                                             &NboxFlowTransport::Deliver, this, c.loneSlot);
        return;
    }
    c.headSent = Simulator::Schedule(NanoSeconds(ns), &NboxFlowTransport::HeadSent, this, id);
}

NboxFlowTransport::Message
NboxFlowTransport::FinishHead(Connection& c, Time now)
{
    Advance(c, now);
    Message message = std::move(c.queue.front());
    c.queue.pop_front();
    c.sent = static_cast<double>(message.end);
    // The counters took the fluid share of wire bytes; correct to the message's exact framing
    // (its last packet is short).
    m_network->CountShares(c.shares, m_network->GetMessageWireBytes(message.bytes) - c.headWire,
                           m_network->GetMessagePackets(message.bytes));
    c.headWire = 0;
    return message;
}

void
NboxFlowTransport::HeadSent(uint32_t id)
{
    Connection& c = m_connections[id];
    const Time now = Simulator::Now();
    Message message = FinishHead(c, now);
    const uint32_t slot = m_deliveries.Park({message.bytes, std::move(message.delivered)});
    Simulator::Schedule(m_network->GetDeliveryDelay(c.ports, message.bytes),
                        &NboxFlowTransport::Deliver, this, slot);
    if (!c.queue.empty())
    {
        ScheduleHeadSent(id, now);
        return;
    }
    EndFlow(c);
}

void
NboxFlowTransport::EndFlow(Connection& c)
{
    // A flow alone on its links, or one on whose links no other flow is held back, leaves no
    // other flow a rate to change.
    const bool ratesMayChange = m_network->GetSolver().RemoveFlow(static_cast<uint32_t>(c.flow));
    m_connectionOfFlow[c.flow] = kNoConnection;
    c.flow = -1;
    c.rate = 0;
    if (ratesMayChange)
    {
        ScheduleSolve();
    }
}

void
NboxFlowTransport::Unlone(Connection& c, Time now)
{
    // Only an unfinished lone head is turned back (a finished one is retired): its delivery is
    // still to come, its callback parked.
    NS_ASSERT(c.lone && c.loneSent > now);
    c.loneDelivery.Cancel();
    c.queue.front().delivered = m_deliveries.Take(c.loneSlot).delivered;
    c.lone = false;
}

void
NboxFlowTransport::RetireLone(Connection& c, Time now)
{
    NS_ASSERT(c.lone && c.loneSent <= now && c.queue.size() == 1);
    c.lone = false;
    FinishHead(c, now); // its delivery is scheduled already, with its callback
    EndFlow(c);
}

void
NboxFlowTransport::Deliver(uint32_t slot)
{
    if (!m_deliveries.HasSlot(slot))
    {
        return; // disposed since: DoDispose dropped the parked messages
    }
    Delivery delivery = m_deliveries.Take(slot);
    ++m_stats.messagesDelivered;
    m_stats.bytesDelivered += delivery.bytes;
    if (delivery.delivered)
    {
        delivery.delivered();
    }
}

void
NboxFlowTransport::ScheduleSolve()
{
    if (m_solvePending)
    {
        return;
    }
    // Every change at this instant is solved together (a collective step starts many flows
    // at once): one event after the ones already scheduled now.
    m_solvePending = true;
    Simulator::ScheduleNow(&NboxFlowTransport::Solve, this);
}

void
NboxFlowTransport::Solve()
{
    m_solvePending = false;
    if (!m_network)
    {
        return;
    }
    m_network->GetSolver().Solve(m_changes);
    const Time now = Simulator::Now();
    for (const NboxMaxMinSolver::Change& change : m_changes)
    {
        const uint32_t id = m_connectionOfFlow[change.flow];
        Connection& c = m_connections[id];
        Advance(c, now); // at the old rate, up to now
        c.rate = m_network->GetSolver().GetRate(change.flow);
        ScheduleHeadSent(id, now);
    }
}

void
NboxFlowTransport::Reroute()
{
    // The network has counted every connection's bytes up to now. Each connection takes the
    // path its ECMP choice gives over the new routes; one that is sending goes on from where
    // it is on its new path as a new flow, rated with the rest at this instant. A lone head
    // becomes an ordinary one first, so that no lone flow is left on a link another joins.
    const Time now = Simulator::Now();
    NboxMaxMinSolver& solver = m_network->GetSolver();
    const double weight = m_network->GetWireRatio();
    for (uint32_t id = 0; id < m_connections.size(); ++id)
    {
        Connection& c = m_connections[id];
        c.ports = m_network->RerouteConnection(id, c.shares);
        c.uses.clear();
        for (const NboxFlowPaths::PortShare& s : c.shares)
        {
            c.uses.push_back({s.port, weight * s.share});
        }
        if (c.flow < 0)
        {
            continue;
        }
        if (c.lone)
        {
            Unlone(c, now);
        }
        solver.RemoveFlow(static_cast<uint32_t>(c.flow));
        m_connectionOfFlow[c.flow] = kNoConnection;
        const uint32_t flow = solver.AddFlow(c.uses);
        if (flow >= m_connectionOfFlow.size())
        {
            m_connectionOfFlow.resize(flow + 1, kNoConnection);
        }
        m_connectionOfFlow[flow] = id;
        c.flow = flow;
    }
    ScheduleSolve();
}

void
NboxFlowTransport::Flush()
{
    const Time now = Simulator::Now();
    for (Connection& c : m_connections)
    {
        if (c.lone && c.loneSent <= now)
        {
            RetireLone(c, now); // counts its bytes as HeadSent would have at loneSent
        }
        else if (c.flow >= 0)
        {
            Advance(c, now);
        }
    }
}

NboxTransportStats
NboxFlowTransport::GetStats() const
{
    return m_stats;
}

} // namespace ns3
