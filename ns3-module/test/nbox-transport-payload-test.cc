/*
 * NboxTcpTransport keeps message payload virtual: every data segment it sends carries ns-3's
 * zero-filled virtual bytes, which a packet stores without their content, however messages
 * of odd sizes follow each other on a connection. ns-3's TCP turns virtual payload into real
 * bytes when a segment spans two writes into the socket, and real bytes are then copied at
 * every header push on every hop and take memory while queued.
 */
#include "nbox-test-util.h"

#include "ns3/config.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-transport.h"
#include "ns3/packet.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-base.h"

#include <cstdint>
#include <functional>
#include <sstream>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

class NboxTransportPayloadTest : public NboxNs3Test
{
  public:
    /** Called for every segment rank 0's host sends. */
    void
    OnTx(Ptr<const Packet> segment, const TcpHeader& /* header */,
         Ptr<const TcpSocketBase> /* socket */)
    {
        if (segment->GetSize() == 0)
        {
            return;
        }
        ++m_dataSegments;
        // A virtual payload serializes to a few bookkeeping bytes; a real one to at least
        // its own size. Short segments (a message's last bytes) are judged the same way once
        // they are big enough for the difference to be unambiguous.
        if (segment->GetSize() >= 256 && segment->GetSerializedSize() >= segment->GetSize())
        {
            ++m_realSegments;
        }
    }

  protected:
    uint32_t m_dataSegments = 0;
    uint32_t m_realSegments = 0;
};

TEST_F(NboxTransportPayloadTest, BackToBackOddSizedMessagesLeaveAsVirtualPayload)
{
    NboxNetworkConfig config; // MTU 1500: 1448-byte segments
    Ptr<NboxNetwork> network
        = NboxNetworkHelper(config).Install(nbox::topo::MakeStar(2, 10e9, 1e-6));
    Ptr<NboxTcpTransport> transport
        = CreateObject<NboxTcpTransport>(network, std::vector<int>{0, 1});
    transport->Connect(0, 1, 0);
    // The sockets are opened by a time-0 event; watch the sender's before any data leaves.
    RunFor(NanoSeconds(1));
    std::ostringstream path;
    path << "/NodeList/" << network->GetHost(0)->GetId() << "/$ns3::TcpL4Protocol/SocketList/*/Tx";
    Config::ConnectWithoutContext(path.str(), MakeCallback(&NboxTransportPayloadTest::OnTx, this));

    // Sizes that are no multiple of 1448, queued at once (each message's tail is still
    // unsent when the next is written) and then one by one from delivery callbacks.
    const std::vector<uint64_t> sizes{100003, 7777, 250001, 1, 65536,  3000,
                                      99999,  1449, 20000,  5, 300000, 4321};
    uint32_t delivered = 0;
    std::function<void(size_t)> sendFrom = [&](size_t index)
    {
        transport->Send(0, 1, 0, sizes[index],
                        [&, index]
                        {
                            ++delivered;
                            if (index >= sizes.size() / 2 && index + 1 < sizes.size())
                            {
                                sendFrom(index + 1);
                            }
                        });
    };
    for (size_t i = 0; i <= sizes.size() / 2; ++i)
    {
        sendFrom(i);
    }
    RunFor(Seconds(1));

    ASSERT_EQ(delivered, sizes.size());
    uint64_t bytes = 0;
    for (uint64_t size : sizes)
    {
        bytes += size;
    }
    // At least the full segments of the whole stream were sent.
    EXPECT_GE(m_dataSegments, bytes / 1448);
    EXPECT_EQ(m_realSegments, 0u) << "of " << m_dataSegments << " data segments";
}

} // namespace
} // namespace test
} // namespace ns3
