#include "nbox-communicator.h"

#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/nbox-settings-attributes.h"
#include "ns3/uinteger.h"

#include "collectives/all_to_all.h"
#include "collectives/send_lanes.h"

#include <algorithm>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxCommunicator");
NS_OBJECT_ENSURE_REGISTERED(NboxCommunicator);

using nbox::coll::CollectiveOp;
using nbox::coll::StepKind;

NboxCommWork
NboxCommWork::FromOp(const nbox::work::Op& op)
{
    NboxCommWork work;
    work.isTransfers = op.kind == nbox::work::OpKind::kTransfers;
    work.op = op.collective;
    work.bytes = op.bytes;
    work.root = op.root;
    work.elementBytes = op.element_bytes;
    work.counts = op.counts;
    work.transfers = op.transfers;
    work.label = op.label;
    work.iteration = op.iteration;
    work.microbatch = op.microbatch;
    work.stream = static_cast<uint32_t>(op.stream);
    return work;
}

TypeId
NboxCommunicator::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxCommunicator")
              .SetParent<Object>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxCommunicator>()
              .AddAttribute("Channels",
                            "Parallel rings (NCCL channels) each collective is split over.",
                            UintegerValue(2),
                            MakeNboxSettingsUintegerAccessor<NboxCommunicator>(
                                &nbox::coll::CollectiveSettings::channels),
                            MakeUintegerChecker<uint32_t>(1, 64))
              .AddAttribute("ChunkSize",
                            "Pipelining unit inside a ring step, in bytes (0: no chunking).",
                            UintegerValue(1 << 20),
                            MakeNboxSettingsUintegerAccessor<NboxCommunicator>(
                                &nbox::coll::CollectiveSettings::chunk_bytes),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute(
                  "ElementSize", "Bytes per element; regions are split on element boundaries.",
                  UintegerValue(4), MakeUintegerAccessor(&NboxCommunicator::m_elementBytes),
                  MakeUintegerChecker<uint32_t>(1, 16))
              .AddAttribute("AllReduceAlgorithm",
                            "How all-reduces run: NCCL's ring, hierarchical over servers "
                            "(needs RanksPerServer), direct (every rank exchanges with "
                            "every peer at once), halving-doubling (Rabenseifner's: "
                            "recursive halving, then recursive doubling), or tree (NCCL's "
                            "double binary tree), or auto (ring or tree as NCCL 2.20's tuner "
                            "picks them by size, from NicRate and ScaleUpRate).",
                            EnumValue(static_cast<int>(nbox::coll::AlgorithmChoice::kRing)),
                            MakeNboxSettingsAlgorithmAccessor<NboxCommunicator>("allreduce"),
                            MakeNboxAlgorithmChecker("allreduce"))
              .AddAttribute("AllGatherAlgorithm",
                            "How all-gathers run: NCCL's ring, direct (every rank sends its "
                            "segment to every peer at once), or halving-doubling (recursive "
                            "doubling), or auto (NCCL's choice: the ring).",
                            EnumValue(static_cast<int>(nbox::coll::AlgorithmChoice::kRing)),
                            MakeNboxSettingsAlgorithmAccessor<NboxCommunicator>("allgather"),
                            MakeNboxAlgorithmChecker("allgather"))
              .AddAttribute("ReduceScatterAlgorithm",
                            "How reduce-scatters run: NCCL's ring, direct (every rank sends "
                            "each peer the peer's segment at once), or halving-doubling "
                            "(recursive halving), or auto (NCCL's choice: the ring).",
                            EnumValue(static_cast<int>(nbox::coll::AlgorithmChoice::kRing)),
                            MakeNboxSettingsAlgorithmAccessor<NboxCommunicator>("reducescatter"),
                            MakeNboxAlgorithmChecker("reducescatter"))
              .AddAttribute("BroadcastAlgorithm",
                            "How broadcasts run: NCCL's ring (a pipelined chain from the root), "
                            "tree (two complementary trees over the other ranks below the root, "
                            "channel c on tree c mod 2), or auto (NCCL's choice: the ring).",
                            EnumValue(static_cast<int>(nbox::coll::AlgorithmChoice::kRing)),
                            MakeNboxSettingsAlgorithmAccessor<NboxCommunicator>("broadcast"),
                            MakeNboxAlgorithmChecker("broadcast"))
              .AddAttribute("ReduceAlgorithm",
                            "How reduces run: NCCL's ring (a pipelined chain ending at the "
                            "root), tree (the broadcast's trees, sums going up), or auto "
                            "(NCCL's choice: the ring).",
                            EnumValue(static_cast<int>(nbox::coll::AlgorithmChoice::kRing)),
                            MakeNboxSettingsAlgorithmAccessor<NboxCommunicator>("reduce"),
                            MakeNboxAlgorithmChecker("reduce"))
              .AddAttribute("AllToAllAlgorithm",
                            "How all-to-alls run: Direct (every pair at once, NCCL's), or "
                            "Hierarchical: through the peer of the destination's local index "
                            "inside the sender's server, so only rail-aligned traffic leaves a "
                            "server (NCCL's PXN; needs RanksPerServer).",
                            EnumValue(static_cast<int>(nbox::coll::AlgorithmChoice::kDirect)),
                            MakeNboxSettingsAlgorithmAccessor<NboxCommunicator>("alltoall"),
                            MakeNboxAlgorithmChecker("alltoall"))
              .AddAttribute("CollectiveOrder",
                            "Which of a rank's waiting collectives starts next: the one issued "
                            "first (FIFO, NCCL's stream order) or last (LIFO). Point-to-point "
                            "groups keep their place.",
                            EnumValue(FIFO_ORDER), MakeEnumAccessor(&NboxCommunicator::m_order),
                            MakeEnumChecker(FIFO_ORDER, "FIFO", LIFO_ORDER, "LIFO"))
              .AddAttribute("MaxConcurrentCollectives",
                            "How many collectives a rank runs at once (their messages carry "
                            "tags, so they may share connections).",
                            UintegerValue(1),
                            MakeUintegerAccessor(&NboxCommunicator::m_maxConcurrent),
                            MakeUintegerChecker<uint32_t>(1, 64))
              .AddAttribute("RanksPerServer",
                            "Ranks per scale-up server (GPUs on one NVSwitch), placed "
                            "server-major; 0: no servers. Rings then stay inside a server on "
                            "NVLink and cross between servers on one rail.",
                            UintegerValue(0),
                            MakeNboxSettingsUintegerAccessor<NboxCommunicator>(
                                &nbox::coll::CollectiveSettings::ranks_per_server),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("NicRate",
                            "A rank's network interface rate, each direction: what the Auto "
                            "algorithms (NCCL's tuner) take as the inter-node bandwidth.",
                            DataRateValue(DataRate("100Gbps")),
                            MakeNboxSettingsRateAccessor<NboxCommunicator>(
                                &nbox::coll::CollectiveSettings::nic_bps),
                            MakeDataRateChecker())
              .AddAttribute("ScaleUpRate",
                            "A rank's scale-up (NVLink) rate, each direction: what the Auto "
                            "algorithms take as the intra-server bandwidth when "
                            "RanksPerServer is set.",
                            DataRateValue(DataRate("3600Gbps")),
                            MakeNboxSettingsRateAccessor<NboxCommunicator>(
                                &nbox::coll::CollectiveSettings::scale_up_bps),
                            MakeDataRateChecker());
    return tid;
}

NboxCommunicator::NboxCommunicator()
    : m_elementBytes(4)
    , m_order(FIFO_ORDER)
    , m_maxConcurrent(1)
    , m_laneBase(0)
    , m_id(0)
    , m_parallelism(nbox::work::Parallelism::kOther)
    , m_crossesStages(false)
    , m_fillsServersFor(kNotComputed)
    , m_fillsServers(false)
{
}

void
NboxCommunicator::SetCrossesStages(bool crosses)
{
    m_crossesStages = crosses;
}

bool
NboxCommunicator::CrossesStages() const
{
    return m_crossesStages;
}

void
NboxCommunicator::Setup(std::vector<uint32_t> members, Ptr<NboxTransport> transport,
                        Ptr<NboxJobRecords> records, uint32_t laneBase, uint32_t id,
                        std::string name, nbox::work::Parallelism parallelism)
{
    NS_ABORT_MSG_IF(members.empty(), "NboxCommunicator needs at least one rank");
    m_members = std::move(members);
    m_fillsServersFor = kNotComputed;
    m_ranks.clear();
    m_ranks.resize(m_members.size());
    m_transport = transport;
    m_records = records;
    m_laneBase = laneBase;
    m_id = id;
    m_name = std::move(name);
    m_parallelism = parallelism;
    m_external.clear();
    m_onExternalArrival = nullptr;
}

void
NboxCommunicator::Setup(uint32_t worldSize, Ptr<NboxTransport> transport,
                        Ptr<NboxJobRecords> records)
{
    std::vector<uint32_t> members(worldSize);
    for (uint32_t r = 0; r < worldSize; ++r)
    {
        members[r] = r;
    }
    Setup(std::move(members), transport, records, 0, 0, "world", nbox::work::Parallelism::kOther);
}

void
NboxCommunicator::DoDispose()
{
    m_ranks.clear();
    m_transport = nullptr;
    m_records = nullptr;
    m_onExternalArrival = nullptr;
    Object::DoDispose();
}

uint32_t
NboxCommunicator::GetLaneCount() const
{
    return static_cast<uint32_t>(m_settings.channels) + 1;
}

uint32_t
NboxCommunicator::GetSize() const
{
    return m_members.size();
}

uint32_t
NboxCommunicator::GetMember(uint32_t rank) const
{
    NS_ABORT_MSG_IF(rank >= m_members.size(), "no rank " << rank << " in communicator '" << m_name
                                                         << "' of " << m_members.size());
    return m_members[rank];
}

uint32_t
NboxCommunicator::GetId() const
{
    return m_id;
}

const std::string&
NboxCommunicator::GetName() const
{
    return m_name;
}

nbox::work::Parallelism
NboxCommunicator::GetParallelism() const
{
    return m_parallelism;
}

bool
NboxCommunicator::FillsServers() const
{
    // Rings stay inside servers only when the communicator's members fill whole servers in
    // rank order, as the world does on a rail topology. O(members), so computed once per
    // value of RanksPerServer (MakeSpec runs for every collective of every member).
    const auto perServer = static_cast<uint32_t>(m_settings.ranks_per_server);
    if (m_fillsServersFor != perServer)
    {
        bool fills = perServer > 0 && m_members.size() % perServer == 0;
        for (uint32_t r = 0; fills && r < m_members.size(); ++r)
        {
            fills = m_members[r] == m_members[0] + r && m_members[0] % perServer == 0;
        }
        m_fillsServers = fills;
        m_fillsServersFor = perServer;
    }
    return m_fillsServers;
}

const nbox::coll::CollectiveSettings&
NboxCommunicator::GetCollectiveSettings() const
{
    return m_settings;
}

void
NboxCommunicator::SetCollectiveSettings(const nbox::coll::CollectiveSettings& settings)
{
    try
    {
        nbox::coll::ValidateSettings(settings);
    }
    catch (const std::invalid_argument& e)
    {
        NS_FATAL_ERROR("NboxCommunicator::SetCollectiveSettings: " << e.what());
    }
    m_settings = settings;
}

int
NboxCommunicator::NextToStart(size_t waiting, const std::function<bool(size_t)>& isGroup,
                              size_t running, bool groupRunning) const
{
    if (waiting == 0 || groupRunning)
    {
        return -1;
    }
    size_t group = 0;
    while (group < waiting && !isGroup(group))
    {
        ++group;
    }
    if (group == 0)
    {
        return running == 0 ? 0 : -1;
    }
    if (running >= m_maxConcurrent)
    {
        return -1;
    }
    return static_cast<int>(m_order == LIFO_ORDER ? group - 1 : 0);
}

nbox::coll::Algorithm
NboxCommunicator::AlgorithmFor(CollectiveOp op, uint64_t bytes) const
{
    return nbox::coll::ChooseAlgorithm(GetCollectiveSettings(), op, bytes,
                                       static_cast<int>(m_members.size()), FillsServers());
}

nbox::coll::CollectiveSpec
NboxCommunicator::MakeSpec(CollectiveOp op, uint64_t bytes, nbox::work::AllToAllCounts counts,
                           int root, uint32_t elementBytes) const
{
    nbox::coll::CollectiveSpec spec = nbox::coll::SpecFromSettings(
        GetCollectiveSettings(), op, bytes, elementBytes != 0 ? elementBytes : m_elementBytes,
        static_cast<int>(m_members.size()), FillsServers(), root);
    spec.counts = std::move(counts);
    return spec;
}

nbox::coll::CollectiveSpec
NboxCommunicator::SpecOf(const NboxCommWork& work) const
{
    return MakeSpec(work.op, work.bytes, work.counts, work.root, work.elementBytes);
}

nbox::coll::RankSchedule
NboxCommunicator::BuildRankSchedule(uint32_t rank, const NboxCommWork& work) const
{
    if (work.isTransfers)
    {
        return nbox::coll::BuildTransfersRankSchedule(static_cast<int>(rank),
                                                      static_cast<int>(m_members.size()),
                                                      work.transfers, m_settings.channels);
    }
    return nbox::coll::BuildRankSchedule(SpecOf(work), static_cast<int>(rank));
}

std::unique_ptr<nbox::coll::StepSource>
NboxCommunicator::BuildStepSource(uint32_t rank, const NboxCommWork& work) const
{
    if (work.isTransfers)
    {
        return std::make_unique<nbox::coll::WholeScheduleSource>(BuildRankSchedule(rank, work));
    }
    return nbox::coll::BuildRankStepSource(SpecOf(work), static_cast<int>(rank));
}

void
NboxCommunicator::SetExternalRanks(std::vector<bool> isExternal, ExternalArrival onArrival)
{
    NS_ABORT_MSG_IF(isExternal.size() != m_ranks.size(),
                    "NboxCommunicator::SetExternalRanks: " << isExternal.size() << " flags for "
                                                           << m_ranks.size() << " ranks");
    NS_ABORT_MSG_IF(!onArrival, "NboxCommunicator::SetExternalRanks without an arrival callback");
    for (uint32_t rank = 0; rank < m_ranks.size(); ++rank)
    {
        NS_ABORT_MSG_IF(isExternal[rank] && !m_ranks[rank].queue.empty(),
                        "rank " << rank << " made external with collectives on its stream");
    }
    m_external = std::move(isExternal);
    m_onExternalArrival = std::move(onArrival);
}

bool
NboxCommunicator::BuildsCollectiveSchedules() const
{
    // Real ranks' messages must reach the gateway one by one, whatever the transport.
    return m_transport->GetCollectiveTimer() == nullptr || !m_external.empty();
}

bool
NboxCommunicator::IsExternal(uint32_t rank) const
{
    NS_ABORT_MSG_IF(rank >= m_ranks.size(),
                    "no rank " << rank << " in a communicator of " << m_ranks.size());
    return !m_external.empty() && m_external[rank];
}

void
NboxCommunicator::DeliverExternal(uint32_t dstRank, uint32_t srcRank, uint32_t channel,
                                  uint64_t bytes)
{
    NS_LOG_FUNCTION(this << dstRank << srcRank << channel << bytes);
    NS_ABORT_MSG_IF(!IsExternal(srcRank),
                    "DeliverExternal from rank " << srcRank << ", which is not external");
    NS_ABORT_MSG_IF(IsExternal(dstRank), "DeliverExternal to external rank "
                                             << dstRank << " (from rank " << srcRank
                                             << "): the gateway matches those");
    // A real rank's send is posted outside the simulation; its arrival is all ns-3 knows, and
    // its messages carry no tag: they go to the op that expects them next (one runs at a time
    // with real ranks).
    OnArrival(dstRank, srcRank, channel, bytes, Simulator::Now(), NboxMessageLog::kNoMessage,
              kUntagged);
}

void
NboxCommunicator::ConnectFor(CollectiveOp op, uint64_t bytes, int root, uint32_t elementBytes)
{
    nbox::coll::CollectiveSpec spec = MakeSpec(op, bytes, nullptr, root, elementBytes);
    if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV)
    {
        // Sizes vary between calls: connect what an all-to-all with every block on every
        // channel non-empty uses (every pair for Direct, the server and rail pairs for
        // Hierarchical).
        spec = MakeSpec(CollectiveOp::kAllToAll,
                        uint64_t{m_elementBytes} * static_cast<uint64_t>(m_settings.channels) *
                            m_members.size());
    }
    for (uint32_t rank = 0; rank < m_members.size(); ++rank)
    {
        // In the order of first use (the order the transport numbers its connections in);
        // O(channels) per rank for a ring, so a world of thousands connects in linear time.
        for (const nbox::coll::SendLane& lane : nbox::coll::SendLanes(spec, static_cast<int>(rank)))
        {
            m_transport->Connect(m_members[rank], m_members[lane.peer], m_laneBase + lane.channel);
        }
    }
}

