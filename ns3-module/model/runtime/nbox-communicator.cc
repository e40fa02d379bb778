#include "nbox-communicator.h"

#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/nbox-settings-attributes.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include "collectives/all_to_all.h"
#include "collectives/group_servers.h"
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
                            "Parallel rings (NCCL channels) each collective is split over; 0: "
                            "as many as NCCL's rings would use the members' NICs (GetChannels).",
                            UintegerValue(2),
                            MakeNboxSettingsUintegerAccessor<NboxCommunicator>(
                                &nbox::coll::CollectiveSettings::channels),
                            MakeUintegerChecker<uint32_t>(0, 64))
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
              .AddAttribute(
                  "Protocol",
                  "How collectives move data between GPUs: Ideal (at the links' rate, no "
                  "latency but the network's), NCCL's LL, LL128 or Simple (each with its base "
                  "latency, hop latencies and share of the links' rate, collectives/protocol.h), "
                  "or Auto (the one NCCL 2.20's tuner picks by size).",
                  EnumValue(static_cast<int>(nbox::coll::ProtocolChoice::kIdeal)),
                  MakeNboxSettingsProtocolAccessor<NboxCommunicator>(),
                  MakeEnumChecker(static_cast<int>(nbox::coll::ProtocolChoice::kIdeal), "Ideal",
                                  static_cast<int>(nbox::coll::ProtocolChoice::kAuto), "Auto",
                                  static_cast<int>(nbox::coll::ProtocolChoice::kLl), "LL",
                                  static_cast<int>(nbox::coll::ProtocolChoice::kLl128), "LL128",
                                  static_cast<int>(nbox::coll::ProtocolChoice::kSimple), "Simple"))
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
    , m_groupShapeFor(kNotComputed)
    , m_groupRanksPerServer(0)
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
    m_groupShapeFor = kNotComputed;
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
NboxCommunicator::GetChannels() const
{
    return static_cast<uint32_t>(nbox::coll::GroupChannels(
        m_settings, static_cast<int>(m_members.size()), GroupRanksPerServer()));
}

uint32_t
NboxCommunicator::GetLaneCount() const
{
    return GetChannels() + 1;
}

uint32_t
NboxCommunicator::GetSize() const
{
    return m_members.size();
}

uint32_t
NboxCommunicator::GetLaneBase() const
{
    return m_laneBase;
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

int
NboxCommunicator::GroupRanksPerServer() const
{
    // O(members), so computed once per value of RanksPerServer (MakeSpec runs for every
    // collective of every member).
    const auto perServer = static_cast<uint32_t>(m_settings.ranks_per_server);
    if (m_groupShapeFor != perServer)
    {
        const std::vector<int> members(m_members.begin(), m_members.end());
        m_groupRanksPerServer
            = nbox::coll::GroupRanksPerServer(members, static_cast<int>(perServer));
        m_groupShapeFor = perServer;
    }
    return m_groupRanksPerServer;
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

nbox::coll::Algorithm
NboxCommunicator::AlgorithmFor(CollectiveOp op, uint64_t bytes) const
{
    return nbox::coll::ChooseAlgorithm(GetCollectiveSettings(), op, bytes,
                                       static_cast<int>(m_members.size()), GroupRanksPerServer());
}

uint64_t
NboxCommunicator::MeanSendBytes(const nbox::work::AllToAllCounts& counts) const
{
    // Every member asks for the same matrix (it is shared): sum its W x W entries once. The
    // cache holds the matrix, so a later one cannot take its address.
    if (counts != m_meanSendOf.first)
    {
        uint64_t total = 0;
        for (uint64_t count : *counts)
        {
            total += count;
        }
        m_meanSendOf = {counts, total / m_members.size()};
    }
    return m_meanSendOf.second;
}

nbox::coll::CollectiveSpec
NboxCommunicator::MakeSpec(CollectiveOp op, uint64_t bytes, nbox::work::AllToAllCounts counts,
                           int root, uint32_t elementBytes) const
{
    nbox::coll::CollectiveSpec spec = nbox::coll::SpecFromSettings(
        GetCollectiveSettings(), op, bytes, elementBytes != 0 ? elementBytes : m_elementBytes,
        static_cast<int>(m_members.size()), GroupRanksPerServer(), root);
    if (op == CollectiveOp::kAllToAllV && counts
        && GetCollectiveSettings().protocol == nbox::coll::ProtocolChoice::kAuto)
    {
        // Its `bytes` are 0: the protocol goes by what a member sends on average, as the
        // uniform all-to-all's by its buffer (NCCL chooses per message; its mean stands in).
        spec.protocol = nbox::coll::ChooseProtocol(
            GetCollectiveSettings(), op, spec.algorithm, MeanSendBytes(counts),
            static_cast<int>(m_members.size()), GroupRanksPerServer());
    }
    spec.counts = std::move(counts);
    return spec;
}

nbox::coll::CollectiveSpec
NboxCommunicator::SpecOf(const NboxCommWork& work) const
{
    return MakeSpec(work.op, work.bytes, work.counts, work.root, work.elementBytes);
}

nbox::coll::ProtocolGroup
NboxCommunicator::ProtocolGroupOf() const
{
    nbox::coll::ProtocolGroup group;
    group.ranks = static_cast<int>(m_members.size());
    const int perServer = GroupRanksPerServer();
    group.nodes = perServer > 0 ? group.ranks / perServer : group.ranks;
    group.nvlink = perServer > 1;
    return group;
}

nbox::coll::RankSchedule
NboxCommunicator::BuildRankSchedule(uint32_t rank, const NboxCommWork& work) const
{
    if (work.isTransfers)
    {
        return nbox::coll::BuildTransfersRankSchedule(
            static_cast<int>(rank), static_cast<int>(m_members.size()), work.transfers,
            static_cast<int>(GetChannels()));
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
NboxCommunicator::ConnectFor(CollectiveOp op, uint64_t bytes, int root, uint32_t elementBytes,
                             nbox::coll::SendLanesCache* cache)
{
    nbox::coll::CollectiveSpec spec = MakeSpec(op, bytes, nullptr, root, elementBytes);
    if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV)
    {
        // Sizes vary between calls: connect what an all-to-all with every block on every
        // channel non-empty uses (every pair for Direct, the server and rail pairs for
        // Hierarchical).
        spec = MakeSpec(CollectiveOp::kAllToAll, uint64_t{m_elementBytes}
                                                     * static_cast<uint64_t>(GetChannels())
                                                     * m_members.size());
    }
    // In the order of first use (the order the transport numbers its connections in);
    // O(channels) per rank for a ring, so a world of thousands connects in linear time.
    nbox::coll::SendLanesCache ownCache;
    const auto& everyRank = (cache != nullptr ? cache : &ownCache)->EveryRank(spec);
    for (uint32_t rank = 0; rank < m_members.size(); ++rank)
    {
        for (const nbox::coll::SendLane& lane : everyRank[rank])
        {
            m_transport->Connect(m_members[rank], m_members[lane.peer], m_laneBase + lane.channel);
        }
    }
}

void
NboxCommunicator::ConnectPointToPoint(uint32_t rank, uint32_t peer)
{
    m_transport->Connect(GetMember(rank), GetMember(peer), m_laneBase + GetChannels());
}

} // namespace ns3
