/*
 * NboxTransport over the flow model (docs/DESIGN.md, "The flow model").
 *
 * Connection (a, b, c) is one flow on its route through the NboxFlowNetwork while it has
 * bytes to send; its messages leave in order at the max-min fair rate the solver gives it,
 * recomputed (for the connections that share links with a change) whenever a connection
 * starts or stops sending. A message is delivered when its last byte has left the source,
 * plus the route's propagation delay, plus the time each further hop takes to forward its
 * last packet (store and forward). Connections are up at once: the model has no handshake.
 * A message alone on its links is delivered with one event (docs/DESIGN.md, "A lone message").
 */
#ifndef NBOX_FLOW_TRANSPORT_H
#define NBOX_FLOW_TRANSPORT_H

#include "ns3/event-id.h"
#include "ns3/nbox-connection-index.h"
#include "ns3/nbox-flow-network.h"
#include "ns3/nbox-parked.h"
#include "ns3/nbox-transport.h"
#include "ns3/nstime.h"

#include <deque>
#include <functional>
#include <vector>

namespace ns3
{

class NboxFlowTransport : public NboxTransport
{
  public:
    static TypeId GetTypeId();
    NboxFlowTransport();
    /** Places rank r on host rankToHost[r] of `network`. */
    NboxFlowTransport(Ptr<NboxFlowNetwork> network, const std::vector<int>& rankToHost);
    ~NboxFlowTransport() override;

    // NboxTransport
    void Connect(uint32_t srcRank, uint32_t dstRank, uint32_t channel) override;
    void WhenAllConnected(std::function<void()> ready) override;
    void Send(uint32_t srcRank, uint32_t dstRank, uint32_t channel, uint64_t bytes,
              std::function<void()> delivered) override;
    NboxTransportStats GetStats() const override;

    /** Brings every sending connection's byte count (and its ports' counters) up to now. */
    void Flush();

  private:
    void DoDispose() override;

    struct Message
    {
        uint64_t end; //!< the connection's byte offset just past this message
        uint64_t bytes;
        std::function<void()> delivered;
    };

    struct Connection
    {
        std::vector<uint32_t> ports;                  //!< one path: the latency its messages pay
        std::vector<NboxFlowPaths::PortShare> shares; //!< where its bytes go (ports, or sprayed)
        std::vector<NboxMaxMinSolver::Use> uses;
        std::deque<Message> queue; //!< the head is leaving
        uint64_t enqueued = 0;     //!< bytes handed to Send so far
        double sent = 0;           //!< bytes that have left the source
        double headWire = 0;       //!< wire bytes counted for the head so far
        double rate = 0;           //!< payload bytes per second
        Time lastUpdate;
        int64_t flow = -1; //!< solver flow while sending
        EventId headSent;
        // A lone head: the last message queued, its flow alone on its links. Its delivery was
        // scheduled with its rate (the callback parked in loneSlot), with no HeadSent event:
        // nothing can change its rate until a message or a flow joins it, and both undo this
        // first (Unlone) or, once its last byte has left (loneSent), finish it (RetireLone).
        bool lone = false;
        Time loneSent;
        uint32_t loneSlot = 0;
        EventId loneDelivery;
    };

    static constexpr uint32_t kNoConnection = UINT32_MAX;

    uint32_t GetOrOpen(uint32_t srcRank, uint32_t dstRank, uint32_t channel);
    // The helpers below take the simulator's time from their caller, which reads it once per
    // event: ns-3's Simulator::Now() is a call through the simulator (some 50 instructions),
    // and a message passed it half a dozen times.
    /** Counts what connection `c` sent since its last update at its current rate. */
    void Advance(Connection& c, Time now);
    /** Schedules the end of `c`'s head message at its current rate. */
    void ScheduleHeadSent(uint32_t id, Time now);
    void HeadSent(uint32_t id);
    /** What HeadSent and RetireLone share: counts the head's last bytes and takes it off. */
    Message FinishHead(Connection& c, Time now);
    /** Removes `c`'s flow from the solver (its queue is empty), re-solving its neighbours. */
    void EndFlow(Connection& c);
    /** A lone head back to an ordinary one: its delivery unscheduled, its callback back. */
    void Unlone(Connection& c, Time now);
    /** Finishes a lone head whose last byte has left (loneSent <= now), as HeadSent would. */
    void RetireLone(Connection& c, Time now);
    /**
     * Before connection `id` starts a flow over its links: retires the lone heads there that
     * have finished (first), and turns the others into ordinary ones once it has been added
     * (`added`), since they now share a link.
     */
    void SettleLoneNeighbours(uint32_t id, bool added, Time now);
    void ScheduleSolve();
    /** After the network's SetFailedLinks: every connection on its path over the new routes. */
    void Reroute();
    void Solve();
    /** Delivers the message parked in m_deliveries[slot] (HeadSent, or ScheduleHeadSent for a
     * lone head, schedules it). */
    void Deliver(uint32_t slot);

    /** A message between its last byte leaving and its delivery (parked: nbox-parked.h). */
    struct Delivery
    {
        uint64_t bytes = 0;
        std::function<void()> delivered;
    };

    Ptr<NboxFlowNetwork> m_network;
    NboxConnectionIndex m_connectionIds;
    std::vector<Connection> m_connections;
    std::vector<uint32_t> m_connectionOfFlow; //!< solver flow id -> connection
    std::vector<NboxMaxMinSolver::Change> m_changes;
    NboxParked<Delivery> m_deliveries;
    bool m_solvePending;
    NboxTransportStats m_stats;
};

} // namespace ns3

#endif /* NBOX_FLOW_TRANSPORT_H */
