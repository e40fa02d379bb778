/*
 * A user's own ns-3 program on top of the nbox module: build a custom topology graph by hand,
 * turn it into an ns-3 network with NboxNetworkHelper, and run a ring all-reduce on it with
 * NboxJobHelper.
 *
 * The graph: two racks of `hostsPerRack` hosts, each rack switch joined to one aggregation
 * switch by two parallel uplinks (per-flow ECMP spreads the ring's channels over them).
 *
 *   ./nbox-custom-topology --hostsPerRack=4 --bytes=33554432 --channels=2
 */

#include "ns3/core-module.h"
#include "ns3/nbox-module.h"

#include "collectives/schedule.h"
#include "topologies/topology.h"
#include "workloads/ops.h"

#include <algorithm>
#include <iostream>
#include <memory>

using namespace ns3;

namespace
{

nbox::topo::Topology
TwoRacks(int hostsPerRack, double hostRate, double uplinkRate, double latency)
{
    nbox::topo::Topology t;
    t.description = "two racks with dual uplinks";
    const auto agg = t.AddSwitch("agg");
    for (int rack = 0; rack < 2; ++rack)
    {
        const auto tor = t.AddSwitch("tor" + std::to_string(rack));
        t.AddLink(tor, agg, uplinkRate, latency);
        t.AddLink(tor, agg, uplinkRate, latency);
        for (int h = 0; h < hostsPerRack; ++h)
        {
            const auto host = t.AddHost("h" + std::to_string(rack * hostsPerRack + h));
            t.AddLink(host, tor, hostRate, latency);
        }
    }
    t.Validate();
    return t;
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t hostsPerRack = 4;
    uint64_t bytes = 32 << 20;
    uint32_t channels = 2;
    uint32_t mtu = 9000;
    CommandLine cmd(__FILE__);
    cmd.AddValue("hostsPerRack", "hosts in each of the two racks", hostsPerRack);
    cmd.AddValue("bytes", "all-reduce size in bytes", bytes);
    cmd.AddValue("channels", "parallel rings", channels);
    cmd.AddValue("mtu", "link MTU in bytes", mtu);
    cmd.Parse(argc, argv);

    // Optional: forget TCP's cancelled timers instead of queueing them until they come due
    // (the same results, less memory; ns3-module/README.md, "Event scheduler").
    ObjectFactory scheduler;
    scheduler.SetTypeId(NboxPruningScheduler::GetTypeId());
    Simulator::SetScheduler(scheduler);

    const auto topology = TwoRacks(hostsPerRack, 100e9, 100e9, 1e-6);
    const int world = 2 * hostsPerRack;
    const auto rankToHost = nbox::topo::PlaceRanks(topology, world);

    NboxNetworkConfig config;
    config.mtu = mtu;
    Ptr<NboxNetwork> network = NboxNetworkHelper(config).Install(topology);
    auto transport = CreateObject<NboxTcpTransport>();
    transport->Setup(network, rankToHost);

    // Every rank runs one all-reduce and waits for it.
    auto program = std::make_shared<const nbox::work::RankProgram>(
        nbox::work::RepeatedCollectiveProgram(nbox::coll::CollectiveOp::kAllReduce, bytes, 1));

    NboxJobHelper jobHelper;
    jobHelper.SetCommunicatorAttribute("Channels", UintegerValue(channels));
    std::vector<std::shared_ptr<const nbox::work::RankProgram>> programs(world, program);
    Ptr<NboxJob> job = jobHelper.Install(network, transport, programs, rankToHost);

    Simulator::Run();
    if (!job->IsFinished())
    {
        std::cerr << "the all-reduce did not finish" << std::endl;
        return 1;
    }
    // The collective runs from the first rank's start to the last rank's end.
    Time start = Time::Max();
    Time end = Time(0);
    for (const auto& record : job->GetRecords()->collectives)
    {
        start = std::min(start, record.started);
        end = std::max(end, record.finished);
    }
    const double seconds = (end - start).GetSeconds();
    const double algbw = bytes / seconds;
    const double busbw
        = algbw * nbox::coll::BusBandwidthFactor(nbox::coll::CollectiveOp::kAllReduce, world);
    std::cout << world << "-rank ring all-reduce of " << bytes << " bytes over "
              << topology.description << ": " << seconds * 1e3 << " ms, algbw " << algbw / 1e9
              << " GB/s, busbw " << busbw / 1e9 << " GB/s" << std::endl;
    const auto stats = network->GetStats();
    std::cout << "wire bytes " << stats.wireBytes << ", drops " << stats.drops << ", peak queue "
              << stats.peakQueueBytes << " B at " << stats.peakQueuePort << std::endl;
    Simulator::Destroy();
    return 0;
}
