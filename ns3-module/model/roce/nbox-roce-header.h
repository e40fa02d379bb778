/*
 * The header every packet of the RoCE path carries: one fixed-layout header that stands for
 * Ethernet + IPv4 + UDP + InfiniBand BTH (+ AETH for ACK/NACK) + ICRC + FCS on the wire, and
 * for the IEEE 802.1Qbb PFC frame.
 */
#ifndef NBOX_ROCE_HEADER_H
#define NBOX_ROCE_HEADER_H

#include "ns3/header.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief Header of a RoCEv2 packet or a PFC frame on a NboxRoceNetDevice link.
 *
 * Payload stays virtual: a data packet is Packet(payloadBytes) with this header added. The
 * serialized size is padded so that the packet occupies exactly what it would on the wire
 * (preamble and inter-frame gap are not modelled, as on the TCP path):
 *   - data: payload + 62 bytes (Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4);
 *   - ACK, NACK, CNP, PFC: 64 bytes in all (the minimum Ethernet frame; an ACK's AETH and a
 *     CNP's reserved bytes fit inside it), to be sent as Packet(0) + header;
 *   - a data packet or ACK with an INT block (HasTelemetry, HPCC): kIntBytes more.
 * Hence payload per data packet at IP MTU `mtu` is mtu - 20 - 8 - 12 - 4
 * (GetDataPayloadPerMtu).
 *
 * The type is the first serialised byte (NboxRoceNetDevice reads it alone to spot PFC
 * frames).
 *
 * Fields by type:
 *   - all: type, priority (0..7), srcHost, dstHost (topology host indices);
 *   - kData: ecn, flowId (the QP), psn, lastOfMessage and messageBytes (the byte count of
 *     the message this packet ends, meaningful only when lastOfMessage);
 *   - kAck: flowId, psn = the next PSN the receiver expects (every PSN below is acknowledged);
 *   - kNack: flowId, psn = the PSN the receiver expects (the sender goes back to it);
 *   - kCnp: flowId of the QP to slow down; srcHost is the notification point;
 *   - kPause: a PFC frame. It carries, per priority, whether the frame addresses it
 *     (802.1Qbb's class-enable vector) and whether it pauses (pause) or resumes it. A pause
 *     holds until the matching resume: quanta are not modelled, the sender of the pause
 *     always sends the resume (as switches do with XON frames), and the link never loses
 *     PFC frames. srcHost/dstHost are unused for kPause.
 */
class NboxRoceHeader : public Header
{
  public:
    /** What the packet is. */
    enum Type : uint8_t
    {
        kData = 0,
        kAck = 1,
        kNack = 2,
        kCnp = 3,
        kPause = 4,
    };

    /** ECN codepoints of the IP header's two ECN bits (RFC 3168). */
    enum Ecn : uint8_t
    {
        kNotEct = 0,
        kEct1 = 1,
        kEct0 = 2,
        kCe = 3,
    };

    /** Bytes a data packet adds to its payload on the wire. */
    static constexpr uint32_t kDataOverheadBytes = 14 + 20 + 8 + 12 + 4 + 4;
    /** Bytes of an ACK, NACK, CNP or PFC frame on the wire (minimum Ethernet frame). */
    static constexpr uint32_t kControlFrameBytes = 64;
    /** Bytes that count against the IP MTU besides the payload: IPv4 20, UDP 8, BTH 12,
     * ICRC 4. */
    static constexpr uint32_t kIpMtuOverheadBytes = 20 + 8 + 12 + 4;
    /** Bytes an INT block adds on the wire (HPCC: a 2-byte header and 8 bytes for each of
     * NboxIntTag::kMaxHops hops, reserved by the sender); its contents ride in NboxIntTag. */
    static constexpr uint32_t kIntBytes = 2 + 8 * 5;
    /** Number of PFC priorities (802.1Qbb traffic classes). */
    static constexpr uint8_t kNPriorities = 8;

    /** Payload bytes per data packet at IP MTU `ipMtu` (1456 at 1500, 8956 at 9000). */
    static uint32_t GetDataPayloadPerMtu(uint32_t ipMtu);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;

    NboxRoceHeader();
    /** A header of type `type`, every other field zero. */
    explicit NboxRoceHeader(Type type);

    void SetType(Type type);
    Type GetType() const;
    /** True for kAck, kNack, kCnp: the RoCE control packets (not PFC). */
    bool IsControl() const;

    void SetPriority(uint8_t priority); //!< 0..7
    uint8_t GetPriority() const;
    void SetEcn(Ecn ecn);
    Ecn GetEcn() const;
    void SetSrcHost(uint32_t host);
    uint32_t GetSrcHost() const;
    void SetDstHost(uint32_t host);
    uint32_t GetDstHost() const;
    void SetFlowId(uint32_t flowId);
    uint32_t GetFlowId() const;
    void SetPsn(uint32_t psn);
    uint32_t GetPsn() const;

    /** Whether the packet carries an INT block (data: for the switches to fill; ACK: echoed
     * to the sender). It adds kIntBytes to the packet on the wire. */
    void SetTelemetry(bool carries);
    bool HasTelemetry() const;

    /** A send time (data: when the NIC sent it; ACK: that of the data packet it answers,
     * echoed), for RTT-based congestion control. It rides in the header's padding: no bytes
     * on the wire. Setting it marks the packet as carrying one (HasTimestamp). */
    void SetTimestamp(Time sent);
    bool HasTimestamp() const;
    Time GetTimestamp() const;

    /** Marks a data packet as the last of a message of `messageBytes` payload bytes. */
    void SetMessageEnd(uint64_t messageBytes);
    bool IsLastOfMessage() const;
    uint64_t GetMessageBytes() const; //!< 0 unless IsLastOfMessage()

    /// \name PFC (kPause)
    /// @{
    /** Addresses `priority` in this PFC frame: pause it (true) or resume it (false). */
    void SetPfc(uint8_t priority, bool pause);
    /** True when this PFC frame addresses `priority`. */
    bool AddressesPriority(uint8_t priority) const;
    /** True when this PFC frame pauses `priority` (false: resumes it, or does not address
     * it). */
    bool PausesPriority(uint8_t priority) const;
    /// @}

    // Header
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

  private:
    static constexpr uint8_t kLastOfMessageFlag = 0x01;
    static constexpr uint8_t kTelemetryFlag = 0x02;
    static constexpr uint8_t kTimestampFlag = 0x04;

    uint8_t m_type;
    uint8_t m_priority;
    uint8_t m_ecn;
    uint8_t m_flags;
    uint32_t m_srcHost;
    uint32_t m_dstHost;
    uint32_t m_flowId;
    uint32_t m_psn;
    uint64_t m_messageBytes;
    int64_t m_timestampNs;
    uint8_t m_pfcEnable; //!< bit p: the frame addresses priority p
    uint8_t m_pfcPause;  //!< bit p: pause priority p (else resume)
};

} // namespace ns3

#endif /* NBOX_ROCE_HEADER_H */
