/*
 * A point-to-point Ethernet port of the RoCE path: per-priority egress queues, strict
 * priority scheduling, and 802.1Qbb PFC (it pauses its own egress priorities when the peer
 * asks, and sends PFC frames when its owner asks).
 */
#ifndef NBOX_ROCE_NET_DEVICE_H
#define NBOX_ROCE_NET_DEVICE_H

#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/mac48-address.h"
#include "ns3/nbox-fifo.h"
#include "ns3/nbox-port-counter-source.h"
#include "ns3/nbox-roce-header.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/traced-callback.h"

#include <array>
#include <cstdint>

namespace ns3
{

class NboxRoceChannel;
class Node;

/**
 * \ingroup nbox
 * \brief One end of a NboxRoceChannel: a RoCE NIC port or a switch port.
 *
 * The device does not decide what to send or drop: its owner (NboxRoceSwitch, or the host's
 * RoCE NIC) queues packets that already carry a NboxRoceHeader with Enqueue(), and the
 * device serialises them at DataRate, one at a time:
 *   1. PFC frames first (SendPfc), never paused;
 *   2. then strict priority, priority 7 first, among priorities the peer has not paused.
 * A packet takes size × 8 / DataRate to serialise (in whole simulator ticks, the remainder
 * carried to the next frame so that back-to-back frames keep the exact rate) and arrives at
 * the peer the channel's Delay after its last bit left (store and forward). Queues are unbounded:
 * admission and drops are the owner's business (the switch's MMU; the NIC keeps only a packet or
 * two queued).
 *
 * Received PFC frames are consumed here (when PfcEnabled; else counted and ignored); every
 * other packet goes to the owner's receive callback with its header still on.
 *
 * Counters per priority: PFC pauses and resumes sent and received, time paused. Per port:
 * wire bytes and packets sent, peak queued bytes, and the drops and ECN marks the owner
 * reports with CountDrop()/CountEcnMark() (NboxPortCounterSource, read by NboxNetwork).
 *
 * Trace sources: PhyTxBegin (every frame put on the wire, PFC frames included), PhyTxEnd,
 * PhyRxEnd (every frame received), MacTxDrop (CountDrop), PfcTx and PfcRx (priority, pause).
 */
class NboxRoceNetDevice : public NetDevice, public NboxPortCounterSource
{
  public:
    /** A non-PFC packet arrived from the wire (header still on). */
    using RoceReceiveCallback = Callback<void, Ptr<NboxRoceNetDevice>, Ptr<Packet>>;
    /** A packet of priority `prio` left its egress queue to be serialised (the owner frees
     * its buffer). Not called for PFC frames. */
    using DequeueCallback = Callback<void, Ptr<NboxRoceNetDevice>, Ptr<const Packet>, uint8_t>;
    /** Called with a frame of a priority queue as it starts to leave (GetTxBytes already
     * counts it, GetQueuedBytes() no longer does): where a switch stamps in-band
     * telemetry. It may change the packet's tags, not its size. */
    using EgressCallback = Callback<void, Ptr<NboxRoceNetDevice>, Ptr<Packet>, uint8_t>;
    /** The transmitter finished a frame, or a paused priority was resumed: the owner may
     * queue more. */
    using TxReadyCallback = Callback<void, Ptr<NboxRoceNetDevice>>;

    /** Signature of the PfcTx and PfcRx trace sources. */
    typedef void (*PfcTracedCallback)(uint8_t priority, bool pause);

    static TypeId GetTypeId();
    NboxRoceNetDevice();
    ~NboxRoceNetDevice() override;

    /** Connects this device to `channel` (which accepts two devices). */
    void Attach(Ptr<NboxRoceChannel> channel);

    /**
     * Queues `packet` (with its NboxRoceHeader already added) on egress priority `prio`
     * (0..7) and starts sending if the transmitter is idle and `prio` is not paused.
     */
    void Enqueue(Ptr<Packet> packet, uint8_t prio);
    /** True while the peer has paused `prio` (always false when PfcEnabled is off). */
    bool IsPaused(uint8_t prio) const;
    /** Wire bytes waiting on `prio` (the frame being serialised is no longer queued). */
    uint64_t GetQueuedBytes(uint8_t prio) const;
    uint32_t GetQueuedPackets(uint8_t prio) const;
    /** True while a frame is being serialised. */
    bool IsTransmitting() const;
    /**
     * Sends a PFC frame that pauses (true) or resumes (false) `prio` at the peer, ahead of any
     * queued data (after the frame being serialised, if any: frames are not pre-empted).
     */
    void SendPfc(uint8_t prio, bool pause);

    /** Time to serialise `bytes` at DataRate. */
    Time GetSerializationTime(uint32_t bytes) const;
    DataRate GetDataRate() const;
    void SetDataRate(DataRate rate);

    void SetRoceReceiveCallback(RoceReceiveCallback cb);
    void SetDequeueCallback(DequeueCallback cb);
    void SetEgressCallback(EgressCallback cb);
    void SetTxReadyCallback(TxReadyCallback cb);

    /// \name Counters
    /// @{
    uint64_t GetTxBytes() const;   //!< wire bytes sent, PFC frames included
    uint64_t GetTxPackets() const; //!< frames sent, PFC frames included
    uint64_t GetPfcPausesSent(uint8_t prio) const;
    uint64_t GetPfcResumesSent(uint8_t prio) const;
    uint64_t GetPfcPausesReceived(uint8_t prio) const;
    uint64_t GetPfcResumesReceived(uint8_t prio) const;
    /** Time `prio` has been paused by the peer so far (a pause in progress counts up to
     * now). */
    Time GetPausedTime(uint8_t prio) const;
    /** The owner dropped a packet that was to leave through this port. */
    void CountDrop(Ptr<const Packet> packet);
    /** The owner marked a packet CE on queueing it here. */
    void CountEcnMark();
    /// @}

