#include "nbox-network.h"

#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/packet.h"
#include "ns3/point-to-point-net-device.h"

#include <set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxNetwork");

NS_OBJECT_ENSURE_REGISTERED(NboxNetwork);

TypeId
NboxNetwork::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxNetwork")
                            .SetParent<NboxNetworkModel>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxNetwork>();
    return tid;
}

NboxNetwork::NboxNetwork()
{
    NS_LOG_FUNCTION(this);
}

NboxNetwork::~NboxNetwork()
{
    NS_LOG_FUNCTION(this);
}

void
NboxNetwork::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_ports.clear();
    m_hostAddresses.clear();
    m_hosts = NodeContainer();
    m_switches = NodeContainer();
    m_installRoutes = nullptr; // it holds the nodes and devices
    m_linkDown = nullptr;
    Object::DoDispose();
}

uint32_t
NboxNetwork::GetNHosts() const
{
    return m_hosts.GetN();
}

Ptr<Node>
NboxNetwork::GetHost(uint32_t hostIndex) const
{
    NS_ABORT_MSG_IF(hostIndex >= m_hosts.GetN(), "NboxNetwork: host "
                                                     << hostIndex << " does not exist ("
                                                     << m_hosts.GetN() << " hosts)");
    return m_hosts.Get(hostIndex);
}

Ipv4Address
NboxNetwork::GetHostAddress(uint32_t hostIndex) const
{
    NS_ABORT_MSG_IF(hostIndex >= m_hostAddresses.size(),
                    "NboxNetwork: host " << hostIndex << " does not exist ("
                                         << m_hostAddresses.size() << " hosts)");
    return m_hostAddresses[hostIndex];
}

const NodeContainer&
NboxNetwork::GetHosts() const
{
    return m_hosts;
}

const NodeContainer&
NboxNetwork::GetSwitches() const
{
    return m_switches;
}

uint32_t
NboxNetwork::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

void
NboxNetwork::SetPortRate(uint32_t port, double rateBps)
{
    NS_ABORT_MSG_IF(port >= m_ports.size(), "NboxNetwork: no port " << port);
    NS_ABORT_MSG_UNLESS(rateBps >= 1, "NboxNetwork: a port's rate must be at least 1 bit/s");
    // Both kinds of device (PointToPointNetDevice, NboxRoceNetDevice) read this attribute for
    // each packet they start.
    m_ports[port].device->SetAttribute("DataRate",
                                       DataRateValue(DataRate(static_cast<uint64_t>(rateBps))));
}

void
NboxNetwork::SetFailedLinks(std::vector<uint32_t> failedLinks,
                            std::shared_ptr<const nbox::topo::Routes> routes)
{
    NS_LOG_FUNCTION(this << failedLinks.size());
    NS_ABORT_MSG_UNLESS(m_installRoutes,
                        "NboxNetwork::SetFailedLinks: the network was not built reroutable");
    if (!m_linkDown)
    {
        // A rate of 1 drops every packet (RateErrorModel draws u < 1 from its own stream).
        m_linkDown = CreateObjectWithAttributes<RateErrorModel>(
            "ErrorRate", DoubleValue(1.0), "ErrorUnit",
            EnumValue(RateErrorModel::ERROR_UNIT_PACKET));
    }
    const std::set<uint32_t> failed(failedLinks.begin(), failedLinks.end());
    for (size_t i = 0; i < m_ports.size(); ++i)
    {
        const Port& port = m_ports[i];
        Ptr<PointToPointNetDevice> device = DynamicCast<PointToPointNetDevice>(port.device);
        NS_ABORT_MSG_UNLESS(device, "NboxNetwork::SetFailedLinks: only the TCP path's "
                                    "point-to-point devices can fail");
        if (!m_countsLinkLosses)
        {
            // What a failed link loses is a drop of the port that sent it: the other side of
            // the link (ports come in pairs, 2 x link id + side).
            const Port& sender = m_ports[i ^ 1];
            NS_ASSERT(sender.linkId == port.linkId);
            device->TraceConnectWithoutContext(
                "PhyRxDrop", MakeBoundCallback(&CountDeviceDrop, sender.counters));
        }
        // The port's device receives what the other end of its link sends.
        device->SetReceiveErrorModel(failed.count(port.linkId) ? m_linkDown : nullptr);
    }
    m_countsLinkLosses = true;
    m_installRoutes(*routes);
}

void
NboxNetwork::SetRouteInstaller(std::function<void(const nbox::topo::Routes&)> installer)
{
    m_installRoutes = std::move(installer);
}

Ptr<NetDevice>
NboxNetwork::GetPortDevice(uint32_t portIndex) const
{
    NS_ABORT_MSG_IF(portIndex >= m_ports.size(), "NboxNetwork: no port " << portIndex);
    return m_ports[portIndex].device;
}

Ptr<QueueDisc>
NboxNetwork::GetPortQueueDisc(uint32_t portIndex) const
{
    NS_ABORT_MSG_IF(portIndex >= m_ports.size(), "NboxNetwork: no port " << portIndex);
    return m_ports[portIndex].queueDisc;
}

void
NboxNetwork::AddHost(Ptr<Node> node, Ipv4Address address)
{
    NS_LOG_FUNCTION(this << node << address);
    m_hosts.Add(node);
    m_hostAddresses.push_back(address);
}

