#include "nbox-roce-channel.h"

#include "nbox-roce-net-device.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxRoceChannel");

NS_OBJECT_ENSURE_REGISTERED(NboxRoceChannel);

TypeId
NboxRoceChannel::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxRoceChannel")
              .SetParent<Channel>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxRoceChannel>()
              .AddAttribute(
                  "Delay",
                  "Propagation delay of the link (the topology's link latency). "
                  "Default 1 us: a few hundred metres of fibre plus PHY latency, "
                  "the per-hop figure used by HPCC's and SimAI's data-centre setups.",
                  TimeValue(MicroSeconds(1)),
                  MakeTimeAccessor(&NboxRoceChannel::SetDelay, &NboxRoceChannel::GetDelay),
                  MakeTimeChecker(Time(0)));
    return tid;
}

NboxRoceChannel::NboxRoceChannel()
    : m_delay(MicroSeconds(1))
    , m_nDevices(0)
{
    NS_LOG_FUNCTION(this);
}

NboxRoceChannel::~NboxRoceChannel()
{
    NS_LOG_FUNCTION(this);
}

void
NboxRoceChannel::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_devices[0] = nullptr;
    m_devices[1] = nullptr;
    m_nDevices = 0;
    Channel::DoDispose();
}

void
NboxRoceChannel::Attach(Ptr<NboxRoceNetDevice> device)
{
    NS_LOG_FUNCTION(this << device);
    NS_ABORT_MSG_IF(m_nDevices >= 2, "NboxRoceChannel: a third device cannot be attached");
    m_devices[m_nDevices++] = device;
}

Ptr<NboxRoceNetDevice>
NboxRoceChannel::GetPeer(Ptr<const NboxRoceNetDevice> sender) const
{
    if (m_nDevices < 2)
    {
        return nullptr;
    }
    return m_devices[0] == sender ? m_devices[1] : m_devices[0];
}

void
NboxRoceChannel::Transmit(Ptr<const Packet> packet, Ptr<const NboxRoceNetDevice> sender,
                          Time txTime)
{
    Ptr<NboxRoceNetDevice> peer = GetPeer(sender);
    NS_ABORT_MSG_UNLESS(peer, "NboxRoceChannel: transmit on a link with one end attached");
    // The receiver may rewrite the header (ECN): it gets its own copy (copy-on-write, cheap).
    Simulator::ScheduleWithContext(peer->GetNode()->GetId(), txTime + m_delay,
                                   &NboxRoceNetDevice::Receive, peer, packet->Copy());
}

Time
NboxRoceChannel::GetDelay() const
{
    return m_delay;
}

void
NboxRoceChannel::SetDelay(Time delay)
{
    m_delay = delay;
}

std::size_t
NboxRoceChannel::GetNDevices() const
{
    return m_nDevices;
}

Ptr<NetDevice>
NboxRoceChannel::GetDevice(std::size_t i) const
{
    NS_ABORT_MSG_IF(i >= m_nDevices, "NboxRoceChannel: no device " << i);
    return m_devices[i];
}

} // namespace ns3
