#include "nbox-analytical-transport.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include "collectives/traffic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxAnalyticalTransport");

NS_OBJECT_ENSURE_REGISTERED(NboxAnalyticalTransport);

namespace
{

Time
SecondsRoundedUp(double seconds)
{
    return NanoSeconds(static_cast<int64_t>(std::ceil(seconds * 1e9)));
}

} // namespace

TypeId
NboxAnalyticalTransport::GetTypeId()
{
    auto factor = [](const char* op)
    {
        return std::string("Effective-bandwidth factor C of ") + op
             + ": the bandwidth term of its alpha-beta time is divided by it (1: the ideal "
               "bottleneck rate; nbox-fit-analytical fits it from packet or flow runs).";
    };
    static const std::string allReduce = factor("all-reduce");
    static const std::string allGather = factor("all-gather");
    static const std::string reduceScatter = factor("reduce-scatter");
    static const std::string broadcast = factor("broadcast");
    static const std::string reduce = factor("reduce");
    static const std::string allToAll = factor("all-to-all (uniform and -v)");
    static const std::string pointToPoint = factor("point-to-point messages");
    static TypeId tid
        = TypeId("ns3::NboxAnalyticalTransport")
              .SetParent<NboxTransport>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxAnalyticalTransport>()
              .AddAttribute("AllReduceFactor", allReduce, DoubleValue(1.0),
                            MakeDoubleAccessor(&NboxAnalyticalTransport::m_allReduceFactor),
                            MakeDoubleChecker<double>(0.01, 10))
              .AddAttribute("AllGatherFactor", allGather, DoubleValue(1.0),
                            MakeDoubleAccessor(&NboxAnalyticalTransport::m_allGatherFactor),
                            MakeDoubleChecker<double>(0.01, 10))
              .AddAttribute("ReduceScatterFactor", reduceScatter, DoubleValue(1.0),
                            MakeDoubleAccessor(&NboxAnalyticalTransport::m_reduceScatterFactor),
                            MakeDoubleChecker<double>(0.01, 10))
              .AddAttribute("BroadcastFactor", broadcast, DoubleValue(1.0),
                            MakeDoubleAccessor(&NboxAnalyticalTransport::m_broadcastFactor),
                            MakeDoubleChecker<double>(0.01, 10))
              .AddAttribute("ReduceFactor", reduce, DoubleValue(1.0),
                            MakeDoubleAccessor(&NboxAnalyticalTransport::m_reduceFactor),
                            MakeDoubleChecker<double>(0.01, 10))
              .AddAttribute("AllToAllFactor", allToAll, DoubleValue(1.0),
                            MakeDoubleAccessor(&NboxAnalyticalTransport::m_allToAllFactor),
                            MakeDoubleChecker<double>(0.01, 10))
              .AddAttribute("PointToPointFactor", pointToPoint, DoubleValue(1.0),
                            MakeDoubleAccessor(&NboxAnalyticalTransport::m_pointToPointFactor),
                            MakeDoubleChecker<double>(0.01, 10));
    return tid;
}

NboxAnalyticalTransport::NboxAnalyticalTransport()
    : m_allReduceFactor(1)
    , m_allGatherFactor(1)
    , m_reduceScatterFactor(1)
    , m_broadcastFactor(1)
    , m_reduceFactor(1)
    , m_allToAllFactor(1)
    , m_pointToPointFactor(1)
{
    m_stats.ignoresContention = true;
}

NboxAnalyticalTransport::NboxAnalyticalTransport(Ptr<NboxFlowNetwork> network,
                                                 const std::vector<int>& rankToHost)
    : NboxAnalyticalTransport()
{
    if (!network)
    {
        throw std::invalid_argument("NboxAnalyticalTransport: no network");
    }
    network->PlaceRanks(rankToHost);
    m_network = network;
    m_portLoad.assign(network->GetNPorts(), 0.0);
    m_portPackets.assign(network->GetNPorts(), 0.0);
    m_stageLoad.assign(network->GetNPorts(), 0.0);
    m_nicIdleAt.assign(network->GetNPorts(), Time());
    m_portBusyUntil.assign(network->GetNPorts(), Time());
    // Raw pointer: the network must not keep its transport alive (DoDispose removes it).
    m_network->AddChangeListener(
        this, [this](uint32_t port) { PortRateChanged(port); }, [this]() { Reroute(); });
}