    // NboxPortCounterSource (pauses summed over priorities)
    uint64_t GetDropCount() const override;
    uint64_t GetEcnMarkCount() const override;
    uint64_t GetQueuedBytes() const override; //!< all priorities
    uint64_t GetPeakQueuedBytes() const override;
    uint64_t GetPfcPausesSent() const override;
    uint64_t GetPfcPausesReceived() const override;
    Time GetPausedTime() const override; //!< time with at least one priority paused

    /** Called by the channel: `packet` has fully arrived from the peer. */
    void Receive(Ptr<Packet> packet);

    // NetDevice
    void SetIfIndex(const uint32_t index) override;
    uint32_t GetIfIndex() const override;
    Ptr<Channel> GetChannel() const override;
    void SetAddress(Address address) override;
    Address GetAddress() const override;
    bool SetMtu(const uint16_t mtu) override;
    uint16_t GetMtu() const override;
    bool IsLinkUp() const override;
    void AddLinkChangeCallback(Callback<void> callback) override;
    bool IsBroadcast() const override;
    Address GetBroadcast() const override;
    bool IsMulticast() const override;
    Address GetMulticast(Ipv4Address multicastGroup) const override;
    Address GetMulticast(Ipv6Address addr) const override;
    bool IsPointToPoint() const override;
    bool IsBridge() const override;
    /** Queues `packet`, which must carry a NboxRoceHeader, on the header's priority. */
    bool Send(Ptr<Packet> packet, const Address& dest, uint16_t protocolNumber) override;
    bool SendFrom(Ptr<Packet> packet, const Address& source, const Address& dest,
                  uint16_t protocolNumber) override;
    Ptr<Node> GetNode() const override;
    void SetNode(Ptr<Node> node) override;
    bool NeedsArp() const override;
    /** The ns-3 receive callback is not used by the RoCE path (see SetRoceReceiveCallback). */
    void SetReceiveCallback(NetDevice::ReceiveCallback cb) override;
    void SetPromiscReceiveCallback(PromiscReceiveCallback cb) override;
    bool SupportsSendFrom() const override;

  protected:
    void DoDispose() override;

  private:
    /** Starts serialising the next eligible frame if the transmitter is idle. */
    void TransmitNext();
    void TransmitComplete(Ptr<const Packet> frame);
    /** Serialisation time of the next frame of `bytes`, exact over a run of frames. */
    Time NextTxTime(uint32_t bytes);
    /** Applies a received PFC frame. */
    void ReceivePfc(const NboxRoceHeader& header);
    void SetPaused(uint8_t prio, bool paused);
    void CheckPriority(uint8_t prio) const;

    Ptr<Node> m_node;
    Ptr<NboxRoceChannel> m_channel;
    uint32_t m_ifIndex;
    Mac48Address m_address;
    uint16_t m_mtu;
    DataRate m_rate;
    bool m_pfcEnabled;

    RoceReceiveCallback m_receive;
    DequeueCallback m_dequeued;
    EgressCallback m_egress;
    TxReadyCallback m_txReady;

    NboxFifo<Ptr<Packet>> m_pfcQueue;
    std::array<NboxFifo<Ptr<Packet>>, NboxRoceHeader::kNPriorities> m_queues;
    std::array<uint64_t, NboxRoceHeader::kNPriorities> m_queuedBytes;
    uint64_t m_totalQueuedBytes;
    bool m_transmitting;
    uint64_t m_txResidual; //!< remainder of bits x ticks-per-second / rate (NextTxTime)

    std::array<bool, NboxRoceHeader::kNPriorities> m_paused;
    std::array<Time, NboxRoceHeader::kNPriorities> m_pausedSince;
    std::array<Time, NboxRoceHeader::kNPriorities> m_pausedTime;
    uint32_t m_nPaused;    //!< priorities paused now
    Time m_anyPausedSince; //!< when m_nPaused last went from 0 to 1
    Time m_anyPausedTime;  //!< closed intervals with m_nPaused > 0

    uint64_t m_txBytes;
    uint64_t m_txPackets;
    uint64_t m_peakQueuedBytes;
    uint64_t m_drops;
    uint64_t m_ecnMarks;
    std::array<uint64_t, NboxRoceHeader::kNPriorities> m_pausesSent;
    std::array<uint64_t, NboxRoceHeader::kNPriorities> m_resumesSent;
    std::array<uint64_t, NboxRoceHeader::kNPriorities> m_pausesReceived;
    std::array<uint64_t, NboxRoceHeader::kNPriorities> m_resumesReceived;

    TracedCallback<Ptr<const Packet>> m_phyTxBeginTrace;
    TracedCallback<Ptr<const Packet>> m_phyTxEndTrace;
    TracedCallback<Ptr<const Packet>> m_phyRxEndTrace;
    TracedCallback<Ptr<const Packet>> m_macTxDropTrace;
    TracedCallback<uint8_t, bool> m_pfcTxTrace;
    TracedCallback<uint8_t, bool> m_pfcRxTrace;
};

} // namespace ns3

#endif /* NBOX_ROCE_NET_DEVICE_H */
