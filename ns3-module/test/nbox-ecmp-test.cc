/*
 * Per-flow ECMP on a leaf-spine: flows between two leaves spread over both spines, and each
 * flow (and its ACK stream) stays on one path, so TCP sees no reordering.
 */
#include "nbox-test-util.h"

#include "ns3/ipv4-header.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-transport.h"
#include "ns3/packet.h"
#include "ns3/ppp-header.h"
#include "ns3/tcp-header.h"

#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

/** A TCP flow as the wire shows it. */
using FlowId = std::tuple<uint32_t, uint16_t, uint32_t, uint16_t>;

/** Which uplink ports each flow's packets left a leaf on, read from the packets themselves. */
struct UplinkLog
{
    std::map<FlowId, std::set<uint32_t>> uplinksOfFlow;
    std::map<uint32_t, uint64_t> dataBytesOnPort;
};

void
LogPacket(UplinkLog* log, uint32_t port, Ptr<const Packet> wirePacket)
{
    Ptr<Packet> p = wirePacket->Copy();
    PppHeader ppp;
    p->RemoveHeader(ppp);
    Ipv4Header ip;
    p->RemoveHeader(ip);
    if (ip.GetProtocol() != 6)
    {
        return;
    }
    TcpHeader tcp;
    p->RemoveHeader(tcp);
    FlowId flow{ip.GetSource().Get(), tcp.GetSourcePort(), ip.GetDestination().Get(),
                tcp.GetDestinationPort()};
    log->uplinksOfFlow[flow].insert(port);
    log->dataBytesOnPort[port] += p->GetSize();
}

/** Per flow, whether the data segments reached the last hop in sequence order. */
struct ArrivalOrder
{
    std::map<FlowId, SequenceNumber32> nextExpected;
    uint64_t segments = 0;
    uint64_t outOfOrder = 0;
};

void
CheckOrder(ArrivalOrder* order, Ptr<const Packet> wirePacket)
{
    Ptr<Packet> p = wirePacket->Copy();
    PppHeader ppp;
    p->RemoveHeader(ppp);
    Ipv4Header ip;
    p->RemoveHeader(ip);
    TcpHeader tcp;
    p->RemoveHeader(tcp);
    if (ip.GetProtocol() != 6 || p->GetSize() == 0)
    {
        return;
    }
    FlowId flow{ip.GetSource().Get(), tcp.GetSourcePort(), ip.GetDestination().Get(),
                tcp.GetDestinationPort()};
    ++order->segments;
    auto it = order->nextExpected.find(flow);
    if (it != order->nextExpected.end() && tcp.GetSequenceNumber() != it->second)
    {
        ++order->outOfOrder;
    }
    order->nextExpected[flow] = tcp.GetSequenceNumber() + p->GetSize();
}

class NboxEcmpTest : public NboxNs3Test
{
};