NboxAnalyticalTransport::~NboxAnalyticalTransport() = default;

void
NboxAnalyticalTransport::DoDispose()
{
    if (m_network)
    {
        m_network->RemoveChangeListener(this);
    }
    m_network = nullptr;
    m_timed.clear();
    NboxTransport::DoDispose();
}

double
NboxAnalyticalTransport::SlowestRateBps(const std::vector<NboxFlowPaths::PortShare>& shares) const
{
    double slowest = std::numeric_limits<double>::infinity();
    for (const NboxFlowPaths::PortShare& s : shares)
    {
        // A sprayed connection's bytes leave a port at its rate over its share of them.
        slowest = std::min(slowest, m_network->GetPortRateBps(s.port) / s.share);
    }
    return slowest;
}

void
NboxAnalyticalTransport::PortRateChanged(uint32_t port)
{
    // Collectives and messages timed from now on see the new rate; those timed already keep
    // the time they were given (the model times each once, when it starts).
    m_timed.clear();
    for (Connection& c : m_connections)
    {
        for (const NboxFlowPaths::PortShare& s : c.shares)
        {
            if (s.port == port)
            {
                c.slowestRateBps = SlowestRateBps(c.shares);
                break;
            }
        }
    }
}

void
NboxAnalyticalTransport::Reroute()
{
    // What is timed from now on crosses the new paths; what was timed keeps its time.
    m_timed.clear();
    for (uint32_t id = 0; id < m_connections.size(); ++id)
    {
        Connection& c = m_connections[id];
        c.ports = m_network->RerouteConnection(id, c.shares);
        c.slowestRateBps = SlowestRateBps(c.shares);
    }
}

uint32_t
NboxAnalyticalTransport::GetOrOpen(uint32_t srcRank, uint32_t dstRank, uint32_t channel)
{
    const uint32_t known = m_connectionIds.Find(srcRank, dstRank, channel);
    if (known != NboxConnectionIndex::kNone)
    {
        return known;
    }
    Connection c;
    c.ports = m_network->RouteNewConnection(srcRank, dstRank, c.shares);
    c.slowestRateBps = SlowestRateBps(c.shares);
    const auto id = static_cast<uint32_t>(m_connections.size());
    m_connections.push_back(std::move(c));
    m_connectionIds.Add(srcRank, dstRank, channel, id);
    ++m_stats.connections;
    return id;
}

void
NboxAnalyticalTransport::Connect(uint32_t srcRank, uint32_t dstRank, uint32_t channel)
{
    GetOrOpen(srcRank, dstRank, channel);
}

void
NboxAnalyticalTransport::WhenAllConnected(std::function<void()> ready)
{
    // No handshake. Called back from an event, so the caller is never re-entered.
    Simulator::ScheduleNow(std::move(ready));
}

void
NboxAnalyticalTransport::Send(uint32_t srcRank, uint32_t dstRank, uint32_t channel, uint64_t bytes,
                              std::function<void()> delivered)
{
    NS_ABORT_MSG_IF(bytes == 0, "NboxAnalyticalTransport::Send: empty message");
    Connection& c = m_connections[GetOrOpen(srcRank, dstRank, channel)];
    const double wireBytes = m_network->GetMessageWireBytes(bytes);
    // The sending NIC serves its messages one after the other, at the route's slowest rate.
    Time& nicIdleAt = m_nicIdleAt[c.ports.front()];
    const Time start = std::max(Simulator::Now(), nicIdleAt);
    nicIdleAt = start + SecondsRoundedUp(8 * wireBytes / c.slowestRateBps / m_pointToPointFactor);
    m_network->CountShares(c.shares, wireBytes, m_network->GetMessagePackets(bytes));
    // Past its NIC (whose queue is modelled): the ports it shares with nobody, it thinks.
    Time overlap;
    for (const NboxFlowPaths::PortShare& s : c.shares)
    {
        if (s.port != c.ports.front())
        {
            overlap = std::max(overlap, Occupy(s.port, start, nicIdleAt));
        }
    }
    CountContention(overlap);
    ++m_stats.messagesSent;
    m_stats.bytesSent += bytes;
    Simulator::Schedule(nicIdleAt + m_network->GetDeliveryDelay(c.ports, bytes) - Simulator::Now(),
                        [this, bytes, delivered = std::move(delivered)]()
                        {
                            ++m_stats.messagesDelivered;
                            m_stats.bytesDelivered += bytes;
                            if (delivered)
                            {
                                delivered();
                            }
                        });
}

