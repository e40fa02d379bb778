/*
 * Every congestion control name the scenario accepts creates sockets of that ns-3 type (the
 * check that Debian's --as-needed linking did not drop one), with the configured TCP
 * parameters.
 */
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/ipv4-header.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-transport.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/ppp-header.h"
#include "ns3/socket.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

/** The UseEcn value new TCP sockets start with ("On", "Off", "AcceptOnly"). */
std::string
DefaultUseEcn()
{
    TypeId::AttributeInformation info;
    EXPECT_TRUE(TcpSocketBase::GetTypeId().LookupAttributeByName("UseEcn", &info));
    return info.initialValue->SerializeToString(info.checker);
}

struct CcCase
{
    std::string name;   //!< as in scenario key network.tcp_cc
    std::string typeId; //!< the ns-3 class it must create
};

/** Names the case in test listings (ctest shows it). */
void
PrintTo(const CcCase& c, std::ostream* os)
{
    *os << c.name << " -> " << c.typeId;
}

class NboxTcpCcTest : public NboxNs3Test, public ::testing::WithParamInterface<CcCase>
{
};

TEST_P(NboxTcpCcTest, CreatesSocketsOfThatCongestionControl)
{
    NboxNetworkConfig config;
    config.tcpCongestionControl = GetParam().name;
    config.mtu = 9000;
    config.tcpBufferBytes = 1234567;
    config.tcpMinRtoSeconds = 5e-3;
    config.tcpDelAckCount = 3;
    Ptr<NboxNetwork> network
        = NboxNetworkHelper(config).Install(nbox::topo::MakeStar(2, 10e9, 1e-6));
    Ptr<Socket> socket = Socket::CreateSocket(network->GetHost(0), TcpSocketFactory::GetTypeId());

    PointerValue ops;
    socket->GetAttribute("CongestionOps", ops);
    ASSERT_TRUE(ops.Get<TcpCongestionOps>());
    EXPECT_EQ(ops.Get<TcpCongestionOps>()->GetInstanceTypeId().GetName(), GetParam().typeId);

    UintegerValue value;
    socket->GetAttribute("SegmentSize", value);
    EXPECT_EQ(value.Get(), 9000u - 20 - 20 - 12);
    socket->GetAttribute("SndBufSize", value);
    EXPECT_EQ(value.Get(), 1234567u);
    socket->GetAttribute("RcvBufSize", value);
    EXPECT_EQ(value.Get(), 1234567u);
    socket->GetAttribute("DelAckCount", value);
    EXPECT_EQ(value.Get(), 3u);
    TimeValue minRto;
    socket->GetAttribute("MinRto", minRto);
    EXPECT_EQ(minRto.Get(), MilliSeconds(5));
    // UseEcn can be set but not read back from a socket: read the default sockets get.
    // ECN is off in this config: only DCTCP asks for it on its own.
    EXPECT_EQ(DefaultUseEcn(), GetParam().name == "dctcp" ? "On" : "Off");
}

INSTANTIATE_TEST_SUITE_P(
    Names, NboxTcpCcTest,
    ::testing::Values(CcCase{"newreno", "ns3::TcpNewReno"}, CcCase{"cubic", "ns3::TcpCubic"},
                      CcCase{"dctcp", "ns3::TcpDctcp"}, CcCase{"bbr", "ns3::TcpBbr"}),
    [](const ::testing::TestParamInfo<CcCase>& info) { return info.param.name; });

class NboxTcpDefaultsTest : public NboxNs3Test
{
};

TEST_F(NboxTcpDefaultsTest, SwitchEcnMakesEveryVariantSendEctPackets)
{
    // With marking switches, non-DCTCP senders must be ECN-capable too, or RED would drop
    // their packets above the threshold instead of marking them.
    NboxNetworkConfig config;
    config.tcpCongestionControl = "cubic";
    config.ecn = true;
    Ptr<NboxNetwork> network
        = NboxNetworkHelper(config).Install(nbox::topo::MakeStar(2, 10e9, 1e-6));
    EXPECT_EQ(DefaultUseEcn(), "On");

    uint64_t dataPackets = 0;
    uint64_t ectDataPackets = 0;
    Callback<void, Ptr<const Packet>> count(
        [&](Ptr<const Packet> wire)
        {
            Ptr<Packet> p = wire->Copy();
            PppHeader ppp;
            p->RemoveHeader(ppp);
            Ipv4Header ip;
            p->RemoveHeader(ip);
            TcpHeader tcp;
            p->RemoveHeader(tcp);
            if (p->GetSize() > 0)
            {
                ++dataPackets;
                ectDataPackets
                    += ip.GetEcn() == Ipv4Header::ECN_ECT0 || ip.GetEcn() == Ipv4Header::ECN_ECT1;
            }
        });
    network->GetPortDevice(0)->TraceConnectWithoutContext("PhyTxBegin", count); // h0->sw0
    Ptr<NboxTcpTransport> transport
        = CreateObject<NboxTcpTransport>(network, std::vector<int>{0, 1});
    transport->Send(0, 1, 0, 100000, nullptr);
    RunFor(Seconds(1));
    EXPECT_GE(dataPackets, 100000u / (1500 - 52));
    EXPECT_EQ(ectDataPackets, dataPackets);
}

TEST_F(NboxTcpDefaultsTest, UnknownNameIsRefused)
{
    NboxNetworkConfig config;
    config.tcpCongestionControl = "vegas";
    try
    {
        NboxNetworkHelper(config).Install(nbox::topo::MakeStar(2, 10e9, 1e-6));
        ADD_FAILURE() << "vegas is not offered";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_NE(std::string(e.what()).find("newreno, cubic, dctcp, bbr"), std::string::npos)
            << e.what();
    }
}

} // namespace
} // namespace test
} // namespace ns3
