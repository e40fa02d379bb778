/*
 * A ring all-reduce on the RoCE path (NIC, switches, transport, job) over a 2:1
 * oversubscribed leaf-spine against the same job on a non-blocking one: the slowdown is the
 * ratio the alpha-beta model predicts, within 10%.
 *
 * Fabric: two leaves of four 100 Gb/s hosts and one spine (no ECMP choice to blur the
 * capacity). Ranks alternate between the leaves (rank r on leaf r mod 2), so every hop of
 * the ring crosses the spine: each leaf sends four ring flows up one fabric link. At 400 Gb/s
 * that link is non-blocking (each flow keeps 100 Gb/s); at 200 Gb/s it is 2:1 and each flow
 * gets 50 Gb/s.
 */
#include "nbox-test-util.h"

#include "ns3/nbox-job-helper.h"
#include "ns3/nbox-roce-network-helper.h"
#include "ns3/nbox-roce-transport.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include "topologies/topology.h"
#include "workloads/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

using NboxRoceOversubscriptionTest = NboxNs3Test;

constexpr int kWorld = 8;
constexpr int kHostsPerLeaf = 4;
constexpr double kHostRate = 100e9;
constexpr double kLatency = 1e-6;
constexpr uint32_t kMtu = 9000;
/** RoCE payload per packet at IP MTU 9000 (minus IPv4 20, UDP 8, BTH 12, ICRC 4) and the
 * packet's wire size (plus Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4). */
constexpr double kPayload = kMtu - 44;
constexpr double kWirePacket = kPayload + 62;
constexpr uint64_t kBytes = 32 << 20;

/**
 * Ring all-reduce time: 2 (W - 1) steps of S / W bytes at the per-flow wire rate `flowRate`,
 * each step also paying four link delays (host, leaf, spine, leaf, host) and the
 * store-and-forward of one packet at each of the three switches.
 */
double
AlphaBetaSeconds(double flowRate)
{
    const double steps = 2.0 * (kWorld - 1);
    const double bandwidth = steps / kWorld * kBytes * (kWirePacket / kPayload) * 8 / flowRate;
    const double perStep = 4 * kLatency + 3 * kWirePacket * 8 / kHostRate;
    return bandwidth + steps * perStep;
}

struct Outcome
{
    double iterationSeconds = 0;
    NboxNetworkStats network;
};

/** One iteration of the all-reduce with `fabricRate` on the leaf-spine link, `cc` on QPs. */
Outcome
RunAllReduce(double fabricRate, const std::string& cc)
{
    const auto topology
        = nbox::topo::MakeLeafSpine(2, 1, kHostsPerLeaf, kHostRate, fabricRate, kLatency);
    std::vector<int> rankToHost(kWorld);
    for (int r = 0; r < kWorld; ++r)
    {
        rankToHost[r] = (r % 2) * kHostsPerLeaf + r / 2;
    }
    NboxRoceNetworkHelper roce;
    roce.SetMtu(kMtu);
    roce.SetNicAttribute("CongestionControl", StringValue(cc));
    Ptr<NboxNetwork> network = roce.Install(topology);
    auto transport = CreateObject<NboxRoceTransport>(network, rankToHost);

    NboxJobHelper jobs;
    jobs.SetCommunicatorAttribute("Channels", UintegerValue(1));
    auto program = std::make_shared<const nbox::work::RankProgram>(
        nbox::work::RepeatedCollectiveProgram(nbox::coll::CollectiveOp::kAllReduce, kBytes, 1));
    std::vector<std::shared_ptr<const nbox::work::RankProgram>> programs(kWorld, program);
    Ptr<NboxJob> job = jobs.Install(network, transport, programs, rankToHost);
    RunFor(Seconds(10));
    EXPECT_TRUE(job->IsFinished());

    Outcome out;
    Time start = Time::Max();
    Time end = Time(0);
    for (const NboxIterationRecord& it : job->GetRecords()->iterations)
    {
        start = std::min(start, it.start);
        end = std::max(end, it.end);
    }
    out.iterationSeconds = (end - start).GetSeconds();
    out.network = network->GetStats();
    return out;
}

void
CheckSlowdown(const std::string& cc)
{
    const Outcome full = RunAllReduce(4 * kHostRate, cc);
    Simulator::Destroy();
    const Outcome half = RunAllReduce(2 * kHostRate, cc);
    const double predictedFull = AlphaBetaSeconds(kHostRate);
    const double predictedHalf = AlphaBetaSeconds(kHostRate / 2);
    std::printf("cc=%s: non-blocking %.3f ms (alpha-beta %.3f), 2:1 %.3f ms (alpha-beta %.3f); "
                "slowdown %.3f, predicted %.3f; 2:1 pauses %llu, marks %llu\n",
                cc.c_str(), full.iterationSeconds * 1e3, predictedFull * 1e3,
                half.iterationSeconds * 1e3, predictedHalf * 1e3,
                half.iterationSeconds / full.iterationSeconds, predictedHalf / predictedFull,
                static_cast<unsigned long long>(half.network.pfcPausesSent),
                static_cast<unsigned long long>(half.network.ecnMarks));
    EXPECT_NEAR(full.iterationSeconds / predictedFull, 1.0, 0.10);
    EXPECT_NEAR((half.iterationSeconds / full.iterationSeconds) / (predictedHalf / predictedFull),
                1.0, 0.10);
    EXPECT_EQ(full.network.drops + half.network.drops, 0u);
}

// Line-rate QPs: PFC alone shares the oversubscribed link. DCQCN is left out of this check:
// at its default parameters it leaves the shared link underused (the 2:1 run took 3.8x, not
// 2x, when this test was written), a tuning question for the NIC's own tests. With the
// headroom formula missing the frame that triggers a pause, this case dropped 305 packets
// and took 3.1x.
TEST_F(NboxRoceOversubscriptionTest, PfcAloneSlowsTheRingByThePredictedRatio)
{
    CheckSlowdown("none");
}

} // namespace
} // namespace test
} // namespace ns3