Time
NboxAnalyticalTransport::Occupy(uint32_t port, Time start, Time end)
{
    Time& busyUntil = m_portBusyUntil[port];
    const Time overlap = busyUntil > start ? std::min(busyUntil, end) - start : Time();
    busyUntil = std::max(busyUntil, end);
    return overlap;
}

void
NboxAnalyticalTransport::CountContention(Time overlap)
{
    if (overlap.IsStrictlyPositive())
    {
        ++m_stats.contendedOperations;
        m_stats.longestContentionSeconds
            = std::max(m_stats.longestContentionSeconds, overlap.GetSeconds());
    }
}

NboxTransportStats
NboxAnalyticalTransport::GetStats() const
{
    return m_stats;
}

NboxCollectiveTimer*
NboxAnalyticalTransport::GetCollectiveTimer()
{
    return this;
}

double
NboxAnalyticalTransport::GetFactor(nbox::coll::CollectiveOp op) const
{
    switch (op)
    {
    case nbox::coll::CollectiveOp::kAllReduce:
        return m_allReduceFactor;
    case nbox::coll::CollectiveOp::kAllGather:
        return m_allGatherFactor;
    case nbox::coll::CollectiveOp::kReduceScatter:
        return m_reduceScatterFactor;
    case nbox::coll::CollectiveOp::kBroadcast:
        return m_broadcastFactor;
    case nbox::coll::CollectiveOp::kReduce:
        return m_reduceFactor;
    case nbox::coll::CollectiveOp::kAllToAll:
    case nbox::coll::CollectiveOp::kAllToAllV:
        return m_allToAllFactor;
    }
    NS_FATAL_ERROR("NboxAnalyticalTransport: unknown collective op");
}