void
NboxCommunicator::ConnectPointToPoint(uint32_t rank, uint32_t peer)
{
    m_transport->Connect(GetMember(rank), GetMember(peer), m_laneBase + static_cast<uint32_t>(m_settings.channels));
}

void
NboxCommunicator::Issue(uint32_t rank, NboxCommWork work, Done done)
{
    NS_LOG_FUNCTION(this << rank << work.label);
    NS_ABORT_MSG_IF(IsExternal(rank), "'" << work.label << "' issued on external rank " << rank
                                          << " of '" << m_name
                                          << "': its schedule runs outside the simulator");
    RankState& state = m_ranks.at(rank);
    uint64_t tag = kUntagged;
    if (!work.isTransfers)
    {
        tag = work.sequence != NboxCommWork::kNoSequence ? work.sequence
                                                         : state.collectivesIssued++;
    }
    state.queue.push_back(Pending{std::move(work), std::move(done), Simulator::Now(), tag});
    StartNext(rank);
}

uint64_t
NboxCommunicator::GetUnconsumedMessages() const
{
    uint64_t count = 0;
    for (const RankState& state : m_ranks)
    {
        for (const auto& [key, inbox] : state.tagged)
        {
            count += inbox.arrived.size();
        }
        for (const auto& [key, inbox] : state.untagged)
        {
            count += inbox.arrived.size();
        }
    }
    return count;
}

