/*
 * A point-to-point link whose far end forwards cut-through.
 *
 * ns-3's PointToPointChannel delivers a packet whole, when its last bit has arrived, and a
 * switch then serialises it again: store-and-forward, one more packet time per switch hop for
 * the first packet after the port was idle. Cut-through switches (most datacenter Ethernet
 * switches when the egress port is free and no slower than the ingress, InfiniBand switches,
 * and a Linux bridge) begin sending once the header is in. NboxCutThroughChannel times that:
 * a switch end (SetForwardsCutThrough) is handed each packet once its header is in, so its
 * device holds the egress port from when a cut-through switch starts sending, and what queues
 * behind the packet leaves when the port is free; each packet carries when its header and its
 * last bit arrived (NboxCutThroughTag), and a forwarded packet never finishes before its own
 * last bit arrived. Hosts take packets whole. docs/DESIGN.md, "Switching".
 */
#ifndef NBOX_CUT_THROUGH_CHANNEL_H
#define NBOX_CUT_THROUGH_CHANNEL_H

#include "ns3/nstime.h"
#include "ns3/point-to-point-channel.h"
#include "ns3/tag.h"

#include <array>
#include <cstdint>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief When the header and the last bit of a packet reached the node it was delivered to
 * (a switch is handed it at the first, a host at the second).
 */
class NboxCutThroughTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer buffer) const override;
    void Deserialize(TagBuffer buffer) override;
    void Print(std::ostream& os) const override;

    Time headerArrival;  //!< the first HeaderBytes were in
    Time lastBitArrival; //!< the packet was whole (when the receiving device got it)
};

/**
 * \ingroup nbox
 * \brief A PointToPointChannel whose switch ends forward cut-through (see the file comment).
 */
class NboxCutThroughChannel : public PointToPointChannel
{
  public:
    static TypeId GetTypeId();
    NboxCutThroughChannel();

    /**
     * Marks `device` (attached to this channel, on a switch) as forwarding cut-through: it
     * is handed packets once their header is in, and times what it forwards from then.
     */
    void SetForwardsCutThrough(Ptr<PointToPointNetDevice> device);

    bool TransmitStart(Ptr<const Packet> p, Ptr<PointToPointNetDevice> src, Time txTime) override;

  private:
    uint32_t m_headerBytes;          //!< what a switch must have before it forwards
    std::array<Time, 2> m_idleSince; //!< per direction: when its last packet's last bit left
    std::array<bool, 2> m_forwards;  //!< per device: its node forwards cut-through
};

} // namespace ns3

#endif /* NBOX_CUT_THROUGH_CHANNEL_H */
