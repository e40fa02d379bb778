#include "nbox-roce-switch.h"

#include "ns3/nbox-int-tag.h"

#include "nbox-roce-channel.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/nbox-flow-hash.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxRoceSwitch");

NS_OBJECT_ENSURE_REGISTERED(NboxRoceSwitch);

TypeId
NboxRoceSwitch::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxRoceSwitch")
              .SetParent<Object>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxRoceSwitch>()
              .AddAttribute(
                  "Seed",
                  "Per-switch value mixed into the flow hash, so that successive "
                  "tiers do not make correlated ECMP choices.",
                  UintegerValue(0),
                  MakeUintegerAccessor(&NboxRoceSwitch::SetSeed, &NboxRoceSwitch::GetSeed),
                  MakeUintegerChecker<uint64_t>())
              .AddAttribute(
                  "LoadBalancing",
                  "How a packet picks among equal-cost ports: Ecmp (a hash of its "
                  "flow, so a QP keeps one path), Spray (per packet, the ports of "
                  "the set in turn; RoCE receivers then need AcceptOutOfOrder) or Flowlet "
                  "(a QP keeps its path until it pauses for FlowletTimeout, then draws "
                  "another: LetFlow).",
                  EnumValue(NboxRoceSwitch::ECMP),
                  MakeEnumAccessor(&NboxRoceSwitch::m_loadBalancing),
                  MakeEnumChecker(NboxRoceSwitch::ECMP, "Ecmp", NboxRoceSwitch::SPRAY, "Spray",
                                  NboxRoceSwitch::FLOWLET, "Flowlet"))
              .AddAttribute("FlowletTimeout",
                            "With Flowlet load balancing, how long a QP must send nothing "
                            "through this switch before its next packet may take another "
                            "path (500 us: CONGA's flowlet timeout, Alizadeh et al., "
                            "SIGCOMM 2014).",
                            TimeValue(MicroSeconds(500)),
                            MakeTimeAccessor(&NboxRoceSwitch::SetFlowletTimeout,
                                             &NboxRoceSwitch::GetFlowletTimeout),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("Headroom",
                            "PFC headroom in bytes per (port, lossless priority). 0 (the "
                            "default): computed per port as NboxSwitchMmu::"
                            "GetRequiredHeadroom(rate, delay, MTU), the least that keeps PFC "
                            "lossless.",
                            UintegerValue(0),
                            MakeUintegerAccessor(&NboxRoceSwitch::m_headroomAttribute),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("EcnReferenceRate",
                            "Port rate at which the MMU's EcnKmin/EcnKmax apply; a port of "
                            "rate r gets them times r / EcnReferenceRate (thresholds scale "
                            "with link speed, as in the public RDMA models). Default 100Gbps.",
                            DataRateValue(DataRate("100Gbps")),
                            MakeDataRateAccessor(&NboxRoceSwitch::m_ecnReferenceRate),
                            MakeDataRateChecker())
              .AddAttribute("StampTelemetry",
                            "Whether every egress port appends its in-band telemetry (line "
                            "rate, time, bytes sent, bytes queued: HPCC's INT hop) to the data "
                            "packets that carry an INT block. Set on AddPort.",
                            BooleanValue(false),
                            MakeBooleanAccessor(&NboxRoceSwitch::m_stampTelemetry),
                            MakeBooleanChecker());
    return tid;
}

NboxRoceSwitch::NboxRoceSwitch()
    : m_headroomAttribute(0)
    , m_stampTelemetry(false)
    , m_ecnReferenceRate(DataRate("100Gbps"))
    , m_mmu(CreateObject<NboxSwitchMmu>())
    , m_hasher(CreateObject<NboxEcmpRouting>())
    , m_loadBalancing(ECMP)
    , m_flowlets(MicroSeconds(500))
    , m_received(0)
    , m_ecnMarks(0)
{
    NS_LOG_FUNCTION(this);
    m_nPausedQueues.fill(0);
    m_drops.fill(0);
}

NboxRoceSwitch::~NboxRoceSwitch()
{
    NS_LOG_FUNCTION(this);
}

void
NboxRoceSwitch::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (Ptr<NboxRoceNetDevice>& port : m_ports)
    {
        port->SetRoceReceiveCallback(NboxRoceNetDevice::RoceReceiveCallback());
        port->SetDequeueCallback(NboxRoceNetDevice::DequeueCallback());
        port->SetEgressCallback(NboxRoceNetDevice::EgressCallback());
    }
    m_ports.clear();
    m_inPortFifo.clear();
    m_mmu = nullptr;
    m_hasher = nullptr;
    Object::DoDispose();
}