void
NboxNetwork::AddSwitch(Ptr<Node> node)
{
    NS_LOG_FUNCTION(this << node);
    m_switches.Add(node);
}

void
NboxNetwork::AddPort(uint32_t linkId, const std::string& fromNode, const std::string& toNode,
                     bool fromSwitch, Ptr<NetDevice> device, Ptr<QueueDisc> queueDisc)
{
    NS_LOG_FUNCTION(this << linkId << fromNode << toNode << device << queueDisc);
    NS_ASSERT(device);
    Port port;
    port.linkId = linkId;
    port.fromNode = fromNode;
    port.toNode = toNode;
    port.fromSwitch = fromSwitch;
    port.device = device;
    port.queueDisc = queueDisc;
    port.counters = Create<PortCounters>();
    port.deviceCounters = dynamic_cast<const NboxPortCounterSource*>(PeekPointer(device));
    NS_ABORT_MSG_IF(port.deviceCounters && queueDisc,
                    "NboxNetwork: port " << fromNode << "->" << toNode
                                         << " has both a counting device and a queue disc");

    // PhyTxBegin sees every packet the device puts on the wire, link-layer header included.
    bool ok = device->TraceConnectWithoutContext("PhyTxBegin",
                                                 MakeBoundCallback(&CountTx, port.counters));
    // MacTxDrop: the device queue refused a packet (rare: the queue disc stops before it).
    // A counting device reports its drops itself.
    ok = ok
      && (port.deviceCounters
          || device->TraceConnectWithoutContext(
              "MacTxDrop", MakeBoundCallback(&CountDeviceDrop, port.counters)));
    NS_ABORT_MSG_UNLESS(ok, "NboxNetwork: device " << device->GetInstanceTypeId().GetName()
                                                   << " lacks the PhyTxBegin/MacTxDrop traces");
    if (queueDisc)
    {
        queueDisc->TraceConnectWithoutContext("BytesInQueue",
                                              MakeBoundCallback(&TrackBacklog, port.counters));
    }
    m_ports.push_back(std::move(port));
}

void
NboxNetwork::CountTx(Ptr<PortCounters> counters, Ptr<const Packet> packet)
{
    counters->txBytes += packet->GetSize();
    ++counters->txPackets;
}

void
NboxNetwork::CountDeviceDrop(Ptr<PortCounters> counters, Ptr<const Packet> /* packet */)
{
    ++counters->deviceDrops;
}

void
NboxNetwork::TrackBacklog(Ptr<PortCounters> counters, uint32_t /* oldBytes */, uint32_t newBytes)
{
    if (newBytes > counters->peakQueueBytes)
    {
        counters->peakQueueBytes = newBytes;
    }
}

void
NboxNetwork::SamplePorts(std::vector<PortSample>& samples) const
{
    samples.resize(m_ports.size());
    for (size_t i = 0; i < m_ports.size(); ++i)
    {
        const Port& port = m_ports[i];
        samples[i].txBytes = port.counters->txBytes;
        samples[i].queueBytes = port.deviceCounters ? port.deviceCounters->GetQueuedBytes()
                              : port.queueDisc      ? port.queueDisc->GetNBytes()
                                                    : 0;
    }
}

NboxNetworkStats
NboxNetwork::GetStats() const
{
    NboxNetworkStats stats;
    stats.ports.reserve(m_ports.size());
    for (const Port& port : m_ports)
    {
        NboxPortStats p;
        p.fromNode = port.fromNode;
        p.toNode = port.toNode;
        p.linkId = port.linkId;
        p.fromSwitch = port.fromSwitch;
        p.txBytes = port.counters->txBytes;
        p.txPackets = port.counters->txPackets;
        p.drops = port.counters->deviceDrops;
        p.peakQueueBytes = port.counters->peakQueueBytes;
        if (port.queueDisc)
        {
            const QueueDisc::Stats& q = port.queueDisc->GetStats();
            p.drops += q.nTotalDroppedPackets;
            p.ecnMarks = q.nTotalMarkedPackets;
        }
        if (port.deviceCounters)
        {
            p.drops = port.deviceCounters->GetDropCount();
            p.ecnMarks = port.deviceCounters->GetEcnMarkCount();
            p.peakQueueBytes = port.deviceCounters->GetPeakQueuedBytes();
            p.pfcPausesSent = port.deviceCounters->GetPfcPausesSent();
            p.pfcPausesReceived = port.deviceCounters->GetPfcPausesReceived();
            p.pausedSeconds = port.deviceCounters->GetPausedTime().GetSeconds();
        }

        stats.wireBytes += p.txBytes;
        if (!p.fromSwitch)
        {
            stats.hostTxBytes += p.txBytes;
        }
        stats.drops += p.drops;
        stats.ecnMarks += p.ecnMarks;
        stats.pfcPausesSent += p.pfcPausesSent;
        stats.pfcPausesReceived += p.pfcPausesReceived;
        stats.pausedSeconds += p.pausedSeconds;
        // Strictly greater: the first port to reach the peak names it, so the result does
        // not depend on anything but the port order.
        if (p.fromSwitch
            && (p.peakQueueBytes > stats.peakQueueBytes || stats.peakQueuePort.empty()))
        {
            stats.peakQueueBytes = p.peakQueueBytes;
            stats.peakQueuePort = p.fromNode + "->" + p.toNode;
        }
        stats.ports.push_back(std::move(p));
    }
    return stats;
}

} // namespace ns3
