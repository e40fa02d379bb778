/*
 * In-band network telemetry (INT) as HPCC uses it (Li et al., "HPCC: High Precision Congestion
 * Control", SIGCOMM 2019, section 3): every switch egress port a data packet leaves through
 * appends what it saw at that moment; the receiver copies the record into its ACK.
 */
#ifndef NBOX_INT_TAG_H
#define NBOX_INT_TAG_H

#include "ns3/tag.h"

#include <array>
#include <cstdint>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief The INT record of one packet: one hop per switch egress port it crossed.
 *
 * Carried as a packet tag, so that its fields keep full precision; the bytes it takes on the
 * wire are counted by NboxRoceHeader (kIntBytes: HPCC's 2-byte header and 8 bytes per hop,
 * kMaxHops of them, reserved by the sender whether or not the switches fill them).
 */
class NboxIntTag : public Tag
{
  public:
    /** Hops a record holds, as HPCC's implementation reserves. */
    static constexpr uint32_t kMaxHops = 5;

    /** What one egress port reports. */
    struct Hop
    {
        uint64_t portId = 0;     //!< which egress port (switch node id, device index)
        uint64_t rateBps = 0;    //!< the port's line rate (B)
        uint64_t timeNs = 0;     //!< when the packet left (ts)
        uint64_t txBytes = 0;    //!< bytes the port has sent, this packet included (txBytes)
        uint64_t queueBytes = 0; //!< bytes waiting at the port after it (qLen)
    };

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer buffer) const override;
    void Deserialize(TagBuffer buffer) override;
    void Print(std::ostream& os) const override;

    /** Appends a hop; a record already holding kMaxHops keeps them and ignores more. */
    void AddHop(const Hop& hop);
    uint32_t GetNHops() const;
    const Hop& GetHop(uint32_t index) const;

  private:
    uint32_t m_nHops = 0;
    std::array<Hop, kMaxHops> m_hops{};
};

} // namespace ns3

#endif /* NBOX_INT_TAG_H */