uint32_t
NboxRoceSwitch::AddPort(Ptr<NboxRoceNetDevice> device)
{
    NS_LOG_FUNCTION(this << device);
    Ptr<NboxRoceChannel> channel = DynamicCast<NboxRoceChannel>(device->GetChannel());
    NS_ABORT_MSG_UNLESS(channel, "NboxRoceSwitch::AddPort: attach the device to its channel first");
    const DataRate rate = device->GetDataRate();
    const uint64_t headroom
        = m_headroomAttribute > 0
            ? m_headroomAttribute
            : NboxSwitchMmu::GetRequiredHeadroom(rate, channel->GetDelay(), device->GetMtu());
    // ECN thresholds scale with rate / reference rate, rounded down to whole bytes.
    UintegerValue kmin;
    UintegerValue kmax;
    m_mmu->GetAttribute("EcnKmin", kmin);
    m_mmu->GetAttribute("EcnKmax", kmax);
    const double scale = static_cast<double>(rate.GetBitRate())
                       / static_cast<double>(m_ecnReferenceRate.GetBitRate());
    const uint32_t port = m_mmu->AddPort(headroom, static_cast<uint64_t>(kmin.Get() * scale),
                                         static_cast<uint64_t>(kmax.Get() * scale));
    NS_ASSERT(port == m_ports.size());
    m_ports.push_back(device);
    for (uint8_t p = 0; p < NboxRoceHeader::kNPriorities; ++p)
    {
        m_inPortFifo.emplace_back();
    }
    device->SetRoceReceiveCallback(MakeCallback(&NboxRoceSwitch::ReceiveFromPort, this, port));
    device->SetDequeueCallback(MakeCallback(&NboxRoceSwitch::DequeuedFromPort, this, port));
    if (m_stampTelemetry)
    {
        device->SetEgressCallback(MakeCallback(&NboxRoceSwitch::StampTelemetry, this));
    }
    return port;
}

uint32_t
NboxRoceSwitch::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

Ptr<NboxRoceNetDevice>
NboxRoceSwitch::GetPort(uint32_t port) const
{
    NS_ABORT_MSG_IF(port >= m_ports.size(), "NboxRoceSwitch: no port " << port);
    return m_ports[port];
}

void
NboxRoceSwitch::SetRoute(uint32_t dstHost, const std::vector<uint32_t>& ports)
{
    NS_LOG_FUNCTION(this << dstHost << ports.size());
    NS_ABORT_MSG_IF(ports.empty(), "NboxRoceSwitch::SetRoute: no port towards host " << dstHost);
    for (uint32_t port : ports)
    {
        NS_ABORT_MSG_IF(port >= m_ports.size(), "NboxRoceSwitch::SetRoute: no port "
                                                    << port << " (host " << dstHost << ")");
    }
    auto [it, inserted] = m_setIndex.emplace(ports, static_cast<uint32_t>(m_portSets.size()));
    if (inserted)
    {
        m_portSets.push_back(ports);
    }
    if (dstHost >= m_routeOfHost.size())
    {
        m_routeOfHost.resize(dstHost + 1, kNoRoute);
    }
    m_routeOfHost[dstHost] = it->second;
}

std::vector<uint32_t>
NboxRoceSwitch::GetRoute(uint32_t dstHost) const
{
    if (dstHost >= m_routeOfHost.size() || m_routeOfHost[dstHost] == kNoRoute)
    {
        return {};
    }
    return m_portSets[m_routeOfHost[dstHost]];
}

uint32_t
NboxRoceSwitch::SelectPort(uint32_t srcHost, uint32_t dstHost, uint32_t flowId)
{
    NS_ABORT_MSG_IF(dstHost >= m_routeOfHost.size() || m_routeOfHost[dstHost] == kNoRoute,
                    "NboxRoceSwitch: no route to host " << dstHost);
    const uint32_t setIndex = m_routeOfHost[dstHost];
    const std::vector<uint32_t>& set = m_portSets[setIndex];
    if (set.size() == 1)
    {
        return set[0];
    }
    if (m_loadBalancing == SPRAY)
    {
        if (m_sprayNext.size() <= setIndex)
        {
            m_sprayNext.resize(m_portSets.size(), 0);
        }
        const uint32_t port = set[m_sprayNext[setIndex] % set.size()];
        m_sprayNext[setIndex] = (m_sprayNext[setIndex] + 1) % set.size();
        return port;
    }
    const NboxFlowKey key = NboxRoceFlowKey(srcHost, dstHost, flowId);
    if (m_loadBalancing == FLOWLET)
    {
        return set[m_flowlets.SelectPath(key, m_hasher->HashFlow(key),
                                         static_cast<uint32_t>(set.size()), Simulator::Now())];
    }
    return set[m_hasher->HashFlow(key) % set.size()];
}

void
NboxRoceSwitch::SetFlowletTimeout(Time timeout)
{
    m_flowlets.SetTimeout(timeout);
}

Time
NboxRoceSwitch::GetFlowletTimeout() const
{
    return m_flowlets.GetTimeout();
}

uint64_t
NboxRoceSwitch::GetFlowletCount() const
{
    return m_flowlets.GetFlowletCount();
}

Ptr<NboxSwitchMmu>
NboxRoceSwitch::GetMmu() const
{
    return m_mmu;
}

int64_t
NboxRoceSwitch::AssignStreams(int64_t stream)
{
    return m_mmu->AssignStreams(stream);
}

