/*
 * The message transport between ranks: what the collective executors see of the network.
 *
 * A message of B bytes from rank a to rank b on channel c travels over a persistent
 * connection (a, b, c). Messages on one connection are delivered in the order they were sent;
 * `delivered` fires at the simulated time the last byte reaches b. TCP (NboxTcpTransport)
 * (packet model), NboxRoceTransport (packet model), NboxFlowTransport and
 * NboxAnalyticalTransport implement it.
 */
#ifndef NBOX_TRANSPORT_H
#define NBOX_TRANSPORT_H

#include "ns3/nstime.h"
#include "ns3/object.h"

#include "collectives/schedule.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ns3
{

/** Byte and message counters of a transport, summed over all connections. */
struct NboxTransportStats
{
    uint64_t messagesSent = 0;
    uint64_t messagesDelivered = 0;
    uint64_t bytesSent = 0;          //!< payload bytes handed to Send()
    uint64_t bytesDelivered = 0;     //!< payload bytes that reached the receiver
    uint64_t retransmittedBytes = 0; //!< payload bytes the transport sent more than once
    uint64_t retransmissions = 0;    //!< segments (or packets) sent more than once
    uint32_t connections = 0;
    /**
     * A model that ignores contention between operations (the analytical model): how many
     * collectives and messages shared a link with another one running at the same time, whose
     * times are therefore optimistic, and the longest such overlap. Counted only where
     * ignoresContention is set; the other models model that contention.
     */
    bool ignoresContention = false;
    uint64_t contendedOperations = 0;
    double longestContentionSeconds = 0;
};

/**
 * Times a whole collective at once instead of moving its messages: the collective-level side
 * of the seam, for models that work per collective (docs/DESIGN.md, "The analytical model").
 */
class NboxCollectiveTimer
{
  public:
    virtual ~NboxCollectiveTimer() = default;

    /**
     * How long collective `spec` takes from the moment its last member starts it (its
     * protocol's base latency paid), among `members` (world ranks; index = rank in the group)
     * on lanes laneBase + channel. `hopLatency` is the protocol's latency over the hops of its
     * critical path (collectives/protocol.h), which its messages pay hop by hop. Counts its
     * bytes in the transport's and the ports' counters, as sent now and delivered when it ends.
     */
    virtual Time TimeCollective(const nbox::coll::CollectiveSpec& spec,
                                const std::vector<uint32_t>& members, uint32_t laneBase,
                                Time hopLatency)
        = 0;
};

class NboxTransport : public Object
{
  public:
    static TypeId GetTypeId();

    /**
     * Opens connection (src, dst, channel) if it is not open yet. Connections take simulated
     * time to establish; `WhenAllConnected` tells when every connection asked for so far is
     * ready. Sending on a connection that is still being set up is allowed (data waits).
     */
    virtual void Connect(uint32_t srcRank, uint32_t dstRank, uint32_t channel) = 0;
    virtual void WhenAllConnected(std::function<void()> ready) = 0;

    /** Sends `bytes` (> 0) and calls `delivered` when the last byte has arrived at dstRank. */
    virtual void Send(uint32_t srcRank, uint32_t dstRank, uint32_t channel, uint64_t bytes,
                      std::function<void()> delivered)
        = 0;

    virtual NboxTransportStats GetStats() const = 0;

    /**
     * The transport's timer of whole collectives, or null (the default) when collectives run
     * message by message over Send. A model that has one (the analytical model) times each
     * collective at once, and the communicator then runs no schedule for it.
     */
    virtual NboxCollectiveTimer* GetCollectiveTimer();
};

} // namespace ns3

#endif /* NBOX_TRANSPORT_H */