NboxAnalyticalTransport::Timed
NboxAnalyticalTransport::Compute(const nbox::coll::CollectiveSpec& spec,
                                 const std::vector<uint32_t>& members, uint32_t laneBase,
                                 double hopSeconds)
{
    using Overlap = nbox::coll::CriticalPath::Overlap;
    const nbox::coll::CriticalPath path = nbox::coll::CriticalPathOf(spec);
    auto connectionOf = [&](const nbox::coll::LaneTraffic& lane) -> const Connection&
    {
        return m_connections[GetOrOpen(members[lane.src], members[lane.dst],
                                       laneBase + static_cast<uint32_t>(lane.channel))];
    };
    // Pass 1: the wire bytes and packets every port carries.
    std::vector<uint32_t> touched;
    Timed timed;
    nbox::coll::ForEachLane(spec,
                            [&](const nbox::coll::LaneTraffic& lane)
                            {
                                const Connection& c = connectionOf(lane);
                                const double wire = m_network->GetMessageWireBytes(lane.bytes);
                                const auto packets
                                    = static_cast<double>(m_network->GetMessagePackets(lane.bytes));
                                for (const NboxFlowPaths::PortShare& s : c.shares)
                                {
                                    if (m_portPackets[s.port] == 0)
                                    {
                                        touched.push_back(s.port);
                                    }
                                    m_portLoad[s.port] += s.share * wire;
                                    m_portPackets[s.port] += s.share * packets;
                                }
                                timed.payloadBytes += lane.bytes;
                            });
    // Pass 2, per stage: each lane's busy time (its busiest port's bytes over its rate: the
    // lanes sharing a port share its time) and latency, their largest and their sums.
    const size_t stages = path.steps.size();
    std::vector<double> busyMax(stages);
    std::vector<double> busySum(stages);
    std::vector<double> alphaMax(stages);
    std::vector<double> alphaSum(stages);
    std::vector<double> chunkSum(stages);
    std::vector<double> busiestAlpha(stages);
    std::vector<uint64_t> lanes(stages);
    nbox::coll::ForEachLane(
        spec,
        [&](const nbox::coll::LaneTraffic& lane)
        {
            const Connection& c = connectionOf(lane);
            double busy = 0;
            for (const NboxFlowPaths::PortShare& s : c.shares)
            {
                busy = std::max(busy, 8 * m_portLoad[s.port] / m_network->GetPortRateBps(s.port));
            }
            const auto stage = static_cast<size_t>(lane.stage);
            const double busiestBefore = busyMax[stage];
            busyMax[stage] = std::max(busyMax[stage], busy);
            busySum[stage] += busy;
            // The latency of the lane's typical message, whose last packet the route's further
            // hops store and forward: a step's share of the lane's bytes, cut into chunks.
            const auto steps = static_cast<uint64_t>(std::max(1, path.steps[stage]));
            uint64_t message = (lane.bytes + steps - 1) / steps;
            uint64_t chunks = 1;
            if (spec.chunk_bytes > 0)
            {
                chunks = (message + spec.chunk_bytes - 1) / spec.chunk_bytes;
                message = std::min(message, spec.chunk_bytes);
            }
            chunkSum[stage] += static_cast<double>(chunks);
            const double alpha = m_network->GetDeliveryDelaySeconds(c.ports, message);
            if (busy >= busiestBefore)
            {
                // Of the busiest lanes, the one whose last message takes longest to arrive.
                busiestAlpha[stage]
                    = busy > busiestBefore ? alpha : std::max(busiestAlpha[stage], alpha);
            }
            alphaMax[stage] = std::max(alphaMax[stage], alpha);
            alphaSum[stage] += alpha;
            ++lanes[stage];
        });
    for (uint32_t port : touched)
    {
        timed.ports.push_back({port, m_portLoad[port], m_portPackets[port]});
        m_portLoad[port] = 0;
        m_portPackets[port] = 0;
    }
    // The formulas of CriticalPath::Overlap, the bandwidth terms divided by the factor C.
    const double factor = GetFactor(spec.op);
    auto mean = [&](const std::vector<double>& sum, size_t stage)
    { return lanes[stage] > 0 ? sum[stage] / static_cast<double>(lanes[stage]) : 0.0; };
    const auto busiestStage
        = static_cast<size_t>(std::max_element(busyMax.begin(), busyMax.end()) - busyMax.begin());
    const double busiest = busyMax[busiestStage] / factor;
    double seconds = 0;
    switch (path.overlap)
    {
    case Overlap::kRing:
    {
        // A step of q chunks moves on chunk by chunk: a chunk waits for its predecessor's
        // step and for the chunk ahead of it on its lane, so the critical path crosses the
        // steps with one chunk each and fills the last step's other q - 1 chunks:
        // steps x (chunk + latency) + (q - 1) x chunk, chunk = busy / (steps x q). One chunk a
        // step is the lock-step ring; the protocol's hops lie on the same path.
        double lockStep = hopSeconds;
        int totalSteps = 0;
        for (size_t stage = 0; stage < stages; ++stage)
        {
            const int steps = std::max(1, path.steps[stage]);
            totalSteps += steps;
            const double chunks = std::max(1.0, mean(chunkSum, stage));
            lockStep += mean(busySum, stage) / factor * (steps + chunks - 1) / (steps * chunks)
                      + steps * mean(alphaSum, stage);
        }
        // The busiest lane cannot start before its first message's hop nor end before its
        // last message arrives.
        const double busiestPath = hopSeconds / totalSteps + busiest + busiestAlpha[busiestStage];
        seconds = std::max(busiestPath, lockStep);
        break;
    }
    case Overlap::kChain:
        for (size_t stage = 0; stage < stages; ++stage)
        {
            seconds += path.steps[stage] * mean(alphaSum, stage);
        }
        seconds += busiest * path.bandwidth_scale;
        break;
    case Overlap::kParallel:
        for (size_t stage = 0; stage < stages; ++stage)
        {
            seconds += path.steps[stage] * alphaMax[stage];
        }
        seconds += busiest;
        break;
    case Overlap::kSequential:
    {
        const std::vector<double> stageBusy = StageBusyTimes(spec, members, laneBase, stages);
        for (size_t stage = 0; stage < stages; ++stage)
        {
            seconds += path.steps[stage] * alphaMax[stage] + stageBusy[stage] / factor;
        }
        break;
    }
    }
    if (path.overlap != Overlap::kRing)
    {
        seconds += hopSeconds; // a chain's, tree's or round's hops are all on its path
    }
    timed.duration = SecondsRoundedUp(seconds);
    return timed;
}