void
NboxRoceSwitch::SetSeed(uint64_t seed)
{
    m_hasher->SetSeed(seed);
}

uint64_t
NboxRoceSwitch::GetSeed() const
{
    return m_hasher->GetSeed();
}

void
NboxRoceSwitch::ReceiveFromPort(uint32_t inPort, Ptr<NboxRoceNetDevice> device, Ptr<Packet> packet)
{
    NS_LOG_FUNCTION(this << inPort << packet);
    ++m_received;
    NboxRoceHeader header;
    packet->PeekHeader(header);
    const uint8_t prio = header.GetPriority();
    const uint32_t outPort
        = SelectPort(header.GetSrcHost(), header.GetDstHost(), header.GetFlowId());
    Ptr<NboxRoceNetDevice> out = m_ports[outPort];
    const uint32_t size = packet->GetSize();

    const NboxSwitchMmu::Verdict verdict = m_mmu->CheckAdmission(inPort, outPort, prio, size);
    if (verdict != NboxSwitchMmu::ADMIT)
    {
        NS_LOG_LOGIC("drop at port " << outPort << " reason " << verdict);
        ++m_drops[verdict];
        out->CountDrop(packet);
        return;
    }
    const NboxRoceHeader::Ecn ecn = header.GetEcn();
    if (header.GetType() == NboxRoceHeader::kData
        && (ecn == NboxRoceHeader::kEct0 || ecn == NboxRoceHeader::kEct1)
        && m_mmu->DecideEcnMark(outPort, prio))
    {
        packet->RemoveHeader(header);
        header.SetEcn(NboxRoceHeader::kCe);
        packet->AddHeader(header);
        ++m_ecnMarks;
        out->CountEcnMark();
    }
    m_mmu->Admit(inPort, outPort, prio, size);
    m_inPortFifo[outPort * NboxRoceHeader::kNPriorities + prio].push_back(inPort);
    if (m_mmu->ShouldPause(inPort, prio))
    {
        NS_LOG_LOGIC("pause upstream of port " << inPort << " prio " << unsigned(prio));
        m_mmu->SetPaused(inPort, prio, true);
        ++m_nPausedQueues[prio];
        device->SendPfc(prio, true);
    }
    out->Enqueue(packet, prio);
}

void
NboxRoceSwitch::DequeuedFromPort(uint32_t outPort, Ptr<NboxRoceNetDevice> /* device */,
                                 Ptr<const Packet> packet, uint8_t prio)
{
    NboxFifo<uint32_t>& fifo = m_inPortFifo[outPort * NboxRoceHeader::kNPriorities + prio];
    NS_ASSERT_MSG(!fifo.empty(), "NboxRoceSwitch: a packet left a queue it never entered");
    const uint32_t inPort = fifo.pop_front();
    m_mmu->Release(inPort, outPort, prio, packet->GetSize());
    if (m_nPausedQueues[prio] > 0)
    {
        ResumeWhereAllowed(prio);
    }
}

void
NboxRoceSwitch::StampTelemetry(Ptr<NboxRoceNetDevice> device, Ptr<Packet> packet,
                               uint8_t /* prio */)
{
    NboxRoceHeader header;
    packet->PeekHeader(header);
    NboxIntTag record;
    if (header.GetType() != NboxRoceHeader::kData || !header.HasTelemetry()
        || !packet->RemovePacketTag(record))
    {
        return;
    }
    NboxIntTag::Hop hop;
    hop.portId = (uint64_t{device->GetNode()->GetId()} << 32) | device->GetIfIndex();
    hop.rateBps = device->GetDataRate().GetBitRate();
    hop.timeNs = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
    hop.txBytes = device->GetTxBytes();
    hop.queueBytes = device->GetQueuedBytes();
    record.AddHop(hop);
    packet->AddPacketTag(record);
}

void
NboxRoceSwitch::ResumeWhereAllowed(uint8_t prio)
{
    // Every queue, not only the one just released: the dynamic threshold rose for all.
    for (uint32_t port = 0; port < m_ports.size() && m_nPausedQueues[prio] > 0; ++port)
    {
        if (m_mmu->ShouldResume(port, prio))
        {
            NS_LOG_LOGIC("resume upstream of port " << port << " prio " << unsigned(prio));
            m_mmu->SetPaused(port, prio, false);
            --m_nPausedQueues[prio];
            m_ports[port]->SendPfc(prio, false);
        }
    }
}

uint64_t
NboxRoceSwitch::GetReceivedPackets() const
{
    return m_received;
}

uint64_t
NboxRoceSwitch::GetDrops(NboxSwitchMmu::Verdict reason) const
{
    return m_drops.at(reason);
}

uint64_t
NboxRoceSwitch::GetTotalDrops() const
{
    uint64_t sum = 0;
    for (uint64_t n : m_drops)
    {
        sum += n;
    }
    return sum;
}

uint64_t
NboxRoceSwitch::GetEcnMarks() const
{
    return m_ecnMarks;
}

} // namespace ns3
