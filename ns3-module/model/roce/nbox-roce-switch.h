/*
 * A RoCE switch: forwards on the NboxRoceHeader's destination host over equal-cost ports
 * chosen per flow, with a shared-buffer MMU that drops, pauses (PFC) and marks (ECN).
 */
#ifndef NBOX_ROCE_SWITCH_H
#define NBOX_ROCE_SWITCH_H

#include "ns3/nbox-ecmp-routing.h"
#include "ns3/nbox-fifo.h"
#include "ns3/nbox-flowlet-table.h"
#include "ns3/nbox-roce-net-device.h"
#include "ns3/nbox-switch-mmu.h"
#include "ns3/object.h"

#include <array>
#include <cstdint>
#include <map>
#include <vector>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief Forwarding, MMU and PFC of one switch of the RoCE path (aggregate it to the Node).
 *
 * Ports are NboxRoceNetDevices added with AddPort (index = order of addition), each already
 * attached to its channel. For every packet arriving on port i with priority p towards host
 * h:
 *   1. the egress port o is the member of h's equal-cost set (SetRoute) picked by the flow
 *      hash of (srcHost, dstHost, flowId) and the per-switch Seed (NboxEcmpRouting's hash,
 *      with the QP folded into the UDP source port as RoCEv2 NICs do and destination port
 *      4791), so a QP's packets stay in order on one path;
 *   2. the MMU admits it or drops it (counted on port o, see NboxSwitchMmu::Verdict);
 *   3. a data packet sent ECT may be marked CE (NboxSwitchMmu ECN, egress queue (o, p));
 *   4. it is queued on port o at priority p, and ingress queue (i, p) pauses its upstream
 *      with a PFC frame if the MMU says so.
 * When port o starts sending the packet its bytes are released (to (i, p), remembered in a
 * FIFO per egress queue) and every paused ingress queue that may resume sends a resume.
 *
 * Per-port PFC headroom is the Headroom attribute, or, when it is 0 (the default),
 * NboxSwitchMmu::GetRequiredHeadroom for the port's rate, link delay and MTU. ECN thresholds
 * of a port are the MMU's EcnKmin/EcnKmax times (port rate / EcnReferenceRate).
 */
class NboxRoceSwitch : public Object
{
  public:
    /** How a packet picks among the equal-cost ports towards its destination. */
    enum LoadBalancing
    {
        ECMP,    //!< a hash of its flow: every packet of a QP on one path
        SPRAY,   //!< per packet, each set's ports in turn (receivers must accept reordering)
        FLOWLET, //!< per flowlet: a QP's path changes only after a pause (NboxFlowletTable)
    };

    static TypeId GetTypeId();
    NboxRoceSwitch();
    ~NboxRoceSwitch() override;

    /**
     * Adds `device` (attached to its channel) as the next port; returns its index. Throws
     * std::invalid_argument when the MMU's BufferSize cannot hold the reserves and headroom
     * of its ports with this one (NboxSwitchMmu::AddPort).
     */
    uint32_t AddPort(Ptr<NboxRoceNetDevice> device);
    uint32_t GetNPorts() const;
    Ptr<NboxRoceNetDevice> GetPort(uint32_t port) const;

    /** Packets for `dstHost` leave through one of `ports` (not empty; equal cost). */
    void SetRoute(uint32_t dstHost, const std::vector<uint32_t>& ports);
    /** The equal-cost ports towards `dstHost` (empty when there is no route). */
    std::vector<uint32_t> GetRoute(uint32_t dstHost) const;
    /** The port a packet of flow (srcHost, dstHost, flowId) leaves through; aborts without
     * a route. Spraying moves on to the set's next port with every call. */
    uint32_t SelectPort(uint32_t srcHost, uint32_t dstHost, uint32_t flowId);

    /** Attribute FlowletTimeout: the pause after which a QP's next packet may change path. */
    void SetFlowletTimeout(Time timeout);
    Time GetFlowletTimeout() const;
    /** Flowlets this switch started with Flowlet load balancing (a QP's first included). */
    uint64_t GetFlowletCount() const;

    /** The MMU (created with the switch; configure it through its attributes). */
    Ptr<NboxSwitchMmu> GetMmu() const;

    /**
     * Fixes the random stream of the MMU's ECN draws (see NboxSwitchMmu::AssignStreams), so
     * that marks do not depend on how many random variables the process created before.
     * Returns the number of streams used (1).
     */
    int64_t AssignStreams(int64_t stream);

    /** Per-switch hash seed (attribute Seed). */
    void SetSeed(uint64_t seed);
    uint64_t GetSeed() const;

    /// \name Counters
    /// @{
    uint64_t GetReceivedPackets() const;
    uint64_t GetDrops(NboxSwitchMmu::Verdict reason) const;
    uint64_t GetTotalDrops() const;
    uint64_t GetEcnMarks() const;
    /// @}

  protected:
    void DoDispose() override;

  private:
    void ReceiveFromPort(uint32_t inPort, Ptr<NboxRoceNetDevice> device, Ptr<Packet> packet);
    void DequeuedFromPort(uint32_t outPort, Ptr<NboxRoceNetDevice> device, Ptr<const Packet> packet,
                          uint8_t prio);
    /** Appends this egress port's INT hop to a data packet that carries an INT block. */
    void StampTelemetry(Ptr<NboxRoceNetDevice> device, Ptr<Packet> packet, uint8_t prio);
    /** Sends a resume for every paused ingress queue of priority `prio` that may resume. */
    void ResumeWhereAllowed(uint8_t prio);

    uint64_t m_headroomAttribute;
    bool m_stampTelemetry;
    DataRate m_ecnReferenceRate;

    Ptr<NboxSwitchMmu> m_mmu;
    Ptr<NboxEcmpRouting> m_hasher; //!< only its seeded flow hash is used
    std::vector<Ptr<NboxRoceNetDevice>> m_ports;
    /** Ingress port of each packet waiting in egress queue (port, prio), in queue order. */
    std::vector<NboxFifo<uint32_t>> m_inPortFifo;
    std::vector<uint32_t> m_routeOfHost;           //!< index into m_portSets, or kNoRoute
    std::vector<std::vector<uint32_t>> m_portSets; //!< distinct equal-cost sets
    std::map<std::vector<uint32_t>, uint32_t> m_setIndex;
    LoadBalancing m_loadBalancing;
    std::vector<uint32_t> m_sprayNext; //!< per set: the index its next sprayed packet takes
    NboxFlowletTable m_flowlets;       //!< with FLOWLET: each QP's current flowlet
    std::array<uint32_t, NboxRoceHeader::kNPriorities> m_nPausedQueues; //!< per priority
    static constexpr uint32_t kNoRoute = UINT32_MAX;

    uint64_t m_received;
    std::array<uint64_t, 4> m_drops; //!< per Verdict
    uint64_t m_ecnMarks;
};

} // namespace ns3

#endif /* NBOX_ROCE_SWITCH_H */
