/*
 * What decides how fast one queue pair of a RoCEv2 NIC may send: the interface NboxRoceNic
 * drives its per-QP congestion control through (DCQCN, HPCC), so that the NIC's send path,
 * ACK handling and loss recovery know none of them by name.
 */
#ifndef NBOX_ROCE_CONGESTION_CONTROL_H
#define NBOX_ROCE_CONGESTION_CONTROL_H

#include "ns3/nbox-int-tag.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <limits>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief The congestion control of one sending QP.
 *
 * The NIC spaces the QP's data packets by wire size / GetRate() (no gap at line rate) and
 * keeps at most GetWindowBytes() of wire bytes unacknowledged. It reports every data packet it
 * sends, every CNP, and every ACK with the in-band telemetry the ACK echoes (empty unless the
 * switches stamp it). Times passed in never decrease.
 */
class NboxRoceCongestionControl
{
  public:
    virtual ~NboxRoceCongestionControl() = default;

    /** The pacing rate, bits/s: never above the port's line rate. */
    virtual double GetRate() const = 0;
    /** Wire bytes the QP may have sent and not had acknowledged (no limit: the maximum). */
    virtual uint64_t
    GetWindowBytes() const
    {
        return std::numeric_limits<uint64_t>::max();
    }
    /** Whether the data packets of the QP ask the switches for in-band telemetry. */
    virtual bool
    WantsTelemetry() const
    {
        return false;
    }
    /** Whether the data packets of the QP carry their send time for the ACK to echo (RTT). */
    virtual bool
    WantsTimestamps() const
    {
        return false;
    }

    /** A data packet of `wireBytes` left the NIC at `now`. */
    virtual void OnPacketSent(uint32_t wireBytes, Time now) = 0;
    /** A congestion notification packet arrived at `now`. */
    virtual void OnCnp(Time now) = 0;
    /**
     * An ACK arrived at `now`: every PSN below `ackedPsn` is acknowledged and the next new
     * packet would be `nextPsn`; `telemetry` is what the switches stamped on the data packet
     * the ACK answers.
     */
    virtual void OnAck(uint32_t ackedPsn, uint32_t nextPsn, const NboxIntTag& telemetry, Time now)
        = 0;
    /**
     * An ACK that echoes the send time of the data packet it answers arrived at `now`: the
     * round trip `rtt` of that packet, with the ACK's PSNs as OnAck has them.
     */
    virtual void
    OnRttSample(Time rtt, uint32_t ackedPsn, uint32_t nextPsn, Time now)
    {
        (void)rtt;
        (void)ackedPsn;
        (void)nextPsn;
        (void)now;
    }
};

} // namespace ns3

#endif /* NBOX_ROCE_CONGESTION_CONTROL_H */
