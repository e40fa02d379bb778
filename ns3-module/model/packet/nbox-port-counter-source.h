/*
 * What a network port can tell about itself when it has no queue disc: devices that queue,
 * drop, mark and pause on their own (the RoCE path) implement it, and NboxNetwork reads a
 * port's counters from it.
 */
#ifndef NBOX_PORT_COUNTER_SOURCE_H
#define NBOX_PORT_COUNTER_SOURCE_H

#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief Counters of one egress port kept by its device (or by the switch that owns it).
 *
 * NboxNetwork::AddPort uses it when the port's device implements it (found by dynamic_cast
 * once, at AddPort). Wire bytes and packets still come from the device's PhyTxBegin trace, as
 * for every port.
 */
class NboxPortCounterSource
{
  public:
    virtual ~NboxPortCounterSource() = default;

    /** Packets dropped that were to leave through this port. */
    virtual uint64_t GetDropCount() const = 0;
    /** Packets marked CE on entering this port's queues. */
    virtual uint64_t GetEcnMarkCount() const = 0;
    /** Bytes waiting in this port's queues now (wire bytes, all priorities). */
    virtual uint64_t GetQueuedBytes() const = 0;
    /** Largest GetQueuedBytes() seen so far. */
    virtual uint64_t GetPeakQueuedBytes() const = 0;
    /** PFC frames that paused a priority, sent by this port to its peer. */
    virtual uint64_t GetPfcPausesSent() const = 0;
    /** PFC frames that paused a priority, received by this port from its peer. */
    virtual uint64_t GetPfcPausesReceived() const = 0;
    /** Time during which at least one priority of this port was paused by its peer. */
    virtual Time GetPausedTime() const = 0;
};

} // namespace ns3

#endif /* NBOX_PORT_COUNTER_SOURCE_H */
