/*
 * The wire between two NboxRoceNetDevices.
 */
#ifndef NBOX_ROCE_CHANNEL_H
#define NBOX_ROCE_CHANNEL_H

#include "ns3/channel.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"

#include <array>
#include <cstdint>

namespace ns3
{

class NboxRoceNetDevice;

/**
 * \ingroup nbox
 * \brief A full-duplex point-to-point link joining exactly two NboxRoceNetDevices.
 *
 * The rate belongs to the devices (each serialises its own frames); the channel adds the
 * propagation Delay: a frame whose last bit leaves the sender at t is handed whole to the
 * peer's NboxRoceNetDevice::Receive at t + Delay. Lossless.
 */
class NboxRoceChannel : public Channel
{
  public:
    static TypeId GetTypeId();
    NboxRoceChannel();
    ~NboxRoceChannel() override;

    /** Joins `device` to this channel (at most two devices). */
    void Attach(Ptr<NboxRoceNetDevice> device);
    /** The device at the other end from `sender` (null until both ends are attached). */
    Ptr<NboxRoceNetDevice> GetPeer(Ptr<const NboxRoceNetDevice> sender) const;
    /**
     * Called by `sender` when it starts serialising `packet`, which takes `txTime`: the peer
     * receives a copy at Now() + txTime + Delay.
     */
    void Transmit(Ptr<const Packet> packet, Ptr<const NboxRoceNetDevice> sender, Time txTime);

    Time GetDelay() const;
    void SetDelay(Time delay);

    // Channel
    std::size_t GetNDevices() const override;
    Ptr<NetDevice> GetDevice(std::size_t i) const override;

  protected:
    void DoDispose() override;

  private:
    Time m_delay;
    std::array<Ptr<NboxRoceNetDevice>, 2> m_devices;
    std::size_t m_nDevices;
};

} // namespace ns3

#endif /* NBOX_ROCE_CHANNEL_H */
