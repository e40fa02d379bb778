/*
 * Hand-wired RoCE fabrics for switch tests: named hosts (bare devices the test feeds) and
 * NboxRoceSwitches, links added one by one, routes set by the test, and an NboxNetwork whose
 * ports are the devices (so its RoCE counters are exercised too).
 */
#ifndef NBOX_ROCE_FABRIC_UTIL_H
#define NBOX_ROCE_FABRIC_UTIL_H

#include "nbox-roce-test-util.h"

#include "ns3/nbox-network.h"
#include "ns3/nbox-roce-switch.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{
namespace test
{

class TinyRoceFabric
{
  public:
    TinyRoceFabric()
        : m_network(CreateObject<NboxNetwork>())
    {
    }

    /** Adds host number GetNHosts() (its single link comes with Link). */
    uint32_t
    AddHost(const std::string& name)
    {
        Ptr<Node> node = CreateObject<Node>();
        m_network->AddHost(node, Ipv4Address::GetAny());
        m_nodes[name] = node;
        m_hostIndex[name] = static_cast<uint32_t>(m_hostDevices.size());
        m_hostDevices.push_back(nullptr);
        m_arrivals.push_back(std::make_unique<RoceArrivals>());
        return m_hostIndex[name];
    }

    /** Adds a switch: set its and its MMU's attributes before linking it (ports read them). */
    Ptr<NboxRoceSwitch>
    AddSwitch(const std::string& name)
    {
        Ptr<Node> node = CreateObject<Node>();
        Ptr<NboxRoceSwitch> sw = CreateObject<NboxRoceSwitch>();
        node->AggregateObject(sw);
        m_network->AddSwitch(node);
        m_nodes[name] = node;
        m_switches[name] = sw;
        return sw;
    }

    /**
     * Links `a` and `b`: a switch end becomes its next port, a host end its device (which
     * records arrivals). NboxNetwork gets both directions as ports.
     */
    void
    Link(const std::string& a, const std::string& b, DataRate rate, Time delay = MicroSeconds(1))
    {
        auto [devA, devB] = ConnectRoce(m_nodes.at(a), m_nodes.at(b), rate, delay);
        Attach(a, b, devA);
        Attach(b, a, devB);
        const uint32_t linkId = m_nLinks++;
        m_network->AddPort(linkId, a, b, m_switches.count(a) > 0, devA, nullptr);
        m_network->AddPort(linkId, b, a, m_switches.count(b) > 0, devB, nullptr);
    }

    Ptr<NboxRoceSwitch>
    Switch(const std::string& name) const
    {
        return m_switches.at(name);
    }

    uint32_t
    Host(const std::string& name) const
    {
        return m_hostIndex.at(name);
    }

    Ptr<NboxRoceNetDevice>
    HostDevice(const std::string& name) const
    {
        return m_hostDevices.at(Host(name));
    }

    const RoceArrivals&
    Arrivals(const std::string& name) const
    {
        return *m_arrivals.at(Host(name));
    }

    /** The port of switch `sw` whose link goes to `peer`. */
    uint32_t
    PortTowards(const std::string& sw, const std::string& peer) const
    {
        return m_portTo.at(sw).at(peer);
    }

    /** Queues `count` full frames of `payload` bytes from `src` to `dst` on flow `flow`. */
    void
    Send(const std::string& src, const std::string& dst, uint32_t flow, uint32_t count,
         uint32_t payload = 1456, uint8_t prio = 3,
         NboxRoceHeader::Ecn ecn = NboxRoceHeader::kNotEct)
    {
        for (uint32_t psn = 0; psn < count; ++psn)
        {
            HostDevice(src)->Enqueue(
                MakeRoceData(payload, prio, Host(src), Host(dst), flow, psn, ecn), prio);
        }
    }

    Ptr<NboxNetwork>
    Network() const
    {
        return m_network;
    }

    /** The NboxNetwork port statistics of direction from -> to. */
    NboxPortStats
    PortStats(const std::string& from, const std::string& to) const
    {
        for (const NboxPortStats& p : m_network->GetStats().ports)
        {
            if (p.fromNode == from && p.toNode == to)
            {
                return p;
            }
        }
        ADD_FAILURE() << "no port " << from << "->" << to;
        return {};
    }

  private:
    void
    Attach(const std::string& self, const std::string& peer, Ptr<NboxRoceNetDevice> device)
    {
        auto sw = m_switches.find(self);
        if (sw != m_switches.end())
        {
            m_portTo[self][peer] = sw->second->AddPort(device);
            return;
        }
        const uint32_t host = m_hostIndex.at(self);
        m_hostDevices[host] = device;
        m_arrivals[host]->Listen(device);
    }

    Ptr<NboxNetwork> m_network;
    std::map<std::string, Ptr<Node>> m_nodes;
    std::map<std::string, Ptr<NboxRoceSwitch>> m_switches;
    std::map<std::string, uint32_t> m_hostIndex;
    std::map<std::string, std::map<std::string, uint32_t>> m_portTo;
    std::vector<Ptr<NboxRoceNetDevice>> m_hostDevices;
    std::vector<std::unique_ptr<RoceArrivals>> m_arrivals;
    uint32_t m_nLinks = 0;
};

} // namespace test
} // namespace ns3

#endif /* NBOX_ROCE_FABRIC_UTIL_H */
