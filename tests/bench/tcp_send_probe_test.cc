// TcpSendProbe on one BulkSend flow whose figures follow from its settings alone: B bytes
// written one segment at a time over a loss-free path leave as ceil(B / MSS) data segments
// carrying exactly B bytes, and a send buffer of n segments caps the data in flight at n
// segments, which the flow reaches (it has far more than n segments to send).
#include "tools/bench/tcp_send_probe.h"

#include <gtest/gtest.h>

#include "ns3/applications-module.h"
#include "ns3/config.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/nbox-network-helper.h"
#include "topologies/topology.h"

namespace nbox::bench {
namespace {

constexpr uint32_t kMss = 1500 - 20 - 20 - 12;  // IP, TCP and timestamp option headers

class TcpSendProbeTest : public ::testing::Test {
 protected:
  void SetUp() override { Reset(); }
  void TearDown() override { Reset(); }
  static void Reset() {
    ns3::Simulator::Destroy();
    ns3::Config::Reset();
  }
};

TEST_F(TcpSendProbeTest, CountsSegmentsAndSeesTheSendBufferCapInFlight) {
  ns3::NboxNetworkConfig config;
  config.mtu = 1500;
  auto network = ns3::NboxNetworkHelper(config).Install(topo::MakeStar(2, 10e9, 1e-6));
  constexpr uint32_t kBufferSegments = 10;
  ns3::Config::SetDefault("ns3::TcpSocket::SndBufSize", ns3::UintegerValue(kBufferSegments * kMss));
  constexpr uint64_t kBytes = 1000000;
  const ns3::InetSocketAddress to(network->GetHostAddress(1), 9);
  ns3::PacketSinkHelper sink("ns3::TcpSocketFactory",
                             ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), 9));
  auto sink_app = ns3::DynamicCast<ns3::PacketSink>(sink.Install(network->GetHost(1)).Get(0));
  ns3::BulkSendHelper send("ns3::TcpSocketFactory", to);
  send.SetAttribute("MaxBytes", ns3::UintegerValue(kBytes));
  send.SetAttribute("SendSize", ns3::UintegerValue(kMss));
  send.Install(network->GetHost(0));

  ns3::Simulator::Stop(ns3::NanoSeconds(1));
  ns3::Simulator::Run();
  TcpSendProbe probe;
  // The sender's socket and the sink's listening socket exist by now.
  EXPECT_EQ(probe.Attach(network->GetHosts()), 2u);
  ns3::Simulator::Stop(ns3::Seconds(1));
  ns3::Simulator::Run();

  ASSERT_EQ(sink_app->GetTotalRx(), kBytes);
  EXPECT_EQ(probe.data_segments(), (kBytes + kMss - 1) / kMss);  // 691
  EXPECT_EQ(probe.data_bytes(), kBytes);
  EXPECT_EQ(probe.max_outstanding_bytes(), kBufferSegments * kMss);
  EXPECT_GE(probe.MeanOutstandingBytes(), kMss);
  EXPECT_LE(probe.MeanOutstandingBytes(), kBufferSegments * kMss);
}

TEST_F(TcpSendProbeTest, NothingWatchedWithoutSockets) {
  ns3::NboxNetworkConfig config;
  auto network = ns3::NboxNetworkHelper(config).Install(topo::MakeStar(2, 10e9, 1e-6));
  TcpSendProbe probe;
  EXPECT_EQ(probe.Attach(network->GetHosts()), 0u);
  EXPECT_EQ(probe.data_segments(), 0u);
  EXPECT_EQ(probe.MeanOutstandingBytes(), 0.0);
}

}  // namespace
}  // namespace nbox::bench