bool
NboxCommunicator::IsIdle(uint32_t rank) const
{
    return m_ranks.at(rank).queue.empty() && m_ranks.at(rank).running.empty();
}

void
NboxCommunicator::WhenIdle(uint32_t rank, std::function<void()> idle)
{
    if (IsIdle(rank))
    {
        idle();
        return;
    }
    NS_ABORT_MSG_IF(m_ranks[rank].whenIdle, "rank " << rank << " already waits for its stream");
    m_ranks[rank].whenIdle = std::move(idle);
}

void
NboxCommunicator::StartNext(uint32_t rank)
{
    RankState& state = m_ranks[rank];
    for (int next = 0; next >= 0;)
    {
        next = NextToStart(
            state.queue.size(), [&state](size_t i) { return state.queue[i].work.isTransfers; },
            state.running.size(), state.running.count(kUntagged) > 0);
        if (next >= 0)
        {
            Pending pending = std::move(state.queue[next]);
            state.queue.erase(state.queue.begin() + next);
            Start(rank, std::move(pending));
        }
    }
    if (state.running.empty() && state.whenIdle)
    {
        auto idle = std::move(state.whenIdle);
        state.whenIdle = nullptr;
        idle();
    }
}

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
    const Time duration
        = timer.TimeCollective(SpecOf(work), m_members, m_laneBase);
    // In the order the members started it, so equal end times finish in a fixed order.
    for (uint32_t member : instance.timedRanks)
    {
        Simulator::Schedule(duration, &NboxCommunicator::Finish, this, member, running.tag);
    }
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
            const auto peer = static_cast<uint32_t>(step.peer);
            const auto channel = static_cast<uint32_t>(step.channel);
            if (step.kind == StepKind::kSend)
            {
                const uint64_t message = m_records->messages.IsEnabled()
                                           ? LogSend(running, step)
                                           : NboxMessageLog::kNoMessage;
                const uint32_t slot = m_sent.Park(
                    {rank, id, peer, channel, step.bytes, Simulator::Now(), tag, message});
                // The callback carries the slot only: std::function holds it without allocating.
                m_transport->Send(m_members[rank], m_members[peer], m_laneBase + channel,
                                  step.bytes, [this, slot]() { OnDelivered(slot); });
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
         << spec.element_bytes << "-byte elements, " << nbox::coll::ToString(spec.algorithm)
         << ", " << spec.channels << " channel" << (spec.channels == 1 ? "" : "s");
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

uint64_t
NboxCommunicator::RecordBytes(uint32_t rank, const NboxCommWork& work) const
{
    if (work.isTransfers)
    {
        // What the larger direction of the group moves (nccl-tests' sendrecv size).
        uint64_t sent = 0;
        uint64_t received = 0;
        for (const auto& t : work.transfers)
        {
            (t.kind == StepKind::kSend ? sent : received) += t.bytes;
        }
        return std::max(sent, received);
    }
    if (work.op == CollectiveOp::kAllToAllV)
    {
        // The mean of what a member sends, its own block included (the uniform case's size).
        uint64_t total = 0;
        for (uint64_t count : *work.counts)
        {
            total += count;
        }
        return total / m_members.size();
    }
    (void)rank;
    return work.bytes;
}

void
NboxCommunicator::Finish(uint32_t rank, uint64_t tag)
{
    RankState& state = m_ranks[rank];
    auto node = state.running.extract(tag);
    NS_ABORT_MSG_IF(node.empty(), "rank " << rank << " finished an op it was not running");
    const Running& running = *node.mapped();
    const Pending& head = running.pending;
    NboxCollectiveRecord record;
    record.rank = m_members[rank];
    record.iteration = head.work.iteration;
    record.microbatch = head.work.microbatch;
    record.label = head.work.label;
    record.op = head.work.op;
    record.isTransfers = head.work.isTransfers;
    if (!head.work.isTransfers)
    {
        record.algorithm = AlgorithmFor(head.work.op, head.work.bytes);
    }
    record.bytes = RecordBytes(rank, head.work);
    record.groupSize = static_cast<int>(m_members.size());
    record.comm = m_id;
    record.parallelism = m_parallelism;
    record.stream = head.work.stream;
    record.issued = head.issued;
    record.started = running.started;
    record.finished = Simulator::Now();
    record.peersReady = running.peersPosted;
    if (!head.work.isTransfers)
    {
        auto instance = m_instances.find(running.tag);
        record.peersReady = instance->second.lastStart;
        uint32_t emulated = m_members.size();
        for (bool external : m_external)
        {
            emulated -= external ? 1 : 0;
        }
        if (++instance->second.finished == emulated)
        {
            m_instances.erase(instance);
        }
    }
    const Time peersReady = record.peersReady;
    m_records->collectives.push_back(std::move(record));
    Done done = std::move(node.mapped()->pending.done);
    node = {};
    if (done)
    {
        done(peersReady);
    }
    // `done` may have issued more on this rank (and started it); start what may start now.
    StartNext(rank);
}

} // namespace ns3