TEST_F(NboxEcmpTest, FlowsSpreadOverSpinesAndEachKeepsOnePath)
{
    // 2 leaves x 2 spines, 4 hosts per leaf; hosts h0-h3 on leaf0, h4-h7 on leaf1. Fabric
    // links at 20 Gb/s make the leaves non-blocking (4 x 10 = 2 x 20).
    nbox::topo::Topology topology = nbox::topo::MakeLeafSpine(2, 2, 4, 10e9, 20e9, 1e-6);
    Ptr<NboxNetwork> network = NboxNetworkHelper(NboxNetworkConfig()).Install(topology);
    std::vector<int> rankToHost{0, 1, 2, 3, 4, 5, 6, 7};
    Ptr<NboxTcpTransport> transport = CreateObject<NboxTcpTransport>(network, rankToHost);

    // Watch the four leaf uplinks: leaf0->spine*, carrying data, and leaf1->spine*, carrying
    // the ACKs of the same flows.
    UplinkLog data;
    UplinkLog acks;
    NboxNetworkStats layout = network->GetStats();
    std::map<uint32_t, std::string> uplinkName;
    for (uint32_t i = 0; i < layout.ports.size(); ++i)
    {
        const NboxPortStats& port = layout.ports[i];
        if (port.toNode.rfind("spine", 0) != 0)
        {
            continue;
        }
        UplinkLog* log = port.fromNode == "leaf0" ? &data : &acks;
        network->GetPortDevice(i)->TraceConnectWithoutContext(
            "PhyTxBegin", MakeBoundCallback(&LogPacket, log, i));
        uplinkName[i] = port.fromNode + "->" + port.toNode;
    }
    ASSERT_EQ(uplinkName.size(), 4u);
    // And the last hop towards each receiver: every segment must arrive in sequence.
    ArrivalOrder order;
    for (uint32_t i = 0; i < layout.ports.size(); ++i)
    {
        if (layout.ports[i].fromNode == "leaf1" && layout.ports[i].toNode[0] == 'h')
        {
            network->GetPortDevice(i)->TraceConnectWithoutContext(
                "PhyTxBegin", MakeBoundCallback(&CheckOrder, &order));
        }
    }

    // 4 x 4 host pairs x 2 channels = 32 flows of 256 kB each.
    const uint32_t channels = 2;
    const uint64_t bytes = 256000;
    uint32_t delivered = 0;
    for (uint32_t src = 0; src < 4; ++src)
    {
        for (uint32_t dst = 4; dst < 8; ++dst)
        {
            for (uint32_t ch = 0; ch < channels; ++ch)
            {
                transport->Send(src, dst, ch, bytes, [&delivered] { ++delivered; });
            }
        }
    }
    RunFor(Seconds(1));
    const uint32_t flows = 4 * 4 * channels;
    ASSERT_EQ(delivered, flows);

    // Each flow's data left leaf0 on exactly one uplink, and its ACKs left leaf1 on one.
    ASSERT_EQ(data.uplinksOfFlow.size(), flows);
    ASSERT_EQ(acks.uplinksOfFlow.size(), flows);
    for (const auto& [flow, ports] : data.uplinksOfFlow)
    {
        EXPECT_EQ(ports.size(), 1u) << "a flow's data was split over uplinks";
    }
    for (const auto& [flow, ports] : acks.uplinksOfFlow)
    {
        EXPECT_EQ(ports.size(), 1u) << "a flow's ACKs were split over uplinks";
    }

    // Both uplinks carry data. Equal flows make bytes proportional to flow counts: with 32
    // flows hashed independently onto two uplinks, fewer than 8 on one side has probability
    // 0.7%; the check is deterministic for this seed and fails if hashing collapses.
    ASSERT_EQ(data.dataBytesOnPort.size(), 2u) << "one spine carried nothing";
    for (const auto& [port, payload] : data.dataBytesOnPort)
    {
        EXPECT_GE(payload, flows * bytes / 4) << uplinkName[port];
        EXPECT_EQ(payload % bytes, 0u) << "whole flows per uplink: " << uplinkName[port];
    }
    uint64_t total = 0;
    for (const auto& [port, payload] : data.dataBytesOnPort)
    {
        total += payload;
    }
    EXPECT_EQ(total, flows * bytes);

    // The network's own per-port counters agree on the spread (wire bytes, data leg).
    NboxNetworkStats stats = network->GetStats();
    for (const auto& [port, payload] : data.dataBytesOnPort)
    {
        EXPECT_GT(stats.ports[port].txBytes, payload);
    }

    // One path per flow means in-order arrival: every data segment reached its receiver's
    // last hop right after its predecessor, and with no loss on this uncongested fabric and
    // no reordering TCP never retransmits.
    EXPECT_GE(order.segments, flows * bytes / PayloadPerSegment(1500));
    EXPECT_EQ(order.outOfOrder, 0u);
    EXPECT_EQ(transport->GetStats().retransmissions, 0u);
    EXPECT_EQ(stats.drops, 0u);
}

/** Per-port wire bytes and per-message delivery times of 32 flows across the fabric. */
struct RunTrace
{
    std::vector<uint64_t> portTxBytes;
    std::vector<int64_t> deliveryTimes;
};

RunTrace
RunAcrossFabric(uint64_t ecmpSeed)
{
    NboxNetworkConfig config;
    config.ecmpSeed = ecmpSeed;
    Ptr<NboxNetwork> network
        = NboxNetworkHelper(config).Install(nbox::topo::MakeLeafSpine(2, 2, 4, 10e9, 20e9, 1e-6));
    Ptr<NboxTcpTransport> transport
        = CreateObject<NboxTcpTransport>(network, std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    RunTrace trace;
    for (uint32_t src = 0; src < 4; ++src)
    {
        for (uint32_t dst = 4; dst < 8; ++dst)
        {
            for (uint32_t ch = 0; ch < 2; ++ch)
            {
                transport->Send(src, dst, ch, 256000,
                                [&trace]
                                { trace.deliveryTimes.push_back(Simulator::Now().GetTimeStep()); });
            }
        }
    }
    RunFor(Seconds(1));
    for (const NboxPortStats& port : network->GetStats().ports)
    {
        trace.portTxBytes.push_back(port.txBytes);
    }
    return trace;
}

TEST_F(NboxEcmpTest, SameSeedSameRunAndTheSeedMatters)
{
    RunTrace first = RunAcrossFabric(1);
    Reset();
    RunTrace again = RunAcrossFabric(1);
    EXPECT_EQ(first.portTxBytes, again.portTxBytes);
    EXPECT_EQ(first.deliveryTimes, again.deliveryTimes);
    ASSERT_EQ(first.deliveryTimes.size(), 32u);

    // Other seeds place the flows differently. A seed reproduces seed 1's byte counts on
    // every port only if it puts as many data flows and as many ACK streams on each spine
    // (each at most 14%, the top of Binomial(32, 1/2)): under 2% per seed, about 1e-5 for
    // all three.
    bool differs = false;
    for (uint64_t seed : {2, 3, 4})
    {
        Reset();
        differs = differs || RunAcrossFabric(seed).portTxBytes != first.portTxBytes;
    }
    EXPECT_TRUE(differs);
}

} // namespace
} // namespace test
} // namespace ns3