std::vector<double>
NboxAnalyticalTransport::StageBusyTimes(const nbox::coll::CollectiveSpec& spec,
                                        const std::vector<uint32_t>& members, uint32_t laneBase,
                                        size_t stages)
{
    std::vector<double> busiest(stages);
    std::vector<uint32_t> touched;
    for (size_t stage = 0; stage < stages; ++stage)
    {
        auto forEachLaneOfStage = [&](auto visit)
        {
            nbox::coll::ForEachLane(
                spec,
                [&](const nbox::coll::LaneTraffic& lane)
                {
                    if (static_cast<size_t>(lane.stage) == stage)
                    {
                        visit(lane, m_connections[GetOrOpen(
                                        members[lane.src], members[lane.dst],
                                        laneBase + static_cast<uint32_t>(lane.channel))]);
                    }
                });
        };
        forEachLaneOfStage(
            [&](const nbox::coll::LaneTraffic& lane, const Connection& c)
            {
                const double wire = m_network->GetMessageWireBytes(lane.bytes);
                for (const NboxFlowPaths::PortShare& s : c.shares)
                {
                    if (m_stageLoad[s.port] == 0)
                    {
                        touched.push_back(s.port);
                    }
                    m_stageLoad[s.port] += s.share * wire;
                }
            });
        forEachLaneOfStage(
            [&](const nbox::coll::LaneTraffic&, const Connection& c)
            {
                for (const NboxFlowPaths::PortShare& s : c.shares)
                {
                    busiest[stage]
                        = std::max(busiest[stage],
                                   8 * m_stageLoad[s.port] / m_network->GetPortRateBps(s.port));
                }
            });
        for (uint32_t port : touched)
        {
            m_stageLoad[port] = 0;
        }
        touched.clear();
    }
    return busiest;
}

Time
NboxAnalyticalTransport::TimeCollective(const nbox::coll::CollectiveSpec& spec,
                                        const std::vector<uint32_t>& members, uint32_t laneBase,
                                        Time hopLatency)
{
    // A communicator's members, channels, servers and element size never change, so its lane
    // base and the spec's varying fields identify a timing; all-to-all-v sizes vary per call.
    const auto key
        = std::make_tuple(laneBase, static_cast<int>(spec.op), static_cast<int>(spec.algorithm),
                          spec.bytes, spec.chunk_bytes, spec.root, hopLatency.GetNanoSeconds());
    const bool reusable = spec.op != nbox::coll::CollectiveOp::kAllToAllV;
    auto it = reusable ? m_timed.find(key) : m_timed.end();
    Timed computed;
    if (it == m_timed.end())
    {
        computed = Compute(spec, members, laneBase, hopLatency.GetSeconds());
        if (reusable)
        {
            it = m_timed.emplace(key, std::move(computed)).first;
        }
    }
    const Timed& timed = it != m_timed.end() ? it->second : computed;
    // Its bytes move without messages, so the message counts no longer describe the run.
    m_network->AddAbsent("messages", "the analytical model times whole collectives without "
                                     "cutting them into messages");
    for (const PortCount& count : timed.ports)
    {
        m_network->CountPort(count.port, count.wireBytes, count.packets);
    }
    m_stats.bytesSent += timed.payloadBytes;
    const uint64_t payload = timed.payloadBytes;
    Simulator::Schedule(timed.duration, [this, payload]() { m_stats.bytesDelivered += payload; });
    Time overlap;
    for (const PortCount& count : timed.ports)
    {
        overlap = std::max(overlap,
                           Occupy(count.port, Simulator::Now(), Simulator::Now() + timed.duration));
    }
    CountContention(overlap);
    return timed.duration;
}

} // namespace ns3
