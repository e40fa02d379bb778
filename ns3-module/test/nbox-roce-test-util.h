/*
 * Small RoCE fabrics for tests of the link layer and the switch, without a NIC: a "host" is
 * a bare NboxRoceNetDevice whose queues the test fills (the device honours PFC on its own,
 * so a host sends at line rate until paused) and whose arrivals the test records.
 */
#ifndef NBOX_ROCE_TEST_UTIL_H
#define NBOX_ROCE_TEST_UTIL_H

#include "ns3/data-rate.h"
#include "ns3/nbox-roce-channel.h"
#include "ns3/nbox-roce-header.h"
#include "ns3/nbox-roce-net-device.h"
#include "ns3/nbox-roce-switch.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{
namespace test
{

/** Joins `a` and `b` with a new link of `rate` (both devices) and propagation `delay`. */
inline std::pair<Ptr<NboxRoceNetDevice>, Ptr<NboxRoceNetDevice>>
ConnectRoce(Ptr<Node> a, Ptr<Node> b, DataRate rate, Time delay)
{
    Ptr<NboxRoceChannel> channel = CreateObject<NboxRoceChannel>();
    channel->SetDelay(delay);
    std::pair<Ptr<NboxRoceNetDevice>, Ptr<NboxRoceNetDevice>> ends;
    for (auto [node, device] : {std::make_pair(a, &ends.first), std::make_pair(b, &ends.second)})
    {
        *device = CreateObject<NboxRoceNetDevice>();
        (*device)->SetDataRate(rate);
        node->AddDevice(*device);
        (*device)->Attach(channel);
    }
    return ends;
}

/** A data packet of `payload` bytes, as a NIC would build it. */
inline Ptr<Packet>
MakeRoceData(uint32_t payload, uint8_t prio, uint32_t src, uint32_t dst, uint32_t flow,
             uint32_t psn, NboxRoceHeader::Ecn ecn = NboxRoceHeader::kNotEct)
{
    NboxRoceHeader header(NboxRoceHeader::kData);
    header.SetPriority(prio);
    header.SetSrcHost(src);
    header.SetDstHost(dst);
    header.SetFlowId(flow);
    header.SetPsn(psn);
    header.SetEcn(ecn);
    Ptr<Packet> packet = Create<Packet>(payload);
    packet->AddHeader(header);
    return packet;
}

/** What a host device received: headers and arrival times, in order. */
struct RoceArrivals
{
    std::vector<NboxRoceHeader> headers;
    std::vector<Time> times;
    uint64_t bytes = 0;

    void
    Receive(Ptr<NboxRoceNetDevice> /* device */, Ptr<Packet> packet)
    {
        NboxRoceHeader header;
        packet->PeekHeader(header);
        headers.push_back(header);
        times.push_back(Simulator::Now());
        bytes += packet->GetSize();
    }

    /** Makes `device` record into this object (which must outlive the run). */
    void
    Listen(Ptr<NboxRoceNetDevice> device)
    {
        device->SetRoceReceiveCallback(MakeCallback(&RoceArrivals::Receive, this));
    }
};

} // namespace test
} // namespace ns3

#endif /* NBOX_ROCE_TEST_UTIL_H */
